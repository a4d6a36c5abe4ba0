"""Terminal outcomes of every intent mode, driven over real stdio MCP.

Each test runs one complete run against a fresh `telic serve` and ends it in
one terminal state, then checks the terminal NextAction, the stored UserReport,
the run summary, `telic_replay_run` (state check consistent, no differences),
the last trace event, and that the run accepts nothing more.

The trace's last event: a cancellation writes `run_cancelled`, projected as
`run_terminated`; a run ended by its UserReport ends with the `phase_submitted`
event of that report ("Run reached terminal status <status>."), which is what
PROTOCOL §17.1 specifies (only run_cancelled maps to run_terminated).

Which (mode, terminal) pairs the controller can reach, and where each is reached:

report_only
  completed            test_modes.ModesTest.test_micro_report_only_completes_with_a_verified_receipt (micro)
  partial              here: test_report_only_standard_partial
  blocked              here: test_report_only_standard_blocked
  failed_verification  not honestly reachable: report_only authorizes no capability, so its contract can hold no
                       permission-backed required verification, and the audited path refuses failed_verification
                       when every required verification passed (shown in test_report_only_standard_partial).
                       (The micro path sets no such rule, PROTOCOL §15.10: it accepts failed_verification
                       after a passed spot-check of a contract without any verification requirement.)
  cancelled            test_stdio_protocol.StdioProtocolTest.test_cancel_checks_tokens_then_is_terminal,
                       test_http_transport.HttpTransportTest.test_a_run_end_to_end_over_http,
                       test_multi_instance.*.test_complete_runs_alternately_through_both_instances
plan_only
  completed            test_modes.ModesTest.test_plan_only_standard_completes
  partial              test_modes.ModesTest.test_partial_audit_ends_partial
  blocked              here: test_plan_only_contract_block_ends_blocked
  failed_verification  here: test_plan_only_failed_verification
  cancelled            here: test_plan_only_cancelled
analyze_only
  completed            here: test_analyze_only_standard_completes
  partial              here: test_analyze_only_partial
  blocked              here: test_analyze_only_blocked
  failed_verification  here: test_analyze_only_failed_verification
  cancelled            here: test_analyze_only_cancelled_during_execution
fix_only (a fix_only run that may write is micro or forensic: the write grant is an ELEVATED_CAPABILITY signal and
          topologyOverride standard is refused with it (PROTOCOL §11.1), so "non-micro" means forensic here;
          a standard fix_only run has no write grant and can never pass its fix review)
  completed            test_modes.ModesTest.test_micro_fix_only_completes (micro);
                       here: test_fix_only_forensic_completes (preflight, write, re-read, reverify, audit)
  partial              here: test_fix_only_partial
  blocked              here: test_fix_only_preflight_blocks
  failed_verification  here: test_fix_only_failed_verification
  cancelled            test_broker.BrokerTest.test_check_tool_action_and_hook_agree_and_are_traced (a forensic
                       fix_only run cancelled right after start; it checks the broker, not the terminal action)
analyze_and_fix (always forensic)
  completed            test_full_runs.FullRunTest.test_analyze_and_fix_completes_through_every_phase,
                       test_run_rules.RunRulesTest.test_crash_and_restart_mid_run
  partial              here: test_analyze_and_fix_partial
  blocked              test_run_rules.RunRulesTest.test_block_after_revision_ends_blocked,
                       test_run_rules.RunRulesTest.test_second_clarification_routes_to_blocked_report
  failed_verification  here: test_analyze_and_fix_failed_verification
  cancelled            test_run_rules.RunRulesTest.test_cancel_mid_run, test_clarification_cancel_and_new_run

Failed_verification is a UserReport terminalStatus: the run's status is then `partial` and its terminal
NextAction's status `failed_verification` (PROTOCOL §9.4, PROTOCOL §10.3; TEL-229).
"""

import copy
import hashlib
import os
import sys
import unittest

from mcp_client import Workspace, run_tests, serve
import scenario as sc
import test_modes as modes

APP = "src/app.ts"
ORIGINAL = "export const answer = 42;\n"  # what mcp_client.Workspace commits
FIXED = "export const answer = 43;\n"


def permissions(read=(), write=(), inspect=False):
    return {"repository": {"read": list(read), "write": list(write), "delete": []},
            "shell": {"inspect": inspect, "executeAllowlist": []}, "runtime": {"inspect": [], "restart": []},
            "browser": {"inspect": False, "mutateState": False},
            "network": {"readDomains": [], "externalWrite": False},
            "subagents": {"spawn": False, "maximumChildren": 0, "maximumDepth": 0}}


NOTHING = permissions()
READ = permissions(read=["**"])
READ_WRITE = permissions(read=["**"], write=["src/**"])


def sha256_ref(text):
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class Host(modes.Host):
    """Plays the host: keeps the run tokens, submits bodies, reads back state."""

    def __init__(self, test, server):
        super().__init__(server)
        self.test = test
        self.id = self.request = None

    def start(self, **args):
        super().start(**args)
        return self

    def args(self, artifact_type, body, source_refs=None):
        args = dict(self.tokens(), artifact_type=artifact_type, body=dict(body, schemaVersion="1.0", runId=self.id))
        if source_refs is not None:
            args["source_refs"] = source_refs
        return args

    def submit(self, artifact_type, body, source_refs=None):
        return self.update(self.server.ok("telic_submit_artifact", self.args(artifact_type, body, source_refs)))

    def refuse(self, artifact_type, body, needle):
        """A submission the controller must refuse, leaving the run untouched."""
        before = self.server.ok("telic_get_run", {"run_id": self.id})
        failure = self.server.fails("telic_submit_artifact", self.args(artifact_type, body))
        self.test.assertIn(needle, failure["error"])
        after = self.server.ok("telic_get_run", {"run_id": self.id})
        self.test.assertEqual((after["run"], len(after["artifacts"])), (before["run"], len(before["artifacts"])))
        return failure

    def capture(self, evidence_id, kind, content, summary):
        """Stores host-captured Evidence (only possible while executing)."""
        body = {"id": evidence_id, "kind": kind, "capturedAt": sc.now_iso(), "summary": summary,
                "contentType": "text/plain", "encoding": "utf8", "content": content, "sourceRefs": [],
                "redactions": [], "rationaleSummary": "Captured directly by the host."}
        self.submit("Evidence", body)
        return self.ref(evidence_id)

    def cancel(self):
        return self.update(self.server.ok("telic_cancel_run", self.tokens()))

    def remediations(self):
        return self.run["budgets"]["postExecutionRemediationsRemaining"]


class Driven:
    """Adapts a scenario.Driver to the Host interface used by the terminal checks."""

    def __init__(self, driver):
        self.driver = driver

    @property
    def run(self):
        return self.driver.run

    @property
    def action(self):
        return self.driver.action

    @property
    def id(self):
        return self.driver.run["runId"]

    def ref(self, artifact_id):
        return f"artifact://{self.id}/{artifact_id}"

    def tokens(self):
        return self.driver.tokens()


# ---------------------------------------------------------------- artifact bodies

def criterion(cid, requirement, evidence=("repository",)):
    return {"id": cid, "stage": "completion", "requirement": requirement, "evidenceRequired": list(evidence)}


