"""Runs in the other modes and topologies, and the honest non-completed
endings (partial, failed_verification), over real stdio MCP (issue 5)."""

import copy
import sys
import unittest

from mcp_client import Workspace, apply_file_change, run_tests, serve
import scenario as sc

READ_ONLY = {"repository": {"read": ["**"], "write": [], "delete": []},
             "shell": {"inspect": False, "executeAllowlist": []}, "runtime": {"inspect": [], "restart": []},
             "browser": {"inspect": False, "mutateState": False},
             "network": {"readDomains": [], "externalWrite": False},
             "subagents": {"spawn": False, "maximumChildren": 0, "maximumDepth": 0}}


class Host:
    """A small host: tracks tokens and submits bodies."""

    def __init__(self, server):
        self.server = server
        self.run = self.action = None

    def update(self, payload):
        if "run" in payload:
            self.run = sc.merge_run(self.run, payload["run"])
        if "nextAction" in payload:
            self.action = sc.merge_action(self.action, payload["nextAction"])
        return payload

    def start(self, **args):
        self.update(self.server.ok("telic_start_run", args))
        self.id = self.run["runId"]
        env = self.server.ok("telic_get_artifact", {"run_id": self.id, "artifact_id": self.id})["artifact"]["body"]
        self.request = env["originalRequestRef"]

    def ref(self, artifact_id):
        return f"artifact://{self.id}/{artifact_id}"

    def tokens(self):
        return {"run_id": self.id, "action_id": self.action["id"], "expected_run_version": self.run["version"]}

    def ground(self):
        return self.update(self.server.ok("telic_ground_context", self.tokens()))

    def submit(self, artifact_type, body, **extra):
        body = dict(body, schemaVersion="1.0", runId=self.id)
        return self.update(self.server.ok("telic_submit_artifact", dict(self.tokens(), artifact_type=artifact_type,
                                                                          body=body, **extra)))

    def refuse(self, artifact_type, body, needle):
        body = dict(body, schemaVersion="1.0", runId=self.id)
        failure = self.server.fails("telic_submit_artifact", dict(self.tokens(), artifact_type=artifact_type, body=body))
        assert needle in failure["error"], failure
        return failure

    def frame(self, mode, criteria, facts=None, repo_fact=None):
        facts = facts or [{"id": "fact-1", "claim": "The user asked this.", "provenance": "user", "sourceRef": self.request}]
        if repo_fact:
            facts.append({"id": "fact-2", "claim": "The file exists.", "provenance": "repository", "sourceRef": repo_fact})
        return {"id": "frame-01", "originalRequestRef": self.request, "intentMode": mode, "goal": "Answer the request.",
                "knownFacts": facts, "inferences": [], "unknowns": [], "scope": {"include": ["src"], "exclude": []},
                "constraints": ["Read only."], "nonGoals": ["No changes."], "applicableRuleRefs": [],
                "draftAcceptanceCriteria": criteria, "clarification": {"required": False, "reason": None},
                "rationaleSummary": "Framed from the request."}


def criterion(cid, stage="completion"):
    return {"id": cid, "stage": stage, "requirement": f"Criterion {cid} holds.", "evidenceRequired": ["repository"]}


def gate(refs):
    return [{"id": "HG-1", "passed": True, "description": "Evidence exists.", "evidenceRefs": refs,
             "rationaleSummary": "Checked."}]


def review(h, decision, acceptance, plans, results, verification=(), kind="spot", remaining=1, order=None, findings=()):
    refs = [r for a in acceptance for r in a["evidenceRefs"]] or [plans[-1]]
    return {"id": f"quality-{len(h.server.ok('telic_get_run', {'run_id': h.id})['artifacts'])}",
            "taskContractRef": h.ref("contract-01"), "workPlanRefs": plans, "workResultRefs": results,
            "rubricId": "execution-quality-v1", "acceptanceResults": acceptance, "ruleCompliance": [],
            "regressionChecks": [], "verificationResults": list(verification), "findings": list(findings),
            "hardGates": gate(refs), "score": 90 if decision in ("pass", "proceed_to_fix") else 50,
            "remainingRemediations": remaining, "reviewKind": kind, "decision": decision, "diagnosisGate": None,
            "remediationWorkOrder": order, "rationaleSummary": "Reviewed."}


def passed(cid, refs):
    return {"criterionId": cid, "status": "pass", "evidenceRefs": refs, "rationaleSummary": "Holds."}


class ModesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)
        self.h = Host(self.server)

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def replay_consistent(self):
        report = self.server.ok("telic_replay_run", {"run_id": self.h.id})["report"]
        self.assertTrue(report["stateCheck"]["consistent"], report["stateCheck"])
        return report

    # covers TEL-221 TEL-228: a short report_only request runs micro: frame, spot-check, receipt, report.
    def test_micro_report_only_completes_with_a_verified_receipt(self):
        h = self.h
        h.start(original_request="What does src/app.ts export?", mode="report_only")
        self.assertEqual(h.run["topology"], "micro")
        h.ground()
        self.assertEqual(h.action["instructionRef"], "artifact://system/roles/scenario_author-micro-v1")
        two = h.frame("report_only", [criterion("AC-1"), criterion("AC-2")])
        h.refuse("ProblemFrame", two, "exactly one draft acceptance criterion")
        h.submit("ProblemFrame", h.frame("report_only", [criterion("AC-1")]))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        self.assertEqual(h.action["instructionRef"], "artifact://system/roles/quality_controller-spot-v1")
        artifacts = [a["id"] for a in self.server.ok("telic_get_run", {"run_id": h.id})["artifacts"]]
        self.assertIn("contract-01", artifacts)
        self.assertIn("plan-01", artifacts)
        plan = h.ref("plan-01")
        h.submit("QualityReview", review(h, "pass", [passed("AC-1", [plan])], [plan], []))
        self.assertEqual(h.action["phase"], "user_report")
        receipt = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": "receipt-01"})["artifact"]
        self.assertEqual(receipt["body"]["digestStatus"], "verified")
        report = {"id": "report-01", "terminalStatus": "completed", "summary": "It exports answer.",
                  "completionClaims": [{"id": "c1", "text": "It exports answer.", "status": "observed",
                                        "evidenceRefs": [plan], "confidence": 1}],
                  "findingRefs": [], "changeRefs": [], "verificationRefs": [], "unresolvedRisks": [],
                  "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + h.id,
                  "rationaleSummary": "Evidence-backed."}
        h.submit("UserReport", report)
        self.assertEqual(h.run["status"], "completed")
        events = [e["eventType"] for e in self.server.ok("telic_get_trace", {"run_id": h.id, "limit": 500})["events"]]
        self.assertIn("digest_verified", events)
        self.assertEqual(self.replay_consistent()["degraded"], True)

    # covers TEL-225: a partial micro spot-check escalates the run to standard contract review.
    def test_micro_partial_escalates_to_standard(self):
        h = self.h
        h.start(original_request="What does src/app.ts export?", mode="report_only")
        h.ground()
        h.submit("ProblemFrame", h.frame("report_only", [criterion("AC-1")]))
        plan = h.ref("plan-01")
        partial = review(h, "partial", [{"criterionId": "AC-1", "status": "unverified", "evidenceRefs": [],
                                         "rationaleSummary": "Not shown."}], [plan], [])
        partial["findings"] = [{"id": "F-1", "severity": "warning", "claim": "Unclear.", "sourceRefs": [plan],
                                "rubricDimension": None, "requiredCorrection": None, "preserveFields": [],
                                "correctionFields": [], "rationaleSummary": "Needs review."}]
        h.submit("QualityReview", partial)
        self.assertEqual(h.run["topology"], "standard")
        self.assertEqual(h.run["escalationCount"], 1)
        self.assertEqual(h.action["phase"], "agent_1_review")
        events = self.server.ok("telic_get_trace", {"run_id": h.id, "limit": 500})["events"]
        self.assertIn("MICRO_SPOT_PARTIAL", [e["rationaleSummary"] for e in events if e["eventType"] == "topology_escalated"])
        self.replay_consistent()

    def plan_only_until_audit(self):
        h = self.h
        h.start(original_request="Plan how to add a farewell function to src/app.ts without changing anything yet.",
                mode="plan_only")
        self.assertEqual(h.run["topology"], "standard")
        h.ground()
        h.submit("ProblemFrame", h.frame("plan_only", [criterion("AC-1")]))
        frame = h.frame("plan_only", [criterion("AC-1")])
        contract = {"id": "contract-01", "version": 1, "originalRequestRef": h.request,
                    "problemFrameRef": h.ref("frame-01"), "intentMode": "plan_only", "objective": "Produce a plan.",
                    "scope": frame["scope"], "constraints": frame["constraints"], "nonGoals": frame["nonGoals"],
                    "contextRefs": [], "ruleRefs": [], "permissions": READ_ONLY,
                    "acceptanceCriteria": frame["draftAcceptanceCriteria"], "requiredOutputs": ["A plan"],
                    "verificationRequirements": [], "stopConditions": ["Stop at the plan."], "assumptions": [],
                    "unresolvedQuestions": [], "rationaleSummary": "Plan only."}
        wide = copy.deepcopy(contract)
        wide["permissions"]["repository"]["write"] = ["**"]
        h.refuse("TaskContract", wide, "")
        h.submit("TaskContract", contract)
        cov = lambda src, fields: {"sourceRef": src, "contractFields": fields, "status": "covered"}
        h.submit("PromptReview", {
            "id": "prompt-review-01", "targetRef": h.ref("contract-01"), "rubricId": "contract-readiness-v1",
            "revisionNumber": 0,
            "coverage": [cov(h.request, ["objective", "intentMode"]),
                         cov(h.ref("frame-01"), ["scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs"]),
                         cov(h.ref("contract-01"), ["permissions", "contextRefs", "requiredOutputs",
                                                    "verificationRequirements", "stopConditions", "assumptions",
                                                    "unresolvedQuestions"])],
            "dimensionScores": {k: 100 for k in ["intentFidelity", "repositoryGrounding", "constraintsAndPermissions",
                                                 "testableAcceptance", "executionFeasibility", "contextEfficiency"]},
            "overallScore": 100, "hardGates": gate([h.request]), "findings": [], "decision": "pass",
            "rationaleSummary": "Ready."})
        node = {"id": "outline", "logicalRole": "executor", "objective": "Outline the change.", "dependsOn": [],
                "inputRefs": [h.ref("contract-01")], "contextRefs": [], "allowedTools": ["repository.read"],
                "requiredCapabilities": [], "permissions": READ_ONLY, "outputType": "WorkResult",
                "acceptanceCriteria": ["AC-1"], "stopConditions": ["Stop."],
                "budgets": {"maximumToolCalls": 2, "maximumChildren": 0}}
        plan = {"id": "plan-01", "taskContractRef": h.ref("contract-01"), "executionMode": "serial", "nodes": [node],
                "joinRules": [], "globalBudgets": {"maximumToolCalls": 2, "maximumParallelWorkers": 1,
                                                   "maximumSubagentDepth": 0},
                "planValidation": "valid", "rationaleSummary": "The plan is the deliverable."}
        over = copy.deepcopy(plan)
        over["globalBudgets"]["maximumToolCalls"] = 1
        h.refuse("WorkPlan", over, "node tool budgets exceed the global budget")
        h.submit("WorkPlan", plan)
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        return h.ref("plan-01")

    def audit(self, decision, plan, matrix_status="supported", **extra):
        h = self.h
        body = {"id": "audit-01", "originalRequestRef": h.request, "taskContractRef": h.ref("contract-01"),
                "workPlanRefs": [plan], "workResultRefs": [], "qualityReviewRef": sc.input_refs(h.action)[-1],
                "userFidelity": [{"id": "fid-1", "subjectRef": h.request, "description": "Matches.", "status": "pass",
                                  "evidenceRefs": [plan], "rationaleSummary": "Yes."}],
                "modeCompliance": "pass",
                "claimEvidenceMatrix": [{"claimId": "claim-1", "claim": "The plan covers AC-1.", "criterionIds": ["AC-1"],
                                         "basis": "direct", "status": matrix_status, "evidenceRefs": [plan],
                                         "rationaleSummary": "See plan."}],
                "unresolvedRisks": [] if decision == "release" else ["The plan is incomplete."], "findings": [],
                "remainingRemediations": 1, "decision": decision, "remediationDefect": None,
                "userReportRef": h.ref("report-01"), "rationaleSummary": "Audited."}
        body.update(extra)
        return body

    # covers TEL-008 TEL-221 TEL-227 TEL-228: plan_only skips execution; the plan is the deliverable; release then completed.
    def test_plan_only_standard_completes(self):
        h = self.h
        plan = self.plan_only_until_audit()
        h.submit("QualityReview", review(h, "pass", [passed("AC-1", [plan])], [plan], []))
        self.assertEqual(h.action["phase"], "agent_5_release_audit")
        qr = [a for a in self.server.ok("telic_get_run", {"run_id": h.id})["artifacts"] if a["type"] == "QualityReview"][-1]
        audit = self.audit("release", plan, qualityReviewRef=h.ref(qr["id"]))
        stale = dict(audit, workPlanRefs=[])
        h.refuse("ReleaseAudit", stale, "")
        h.submit("ReleaseAudit", audit)
        self.assertEqual(h.action["phase"], "user_report")
        claim = {"id": "claim-1", "text": "The plan covers AC-1.", "status": "observed", "evidenceRefs": [plan],
                 "confidence": 1}
        report = {"id": "report-01", "terminalStatus": "completed", "summary": "Plan ready.",
                  "completionClaims": [claim], "findingRefs": [], "changeRefs": [], "verificationRefs": [],
                  "unresolvedRisks": [], "permissionsHonored": True, "nextActions": [],
                  "traceRef": "trace://" + h.id, "rationaleSummary": "Done."}
        h.refuse("UserReport", dict(report, completionClaims=[dict(claim, text="Something else.")]),
                 "not approved by the ReleaseAudit evidence matrix")
        h.submit("UserReport", report)
        self.assertEqual(h.run["status"], "completed")
        self.replay_consistent()

    # covers TEL-229 TEL-245: a partial audit can only end partial or failed_verification, never completed.
    def test_partial_audit_ends_partial(self):
        h = self.h
        plan = self.plan_only_until_audit()
        h.submit("QualityReview", review(h, "pass", [passed("AC-1", [plan])], [plan], []))
        qr = [a for a in self.server.ok("telic_get_run", {"run_id": h.id})["artifacts"] if a["type"] == "QualityReview"][-1]
        h.submit("ReleaseAudit", self.audit("partial", plan, matrix_status="unverified", qualityReviewRef=h.ref(qr["id"])))
        report = {"id": "report-01", "terminalStatus": "completed", "summary": "Plan ready.", "completionClaims": [],
                  "findingRefs": [h.ref("audit-01")], "changeRefs": [], "verificationRefs": [],
                  "unresolvedRisks": ["Incomplete."], "permissionsHonored": True, "nextActions": [],
                  "traceRef": "trace://" + h.id, "rationaleSummary": "Honest."}
        h.refuse("UserReport", report, "")
        h.refuse("UserReport", dict(report, terminalStatus="failed_verification"),
                 "failed_verification requires an incomplete required verification")
        h.submit("UserReport", dict(report, terminalStatus="partial"))
        self.assertEqual(h.run["status"], "partial")
        self.assertEqual(h.action["status"], "partial")
        self.replay_consistent()

    # covers TEL-224 TEL-239 TEL-245: the shared remediation is used once; the next review cannot remediate again.
    def test_remediation_used_then_exhausted(self):
        h = self.h
        plan = self.plan_only_until_audit()
        order = {"id": "order-1", "failedCriterionIds": ["AC-1"], "objective": "Redo the outline.",
                 "allowedCapabilities": [], "permissions": READ_ONLY, "sourceRefs": [plan], "maximumToolCalls": 2,
                 "rationaleSummary": "One bounded retry."}
        fail = {"criterionId": "AC-1", "status": "fail", "evidenceRefs": [plan], "rationaleSummary": "Incomplete."}
        finding = {"id": "F-1", "severity": "blocking", "claim": "The outline misses a step.", "sourceRefs": [plan],
                   "rubricDimension": None, "requiredCorrection": "Add the missing step.", "preserveFields": [],
                   "correctionFields": [], "rationaleSummary": "Bounded."}
        remediate = review(h, "remediate", [fail], [plan], [], order=order, findings=[finding])
        remediate["hardGates"][0]["passed"] = False
        h.submit("QualityReview", remediate)
        self.assertEqual(h.action["phase"], "agent_3_plan")
        self.assertEqual(h.action["remainingBudgets"]["postExecutionRemediations"], 0)
        qr = [a for a in self.server.ok("telic_get_run", {"run_id": h.id})["artifacts"] if a["type"] == "QualityReview"][-1]
        plan2 = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": "plan-01"})["artifact"]["body"]
        plan2 = {k: v for k, v in plan2.items() if k not in ("schemaVersion", "runId")}
        plan2["id"] = "plan-02"
        plan2["nodes"][0]["allowedTools"] = []  # within the order's (empty) capabilities
        h.refuse("WorkPlan", plan2, "Every scoped node must reference its controlling review or audit")
        plan2["nodes"][0]["inputRefs"].append(h.ref(qr["id"]))
        h.submit("WorkPlan", plan2)
        fail = dict(fail, evidenceRefs=[h.ref("plan-02")])
        finding = dict(finding, sourceRefs=[h.ref("plan-02")])
        again = review(h, "remediate", [fail], [h.ref("plan-02")], [], order=dict(order, sourceRefs=[h.ref("plan-02")]),
                       remaining=0, findings=[finding])
        self.server.fails("telic_submit_artifact", dict(h.tokens(), artifact_type="QualityReview",
                                                         body=dict(again, schemaVersion="1.0", runId=h.id)))
        blocked = review(h, "block", [fail], [h.ref("plan-02")], [], remaining=0, findings=[finding])
        blocked["hardGates"][0]["passed"] = False
        h.submit("QualityReview", blocked)
        self.assertEqual(h.action["phase"], "agent_5_release_audit")
        self.assertEqual(h.run["outcomeHint"], "blocked")
        self.replay_consistent()

    # covers TEL-178 TEL-222 TEL-223: micro fix_only: bootstrap plan, one executor node, verification after the write.
    def test_micro_fix_only_completes(self):
        h = self.h
        h.start(original_request="Fix the typo in src/app.ts", mode="fix_only",
                host_capabilities=["repository.read", "repository.write"])
        self.assertEqual(h.run["topology"], "micro")
        h.ground()
        selected = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": h.action["contextManifestRef"].rsplit("/", 1)[1]})
        h.submit("ProblemFrame", h.frame("fix_only", [criterion("AC-1")]))
        self.assertEqual(h.action["phase"], "agent_4_execute")
        self.assertEqual(h.action["workNodeId"], "micro-execute")
        self.assertEqual(h.action["effectivePermissions"]["repository"]["write"], ["**"])
        self.assertIn("Evidence", h.action["additionalOutputSchemas"])
        ev = lambda i, kind: {"id": i, "kind": kind, "capturedAt": "2026-12-02T10:00:00.000Z", "summary": "Captured.",
                              "contentType": "text/plain", "encoding": "utf8", "content": "export const answer = 42;",
                              "sourceRefs": [], "redactions": [], "rationaleSummary": "Host capture."}
        h.submit("Evidence", ev("diff-1", "diff"))
        h.submit("Evidence", ev("read-1", "repository"))
        action = lambda i, cap, mutating, refs: {"id": i, "capability": cap, "target": "src/app.ts", "mutating": mutating,
                                                 "status": "completed", "evidenceRefs": refs, "rationaleSummary": "Done."}
        before, after = apply_file_change(self.ws.repo, "src/app.ts", "modified")  # telic checks the claimed hashes
        result = {"id": "result-1", "workPlanRef": h.ref("plan-01"), "nodeId": "micro-execute", "status": "completed",
                  "observations": [], "inferences": [],
                  "actions": [action("p", "repository.read", False, [h.ref("read-1")]),
                              action("w", "repository.write", True, [h.ref("diff-1")]),
                              action("r", "repository.read", False, [h.ref("read-1")])],
                  "filesChanged": [{"path": "src/app.ts", "changeType": "modified", "beforeHash": before,
                                    "afterHash": after, "diffRef": h.ref("diff-1")}],
                  "toolEventRefs": [], "evidenceRefs": [h.ref("diff-1"), h.ref("read-1")], "testResults": [],
                  "acceptanceCoverage": [passed("AC-1", [h.ref("read-1")])], "unresolvedIssues": [], "deviations": [],
                  "rationaleSummary": "Fixed and re-read."}
        early = copy.deepcopy(result)
        early["actions"] = [early["actions"][2], early["actions"][1]]
        h.refuse("WorkResult", early, "must run after the final mutating action")
        # covers TEL-031: the write may not come first; a preflight read must precede it (D57).
        no_preflight = copy.deepcopy(result)
        no_preflight["actions"] = no_preflight["actions"][1:]
        h.refuse("WorkResult", no_preflight, "fix_only execution must begin with a minimal preflight")
        h.submit("WorkResult", result)
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        verification = [{"requirementId": "VR-MICRO", "capability": "repository.read", "status": "pass",
                         "evidenceRefs": [h.ref("read-1")], "rationaleSummary": "Re-read after the write."}]
        h.submit("QualityReview", review(h, "pass", [passed("AC-1", [h.ref("read-1")])], [h.ref("plan-01")],
                                         [h.ref("result-1")], verification))
        self.assertEqual(h.action["phase"], "user_report")
        report = {"id": "report-01", "terminalStatus": "completed", "summary": "Typo fixed.",
                  "completionClaims": [{"id": "c1", "text": "Fixed.", "status": "observed",
                                        "evidenceRefs": [h.ref("read-1")], "confidence": 1}],
                  "findingRefs": [], "changeRefs": [], "verificationRefs": [], "unresolvedRisks": [],
                  "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + h.id,
                  "rationaleSummary": "Evidence-backed."}
        h.refuse("UserReport", report, "changeRefs must retain every accepted WorkResult diff")
        report["changeRefs"] = [h.ref("diff-1")]
        h.submit("UserReport", report)
        self.assertEqual(h.run["status"], "completed")
        self.replay_consistent()


if __name__ == "__main__":
    run_tests(sys.argv)
