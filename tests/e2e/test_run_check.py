"""telic_run_check over real stdio MCP (issue 38 item 4): telic runs an allowed
verification command in its bubblewrap sandbox and stores what it observed as
Evidence; disallowed commands are refused with nothing stored; a kill -9 of
the server while a check runs loses nothing acknowledged and leaves no
sandboxed process behind."""

import json
import os
import sys
import time
import unittest

from mcp_client import Workspace, run_tests, serve
from modern_client import ModernStdio
import scenario as sc
from test_task_graph import upward

CHECKS = {"check.sh": "echo checking\necho all 3 tests passed\n",
          "fail.sh": "echo 1 test failed >&2\nexit 1\n"}
GRANTED = ["repository.read", "repository.write", "shell.execute"]
# A unique hang, so the test can find its process.
HANG = "sleep 31.25"
ALLOWED = ["sh check.sh", "sh fail.sh", "sh sub/check.sh", HANG]
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def sandboxed_processes(needle):
    """Pids of processes whose command line is exactly `needle`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
        except OSError:
            continue
        if b" ".join(w for w in words if w) == needle.encode():
            found.append(int(pid))
    return found


class RunCheckTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        for name, text in CHECKS.items():
            with open(os.path.join(self.ws.repo, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        os.makedirs(os.path.join(self.ws.repo, "sub"))
        with open(os.path.join(self.ws.repo, "sub", "check.sh"), "w", encoding="utf-8") as handle:
            handle.write("pwd\n")
        self.server = serve(self.ws)

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def execute(self):
        """The example analyze_and_fix run, allowed exactly ALLOWED, at its first executor action."""
        d = sc.Driver(self.server, sc.load("analyze_and_fix"), self.ws.repo)
        d.write_repository()
        d.start(host_capabilities=GRANTED, authorization_granted=GRANTED, shell_execute_allowlist=ALLOWED)
        d.run_steps(until="the executor captures the source")
        self.assertEqual(d.action["phase"], "agent_4_execute")
        self.run_id = d.run["runId"]
        self.node = d.action["workNodeId"]
        self.plan = d.action["workPlanRef"] if "workPlanRef" in d.action else None
        self.version = d.run["version"]
        return d

    def state(self):
        got = self.server.ok("telic_get_run", {"run_id": self.run_id})
        return got["run"], [a["id"] for a in got["artifacts"]]

    def refused(self, args, needle, code="permission_denied"):
        before = self.state()
        failure = self.server.fails("telic_run_check", dict({"run_id": self.run_id, "node_id": self.node}, **args))
        self.assertIn(needle, failure["error"])
        self.assertEqual(failure["code"], code, failure)
        self.assertEqual(self.state(), before)  # nothing stored, the run unchanged
        return failure

    # covers issue 38: a command not allowed exactly, shell metacharacters, a path escaping the repository
    def test_disallowed_commands_are_refused_and_change_nothing(self):
        self.execute()
        self.refused({"command": "sh check.sh --verbose"}, "not allowed by the run's permissions")
        self.refused({"command": ["sh", "check.sh", "x"]}, "not allowed by the run's permissions")
        self.refused({"command": "sh check.sh; id"}, "a shell would interpret it")
        self.refused({"command": "sh check.sh && curl example.com"}, "a shell would interpret it")
        self.refused({"command": "sh $HOME/check.sh"}, "a shell would interpret it")
        self.refused({"command": ["sh", "check.sh", "a b"]}, "holds a space")
        escape = self.refused({"command": "sh check.sh", "cwd": ".."}, "cwd is refused")
        self.assertEqual(escape["issues"][0]["pointer"], "/cwd")
        os.symlink("/tmp", os.path.join(self.ws.repo, "out"))
        self.refused({"command": "sh check.sh", "cwd": "out"}, "cwd is refused")
        self.refused({"command": "sh check.sh", "node_id": "no-such-node"}, "not a node", "failed_precondition")
        self.refused({"command": "sh check.sh", "expected_run_version": 0}, "Stale run version", "stale_version")
        failure = self.server.fails("telic_run_check", {"run_id": self.run_id, "command": "sh check.sh"})
        self.assertIn("exactly one of node_id", failure["error"])

    # covers issue 38: telic runs the check and stores what it observed as Evidence
    def test_an_allowed_check_runs_and_its_evidence_is_visible(self):
        self.execute()
        run_before, artifacts_before = self.state()
        ran = self.server.ok("telic_run_check", {"run_id": self.run_id, "expected_run_version": self.version,
                                                  "command": "sh check.sh", "node_id": self.node})
        check = ran["check"]
        self.assertTrue(check["passed"], check)
        self.assertEqual(check["exitStatus"], 0)
        self.assertEqual(check["outputTail"], "checking\nall 3 tests passed\n")
        self.assertEqual(check["sandbox"], "bubblewrap")
        self.assertEqual(check["provenance"], "observed")
        self.assertEqual(check["limits"]["wallTimeMs"], 120000)
        self.assertEqual(check["limits"]["maxProcesses"], 256)
        self.assertEqual(check["output"]["bytes"], len("checking\nall 3 tests passed\n"))
        self.assertEqual(ran["run"]["version"], run_before["version"])  # Evidence does not move the run
        run_after, artifacts_after = self.state()
        self.assertEqual(artifacts_after, artifacts_before + [ran["evidence"]["id"]])
        self.assertEqual(ran["evidence"]["type"], "Evidence")
        self.assertEqual(ran["evidence"]["producer"], "controller")  # provenance observed, not the host's
        body = self.server.ok("telic_get_artifact", {"run_id": self.run_id, "artifact_id": ran["evidence"]["id"]})["artifact"]["body"]
        self.assertEqual(body["kind"], "test")
        self.assertEqual(body["contentType"], "application/vnd.telic.check+json")
        self.assertIn("Observed by telic", body["rationaleSummary"])
        content = json.loads(body["content"])
        self.assertEqual(content["command"], "sh check.sh")
        self.assertEqual(content["exitStatus"], 0)
        self.assertEqual(content["output"]["sha256"], check["output"]["sha256"])
        self.assertEqual(content["outputTail"], "checking\nall 3 tests passed\n")
        self.assertEqual(content["binding"], {"nodeId": self.node})
        plans = [a["id"] for a in self.server.ok("telic_get_run", {"run_id": self.run_id})["artifacts"]
                 if a["type"] == "WorkPlan"]
        self.assertEqual(body["sourceRefs"], [f"artifact://{self.run_id}/{plans[-1]}"])  # the plan of its node

        # A failing check is stored as honestly as a passing one; a cwd inside the repository is used.
        failed = self.server.ok("telic_run_check", {"run_id": self.run_id, "command": ["sh", "fail.sh"],
                                                     "node_id": self.node})["check"]
        self.assertFalse(failed["passed"])
        self.assertEqual(failed["exitStatus"], 1)
        self.assertEqual(failed["outputTail"], "1 test failed\n")
        inside = self.server.ok("telic_run_check", {"run_id": self.run_id, "command": "sh sub/check.sh", "cwd": ".",
                                                     "node_id": self.node})["check"]
        self.assertEqual(inside["outputTail"], os.path.realpath(self.ws.repo) + "\n")
        # The Evidence is citable by the run's later artifacts like any other.
        self.assertEqual(len(self.state()[1]), len(artifacts_before) + 3)

    # covers issue 38: a task's verification executed by telic instead of recorded by the host
    def test_a_task_awaiting_verification_is_verified_by_the_check(self):
        self.execute()
        task = self.server.ok("telic_create_task", {"name": "fix", "instructions": "do fix", "run_id": self.run_id})["task"]
        self.server.ok("telic_dispatch_tasks", {"max_parallel_workers": 8, "run_id": self.run_id})
        both = self.server.fails("telic_run_check", {"run_id": self.run_id, "command": "sh check.sh", "task_id": task["taskId"],
                                                      "node_id": self.node})
        self.assertIn("exactly one of node_id", both["error"])
        self.refused_task(task["taskId"], "not awaiting verification")
        decision = self.server.ok("telic_submit_report", {"task_id": task["taskId"], "report": upward()})["decision"]
        self.assertEqual(decision["action"], "run_verifier")
        ran = self.server.ok("telic_run_check", {"run_id": self.run_id, "command": "sh check.sh", "task_id": task["taskId"]})
        self.assertTrue(ran["check"]["passed"])
        self.assertEqual(ran["check"]["binding"], {"taskId": task["taskId"]})
        self.assertEqual(ran["verification"]["action"], "accept")
        self.assertEqual(ran["verification"]["task"]["state"], "completed")
        events = self.server.ok("telic_get_task", {"task_id": task["taskId"]})["events"]
        recorded = [e for e in events if e["kind"] == "verification_recorded"]
        self.assertEqual(len(recorded), 1)
        self.assertEqual(recorded[0]["payload"], {"passed": True, "evidence": [ran["check"]["evidenceRef"]],
                                                  "provenance": "observed", "evidenceRef": ran["check"]["evidenceRef"]})
        # Once verified, the task no longer awaits a check.
        self.refused_task(task["taskId"], "not awaiting verification")

    def refused_task(self, task_id, needle):
        before = self.state()
        failure = self.server.fails("telic_run_check", {"run_id": self.run_id, "command": "sh check.sh", "task_id": task_id})
        self.assertEqual(failure["code"], "failed_precondition", failure)
        self.assertIn(needle, failure["error"])
        self.assertEqual(self.state(), before)

    def test_a_check_for_an_ended_run_is_refused(self):
        started = self.server.ok("telic_start_run", {"original_request": "Run the tests", "mode": "fix_only",
                                                      "host_capabilities": GRANTED, "authorization_granted": GRANTED,
                                                      "shell_execute_allowlist": ALLOWED})
        run_id = started["run"]["runId"]
        self.server.ok("telic_cancel_run", {"run_id": run_id, "action_id": started["nextAction"]["id"],
                                            "expected_run_version": started["run"]["version"]})
        failure = self.server.fails("telic_run_check", {"run_id": run_id, "command": "sh check.sh", "node_id": "node-1"})
        self.assertEqual(failure["code"], "failed_precondition")
        self.assertIn("is cancelled", failure["error"])

    # covers issue 38: long runs through the tasks extension, tasks/cancel kills the process group
    def test_a_check_as_a_task_reports_progress_and_is_cancelled(self):
        self.execute()
        client = ModernStdio(self.server, capabilities=TASKS)
        task = client.request("tools/call", {"name": "telic_run_check",
                                             "arguments": {"run_id": self.run_id, "command": HANG,
                                                           "node_id": self.node}})["result"]
        self.assertEqual(task["resultType"], "task", task)
        self.assertTrue(wait_for(lambda: sandboxed_processes(HANG), 20), "the check never started")
        progress = wait_for(lambda: client.request("tasks/get", {"taskId": task["taskId"]})["result"]
                            .get("statusMessage", "").startswith(f"running `{HANG}`"), 10)
        self.assertTrue(progress, "no progress message")
        client.request("tasks/cancel", {"taskId": task["taskId"]})
        self.assertEqual(wait_for(lambda: sandboxed_processes(HANG) == [], 10), True)
        done = wait_for(lambda: (lambda t: t if t["status"] != "working" else None)(
            client.request("tasks/get", {"taskId": task["taskId"]})["result"]), 10)
        self.assertEqual(done["status"], "completed", done)
        check = done["result"]["structuredContent"]["check"]
        self.assertTrue(check["cancelled"])
        self.assertFalse(check["passed"])
        self.assertLess(check["durationMs"], 30000)

    # covers issue 38: the kill -9 tests still hold while a check runs
    def test_kill_minus_nine_while_a_check_runs(self):
        self.execute()
        run_before, artifacts_before = self.state()
        message = {"jsonrpc": "2.0", "id": 9001, "method": "tools/call",
                   "params": {"name": "telic_run_check",
                              "arguments": {"run_id": self.run_id, "command": HANG, "node_id": self.node}}}
        self.server.send_raw(json.dumps(message) + "\n")
        self.assertTrue(wait_for(lambda: sandboxed_processes(HANG), 20), "the check never started")
        self.server.kill()
        # The sandbox dies with telic (--die-with-parent, PR_SET_PDEATHSIG).
        self.assertEqual(wait_for(lambda: sandboxed_processes(HANG) == [], 10), True)
        self.server = serve(self.ws)
        self.assertEqual(self.state(), (run_before, artifacts_before))
        replay = self.server.ok("telic_replay_run", {"run_id": self.run_id})["report"]
        self.assertTrue(replay["stateCheck"]["consistent"], replay["stateCheck"])
        again = self.server.ok("telic_run_check", {"run_id": self.run_id, "command": "sh check.sh", "node_id": self.node})
        self.assertTrue(again["check"]["passed"])


if __name__ == "__main__":
    run_tests(sys.argv)
