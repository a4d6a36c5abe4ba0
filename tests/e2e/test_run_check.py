"""telic_run_check over real stdio MCP (issue 38 item 4): telic runs an allowed
verification command in its bubblewrap sandbox and stores what it observed as
Evidence; disallowed commands are refused with nothing stored; a kill -9 of
the server while a check runs loses nothing acknowledged and leaves no
sandboxed process behind."""

import json
import os
import re
import subprocess
import sys
import time
import unittest

from mcp_client import Workspace, run_tests, serve, telic_binary
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


GREET_TEST = ("import sys\nsys.path.insert(0, 'src')\nfrom greet import greet\n"
              "assert greet('Ada') == 'Hello, Ada!', greet('Ada')\nprint('1 test passed')\n")
GREET_CHECK = "python3 -B test_greet.py"


class ObservedRunTest(unittest.TestCase):
    """A whole run that completes on telic's own evidence: its diff of the fix and the check it ran."""

    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def check(self, d, passed):
        ran = self.server.ok("telic_run_check", {"run_id": d.run["runId"], "command": GREET_CHECK,
                                                  "node_id": d.action["workNodeId"]})["check"]
        self.assertEqual(ran["passed"], passed, ran)
        self.assertEqual(ran["provenance"], "observed")
        return ran

    def evidence(self, d, ref):
        body = self.server.ok("telic_get_artifact", {"run_id": d.run["runId"],
                                                     "artifact_id": ref.rsplit("/", 1)[1]})["artifact"]
        return body

    # covers issue 38 (done when): a run completes with observed diff and test evidence, under require_observed
    def test_a_run_completes_on_observed_diff_and_check_evidence(self):
        scenario = sc.load("analyze_and_fix")
        scenario["repository"]["test_greet.py"] = GREET_TEST
        d = sc.Driver(self.server, scenario, self.ws.repo)
        d.write_repository()
        git = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
        for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "greet"]):
            subprocess.run(["git", *args], cwd=self.ws.repo, check=True, env=git)
        d.start(host_capabilities=GRANTED, authorization_granted=GRANTED, shell_execute_allowlist=[GREET_CHECK],
                observation="require_observed")
        d.run_steps(until="the host applies the one-line fix")
        self.assertEqual(d.action["phase"], "agent_4_execute")
        before = self.check(d, passed=False)  # the bug is real: the test fails before the fix
        self.assertIn("AssertionError", before["outputTail"])
        d.do(d.step("the host applies the one-line fix"))
        after = self.check(d, passed=True)
        self.assertEqual(after["outputTail"], "1 test passed\n")
        check_ref = after["evidenceRef"]
        for say in ("the executor stores the diff", "the executor stores the re-read"):
            d.do(d.step(say))
        result = d.body(d.step("the executor reports the fix"))
        result["testResults"] = [{"id": "test-greet", "name": "test_greet.py", "status": "passed", "commandRef": None,
                                  "outputRef": check_ref, "exitCode": 0,
                                  "rationaleSummary": "telic ran the test in its sandbox."}]
        accepted = self.server.ok("telic_submit_artifact", d.submit_args(d.step("the executor reports the fix"), result))
        d._update(accepted)
        observed_diff = accepted["observation"]["diffEvidenceRefs"][0]
        # The fix's claim cites telic's diff and check, in the release audit's matrix and in the report.
        telics = [observed_diff, check_ref]
        for say in ("Agent 3 reviews the fix", "Agent 3 re-verifies the evidence (forensic)"):
            d.do(d.step(say))
        audit = d.body(d.step("Agent 5 audits the release"))
        audit["claimEvidenceMatrix"][1]["evidenceRefs"] += telics
        d._update(self.server.ok("telic_submit_artifact", d.submit_args(d.step("Agent 5 audits the release"), audit)))
        report = d.body(d.step("Agent 5 writes the user report"))
        report["completionClaims"][1]["evidenceRefs"] += telics
        done = self.server.ok("telic_submit_artifact", d.submit_args(d.step("Agent 5 writes the user report"), report))
        d._update(done)
        self.assertEqual(d.run["status"], "completed")
        self.assertEqual(done["observation"]["undeclaredChanges"], [])
        diff = self.evidence(d, observed_diff)
        self.assertEqual((diff["producer"], diff["body"]["kind"]), ("controller", "diff"))
        self.assertIn("+    return f\"Hello, {name}!\"", diff["body"]["content"])
        test = self.evidence(d, check_ref)
        self.assertEqual((test["producer"], test["body"]["kind"]), ("controller", "test"))
        # The provenance reaches the CLI and the bundle.
        run_id = d.run["runId"]
        show = subprocess.run([telic_binary(), "show", run_id], env=self.ws.env(), capture_output=True, text=True)
        self.assertEqual(show.returncode, 0, show.stderr)
        for ref in (observed_diff, check_ref):
            self.assertRegex(show.stdout, ref.rsplit("/", 1)[1] + r"\s+Evidence\s+controller\s+observed")
        self.assertIn("policy require_observed", show.stdout)
        bundle = os.path.join(self.ws.base, "run.bundle.json")
        exported = subprocess.run([telic_binary(), "export", run_id, "-o", bundle], env=self.ws.env(),
                                  capture_output=True, text=True)
        self.assertEqual(exported.returncode, 0, exported.stderr)
        verified = subprocess.run([telic_binary(), "verify", "--bundle", bundle], env=self.ws.env(),
                                  capture_output=True, text=True)
        self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)
        self.assertRegex(verified.stdout, r"\(([1-9]\d*) evidence observed by telic, [1-9]\d* claimed by the host\)")


    # covers issue 38: `telic demo` lets telic run its test before and after the fix and completes on that evidence
    def test_the_demo_runs_its_test_through_telic(self):
        workdir = os.path.join(self.ws.base, "demo")
        demo = subprocess.run([telic_binary(), "demo", "--workdir", workdir], env=self.ws.env(),
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(demo.returncode, 0, demo.stderr + demo.stdout[-2000:])
        ran = re.findall(r"telic ran `sh test_greet.sh` in its sandbox: exit status (\d+) \((\w+)\) → (\S+)", demo.stdout)
        self.assertEqual([(status, verdict) for status, verdict, _ in ran], [("1", "failed"), ("0", "passed")], demo.stdout)
        self.assertIn("next: terminal: completed", demo.stdout)
        claim = next(line for line in demo.stdout.splitlines() if line.startswith("  claim claim-fix:"))
        self.assertIn(ran[1][2], claim)  # the report cites telic's passing check...
        self.assertRegex(claim, r"/telic-diff-[0-9a-f]+")  # ...and telic's own diff
        run_id = re.search(r"telic show (\S+)", demo.stdout).group(1)
        show = subprocess.run([telic_binary(), "show", run_id, "--db", os.path.join(workdir, "state", "telic.sqlite3")],
                              env=self.ws.env(), capture_output=True, text=True)
        self.assertIn("policy require_observed", show.stdout)

if __name__ == "__main__":
    run_tests(sys.argv)