def requirement(vid, capability, description):
    return {"id": vid, "stage": "completion", "description": description, "required": True, "capability": capability,
            "fallback": "Report the check as not verified."}


def frame(h, mode, goal, criteria, constraints=("Stay inside src.",)):
    return {"id": "frame-01", "originalRequestRef": h.request, "intentMode": mode, "goal": goal,
            "knownFacts": [{"id": "fact-1", "claim": "The user stated the task.", "provenance": "user",
                            "sourceRef": h.request}],
            "inferences": [], "unknowns": [], "scope": {"include": ["src"], "exclude": []},
            "constraints": list(constraints), "nonGoals": ["Do not touch files outside src."],
            "applicableRuleRefs": [], "draftAcceptanceCriteria": criteria,
            "clarification": {"required": False, "reason": None}, "rationaleSummary": "Framed from the request."}


def contract(h, framed, perms, verifications):
    return {"id": "contract-01", "version": 1, "originalRequestRef": h.request, "problemFrameRef": h.ref("frame-01"),
            "intentMode": framed["intentMode"], "objective": framed["goal"], "scope": framed["scope"],
            "constraints": framed["constraints"], "nonGoals": framed["nonGoals"], "contextRefs": [], "ruleRefs": [],
            "permissions": perms, "acceptanceCriteria": framed["draftAcceptanceCriteria"],
            "requiredOutputs": ["An evidence-backed result"], "verificationRequirements": verifications,
            "stopConditions": ["Stop at the edge of the contract."], "assumptions": [], "unresolvedQuestions": [],
            "rationaleSummary": "Preserves the frame within the run's authority."}


def prompt_review(h, decision="pass"):
    covered = lambda source, fields: {"sourceRef": source, "contractFields": fields, "status": "covered"}
    return {"id": "prompt-review-01", "targetRef": h.ref("contract-01"), "rubricId": "contract-readiness-v1",
            "revisionNumber": 0,
            "coverage": [covered(h.request, ["objective", "intentMode"]),
                         covered(h.ref("frame-01"), ["scope", "constraints", "nonGoals", "acceptanceCriteria",
                                                     "ruleRefs"]),
                         covered(h.ref("contract-01"), ["permissions", "contextRefs", "requiredOutputs",
                                                        "verificationRequirements", "stopConditions", "assumptions",
                                                        "unresolvedQuestions"])],
            "dimensionScores": {k: 100 for k in ("intentFidelity", "repositoryGrounding", "constraintsAndPermissions",
                                                 "testableAcceptance", "executionFeasibility", "contextEfficiency")},
            "overallScore": 100,
            "hardGates": [{"id": "HG-intent", "passed": decision != "block",
                           "description": "The contract can deliver the request.", "evidenceRefs": [h.request],
                           "rationaleSummary": "Checked against the request."}],
            "findings": [], "decision": decision, "rationaleSummary": "Reviewed against the frozen rubric."}


def node(h, nid, tools, criteria, perms, depends=(), calls=None):
    return {"id": nid, "logicalRole": "executor", "objective": f"Carry out {nid}.", "dependsOn": list(depends),
            "inputRefs": [h.ref("contract-01")], "contextRefs": [], "allowedTools": list(tools),
            "requiredCapabilities": list(tools), "permissions": perms, "outputType": "WorkResult",
            "acceptanceCriteria": list(criteria), "stopConditions": ["Stop at the node's scope."],
            "budgets": {"maximumToolCalls": len(tools) + 1 if calls is None else calls, "maximumChildren": 0}}


def plan(pid, h, nodes):
    calls = sum(n["budgets"]["maximumToolCalls"] for n in nodes)
    return {"id": pid, "taskContractRef": h.ref("contract-01"), "executionMode": "serial", "nodes": nodes,
            "joinRules": [], "globalBudgets": {"maximumToolCalls": max(calls, 1), "maximumParallelWorkers": 1,
                                               "maximumSubagentDepth": 0},
            "planValidation": "valid", "rationaleSummary": "Serial nodes within the contract."}


def action(aid, capability, target, status="completed", evidence=()):
    mutating = capability in ("repository.write", "repository.delete")
    return {"id": aid, "capability": capability, "target": target, "mutating": mutating, "status": status,
            "evidenceRefs": list(evidence), "rationaleSummary": f"{capability} on {target} {status}."}


def covered(cid, status, evidence=()):
    return {"criterionId": cid, "status": status, "evidenceRefs": list(evidence),
            "rationaleSummary": f"{cid} is {status}."}


def result(rid, plan_ref, nid, status, actions, coverage, files=(), issues=()):
    evidence = []
    for a in actions:
        evidence += [r for r in a["evidenceRefs"] if r not in evidence]
    return {"id": rid, "workPlanRef": plan_ref, "nodeId": nid, "status": status, "observations": [],
            "inferences": [], "actions": actions, "filesChanged": list(files), "toolEventRefs": [],
            "evidenceRefs": evidence, "testResults": [], "acceptanceCoverage": coverage,
            "unresolvedIssues": list(issues), "deviations": [], "rationaleSummary": f"Node {nid} ended {status}."}


def verified(vid, capability, status, evidence=()):
    return {"requirementId": vid, "capability": capability, "status": status, "evidenceRefs": list(evidence),
            "rationaleSummary": f"{vid} is {status}."}


def finding(fid, claim, sources, severity="warning"):
    return {"id": fid, "severity": severity, "claim": claim, "sourceRefs": list(sources), "rubricDimension": None,
            "requiredCorrection": None, "preserveFields": [], "correctionFields": [], "rationaleSummary": claim}


def quality(h, qid, decision, plans, results, acceptance, verifications, gate_refs, gate_passed=True, findings=(),
            kind="spot"):
    return {"id": qid, "taskContractRef": h.ref("contract-01"), "workPlanRefs": plans, "workResultRefs": results,
            "rubricId": "execution-quality-v1", "acceptanceResults": acceptance, "ruleCompliance": [],
            "regressionChecks": [], "verificationResults": verifications, "findings": list(findings),
            "hardGates": [{"id": "HG-evidence", "passed": gate_passed, "description": "Claims rest on stored evidence.",
                           "evidenceRefs": gate_refs, "rationaleSummary": "Checked the stored evidence."}],
            "score": 90 if decision == "pass" else 40, "remainingRemediations": h.remediations(),
            "reviewKind": kind, "decision": decision, "diagnosisGate": None, "remediationWorkOrder": None,
            "rationaleSummary": f"Review decided {decision} from stored evidence."}


def claim(cid, text, criteria, status, evidence=()):
    return {"claimId": cid, "claim": text, "criterionIds": list(criteria), "basis": "direct", "status": status,
            "evidenceRefs": list(evidence), "rationaleSummary": f"The claim is {status}."}


