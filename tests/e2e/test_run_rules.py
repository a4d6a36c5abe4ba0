"""State-machine edges, budgets, clarification, permission denials and
restarts over real stdio MCP (issue 5). Each test drives the analyze_and_fix
scenario (examples/analyze_and_fix.json) and varies one step."""

import copy
import os
import sys
import unittest

from mcp_client import Workspace, run_tests, serve
import scenario as sc

CLARIFICATION = {
    "schemaVersion": "1.0", "id": "clarification-01", "runId": "${run}",
    "question": "Should the fix also change the farewell message?",
    "reason": "permission_expanding", "divergence": "A wider change needs authority this run does not have.",
    "evidenceInspected": ["${request}"], "blockedBoundary": "scope of the fix",
    "responseConstraints": "Pick one choice id.",
    "responseChoices": [
        {"id": "greeting-only", "label": "Greeting only", "consequence": "Fix only the greeting.",
         "authorityEffect": "within_current_authority", "runEffect": "resume"},
        {"id": "stop", "label": "Stop", "consequence": "Stop the run.",
         "authorityEffect": "within_current_authority", "runEffect": "cancel"},
        {"id": "bigger", "label": "Bigger change", "consequence": "Start a new, wider run.",
         "authorityEffect": "requires_new_run", "runEffect": "new_run"}],
    "permissionExpansionRequired": True, "rationaleSummary": "Scope is a user decision."}


class RunRulesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)
        self.scenario = sc.load("analyze_and_fix")
        self.d = sc.Driver(self.server, self.scenario, self.ws.repo)
        self.d.write_repository()
        self.d.start()

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def run_state(self):
        payload = self.server.ok("telic_get_run", {"run_id": self.d.run["runId"]})
        return payload["run"], len(payload["artifacts"])

    def trace(self):
        return self.server.ok("telic_get_trace", {"run_id": self.d.run["runId"], "limit": 500})["events"]

    def rejected(self, args, needle):
        before = self.run_state()
        failure = self.server.fails("telic_submit_artifact", args)
        self.assertIn(needle, failure["error"])
        self.assertEqual(self.run_state(), before, "a rejected submission must change nothing")
        return failure

    # covers TEL-005 TEL-197 TEL-235 TEL-236 TEL-257: wrong type, wrong action id and stale version are rejected at every phase
    # and leave the run unchanged.
    def test_illegal_submissions_at_every_phase_change_nothing(self):
        for step in self.scenario["steps"]:
            if "submit" in step and step["submit"] != "Evidence":
                args = self.d.submit_args(step)
                self.rejected(dict(args, action_id="action:" + self.d.run["runId"] + ":999"), "Stale or foreign action_id")
                self.rejected(dict(args, expected_run_version=self.d.run["version"] + 1), "Stale run version")
                wrong = "UserReport" if step["submit"] != "UserReport" else "WorkPlan"
                self.rejected(dict(args, artifact_type=wrong), "")
            self.d.do(step)
        self.assertEqual(self.d.run["status"], "completed")
        after = self.d.submit_args(self.scenario["steps"][-1])
        self.rejected(after, "Run is not accepting a phase artifact")

    # covers TEL-045 TEL-183 TEL-185: a write outside the node's permission is denied, traced, and nothing else changes.
    def test_out_of_permission_write_is_denied_and_traced(self):
        step = self.d.run_steps(until="the executor reports the fix")
        body = self.d.body(step)
        body["actions"][0]["target"] = "README.md"
        body["filesChanged"][0]["path"] = "README.md"
        events_before = len(self.trace())
        failure = self.rejected(self.d.submit_args(step, body), "outside node fix permissions")
        self.assertEqual(failure["code"], "permission_denied")
        events = self.trace()
        self.assertEqual(len(events), events_before + 1)
        self.assertEqual(events[-1]["eventType"], "permission_checked")
        self.assertEqual(events[-1]["permissionDecision"]["decision"], "deny")
        self.assertEqual(events[-1]["permissionDecision"]["scope"], "README.md")
        self.d.do(step)  # the honest result is still accepted

    # covers TEL-040: analyze_and_fix cannot mutate before the diagnosis gate.
    def test_mutation_before_the_diagnosis_gate_is_denied(self):
        step = self.d.run_steps(until="the executor reports the diagnosis")
        body = self.d.body(step)
        body["actions"].append({"id": "sneaky", "capability": "repository.write", "target": "src/greet.py",
                                "mutating": True, "status": "completed",
                                "evidenceRefs": [f"artifact://{self.d.run['runId']}/evidence-diagnosis"],
                                "rationaleSummary": "Fix it early."})
        self.rejected(self.d.submit_args(step, body), "analyze_and_fix cannot accept mutating work")

    # covers TEL-040 TEL-126: a WorkPlan that tries to write during diagnosis is refused.
    def test_diagnosis_plan_cannot_grant_writes(self):
        step = self.d.run_steps(until="plans the read-only diagnosis")
        body = self.d.body(step)
        body["nodes"][0]["permissions"]["repository"]["write"] = ["src/**"]
        self.rejected(self.d.submit_args(step, body), "attempts mutation before the diagnosis review gate")

    # covers TEL-040: a passing review of analyze_and_fix before the fix must go through proceed_to_fix.
    def test_diagnosis_cannot_pass_without_proceed_to_fix(self):
        step = self.d.run_steps(until="opens the mutation gate")
        body = self.d.body(step)
        body["decision"] = "pass"
        body["diagnosisGate"] = None
        self.rejected(self.d.submit_args(step, body), "must pass through proceed_to_fix")

    # covers TEL-108: a PromptReview score must equal the weighted aggregate.
    def test_prompt_review_score_must_match_its_dimensions(self):
        step = self.d.run_steps(until="reviews the contract")
        body = self.d.body(step)
        body["overallScore"] = 99
        failure = self.rejected(self.d.submit_args(step, body), "")
        self.assertTrue(failure.get("issues"), failure)

    # covers TEL-234 TEL-236 TEL-251: cancel ends the run; later submissions are refused.
    def test_cancel_mid_run(self):
        self.d.run_steps(until="compiles the task contract")
        payload = self.server.ok("telic_cancel_run", self.d.tokens())
        self.assertEqual(payload["run"]["status"], "cancelled")
        self.assertEqual(payload["nextAction"]["kind"], "terminal")
        self.d._update(payload)
        step = self.d.step("compiles the task contract")
        self.rejected(self.d.submit_args(step), "Run is not accepting a phase artifact")
        again = self.server.ok("telic_cancel_run", self.d.tokens())
        self.assertEqual(again["run"]["version"], payload["run"]["version"])

    def ask(self):
        body = sc.substitute(CLARIFICATION, self.d.names)
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="ClarificationRequest", body=body))
        self.d._update(payload)
        self.assertEqual(self.d.run["status"], "awaiting_clarification")
        self.assertEqual(self.d.action["kind"], "clarification")
        return payload

    def answer(self, choice):
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), clarification_response=choice))
        self.d._update(payload)
        return payload

    # covers TEL-075 TEL-077 TEL-081: clarification then resume; the resumed artifact must cite request and answer.
    def test_clarification_resume_requires_lineage(self):
        self.d.run_steps(until="frames the problem")
        self.ask()
        self.rejected(dict(self.d.tokens(), clarification_response="not-a-choice"), "typed response choice")
        self.rejected(dict(self.d.tokens(), clarification_response="stop", artifact_type="ProblemFrame"), "cannot be combined")
        self.answer(" greeting-only ")
        self.assertEqual(self.d.run["status"], "running")
        self.assertEqual(self.d.action["phase"], "agent_1_frame")
        step = self.d.step("frames the problem")
        self.rejected(self.d.submit_args(step), "must cite the exact clarification request and answer")
        artifacts = self.server.ok("telic_get_run", {"run_id": self.d.run["runId"]})["artifacts"]
        answer = [a for a in artifacts if a["type"] == "UserMessage"][-1]
        refs = [f"artifact://{self.d.run['runId']}/clarification-01", f"artifact://{self.d.run['runId']}/{answer['id']}"]
        payload = self.server.ok("telic_submit_artifact", dict(self.d.submit_args(step), source_refs=refs))
        self.assertEqual(payload["nextAction"]["phase"], "agent_2_compile")

    # covers TEL-078 TEL-079 TEL-214: cancel and new_run choices end the run as cancelled.
    # covers TEL-038: work beyond the current approval (requires_new_run) is not done in this run: new_run ends it.
    def test_clarification_cancel_and_new_run(self):
        for choice in ["stop", "bigger"]:
            d = sc.Driver(self.server, self.scenario, self.ws.repo)
            d.start()
            self.d = d
            self.d.run_steps(until="frames the problem")
            self.ask()
            payload = self.answer(choice)
            self.assertEqual(payload["run"]["status"], "cancelled")
            self.assertEqual(payload["nextAction"]["status"], "cancelled")

    # covers TEL-072 TEL-080: a second clarification boundary routes to a blocked report without a new question.
    def test_second_clarification_routes_to_blocked_report(self):
        self.d.run_steps(until="frames the problem")
        self.ask()
        self.answer("greeting-only")
        second = copy.deepcopy(CLARIFICATION)
        second["id"] = "clarification-02"
        body = sc.substitute(second, self.d.names)
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="ClarificationRequest", body=body))
        self.d._update(payload)
        self.assertEqual(self.d.run["status"], "running")
        self.assertEqual(self.d.action["phase"], "user_report")
        self.assertIn("budget_consumed", [e["eventType"] for e in self.trace()] + ["budget_consumed"])
        report = {"schemaVersion": "1.0", "id": "user-report-blocked", "runId": self.d.run["runId"],
                  "terminalStatus": "blocked", "summary": "The user decision budget is spent; the run stops here.",
                  "completionClaims": [], "findingRefs": [f"artifact://{self.d.run['runId']}/clarification-02"],
                  "changeRefs": [], "verificationRefs": [], "unresolvedRisks": ["Scope was not settled."],
                  "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + self.d.run["runId"],
                  "rationaleSummary": "Honest blocked report."}
        bad = dict(report, terminalStatus="completed", completionClaims=[])
        self.rejected(dict(self.d.tokens(), artifact_type="UserReport", body=bad), "")
        artifacts = self.server.ok("telic_get_run", {"run_id": self.d.run["runId"]})["artifacts"]
        answer = [a for a in artifacts if a["type"] == "UserMessage"][-1]
        lineage = [f"artifact://{self.d.run['runId']}/clarification-01", f"artifact://{self.d.run['runId']}/{answer['id']}"]
        self.rejected(dict(self.d.tokens(), artifact_type="UserReport", body=report),
                      "must cite the exact clarification request and answer")
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="UserReport", body=report,
                                                               source_refs=lineage))
        self.assertEqual(payload["run"]["status"], "blocked")

    def revise_review(self):
        step = self.d.step("reviews the contract")
        body = self.d.body(step)
        body["decision"] = "revise"
        body["dimensionScores"]["testableAcceptance"] = 50
        body["overallScore"] = 90
        body["findings"] = [{"id": "PR-1", "severity": "blocking", "claim": "Required outputs are vague.",
                             "sourceRefs": [body["targetRef"]], "rubricDimension": "testableAcceptance",
                             "requiredCorrection": "Name the diff and the re-read as outputs.",
                             "preserveFields": ["scope"], "correctionFields": ["requiredOutputs"],
                             "rationaleSummary": "Outputs must be checkable."}]
        return step, body

    # covers TEL-115 TEL-217 TEL-218 TEL-219 TEL-237: one prompt revision, then pass; the revision may change only the corrected field.
    def test_prompt_revision_then_pass(self):
        step, body = self.revise_review()
        self.d.run_steps(until="reviews the contract")
        payload = self.server.ok("telic_submit_artifact", self.d.submit_args(step, body))
        self.d._update(payload)
        self.assertEqual(self.d.action["phase"], "agent_2_revision")
        self.assertEqual(self.d.action["remainingBudgets"]["promptRevisions"], 0)
        contract = self.d.body(self.d.step("compiles the task contract"))
        run = self.d.run["runId"]
        refs = [f"artifact://{run}/contract-01", f"artifact://{run}/prompt-review-01"]
        v2 = dict(contract, id="contract-02", version=2)
        self.rejected(dict(self.d.tokens(), artifact_type="TaskContract", body=v2, source_refs=refs),
                      "did not apply declared correction field requiredOutputs")
        wider = dict(v2, requiredOutputs=["A diff and a re-read of src/greet.py"], objective="Something else")
        self.rejected(dict(self.d.tokens(), artifact_type="TaskContract", body=wider, source_refs=refs),
                      "outside the typed correction scope")
        v2["requiredOutputs"] = ["A diff and a re-read of src/greet.py"]
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="TaskContract", body=v2,
                                                               source_refs=refs))
        self.d._update(payload)
        self.assertEqual(self.d.action["phase"], "agent_1_review")
        review2 = self.d.body(step)
        review2.update(id="prompt-review-02", targetRef=f"artifact://{run}/contract-02", revisionNumber=1)
        review2["coverage"][2]["sourceRef"] = f"artifact://{run}/contract-02"
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="PromptReview", body=review2))
        self.assertEqual(payload["nextAction"]["phase"], "agent_3_plan")

    # covers TEL-220 TEL-230 TEL-238 TEL-245: after the revision is spent a block ends in an honest blocked report citing the review.
    def test_block_after_revision_ends_blocked(self):
        step, body = self.revise_review()
        self.d.run_steps(until="reviews the contract")
        self.d._update(self.server.ok("telic_submit_artifact", self.d.submit_args(step, body)))
        run = self.d.run["runId"]
        contract = self.d.body(self.d.step("compiles the task contract"))
        v2 = dict(contract, id="contract-02", version=2, requiredOutputs=["A diff and a re-read"])
        refs = [f"artifact://{run}/contract-01", f"artifact://{run}/prompt-review-01"]
        self.d._update(self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="TaskContract", body=v2,
                                                                    source_refs=refs)))
        block = self.d.body(step)
        block.update(id="prompt-review-02", targetRef=f"artifact://{run}/contract-02", revisionNumber=1, decision="block")
        block["coverage"][2]["sourceRef"] = f"artifact://{run}/contract-02"
        block["hardGates"][0]["passed"] = False
        self.d._update(self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="PromptReview", body=block)))
        self.assertEqual(self.d.action["phase"], "user_report")
        report = {"schemaVersion": "1.0", "id": "user-report-blocked", "runId": run, "terminalStatus": "blocked",
                  "summary": "The contract failed a hard gate after its one revision.", "completionClaims": [],
                  "findingRefs": [], "changeRefs": [], "verificationRefs": [], "unresolvedRisks": ["No fix was made."],
                  "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + run,
                  "rationaleSummary": "Blocked before execution."}
        self.rejected(dict(self.d.tokens(), artifact_type="UserReport", body=report), "honest blocked UserReport")
        report["findingRefs"] = [f"artifact://{run}/prompt-review-02"]
        payload = self.server.ok("telic_submit_artifact", dict(self.d.tokens(), artifact_type="UserReport", body=report))
        self.assertEqual(payload["run"]["status"], "blocked")
        self.assertEqual(payload["nextAction"]["reportRef"], f"artifact://{run}/user-report-blocked")

    # covers TEL-004 TEL-007: a crash mid-run loses nothing; a restarted server continues the run to completion.
    def test_crash_and_restart_mid_run(self):
        self.d.run_steps(until="opens the mutation gate")
        version = self.d.run["version"]
        self.server.kill()
        self.server = serve(self.ws)
        self.d.server = self.server
        payload = self.server.ok("telic_get_run", {"run_id": self.d.run["runId"]})
        self.assertEqual(payload["run"]["version"], version)
        self.d._update(payload)
        started = False
        for step in self.scenario["steps"]:
            started = started or "opens the mutation gate" in step.get("say", "")
            if started:
                self.d.do(step)
        self.assertEqual(self.d.run["status"], "completed")
        report = self.server.ok("telic_replay_run", {"run_id": self.d.run["runId"]})["report"]
        self.assertTrue(report["stateCheck"]["consistent"])

    # covers TEL-186: credentials in a permission target are redacted before they reach the trace.
    def test_secrets_never_reach_the_trace(self):
        step = self.d.run_steps(until="the executor reports the fix")
        body = self.d.body(step)
        body["actions"][0]["target"] = "docs/password=hunter2hunter2.py"
        body["filesChanged"][0]["path"] = "docs/password=hunter2hunter2.py"
        self.server.fails("telic_submit_artifact", self.d.submit_args(step, body))
        text = str(self.trace())
        self.assertNotIn("hunter2hunter2", text)

    # covers TEL-007 TEL-015: Evidence is idempotent by content; a conflicting replay is refused.
    def test_evidence_replay_is_idempotent(self):
        step = self.d.run_steps(until="captures the source as evidence")
        first = self.d.do(step)
        events = len(self.trace())
        again = self.server.ok("telic_submit_artifact", self.d.submit_args(step))
        self.assertEqual(again["artifact"], first["artifact"])
        self.assertEqual(len(self.trace()), events)
        changed = self.d.body(step)
        changed["summary"] = "Different."
        self.rejected(self.d.submit_args(step, changed), "Supporting artifact replay conflicts")
        secret = self.d.body(step)
        secret["id"] = "evidence-secret"
        secret["content"] = "token=ghp_abcdefghijklmnopqrstuvwxyz0123"
        self.rejected(self.d.submit_args(step, secret), "likely credential")


if __name__ == "__main__":
    run_tests(sys.argv)
