"""End-to-end: the task graph, sub-agent reports and dispatcher decisions,
verdicts and approvals over real stdio MCP, plus `telic tasks` and
`telic report parse`. Standard library only; run as
`python3 test_task_graph.py <telic>`."""
# Requirement IDs are named on the tests that check them.

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402
import scenario as sc  # noqa: E402

UPWARD = """Implemented the parser; details in the evidence.

upward-report:
  status: {status}
  confidence: {confidence}
  blockers:{blockers}
  escalation-required: false
  evidence-anchors:
    - src/reports/report.cc:40
  planned-actions-pending-approval:{actions}
  notes: parser done
"""


def upward(status="completed", confidence="0.9", blockers=None, actions=None):
    def items(values):
        if not values:
            return " []"
        return "".join(f"\n    - {v}" for v in values)
    return UPWARD.format(status=status, confidence=confidence, blockers=items(blockers), actions=items(actions))


REVIEW_NEEDS_WORK = """REVIEW_STATUS: NEEDS_WORK
SCOPE_REVIEWED:
- src/reports/
EVIDENCE_REVIEWED:
- ctest output
FINDINGS:
- src/reports/report.cc:42 - reject an empty TASK
BLOCKERS: []
NEXT_OWNER: developer
"""


class TaskGraphTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)
        self.server.initialize()

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def create(self, name, **extra):
        return self.server.ok("telic_create_task", {"name": name, "instructions": f"do {name}", **extra})["task"]

    def dispatch(self, workers=1, **extra):
        return self.server.ok("telic_dispatch_tasks", {"max_parallel_workers": workers, **extra})["dispatched"]

    def complete(self, task_id):
        result = self.server.ok("telic_submit_report", {"task_id": task_id, "report": upward()})
        self.assertEqual(result["decision"]["action"], "run_verifier")
        return self.server.ok("telic_record_verification", {"task_id": task_id, "passed": True,
                                                            "evidence": ["ctest: all passed"]})

    def test_tools_are_listed_and_validated_strictly(self):
        tools = {t["name"]: t for t in self.server.request("tools/list")["result"]["tools"]}
        for name in ["telic_spawn_subtask", "telic_report_verdict", "telic_submit_report", "telic_approve_action",
                     "telic_list_tasks"]:
            self.assertIn(name, tools)
            self.assertNotIn("additionalProperties", tools[name]["inputSchema"])  # listed open; refused below
        self.assertIn("depends_on", tools["telic_spawn_subtask"]["inputSchema"]["properties"])
        # covers DAG-011, DAG-019: approved and reasoning required; the description asks for the verdict first
        self.assertEqual(sorted(tools["telic_report_verdict"]["inputSchema"]["required"]),
                         ["approved", "reasoning", "task_id"])
        self.assertIn("before telic_submit_report", tools["telic_report_verdict"]["description"])
        bad = self.server.fails("telic_report_verdict", {"task_id": "x", "approved": True, "reasoning": "r", "extra": 1})
        self.assertEqual(bad["code"], "invalid_argument")
        missing = self.server.fails("telic_report_verdict", {"task_id": "x", "reasoning": "r"})
        self.assertEqual(missing["code"], "invalid_argument")

    def test_dependency_ordering_spawn_and_cascade_over_mcp(self):
        # covers DAG-001, DAG-003, DAG-004, DAG-005, DAG-008, DAG-010
        lead = self.create("lead", subagents={"spawn": True, "maximum_children": 3, "maximum_depth": 1})
        self.assertEqual([t["taskId"] for t in self.dispatch()], [lead["taskId"]])
        a = self.server.ok("telic_spawn_subtask", {"parent_task_id": lead["taskId"], "name": "a", "instructions": "x"})
        b = self.server.ok("telic_spawn_subtask", {"parent_task_id": lead["taskId"], "name": "b", "instructions": "y",
                                                   "depends_on": [a["taskId"]]})
        unknown = self.server.fails("telic_spawn_subtask", {"parent_task_id": lead["taskId"], "name": "e",
                                                            "instructions": "w", "depends_on": ["nope"]})
        self.assertEqual(unknown["code"], "invalid_argument")
        c = self.server.ok("telic_spawn_subtask", {"parent_task_id": lead["taskId"], "name": "c", "instructions": "z",
                                                   "depends_on": [b["taskId"]]})
        self.assertEqual(b["task"]["dependsOn"], [a["taskId"]])
        self.assertEqual(b["task"]["state"], "pending")
        over = self.server.fails("telic_spawn_subtask", {"parent_task_id": lead["taskId"], "name": "d",
                                                         "instructions": "w"})
        self.assertEqual(over["code"], "permission_denied")
        self.assertEqual([t["name"] for t in self.dispatch(workers=4)], ["a"])
        self.complete(a["taskId"])
        self.assertEqual([t["name"] for t in self.dispatch(workers=4)], ["b"])
        failed = self.server.ok("telic_resolve_task", {"task_id": b["taskId"], "resolution": "fail",
                                                       "user_decision": "wrong approach"})
        self.assertEqual([t["taskId"] for t in failed["cascaded"]], [c["taskId"]])
        task_c = self.server.ok("telic_get_task", {"task_id": c["taskId"]})["task"]
        self.assertEqual(task_c["state"], "failed")
        self.assertEqual(task_c["failedDependency"], b["taskId"])
        # `telic tasks` shows the standalone graph as a tree.
        out = subprocess.run([telic_binary(), "tasks"], env=self.ws.env(), capture_output=True, text=True, check=True)
        self.assertIn("[failed] c", out.stdout)
        self.assertIn("after b", out.stdout)
        self.assertIn("├─ [completed] a", out.stdout)

    def test_reports_decisions_and_retries(self):
        # covers RPT-013, RPT-014, RPT-021, RPT-023, RPT-024, RPT-029, RPT-032, RPT-059
        task = self.create("work", retries_allowed=1)
        self.dispatch()
        first = self.server.ok("telic_submit_report", {"task_id": task["taskId"],
                                                       "report": upward("failed", "0.3", ["src/x.cc:3 type error"])})
        self.assertEqual(first["decision"]["rule"], "upward.failed_retry")
        self.assertEqual(first["task"]["state"], "ready")
        again = self.dispatch()
        self.assertEqual(again[0]["keyTasks"], ["src/x.cc:3 type error"])
        last = self.server.ok("telic_submit_report", {"task_id": task["taskId"],
                                                      "report": upward("failed", "0.3", ["src/x.cc:3 type error"])})
        self.assertEqual(last["decision"]["rule"], "upward.failed_retries_exhausted")
        self.assertEqual(last["decision"]["action"], "escalate_to_user")
        self.assertEqual(last["task"]["state"], "failed")
        self.assertIn("retry_past_budget", last["decision"]["refused"])
        # Malformed and duplicated reports are rejected precisely; nothing changes.
        review = self.create("review")
        self.dispatch()
        bad = self.server.fails("telic_submit_report", {"task_id": review["taskId"],
                                                        "report": upward(confidence="1.4")})
        self.assertEqual(bad["code"], "invalid_argument")
        self.assertIn("confidence 1.4 is outside 0.0-1.0", bad["error"])
        dup = self.server.fails("telic_submit_report", {"task_id": review["taskId"],
                                                        "report": REVIEW_NEEDS_WORK + REVIEW_NEEDS_WORK})
        self.assertIn("found 2 reports", dup["error"])
        routed = self.server.ok("telic_submit_report", {"task_id": review["taskId"], "report": REVIEW_NEEDS_WORK})
        self.assertEqual(routed["decision"]["action"], "route_findings")
        self.assertEqual(routed["decision"]["findings"],
                         [{"path": "src/reports/report.cc", "line": 42, "fix": "reject an empty TASK"}])
        structured = self.create("structured")
        self.dispatch()
        report = {"kind": "execution", "status": "BLOCKED", "task": "t", "readPaths": [], "changedPaths": [],
                  "verification": [], "evidence": [], "reviewScope": [], "concerns": ["no network"],
                  "nextOwner": "coordinator"}
        blocked = self.server.ok("telic_submit_report", {"task_id": structured["taskId"], "report": report})
        self.assertEqual(blocked["decision"]["action"], "surface_blocker")
        self.assertEqual(blocked["task"]["hold"], "awaiting_user")

    def test_verdicts_route_arbitration(self):
        # covers DAG-012, DAG-016, DAG-021, DAG-022, DAG-028, DAG-030
        outcomes = {}
        for verdict in [True, False, None]:
            arbitration = self.create(f"arbitration-{verdict}")
            story = self.server.ok("telic_create_story", {"name": f"story-{verdict}",
                                                          "arbitration_task_id": arbitration["taskId"]})["story"]
            self.dispatch(workers=16)
            if verdict is not None:
                reply = self.server.ok("telic_report_verdict", {"task_id": arbitration["taskId"], "approved": verdict,
                                                                "reasoning": "checked the acceptance criteria"})
                self.assertEqual(reply["message"], "Verdict recorded.")
                self.assertEqual(reply["event"]["payload"], {"approved": verdict,
                                                             "reasoning": "checked the acceptance criteria"})
            done = self.complete(arbitration["taskId"])
            self.assertEqual(done["stories"][0]["storyId"], story["storyId"])
            outcomes[verdict] = done["stories"][0]["status"]
        self.assertEqual(outcomes, {True: "REVIEW_READY", False: "NEEDS_FIX", None: "REVIEW_READY"})
        stories = self.server.ok("telic_list_tasks", {})["stories"]
        self.assertEqual(len(stories), 3)

    def test_approvals_are_single_use(self):
        # covers RPT-019, RPT-020, RPT-030
        task = self.create("cleanup")
        self.dispatch()
        gated = self.server.ok("telic_submit_report", {"task_id": task["taskId"],
                                                       "report": upward(actions=["delete file build/old.o"])})
        self.assertEqual(gated["decision"]["action"], "gate_actions")
        self.assertEqual(gated["task"]["hold"], "awaiting_approval")
        changed = self.server.fails("telic_approve_action", {"task_id": task["taskId"],
                                                             "action": "delete file build/old2.o",
                                                             "user_decision": "yes"})
        self.assertEqual(changed["code"], "invalid_argument")
        approved = self.server.ok("telic_approve_action", {"task_id": task["taskId"],
                                                           "action": "delete file build/old.o", "user_decision": "yes"})
        self.assertTrue(approved["approval"]["bindingSha256"].startswith("sha256:"))
        self.assertEqual(approved["task"]["state"], "ready")
        brief = self.dispatch()[0]
        self.assertEqual(brief["approvedActions"][0]["action"], "delete file build/old.o")
        self.server.ok("telic_use_approval", {"task_id": task["taskId"], "action": "delete file build/old.o"})
        reuse = self.server.fails("telic_use_approval", {"task_id": task["taskId"], "action": "delete file build/old.o"})
        self.assertEqual(reuse["code"], "failed_precondition")
        self.assertIn("already used", reuse["error"])

    def test_run_scoped_graph_and_cli(self):
        run = self.server.ok("telic_start_run", {"original_request": "Explain src/app.ts", "mode": "report_only"})
        run_id = run["run"]["runId"]
        first = self.create("first", run_id=run_id)
        second = self.create("second", run_id=run_id, depends_on=[first["taskId"]])
        self.assertEqual(second["runId"], run_id)
        missing = self.server.fails("telic_create_task", {"name": "x", "instructions": "y",
                                                          "run_id": "00000000-0000-4000-8000-00000000dead"})
        self.assertEqual(missing["code"], "not_found")
        listed = self.server.ok("telic_list_tasks", {"run_id": run_id})["tasks"]
        self.assertEqual([t["name"] for t in listed], ["first", "second"])
        self.assertEqual(self.server.ok("telic_list_tasks", {})["tasks"], [])
        out = subprocess.run([telic_binary(), "tasks", run_id, "--json"], env=self.ws.env(), capture_output=True,
                             text=True, check=True)
        self.assertEqual([t["name"] for t in json.loads(out.stdout)["tasks"]], ["first", "second"])
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write(upward(confidence="0.5"))
        try:
            parsed = subprocess.run([telic_binary(), "report", "parse", handle.name, "--json"], capture_output=True,
                                    text=True, check=True)
            decision = json.loads(parsed.stdout)["decision"]
            self.assertEqual(decision["rule"], "upward.completed_low_confidence")
            self.assertTrue(decision["ablationRequired"])
            human = subprocess.run([telic_binary(), "report", "parse", handle.name], capture_output=True, text=True,
                                   check=True)
            self.assertIn("decision  run_verifier", human.stdout)
            with open(handle.name, "a", encoding="utf-8") as more:
                more.write("P.S. trailing prose\n")
            rejected = subprocess.run([telic_binary(), "report", "parse", handle.name], capture_output=True, text=True)
            self.assertEqual(rejected.returncode, 1)
            self.assertIn("content after the upward-report block", rejected.stderr)
        finally:
            os.unlink(handle.name)

    # covers DAG-008: accepted WorkPlan nodes become the run's tasks and accepted WorkResults
    # complete them, so the controller's execution phase and the task graph are one mechanism.
    def test_controller_run_drives_its_task_graph(self):
        d = sc.Driver(self.server, sc.load("analyze_and_fix"), self.ws.repo)
        d.write_repository()
        d.start()
        run_id = d.run["runId"]

        def tasks():
            return {t["name"]: t for t in self.server.ok("telic_list_tasks", {"run_id": run_id})["tasks"]}

        pending = list(d.scenario["steps"])

        def advance(until=None):
            while pending and not (until and until in pending[0].get("say", "")):
                d.do(pending.pop(0))

        advance(until="the executor captures the source")
        listed = tasks()
        self.assertEqual(list(listed), ["plan-diagnosis/diagnose"])
        self.assertEqual(listed["plan-diagnosis/diagnose"]["state"], "ready")
        advance(until="Agent 3 opens the mutation gate")
        self.assertEqual(tasks()["plan-diagnosis/diagnose"]["state"], "completed")
        advance(until="the host applies the one-line fix")
        self.assertEqual(tasks()["plan-fix/fix"]["state"], "ready")
        advance()
        self.assertEqual(d.run["status"], "completed")
        self.assertEqual({n: t["state"] for n, t in tasks().items()},
                         {"plan-diagnosis/diagnose": "completed", "plan-fix/fix": "completed"})
        detail = self.server.ok("telic_get_task", {"task_id": tasks()["plan-fix/fix"]["taskId"]})
        kinds = [e["kind"] for e in detail["events"]]
        self.assertIn("work_result_accepted", kinds)
        out = subprocess.run([telic_binary(), "tasks", run_id, "--json"], env=self.ws.env(), capture_output=True,
                             text=True, check=True)
        self.assertEqual(sorted(t["name"] for t in json.loads(out.stdout)["tasks"]),
                         ["plan-diagnosis/diagnose", "plan-fix/fix"])

    # covers DAG-010: a failed WorkResult fails its task (and would cascade); ending the run cancels the open ones.
    def test_failed_work_result_and_cancel_end_the_tasks(self):
        d = sc.Driver(self.server, sc.load("analyze_and_fix"), self.ws.repo)
        d.write_repository()
        d.start()
        run_id = d.run["runId"]
        d.run_steps(until="the executor reports the diagnosis")
        step = d.step("the executor reports the diagnosis")
        body = d.body(step)
        body.update(status="failed", acceptanceCoverage=[dict(body["acceptanceCoverage"][0], status="fail")],
                    unresolvedIssues=["The source could not be read."])
        d._update(self.server.ok("telic_submit_artifact", d.submit_args(step, body)))
        listed = {t["name"]: t for t in self.server.ok("telic_list_tasks", {"run_id": run_id})["tasks"]}
        self.assertEqual(listed["plan-diagnosis/diagnose"]["state"], "failed")
        self.assertIn("reported failed", listed["plan-diagnosis/diagnose"]["failureReason"])
        self.server.ok("telic_cancel_run", d.tokens())
        self.assertEqual(self.server.ok("telic_get_run", {"run_id": run_id})["run"]["status"], "cancelled")

        other = sc.Driver(self.server, sc.load("analyze_and_fix"), self.ws.repo)
        other.start()
        other.run_steps(until="the executor captures the source")
        self.server.ok("telic_cancel_run", other.tokens())
        open_task = self.server.ok("telic_list_tasks", {"run_id": other.run["runId"]})["tasks"][0]
        self.assertEqual((open_task["name"], open_task["state"]), ("plan-diagnosis/diagnose", "cancelled"))
        self.assertIn("run ended cancelled", open_task["failureReason"])


if __name__ == "__main__":
    run_tests(sys.argv)