def audit(h, decision, plans, results, quality_ref, matrix, fidelity_refs, fidelity="pass", risks=(), findings=()):
    return {"id": "audit-01", "originalRequestRef": h.request, "taskContractRef": h.ref("contract-01"),
            "workPlanRefs": plans, "workResultRefs": results, "qualityReviewRef": quality_ref,
            "userFidelity": [{"id": "fidelity-1", "subjectRef": h.request, "description": "The result answers the request.",
                              "status": fidelity, "evidenceRefs": fidelity_refs, "rationaleSummary": "Compared."}],
            "modeCompliance": "pass", "claimEvidenceMatrix": matrix, "unresolvedRisks": list(risks),
            "findings": list(findings), "remainingRemediations": h.remediations(), "decision": decision,
            "remediationDefect": None, "userReportRef": h.ref("report-01"), "rationaleSummary": f"Audit: {decision}."}


def report(h, status, claims=(), findings=(), changes=(), verifications=(), risks=()):
    return {"id": "report-01", "terminalStatus": status, "summary": f"The run ends {status}.",
            "completionClaims": [{"id": c["claimId"], "text": c["claim"], "status": "observed",
                                  "evidenceRefs": c["evidenceRefs"], "confidence": 1} for c in claims],
            "findingRefs": list(findings), "changeRefs": list(changes), "verificationRefs": list(verifications),
            "unresolvedRisks": list(risks), "permissionsHonored": True, "nextActions": [],
            "traceRef": "trace://" + h.id, "rationaleSummary": "Only audited claims and evidence."}


# ---------------------------------------------------------------- tests

class ModeOutcomesTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)
        self.h = Host(self, self.server)

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def read_app(self):
        with open(os.path.join(self.ws.repo, APP), encoding="utf-8") as handle:
            return handle.read()

    # covers TEL-004 TEL-236 (in every test): replay re-derives the same state from the stored artifacts and events,
    # and a terminal run issues no further phase action and accepts no further submission.
    def assert_terminal(self, terminal, report_id="report-01", host=None):
        """The run ended in `terminal`, consistently in every view of it."""
        h = host or self.h
        run_status = "partial" if terminal == "failed_verification" else terminal
        self.assertEqual(h.run["status"], run_status)
        terminal_action = h.action
        self.assertEqual((terminal_action["kind"], terminal_action["phase"], terminal_action["status"]),
                         ("terminal", run_status, terminal))
        self.assertEqual(terminal_action["reportRef"], h.ref(report_id) if report_id else None)
        self.assertEqual(self.server.ok("telic_get_next_action", {"run_id": h.id})["nextAction"], terminal_action)
        if report_id:
            stored = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": report_id})["artifact"]
            self.assertEqual(stored["type"], "UserReport")
            self.assertEqual(stored["body"]["terminalStatus"], terminal)
            self.assertEqual(stored["body"]["traceRef"], "trace://" + h.id)
        summaries = [r for r in self.server.ok("telic_list_runs", {"limit": 100})["runs"] if r["runId"] == h.id]
        self.assertEqual(summaries[0]["status"], run_status)
        replay = self.server.ok("telic_replay_run", {"run_id": h.id})["report"]
        self.assertTrue(replay["stateCheck"]["consistent"], replay["stateCheck"])
        self.assertEqual(replay["stateCheck"]["differences"], [])
        self.assertEqual(replay["stateCheck"]["rebuilt"]["status"], run_status)
        events = self.server.ok("telic_get_trace", {"run_id": h.id, "limit": 500})["events"]
        self.assertEqual([e["sequence"] for e in events], list(range(1, len(events) + 1)))
        last = events[-1]
        if terminal == "cancelled":
            self.assertEqual((last["eventType"], last["actor"]), ("run_terminated", "user"))
        else:
            self.assertEqual((last["eventType"], last["phase"], last["outputRefs"]),
                             ("phase_submitted", "user_report", [h.ref(report_id)]))
            self.assertEqual(last["rationaleSummary"], f"Run reached terminal status {run_status}.")
        late = {"id": "late-report", "runId": h.id, "schemaVersion": "1.0"}
        failure = self.server.fails("telic_submit_artifact", dict(h.tokens(), artifact_type="UserReport", body=late))
        self.assertIn("Run is not accepting a phase artifact", failure["error"])
        return events

    def contract_phases(self, mode, goal, criteria, perms, verifications, refused=()):
        """Frame, contract (after the refused variants) and contract review."""
        h = self.h
        framed = frame(h, mode, goal, criteria)
        h.submit("ProblemFrame", framed)
        self.assertEqual(h.action["phase"], "agent_2_compile")
        valid = contract(h, framed, perms, verifications)
        for change, needle in refused:
            bad = copy.deepcopy(valid)
            change(bad)
            h.refuse("TaskContract", bad, needle)
        h.submit("TaskContract", valid)
        h.submit("PromptReview", prompt_review(h))

    # ------------------------------------------------------------ report_only (standard)

    def report_only_until_review(self):
        h = self.h
        h.start(original_request="Summarize what src/app.ts exports for the release notes.", mode="report_only",
                topology_override="standard")
        self.assertEqual(h.run["topology"], "standard")
        h.ground()
        no_grant = lambda c: c.update(permissions=READ, verificationRequirements=[
            requirement("VR-1", "repository.read", "Read the exported value.")])
        self.contract_phases("report_only", "Summarize the export.",
                             [criterion("AC-1", "The summary names the exported value.")], NOTHING, [],
                             refused=[(no_grant, "TaskContract permissions exceed immutable authorization")])
        self.assertEqual(h.action["phase"], "agent_3_plan")
        h.submit("WorkPlan", plan("plan-01", h, [node(h, "answer", [], ["AC-1"], NOTHING, calls=0)]))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        return h.ref("plan-01")

    # covers TEL-103 TEL-179 TEL-182 TEL-221 TEL-225 TEL-227 TEL-229 TEL-232: report_only skips execution; a partial
    # review and audit can only end partial (never completed), and no required verification can exist to fail.
    def test_report_only_standard_partial(self):
        h = self.h
        plan_ref = self.report_only_until_review()
        unclear = finding("F-1", "The summary cannot show which value is exported.", [plan_ref])
        h.submit("QualityReview", quality(h, "quality-01", "partial", [plan_ref], [],
                                          [covered("AC-1", "unverified")], [], [plan_ref], findings=[unclear]))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("agent_5_release_audit", "partial"))
        matrix = [claim("claim-1", "The summary names the exported value.", ["AC-1"], "unverified")]
        h.submit("ReleaseAudit", audit(h, "partial", [plan_ref], [], h.ref("quality-01"), matrix, [plan_ref],
                                       risks=["The exported value was not confirmed."]))
        self.assertEqual(h.action["phase"], "user_report")
        risks = ["The exported value was not confirmed."]
        h.refuse("UserReport", report(h, "partial", risks=risks),
                 "Non-completed UserReport must cite its controlling quality review or release audit")
        h.refuse("UserReport", report(h, "completed", findings=[h.ref("audit-01")], risks=risks,
                                      claims=[claim("claim-1", "The summary names the exported value.", ["AC-1"],
                                                    "supported", [plan_ref])]),
                 "UserReport terminalStatus must be partial or failed_verification after partial")
        h.refuse("UserReport", report(h, "failed_verification", findings=[h.ref("audit-01")], risks=risks),
                 "failed_verification requires an incomplete required verification")
        h.submit("UserReport", report(h, "partial", findings=[h.ref("audit-01")], risks=risks))
        self.assertEqual(h.run["outcomeHint"], "partial")
        self.assert_terminal("partial")

    # covers TEL-172 TEL-225 TEL-227 TEL-230 TEL-233: a blocked review cannot be downgraded by the audit or the report.
    def test_report_only_standard_blocked(self):
        h = self.h
        plan_ref = self.report_only_until_review()
        wrong = finding("F-1", "The plan answers a different question than the user asked.", [plan_ref], "blocking")
        h.submit("QualityReview", quality(h, "quality-01", "block", [plan_ref], [],
                                          [covered("AC-1", "fail", [plan_ref])], [], [plan_ref], gate_passed=False,
                                          findings=[wrong]))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("agent_5_release_audit", "blocked"))
        matrix = [claim("claim-1", "The summary names the exported value.", ["AC-1"], "unsupported")]
        blocked = audit(h, "block", [plan_ref], [], h.ref("quality-01"), matrix, [plan_ref], fidelity="fail",
                        findings=[wrong])
        h.refuse("ReleaseAudit", dict(blocked, decision="partial"),
                 "A blocked QualityReview cannot be downgraded by the ReleaseAudit")
        h.submit("ReleaseAudit", blocked)
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "blocked"))
        h.refuse("UserReport", report(h, "partial", findings=[h.ref("audit-01")]),
                 "UserReport terminalStatus must be blocked after block")
        h.submit("UserReport", report(h, "blocked", findings=[h.ref("audit-01"), h.ref("quality-01")]))
        self.assert_terminal("blocked")

    # ------------------------------------------------------------ plan_only

    def start_plan_only(self):
        h = self.h
        h.start(original_request="Plan how to rename the exported answer in src/app.ts; change nothing yet.",
                mode="plan_only")
        self.assertEqual(h.run["topology"], "standard")
        h.ground()

    # covers TEL-119 TEL-180 TEL-220 TEL-230 TEL-233: a contract review block goes straight to an honest blocked report.
    def test_plan_only_contract_block_ends_blocked(self):
        h = self.h
        self.start_plan_only()
        framed = frame(h, "plan_only", "Plan the rename.", [criterion("AC-1", "The plan lists every edit.")])
        h.submit("ProblemFrame", framed)
        h.submit("TaskContract", contract(h, framed, READ, []))
        unfounded = prompt_review(h, "block")
        unfounded["hardGates"][0]["passed"] = True
        h.refuse("PromptReview", unfounded, "block needs a failed hard gate or a blocking finding")
        h.submit("PromptReview", prompt_review(h, "block"))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "blocked"))
        uncited = report(h, "blocked", risks=["The contract cannot deliver the plan."])
        h.refuse("UserReport", uncited, "A pre-execution blocked run requires an honest blocked UserReport")
        h.refuse("UserReport", dict(uncited, terminalStatus="partial", findingRefs=[h.ref("prompt-review-01")]),
                 "A pre-execution blocked run requires an honest blocked UserReport")
        h.submit("UserReport", dict(uncited, findingRefs=[h.ref("prompt-review-01")]))
        self.assert_terminal("blocked")
        kinds = {a["type"] for a in self.server.ok("telic_get_run", {"run_id": h.id})["artifacts"]}
        self.assertNotIn("WorkPlan", kinds)

    # covers TEL-134 TEL-152 TEL-229 TEL-232: a required verification the plan_only review could not observe ends
    # failed_verification (run status partial), never completed.
    def test_plan_only_failed_verification(self):
        h = self.h
        self.start_plan_only()
        check = requirement("VR-1", "repository.read", "Confirm every file the plan names exists.")
        self.contract_phases("plan_only", "Plan the rename.", [criterion("AC-1", "The plan lists every edit.")], READ,
                             [check])
        unscheduled = plan("plan-01", h, [node(h, "outline", [], ["AC-1"], READ, calls=1)])
        h.refuse("WorkPlan", unscheduled,
                 "Required verification VR-1 using repository.read is not scheduled by a same-stage WorkPlan node")
        h.submit("WorkPlan", plan("plan-01", h, [node(h, "outline", ["repository.read"], ["AC-1"], READ)]))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        plan_ref = h.ref("plan-01")
        passing = quality(h, "quality-01", "pass", [plan_ref], [], [covered("AC-1", "pass", [plan_ref])],
                          [verified("VR-1", "repository.read", "unverified")], [plan_ref])
        h.refuse("QualityReview", passing, "Required verification VR-1 must pass before progression")
        h.submit("QualityReview", dict(passing, decision="partial", score=60,
                                       findings=[finding("F-1", "No read confirmed the named files.", [plan_ref])]))
        matrix = [claim("claim-1", "The plan lists every edit.", ["AC-1"], "supported", [plan_ref])]
        h.submit("ReleaseAudit", audit(h, "partial", [plan_ref], [], h.ref("quality-01"), matrix, [plan_ref],
                                       risks=["VR-1 never ran: the named files are unconfirmed."]))
        failed = report(h, "failed_verification", claims=matrix, findings=[h.ref("audit-01")],
                        risks=["VR-1 never ran: the named files are unconfirmed."])
        h.refuse("UserReport", dict(failed, terminalStatus="completed", verificationRefs=[]),
                 "Completed UserReport must retain every passed required verification")
        h.submit("UserReport", failed)
        self.assertEqual(h.run["outcomeHint"], "partial")
        self.assert_terminal("failed_verification")

    # covers TEL-234 TEL-236 TEL-251: a plan_only run cancelled at plan time accepts nothing afterwards.
    def test_plan_only_cancelled(self):
        h = self.h
        self.start_plan_only()
        self.contract_phases("plan_only", "Plan the rename.", [criterion("AC-1", "The plan lists every edit.")], READ, [])
        self.assertEqual(h.action["phase"], "agent_3_plan")
        version = h.run["version"]
        h.cancel()
        self.assertEqual(h.run["version"], version + 1)
        self.assert_terminal("cancelled", report_id=None)
        again = self.server.ok("telic_cancel_run", h.tokens())
        self.assertEqual(again["run"], h.run)

    # ------------------------------------------------------------ analyze_only

    def analyze_only_until_execute(self, inspect=False, refused=()):
        h = self.h
        h.start(original_request="Find where src/app.ts defines the exported answer and report its value.",
                mode="analyze_only",
                host_capabilities=["repository.read", "shell.inspect"] if inspect else ["repository.read"])
        self.assertEqual(h.run["topology"], "standard")
        h.ground()
        perms = permissions(read=["**"], inspect=inspect)
        checks = [requirement("VR-1", "repository.read", "Read the definition directly.")]
        tools = ["repository.read"]
        if inspect:
            checks.append(requirement("VR-2", "shell.inspect", "git.status shows the file is unmodified."))
            tools.append("shell.inspect")
        self.contract_phases("analyze_only", "Report the exported value.",
                             [criterion("AC-1", "Name the line that defines answer, with direct evidence.")], perms,
                             checks, refused=refused)
        h.submit("WorkPlan", plan("plan-01", h, [node(h, "inspect", tools, ["AC-1"], perms)]))
        self.assertEqual((h.action["phase"], h.action["workNodeId"]), ("agent_4_execute", "inspect"))
        self.assertEqual(h.action["effectivePermissions"]["repository"]["write"], [])
        return h.ref("plan-01")

    def analyze_only_read(self):
        """Executes the plan with one successful read; returns (evidence ref, result ref)."""
        h = self.h
        seen = h.capture("ev-read", "repository", "src/app.ts:1:" + self.read_app().strip(), "Line 1 defines answer.")
        h.submit("WorkResult", result("result-01", h.ref("plan-01"), "inspect", "completed",
                                      [action("read-1", "repository.read", APP, evidence=[seen])],
                                      [covered("AC-1", "pass", [seen])]))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        return seen, h.ref("result-01")

    def analyze_only_review_pass(self):
        h = self.h
        plan_ref = h.ref("plan-01")
        seen, done = self.analyze_only_read()
        h.submit("QualityReview", quality(h, "quality-01", "pass", [plan_ref], [done], [covered("AC-1", "pass", [seen])],
                                          [verified("VR-1", "repository.read", "pass", [seen])], [seen]))
        self.assertEqual(h.action["phase"], "agent_5_release_audit")
        return plan_ref, seen, done

    # covers TEL-029 TEL-222 TEL-223 TEL-225 TEL-227 TEL-228 TEL-231: a standard analyze_only run investigates
    # read-only, passes review and audit, and completes; writes are refused at every level.
    def test_analyze_only_standard_completes(self):
        h = self.h
        writes = lambda c: c["permissions"]["repository"].update(write=["src/**"])
        self.analyze_only_until_execute(refused=[(writes, "analyze_only may not grant mutating permissions")])
        edit = h.capture("ev-edit", "diff", "-export const answer = 42;\n+export const answer = 0;", "An edit.")
        sneaky = result("result-00", h.ref("plan-01"), "inspect", "completed",
                        [action("write-1", "repository.write", APP, evidence=[edit])], [covered("AC-1", "pass", [edit])])
        failure = h.refuse("WorkResult", sneaky, "analyze_only cannot accept mutating work")
        self.assertEqual(failure["code"], "permission_denied")
        plan_ref, seen, done = self.analyze_only_review_pass()
        receipt = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": "receipt-01"})["artifact"]["body"]
        self.assertEqual(receipt["digestStatus"], "verified")
        matrix = [claim("claim-1", "src/app.ts line 1 defines answer = 42.", ["AC-1"], "supported", [seen])]
        h.submit("ReleaseAudit", audit(h, "release", [plan_ref], [done], h.ref("quality-01"), matrix, [seen]))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "completed"))
        h.refuse("UserReport", report(h, "completed", claims=matrix),
                 "Completed UserReport must retain every passed required verification")
        h.submit("UserReport", report(h, "completed", claims=matrix, verifications=[seen]))
        self.assert_terminal("completed")
        self.assertEqual(self.read_app(), ORIGINAL)

    # covers TEL-227 TEL-229 TEL-232: an audit that keeps an unresolved risk ends partial even though review passed.
    def test_analyze_only_partial(self):
        h = self.h
        self.analyze_only_until_execute()
        plan_ref, seen, done = self.analyze_only_review_pass()
        matrix = [claim("claim-1", "src/app.ts line 1 defines answer = 42.", ["AC-1"], "supported", [seen])]
        risk = ["Other modules may re-export a different answer; they were not inspected."]
        h.submit("ReleaseAudit", audit(h, "partial", [plan_ref], [done], h.ref("quality-01"), matrix, [seen],
                                       risks=risk))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "partial"))
        h.refuse("UserReport", report(h, "failed_verification", claims=matrix, findings=[h.ref("audit-01")], risks=risk),
                 "failed_verification requires an incomplete required verification")
        h.submit("UserReport", report(h, "partial", claims=matrix, findings=[h.ref("audit-01")], risks=risk))
        self.assert_terminal("partial")

    # covers TEL-144 TEL-223 TEL-230 TEL-233: a failed read ends execution early; the blocked review ends blocked.
    def test_analyze_only_blocked(self):
        h = self.h
        plan_ref = self.analyze_only_until_execute()
        error = h.capture("ev-error", "tool_output", "read src/app.ts: permission denied by the host sandbox",
                          "The host could not read the file.")
        attempt = [action("read-1", "repository.read", APP, status="failed", evidence=[error])]
        h.refuse("WorkResult", result("result-01", plan_ref, "inspect", "completed", attempt,
                                      [covered("AC-1", "pass", [error])]),
                 "a completed result cannot contain a failed or denied action")
        h.submit("WorkResult", result("result-01", plan_ref, "inspect", "blocked", attempt,
                                      [covered("AC-1", "unverified")], issues=["src/app.ts could not be read."]))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        cannot = finding("F-1", "Nothing about the definition was observed.", [error], "blocking")
        h.submit("QualityReview", quality(h, "quality-01", "block", [plan_ref], [h.ref("result-01")],
                                          [covered("AC-1", "unverified")],
                                          [verified("VR-1", "repository.read", "fail", [error])], [error],
                                          gate_passed=False, findings=[cannot]))
        self.assertEqual(h.run["outcomeHint"], "blocked")
        matrix = [claim("claim-1", "src/app.ts defines answer.", ["AC-1"], "unverified")]
        h.submit("ReleaseAudit", audit(h, "block", [plan_ref], [h.ref("result-01")], h.ref("quality-01"), matrix,
                                       [error], fidelity="fail", findings=[cannot]))
        h.refuse("UserReport", report(h, "completed", claims=[dict(matrix[0], evidenceRefs=[error])]),
                 "Completed UserReport must retain every passed required verification")
        h.submit("UserReport", report(h, "blocked", findings=[h.ref("audit-01")],
                                      risks=["The host sandbox must allow reading src/app.ts."]))
        self.assert_terminal("blocked")

    # covers TEL-229 TEL-232: the criterion is shown but a required verification failed: failed_verification.
    def test_analyze_only_failed_verification(self):
        h = self.h
        plan_ref = self.analyze_only_until_execute(inspect=True)
        seen = h.capture("ev-read", "repository", "src/app.ts:1:" + self.read_app().strip(), "Line 1 defines answer.")
        error = h.capture("ev-status", "tool_output", "git.status: fatal: unable to read the index",
                          "git.status failed.")
        h.submit("WorkResult", result("result-01", plan_ref, "inspect", "partial",
                                      [action("read-1", "repository.read", APP, evidence=[seen]),
                                       action("status-1", "shell.inspect", "git.status", "failed", [error])],
                                      [covered("AC-1", "pass", [seen])], issues=["git.status failed."]))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        checks = [verified("VR-1", "repository.read", "pass", [seen]), verified("VR-2", "shell.inspect", "fail", [error])]
        review = quality(h, "quality-01", "pass", [plan_ref], [h.ref("result-01")], [covered("AC-1", "pass", [seen])],
                         checks, [seen])
        h.refuse("QualityReview", review, "Passing QualityReview requires every planned node to complete")
        h.submit("QualityReview", dict(review, decision="partial", score=60,
                                       findings=[finding("F-1", "VR-2 failed: the file state is unknown.", [error])]))
        matrix = [claim("claim-1", "src/app.ts line 1 defines answer = 42.", ["AC-1"], "supported", [seen])]
        risk = ["The working tree state of src/app.ts is unverified."]
        h.submit("ReleaseAudit", audit(h, "partial", [plan_ref], [h.ref("result-01")], h.ref("quality-01"), matrix,
                                       [seen], risks=risk))
        failed = report(h, "failed_verification", claims=matrix, findings=[h.ref("audit-01")], risks=risk,
                        verifications=[seen])
        h.refuse("UserReport", dict(failed, terminalStatus="completed"),
                 "Completed UserReport must retain every passed required verification")
        h.submit("UserReport", failed)
        self.assert_terminal("failed_verification")

    # covers TEL-234 TEL-236 TEL-251: cancelling during execution ends the run; its evidence stays stored.
    def test_analyze_only_cancelled_during_execution(self):
        h = self.h
        plan_ref = self.analyze_only_until_execute()
        seen = h.capture("ev-read", "repository", "src/app.ts:1:" + self.read_app().strip(), "Line 1 defines answer.")
        h.cancel()
        self.assert_terminal("cancelled", report_id=None)
        late = result("result-01", plan_ref, "inspect", "completed",
                      [action("read-1", "repository.read", APP, evidence=[seen])], [covered("AC-1", "pass", [seen])])
        self.assertIn("Run is not accepting a phase artifact",
                      self.server.fails("telic_submit_artifact", h.args("WorkResult", late))["error"])
        stored = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": "ev-read"})["artifact"]
        self.assertEqual(stored["type"], "Evidence")
        broker = self.server.ok("telic_check_tool_action", dict(h.tokens(), capability="repository.read", target=APP))
        self.assertFalse(broker["decision"]["allowed"])

    # ------------------------------------------------------------ fix_only (forensic: the write grant is elevated)

    def fix_only_until_fix(self, changed_meanwhile=False, refused=()):
        """Start, contract, plan (preflight then fix) and the preflight read; returns the plan ref.

        changed_meanwhile: someone else already set the value before the preflight, so the known fix no longer
        applies and the preflight reports blocked."""
        h = self.h
        h.start(original_request="Change the exported answer in src/app.ts from 42 to 43; nothing else.",
                mode="fix_only", host_capabilities=["repository.read", "repository.write", "shell.inspect"])
        self.assertEqual(h.run["topology"], "forensic")
        classified = [e for e in self.server.ok("telic_get_trace", {"run_id": h.id})["events"]
                      if e["eventType"] == "topology_classified"]
        self.assertEqual(classified[0]["rationaleSummary"], "ELEVATED_CAPABILITY")
        h.ground()
        self.contract_phases("fix_only", "Set the exported answer to 43.",
                             [criterion("AC-1", "src/app.ts exports answer = 43.", ("diff", "repository"))],
                             READ_WRITE, [requirement("VR-1", "repository.read", "Re-read src/app.ts after the change.")],
                             refused=refused)
        preflight = node(h, "preflight", ["repository.read"], [], READ, calls=1)
        fix = node(h, "fix", ["repository.write", "repository.read"], ["AC-1"], READ_WRITE, depends=["preflight"])
        h.submit("WorkPlan", plan("plan-01", h, [preflight, fix]))
        plan_ref = h.ref("plan-01")
        self.assertEqual((h.action["phase"], h.action["workNodeId"]), ("agent_4_execute", "preflight"))
        self.assertEqual(h.action["effectivePermissions"]["repository"]["write"], [])
        if changed_meanwhile:
            with open(os.path.join(self.ws.repo, APP), "w", encoding="utf-8") as handle:
                handle.write(FIXED)
        before = h.capture("ev-pre", "repository", "src/app.ts:1:" + self.read_app().strip(),
                           "The line before any change.")
        still = self.read_app() == ORIGINAL
        h.submit("WorkResult", result("result-pre", plan_ref, "preflight", "completed" if still else "blocked",
                                      [action("read-pre", "repository.read", APP, evidence=[before])], [],
                                      issues=[] if still else ["The known correction no longer applies."]))
        return plan_ref

    def write_fix(self):
        """The host's own edit of the working tree; returns the FileChange before the diff ref."""
        path = os.path.join(self.ws.repo, APP)
        with open(path, encoding="utf-8") as handle:
            old = handle.read()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(FIXED)
        return {"path": APP, "changeType": "modified", "beforeHash": sha256_ref(old), "afterHash": sha256_ref(FIXED)}

    def fix_only_applied(self, plan_ref):
        """The fix node: preflight done, the write and a re-read after it; returns (diff, after, result refs)."""
        h = self.h
        self.assertEqual(h.action["workNodeId"], "fix")
        self.assertEqual(h.action["effectivePermissions"]["repository"]["write"], ["src/**"])
        change = self.write_fix()
        diff = h.capture("ev-diff", "diff", "-export const answer = 42;\n+export const answer = 43;", "One-line diff.")
        after = h.capture("ev-after", "repository", "src/app.ts:1:" + self.read_app().strip(),
                          "The line after the change.")
        actions = [action("write-1", "repository.write", APP, evidence=[diff]),
                   action("read-1", "repository.read", APP, evidence=[after])]
        files = [dict(change, diffRef=diff)]
        early = result("result-fix", plan_ref, "fix", "completed", list(reversed(actions)),
                       [covered("AC-1", "pass", [after])], files)
        h.refuse("WorkResult", early, "Completion verification VR-1 must run after the final mutating action")
        h.submit("WorkResult", result("result-fix", plan_ref, "fix", "completed", actions,
                                      [covered("AC-1", "pass", [after])], files))
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        return diff, after, [h.ref("result-pre"), h.ref("result-fix")]

    def fix_only_reviews_pass(self, plan_ref, after, results):
        h = self.h
        review = quality(h, "quality-01", "pass", [plan_ref], results, [covered("AC-1", "pass", [after])],
                         [verified("VR-1", "repository.read", "pass", [after])], [after])
        h.submit("QualityReview", review)
        self.assertEqual(h.action["phase"], "agent_3_evidence_reverify")
        h.submit("QualityReview", dict(review, id="quality-02", reviewKind="evidence_reverify"))
        self.assertEqual(h.action["phase"], "agent_5_release_audit")

    # covers TEL-034 TEL-146 TEL-178 TEL-185 TEL-222 TEL-223 TEL-227 TEL-228 TEL-231: non-micro fix_only: a read-only
    # preflight node first, then the scoped write with its re-read after it, review, forensic reverify, audit, report.
    def test_fix_only_forensic_completes(self):
        h = self.h
        standard = self.server.fails("telic_start_run", {
            "original_request": "Change the exported answer in src/app.ts from 42 to 43; nothing else.",
            "mode": "fix_only", "host_capabilities": ["repository.read", "repository.write"],
            "topology_override": "standard"})
        self.assertIn("topologyOverride standard is incompatible with forensic classification signals", standard["error"])
        unverified = lambda c: c.update(verificationRequirements=[])
        plan_ref = self.fix_only_until_fix(refused=[(unverified, "fix_only needs at least one required verification")])
        self.assertEqual(self.read_app(), ORIGINAL)
        diff, after, results = self.fix_only_applied(plan_ref)
        self.assertEqual(self.read_app(), FIXED)
        self.fix_only_reviews_pass(plan_ref, after, results)
        self.assertEqual(self.server.fails("telic_get_artifact", {"run_id": h.id, "artifact_id": "receipt-01"})["code"],
                         "not_found")
        matrix = [claim("claim-1", "src/app.ts now exports answer = 43.", ["AC-1"], "supported", [after])]
        h.submit("ReleaseAudit", audit(h, "release", [plan_ref], results, h.ref("quality-02"), matrix, [after]))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "completed"))
        done = report(h, "completed", claims=matrix, verifications=[after])
        h.refuse("UserReport", done, "UserReport changeRefs must retain every accepted WorkResult diff exactly once")
        h.submit("UserReport", dict(done, changeRefs=[diff]))
        self.assert_terminal("completed")
        checks = [e for e in self.server.ok("telic_get_trace", {"run_id": h.id, "limit": 500})["events"]
                  if e["eventType"] == "permission_checked"]
        self.assertEqual([(e["permissionDecision"]["decision"], e["permissionDecision"]["capability"]) for e in checks],
                         [("allow", "repository.read"), ("allow", "repository.write"), ("allow", "repository.read")])

    # covers TEL-178 TEL-227 TEL-229 TEL-232: the fix is verified but the audit keeps a risk: partial, with the diff.
    def test_fix_only_partial(self):
        h = self.h
        plan_ref = self.fix_only_until_fix()
        diff, after, results = self.fix_only_applied(plan_ref)
        self.fix_only_reviews_pass(plan_ref, after, results)
        matrix = [claim("claim-1", "src/app.ts now exports answer = 43.", ["AC-1"], "supported", [after])]
        risk = ["Callers comparing answer with 42 were not checked."]
        h.submit("ReleaseAudit", audit(h, "partial", [plan_ref], results, h.ref("quality-02"), matrix, [after],
                                       risks=risk))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "partial"))
        partial = report(h, "partial", claims=matrix, findings=[h.ref("audit-01")], risks=risk, verifications=[after])
        h.refuse("UserReport", partial, "UserReport changeRefs must retain every accepted WorkResult diff exactly once")
        h.refuse("UserReport", dict(partial, changeRefs=[diff], terminalStatus="failed_verification"),
                 "failed_verification requires an incomplete required verification")
        h.submit("UserReport", dict(partial, changeRefs=[diff]))
        self.assert_terminal("partial")
        self.assertEqual(self.read_app(), FIXED)

    # covers TEL-223 TEL-230 TEL-233: the preflight finds the known correction no longer applies, so the fix node is
    # never offered; the blocked review, reverify and audit end blocked and the run changes nothing.
    def test_fix_only_preflight_blocks(self):
        h = self.h
        plan_ref = self.fix_only_until_fix(changed_meanwhile=True)
        self.assertEqual(h.action["phase"], "agent_3_quality_review")
        before = h.ref("ev-pre")
        stale = finding("F-1", "The line already reads 43: the known correction does not apply.", [before], "blocking")
        review = quality(h, "quality-01", "block", [plan_ref], [h.ref("result-pre")], [covered("AC-1", "unverified")],
                         [verified("VR-1", "repository.read", "unverified")], [before], gate_passed=False,
                         findings=[stale])
        h.submit("QualityReview", review)
        self.assertEqual(h.action["phase"], "agent_3_evidence_reverify")
        h.submit("QualityReview", dict(review, id="quality-02", reviewKind="evidence_reverify"))
        self.assertEqual(h.run["outcomeHint"], "blocked")
        matrix = [claim("claim-1", "src/app.ts exports answer = 43.", ["AC-1"], "unverified")]
        h.submit("ReleaseAudit", audit(h, "block", [plan_ref], [h.ref("result-pre")], h.ref("quality-02"), matrix,
                                       [before], fidelity="fail", findings=[stale]))
        h.submit("UserReport", report(h, "blocked", findings=[h.ref("audit-01")],
                                      risks=["Confirm with the user whether another change is wanted."]))
        self.assert_terminal("blocked")
        results = [a for a in self.server.ok("telic_get_run", {"run_id": h.id})["artifacts"] if a["type"] == "WorkResult"]
        self.assertEqual([a["id"] for a in results], ["result-pre"])
        self.assertEqual(self.read_app(), FIXED)  # as the other writer left it

    # covers TEL-144 TEL-178 TEL-229 TEL-232: the write happened but the re-read failed: failed_verification, the diff
    # is still reported.
    def test_fix_only_failed_verification(self):
        h = self.h
        plan_ref = self.fix_only_until_fix()
        files = [self.write_fix()]
        diff = h.capture("ev-diff", "diff", "-export const answer = 42;\n+export const answer = 43;", "One-line diff.")
        error = h.capture("ev-error", "tool_output", "read src/app.ts: Input/output error", "The re-read failed.")
        actions = [action("write-1", "repository.write", APP, evidence=[diff]),
                   action("read-1", "repository.read", APP, "failed", [error])]
        files[0]["diffRef"] = diff
        h.refuse("WorkResult", result("result-fix", plan_ref, "fix", "completed", actions,
                                      [covered("AC-1", "pass", [diff])], files),
                 "a completed result cannot contain a failed or denied action")
        h.submit("WorkResult", result("result-fix", plan_ref, "fix", "partial", actions, [covered("AC-1", "unverified")],
                                      files, issues=["The change was written but could not be re-read."]))
        results = [h.ref("result-pre"), h.ref("result-fix")]
        review = quality(h, "quality-01", "partial", [plan_ref], results, [covered("AC-1", "unverified")],
                         [verified("VR-1", "repository.read", "fail", [error])], [diff],
                         findings=[finding("F-1", "VR-1 failed after the write.", [error])])
        h.submit("QualityReview", review)
        h.submit("QualityReview", dict(review, id="quality-02", reviewKind="evidence_reverify"))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("agent_5_release_audit", "partial"))
        matrix = [claim("claim-1", "src/app.ts now exports answer = 43.", ["AC-1"], "unverified")]
        risk = ["The new value was written but never re-read."]
        h.submit("ReleaseAudit", audit(h, "partial", [plan_ref], results, h.ref("quality-02"), matrix, [diff],
                                       fidelity="fail", risks=risk))
        failed = report(h, "failed_verification", findings=[h.ref("audit-01")], risks=risk)
        h.refuse("UserReport", failed, "UserReport changeRefs must retain every accepted WorkResult diff exactly once")
        h.submit("UserReport", dict(failed, changeRefs=[diff]))
        self.assert_terminal("failed_verification")
        self.assertEqual(self.read_app(), FIXED)

    # ------------------------------------------------------------ analyze_and_fix (examples/analyze_and_fix.json)

    def scenario_driver(self):
        driver = sc.Driver(self.server, sc.load("analyze_and_fix"), self.ws.repo)
        driver.write_repository()
        driver.start()
        return driver

    def driven_submit(self, driver, artifact_type, body):
        driver._update(self.server.ok("telic_submit_artifact", dict(driver.tokens(), artifact_type=artifact_type,
                                                                     body=body)))

    def driven_refuse(self, driver, artifact_type, body, needle):
        failure = self.server.fails("telic_submit_artifact", dict(driver.tokens(), artifact_type=artifact_type, body=body))
        self.assertIn(needle, failure["error"])

    # covers TEL-182 TEL-227 TEL-229 TEL-232: the fix is verified and reverified, but the audit keeps a risk: partial.
    def test_analyze_and_fix_partial(self):
        d = self.scenario_driver()
        audit_step = d.run_steps(until="Agent 5 audits the release")
        body = d.body(audit_step)
        body.update(decision="partial", unresolvedRisks=["Other user-facing strings were not checked for typos."])
        self.driven_submit(d, "ReleaseAudit", body)
        self.assertEqual((d.action["phase"], d.run["outcomeHint"]), ("user_report", "partial"))
        final = d.body(d.step("Agent 5 writes the user report"))
        final.update(terminalStatus="partial", findingRefs=[f"artifact://{d.run['runId']}/release-audit-01"],
                     unresolvedRisks=body["unresolvedRisks"])
        self.driven_refuse(d, "UserReport", dict(final, terminalStatus="failed_verification"),
                           "failed_verification requires an incomplete required verification")
        self.driven_refuse(d, "UserReport", dict(final, terminalStatus="completed"),
                           "UserReport terminalStatus must be partial or failed_verification after partial")
        self.driven_submit(d, "UserReport", final)
        self.assert_terminal("partial", report_id="user-report-01", host=Driven(d))

    # covers TEL-160 TEL-178 TEL-229 TEL-232: after the gated fix the completion re-read fails: the review keeps the
    # diagnosis verification, records VR-COMP as failed, and the run ends failed_verification with the diff reported.
    def test_analyze_and_fix_failed_verification(self):
        d = self.scenario_driver()
        d.run_steps(until="the executor stores the re-read")
        run = d.run["runId"]
        ref = lambda aid: f"artifact://{run}/{aid}"
        error = {"schemaVersion": "1.0", "id": "evidence-reread-error", "runId": run, "kind": "tool_output",
                 "capturedAt": sc.now_iso(), "summary": "The re-read failed.", "contentType": "text/plain",
                 "encoding": "utf8", "content": "read src/greet.py: Input/output error", "sourceRefs": [],
                 "redactions": [], "rationaleSummary": "Captured directly by the host."}
        self.driven_submit(d, "Evidence", error)
        fix = d.body(d.step("the executor reports the fix"))
        fix["actions"][1].update(status="failed", evidenceRefs=[ref("evidence-reread-error")])
        fix.update(status="partial", observations=[], evidenceRefs=[ref("evidence-diff"), ref("evidence-reread-error")],
                   acceptanceCoverage=[{"criterionId": "AC-2", "status": "unverified", "evidenceRefs": [],
                                        "rationaleSummary": "The re-read failed."}],
                   unresolvedIssues=["The corrected greeting could not be re-read."])
        self.driven_submit(d, "WorkResult", fix)
        self.assertEqual(d.action["phase"], "agent_3_quality_review")
        review = d.body(d.step("Agent 3 reviews the fix"))
        review["acceptanceResults"][1] = {"criterionId": "AC-2", "status": "unverified", "evidenceRefs": [],
                                          "rationaleSummary": "No re-read after the write."}
        review["verificationResults"][1] = {"requirementId": "VR-COMP", "capability": "repository.read", "status": "fail",
                                            "evidenceRefs": [ref("evidence-reread-error")],
                                            "rationaleSummary": "The required re-read failed."}
        review["hardGates"][0]["evidenceRefs"] = [ref("evidence-diagnosis")]
        review.update(decision="partial", score=50)
        dropped = copy.deepcopy(review)
        dropped["verificationResults"] = dropped["verificationResults"][1:]
        self.driven_refuse(d, "QualityReview", dropped, "QualityReview must cover every verification requirement")
        self.driven_submit(d, "QualityReview", review)
        self.driven_submit(d, "QualityReview", dict(review, id="quality-reverify", reviewKind="evidence_reverify"))
        self.assertEqual((d.action["phase"], d.run["outcomeHint"]), ("agent_5_release_audit", "partial"))
        audit_body = d.body(d.step("Agent 5 audits the release"))
        audit_body["claimEvidenceMatrix"][1].update(status="unverified", evidenceRefs=[])
        audit_body["userFidelity"][0].update(status="fail", evidenceRefs=[ref("evidence-diff")])
        audit_body.update(decision="partial", unresolvedRisks=["The corrected greeting was never re-read."])
        self.driven_submit(d, "ReleaseAudit", audit_body)
        final = d.body(d.step("Agent 5 writes the user report"))
        final.update(terminalStatus="failed_verification", completionClaims=final["completionClaims"][:1],
                     findingRefs=[ref("release-audit-01")], verificationRefs=[ref("evidence-diagnosis")],
                     unresolvedRisks=audit_body["unresolvedRisks"])
        self.driven_refuse(d, "UserReport", dict(final, changeRefs=[]),
                           "UserReport changeRefs must retain every accepted WorkResult diff exactly once")
        self.driven_refuse(d, "UserReport", dict(final, terminalStatus="blocked"),
                           "UserReport terminalStatus must be partial or failed_verification after partial")
        self.driven_submit(d, "UserReport", final)
        self.assert_terminal("failed_verification", report_id="user-report-01", host=Driven(d))

    # ------------------------------------------------------------ a controller defect, kept as a focused test

    # covers TEL-172: "a blocked QualityReview cannot be downgraded by Agent 5", applied where Agent 5 reports a
    # micro run directly (a micro run has no ReleaseAudit). Stricter than the reference, which refuses only
    # `completed` after a blocked micro review (PROTOCOL §10.3, PROTOCOL §15.10): docs/DECISIONS.md D44.
    def test_micro_blocked_spot_check_cannot_be_reported_as_partial(self):
        h = self.h
        h.start(original_request="What does src/app.ts export?", mode="report_only")
        self.assertEqual(h.run["topology"], "micro")
        h.ground()
        h.submit("ProblemFrame", frame(h, "report_only", "Answer the question.",
                                       [criterion("AC-1", "The answer names the export.")]))
        plan_ref = h.ref("plan-01")
        wrong = finding("F-1", "The answer is not supported by any stored evidence.", [plan_ref], "blocking")
        h.submit("QualityReview", quality(h, "quality-01", "block", [plan_ref], [],
                                          [covered("AC-1", "fail", [plan_ref])], [], [plan_ref], gate_passed=False,
                                          findings=[wrong]))
        self.assertEqual((h.action["phase"], h.run["outcomeHint"]), ("user_report", "blocked"))
        downgraded = report(h, "partial", findings=[h.ref("quality-01")], risks=["The answer is unsupported."])
        for status in ("partial", "failed_verification"):
            failure = self.server.call("telic_submit_artifact", h.args("UserReport", dict(downgraded, terminalStatus=status)))
            self.assertTrue(failure.get("isError"), f"a blocked micro review was reported as {status}: {failure}")
            self.assertEqual(failure["structuredContent"]["issues"][0]["pointer"], "/terminalStatus")
            self.assertIn("cannot be downgraded", failure["structuredContent"]["error"])
        blocked = report(h, "blocked", findings=[h.ref("quality-01")], risks=["The answer is unsupported."])
        h.submit("UserReport", blocked)
        self.assertEqual(h.run["status"], "blocked")


if __name__ == "__main__":
    run_tests(sys.argv)
