"""The reference implementation's conformance scenarios, replayed over MCP (issue 5).

The TypeScript reference (Dukeabaddon/Telic) tests its controller through its
in-process service: start a run, ground it, submit artifacts, answer a
clarification, read the run, the trace and the replay. Every such scenario
that docs/PARITY.md lists as not already covered elsewhere is driven here the
way a host would, over real stdio MCP (`telic_*` tools, run tokens included),
and must end the same way: the same submissions accepted, the same ones
refused (with the reference's message), the same terminal outcome.

Each test class plays one reference test file's setup (repository, request,
host capabilities, grounding); one `telic serve` per class, one run per test.
The bodies are built here from the scenario, not copied: they keep the shape
the reference's scenario needs and nothing more. Where telic decides
differently on purpose the test is marked expectedFailure and says why.

Run: python3 test_reference_parity.py /path/to/telic"""

import copy
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

from mcp_client import McpProcess, make_git_repo, run_tests, telic_binary

ZERO = "sha256:" + "0" * 64
ONES = "sha256:" + "1" * 64
API = "apps/web/src/api.ts"
API_REF = "repo://" + API
RULES = "repo://AGENTS.md"
RANKING = ("export interface School {\n  readonly name: string;\n  readonly score: number;\n}\n\n"
           "export function rankSchools(schools: readonly School[]): readonly School[] {\n"
           "  return schools.length === 0 ? [] : [schools[0]!];\n}\n")


def no_permissions():
    return {"repository": {"read": [], "write": [], "delete": []},
            "shell": {"inspect": False, "executeAllowlist": []},
            "runtime": {"inspect": [], "restart": []},
            "browser": {"inspect": False, "mutateState": False},
            "network": {"readDomains": [], "externalWrite": False},
            "subagents": {"spawn": False, "maximumChildren": 0, "maximumDepth": 0}}


def permissions(read=(), write=(), delete=(), shell_inspect=False, execute=(), browser=False, domains=(),
                runtime=(), spawn=None):
    p = no_permissions()
    p["repository"] = {"read": list(read), "write": list(write), "delete": list(delete)}
    p["shell"] = {"inspect": shell_inspect, "executeAllowlist": list(execute)}
    p["browser"]["inspect"] = browser
    p["network"]["readDomains"] = list(domains)
    p["runtime"]["inspect"] = list(runtime)
    if spawn:
        p["subagents"] = {"spawn": True, "maximumChildren": spawn[0], "maximumDepth": spawn[1]}
    return p


def broad_read():
    """The reference's READ_PERMISSIONS: repository, shell inspection, local runtime and browser inspection."""
    return permissions(read=["**"], shell_inspect=True, runtime=["local"], browser=True)


class Refused(AssertionError):
    pass


class Run:
    """One run driven like a host: keeps the tokens, submits bodies, reads state back."""

    def __init__(self, test, server):
        self.test = test
        self.server = server
        self.run = self.action = None
        self.id = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, request, mode, caps=("repository.read",), granted=None, **extra):
        args = {"original_request": request, "mode": mode, "host_name": "reference-parity",
                "native_subagents": extra.pop("native_subagents", "unavailable"),
                "host_capabilities": list(caps),
                "authorization_granted": list(caps if granted is None else granted)}
        args.update(extra)
        self.update(self.server.ok("telic_start_run", args))
        self.id = self.run["runId"]
        envelope = self.artifact(self.id)["body"]
        self.request = envelope["originalRequestRef"]
        self.request_id = self.request.rsplit("/", 1)[1]
        return self

    def ground(self, active_paths=None):
        args = self.tokens()
        if active_paths is not None:
            args["active_paths"] = list(active_paths)
        payload = self.update(self.server.ok("telic_ground_context", args))
        self.manifest = payload["manifest"]
        return payload

    def selected(self):
        refs = set(self.manifest["pinnedRefs"])
        refs.update(c["ref"] for c in self.manifest["candidates"] if c["decision"] == "selected")
        return refs

    def update(self, payload):
        self.run = payload.get("run", self.run)
        self.action = payload.get("nextAction", self.action)
        return payload

    def reload(self):
        return self.update(self.server.ok("telic_get_run", {"run_id": self.id}))

    def tokens(self):
        return {"run_id": self.id, "action_id": self.action["id"], "expected_run_version": self.run["version"]}

    def ref(self, artifact_id):
        return f"artifact://{self.id}/{artifact_id}"

    # -- submissions ---------------------------------------------------------------------------
    def args(self, artifact_type, body, source_refs=None):
        args = dict(self.tokens(), artifact_type=artifact_type, body=body)
        if source_refs is not None:
            args["source_refs"] = list(source_refs)
        return args

    def submit(self, artifact_type, body, source_refs=None):
        result = self.server.call("telic_submit_artifact", self.args(artifact_type, body, source_refs))
        payload = result["structuredContent"]
        if result.get("isError"):
            raise Refused(f"{artifact_type} {body.get('id')} refused: {payload.get('error')}")
        return self.update(payload)

    def refuse(self, artifact_type, body, pattern, source_refs=None, trace_grows=0):
        """The submission must fail with an error matching `pattern`; run, artifacts and trace stay as they
        were (except `trace_grows` permission_checked events)."""
        before = self.snapshot()
        result = self.server.call("telic_submit_artifact", self.args(artifact_type, body, source_refs))
        payload = result["structuredContent"]
        self.test.assertTrue(result.get("isError"), f"{artifact_type} accepted, expected /{pattern}/")
        self.test.assertRegex(payload["error"], re.compile(pattern, re.I | re.S))
        after = self.snapshot()
        self.test.assertEqual(after[:2], before[:2], "a refused submission must change nothing")
        self.test.assertEqual(after[2][:len(before[2])], before[2])
        grown = after[2][len(before[2]):]
        if trace_grows is not None:
            self.test.assertEqual(len(grown), trace_grows, grown)
        for event in grown:
            self.test.assertEqual(event["eventType"], "permission_checked")
        return payload

    def answer(self, choice):
        payload = self.server.ok("telic_submit_artifact", dict(self.tokens(), clarification_response=choice))
        return self.update(payload)

    def cancel(self):
        return self.update(self.server.ok("telic_cancel_run", self.tokens()))

    # -- reads ---------------------------------------------------------------------------------
    def snapshot(self):
        state = self.server.ok("telic_get_run", {"run_id": self.id})
        return state["run"], state["artifacts"], self.trace()

    def artifacts(self, artifact_type=None):
        listed = self.server.ok("telic_get_run", {"run_id": self.id})["artifacts"]
        return [a for a in listed if artifact_type is None or a["type"] == artifact_type]

    def types(self):
        return [a["type"] for a in self.artifacts()]

    def artifact(self, artifact_id):
        return self.server.ok("telic_get_artifact", {"run_id": self.id, "artifact_id": artifact_id})["artifact"]

    def body(self, artifact_id):
        body = copy.deepcopy(self.artifact(artifact_id)["body"])
        return body

    def trace(self):
        events, after = [], 0
        while True:
            page = self.server.ok("telic_get_trace", {"run_id": self.id, "after_sequence": after, "limit": 500})
            events += page["events"]
            if not page["hasMore"]:
                return events
            after = events[-1]["sequence"]

    def checks(self, decision=None):
        return [e for e in self.trace() if e["eventType"] == "permission_checked"
                and (decision is None or e["permissionDecision"]["decision"] == decision)]

    def replay(self):
        return self.server.ok("telic_replay_run", {"run_id": self.id})["report"]



# -- artifact bodies: the reference scenarios' shapes, bound to one run ----------------------------------------------

def criterion(cid="AC-1", stage="completion", requirement="Identify the failed communication boundary.",
              evidence=("runtime_or_browser_evidence",)):
    return {"id": cid, "stage": stage, "requirement": requirement, "evidenceRequired": list(evidence)}


def verification(capability, stage="completion", vid="VR-1", required=True):
    return {"id": vid, "stage": stage, "description": f"Capture direct {stage} evidence with {capability}.",
            "required": required, "capability": capability, "fallback": "Report the boundary honestly."}


def frame_body(r, mode="analyze_only", rules=(RULES,)):
    return {"schemaVersion": "1.0", "id": "frame-01", "runId": r.id, "originalRequestRef": r.request,
            "intentMode": mode, "goal": "Find why the web client cannot load project data.",
            "knownFacts": [{"id": "fact-01", "claim": "The dashboard stays offline after it loads.",
                            "provenance": "user", "sourceRef": r.request}],
            "inferences": [], "unknowns": [], "scope": {"include": ["apps/web", "apps/api"], "exclude": ["production"]},
            "constraints": ["Do not mutate project state."], "nonGoals": ["Do not implement a fix."],
            "applicableRuleRefs": list(rules), "draftAcceptanceCriteria": [criterion()],
            "clarification": {"required": False, "reason": None},
            "rationaleSummary": "The request and the selected sources bound the diagnosis."}


def contract_body(r, mode="analyze_only", frame=None, context=(API_REF,), rules=(RULES,), perms=None,
                  checks=None):
    frame = frame or frame_body(r, mode)
    return {"schemaVersion": "1.0", "id": "contract-01", "runId": r.id, "version": 1,
            "originalRequestRef": r.request, "problemFrameRef": r.ref("frame-01"), "intentMode": mode,
            "objective": "Identify the failed communication boundary and its supported cause.",
            "scope": copy.deepcopy(frame["scope"]), "constraints": list(frame["constraints"]),
            "nonGoals": list(frame["nonGoals"]), "contextRefs": list(context), "ruleRefs": list(rules),
            "permissions": perms if perms is not None else broad_read(),
            "acceptanceCriteria": copy.deepcopy(frame["draftAcceptanceCriteria"]),
            "requiredOutputs": ["An evidence-backed diagnosis"],
            "verificationRequirements": checks if checks is not None else [verification("browser.inspect")],
            "stopConditions": ["Stop before any mutation."], "assumptions": [], "unresolvedQuestions": [],
            "rationaleSummary": "The contract keeps the run's authorization."}


SCORES = {"intentFidelity": 100, "repositoryGrounding": 95, "constraintsAndPermissions": 100,
          "testableAcceptance": 95, "executionFeasibility": 90, "contextEfficiency": 90}  # weighted: 96.5


def prompt_review_body(r, decision="pass"):
    cov = lambda src, fields: {"sourceRef": src, "contractFields": fields, "status": "covered"}
    body = {"schemaVersion": "1.0", "id": "prompt-review-01", "runId": r.id, "targetRef": r.ref("contract-01"),
            "rubricId": "contract-readiness-v1", "revisionNumber": 0,
            "coverage": [cov(r.request, ["objective", "intentMode"]),
                         cov(r.ref("frame-01"), ["scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs"]),
                         cov(r.ref("contract-01"), ["permissions", "contextRefs", "requiredOutputs",
                                                    "verificationRequirements", "stopConditions", "assumptions",
                                                    "unresolvedQuestions"])],
            "dimensionScores": dict(SCORES), "overallScore": 96.5,
            "hardGates": [{"id": "HG-intent", "passed": True, "description": "The objective keeps the request.",
                           "evidenceRefs": [r.request], "rationaleSummary": "It maps to the request."}],
            "findings": [], "decision": "pass", "rationaleSummary": "Grounded, safe and testable."}
    if decision != "pass":
        flat(body, 25 if decision == "block" else 75)
        body["decision"] = decision
        body["hardGates"][0]["passed"] = False
    return body


def flat(review, score):
    review["dimensionScores"] = {k: score for k in SCORES}
    review["overallScore"] = score


def node(nid="investigate", tools=("browser.inspect", "repository.read"), required=("browser.inspect",), perms=None,
         calls=12, inputs=None, r=None, criteria=("AC-1",), context=(API_REF,), children=0, depends=()):
    return {"id": nid, "logicalRole": "executor.runtime-investigator", "objective": "Capture the failed boundary.",
            "dependsOn": list(depends), "inputRefs": list(inputs) if inputs is not None else [r.ref("contract-01")],
            "contextRefs": list(context), "allowedTools": list(tools), "requiredCapabilities": list(required),
            "permissions": perms if perms is not None else broad_read(), "outputType": "WorkResult",
            "acceptanceCriteria": list(criteria), "stopConditions": ["Stop before mutation."],
            "budgets": {"maximumToolCalls": calls, "maximumChildren": children}}


def plan_body(r, nodes=None, pid="plan-01", total=None, depth=0):
    nodes = nodes if nodes is not None else [node(r=r)]
    return {"schemaVersion": "1.0", "id": pid, "runId": r.id, "taskContractRef": r.ref("contract-01"),
            "executionMode": "serial", "nodes": nodes, "joinRules": [],
            "globalBudgets": {"maximumToolCalls": sum(n["budgets"]["maximumToolCalls"] for n in nodes)
                              if total is None else total,
                              "maximumParallelWorkers": 1, "maximumSubagentDepth": depth},
            "planValidation": "valid", "rationaleSummary": "One serial node is enough."}


def evidence_body(r, eid="evidence-01", kind="repository", content='{"bounded":true}', source_refs=()):
    return {"schemaVersion": "1.0", "id": eid, "runId": r.id, "kind": kind, "capturedAt": "2026-07-15T10:05:00Z",
            "summary": f"Captured {kind} evidence for the current node.", "contentType": "application/json",
            "encoding": "utf8", "content": content, "sourceRefs": list(source_refs), "redactions": [],
            "rationaleSummary": "Synthetic, bounded, no secret."}


def action(capability, target, evidence, aid=None, mutating=None, status="completed"):
    return {"id": aid or "action-" + capability.replace(".", "-"), "capability": capability, "target": target,
            "mutating": capability in ("repository.write", "repository.delete") if mutating is None else mutating,
            "status": status, "evidenceRefs": list(evidence), "rationaleSummary": "Recorded explicitly."}


def result_body(r, ev=None, rid="result-01", nid="investigate", pid="plan-01", actions=None, files=(), tests=(),
                cid="AC-1", status="completed"):
    ev = ev or r.ref("evidence-01")
    return {"schemaVersion": "1.0", "id": rid, "runId": r.id, "workPlanRef": r.ref(pid), "nodeId": nid,
            "status": status,
            "observations": [{"id": "claim-01", "text": "The action produced the captured outcome.",
                              "status": "observed", "evidenceRefs": [ev], "confidence": 1}],
            "inferences": [],
            "actions": actions if actions is not None else [action("repository.read", API, [ev])],
            "filesChanged": list(files), "toolEventRefs": [], "evidenceRefs": [ev], "testResults": list(tests),
            "acceptanceCoverage": [{"criterionId": cid, "status": "pass", "evidenceRefs": [ev],
                                    "rationaleSummary": "Direct evidence satisfies it."}],
            "unresolvedIssues": [], "deviations": [], "rationaleSummary": "The node finished with evidence."}


def file_change(path, diff_ref, change="modified"):
    before, after = {"created": (None, ZERO), "deleted": (ZERO, None), "modified": (ZERO, ONES)}[change]
    return {"path": path, "changeType": change, "beforeHash": before, "afterHash": after, "diffRef": diff_ref}


def quality_review_body(r, ev=None, capability="browser.inspect", verification_ev=None, results=("result-01",),
                        plans=("plan-01",), rules=(RULES,), qid="quality-review-01", decision="pass", remaining=1):
    ev = ev or r.ref("evidence-01")
    return {"schemaVersion": "1.0", "id": qid, "runId": r.id, "reviewKind": "spot",
            "taskContractRef": r.ref("contract-01"), "workPlanRefs": [r.ref(p) for p in plans],
            "workResultRefs": [r.ref(x) for x in results], "rubricId": "execution-quality-v1",
            "acceptanceResults": [{"criterionId": "AC-1", "status": "pass", "evidenceRefs": [ev],
                                   "rationaleSummary": "Direct evidence shows it."}],
            "ruleCompliance": [{"id": f"rule-{i + 1:02d}", "subjectRef": rule, "description": "No mutation.",
                                "status": "pass", "evidenceRefs": [ev], "rationaleSummary": "Read-only actions."}
                               for i, rule in enumerate(rules)],
            "regressionChecks": [],
            "verificationResults": [{"requirementId": "VR-1", "capability": capability, "status": "pass",
                                     "evidenceRefs": [verification_ev or ev],
                                     "rationaleSummary": "Direct evidence for the verification."}]
            if capability else [],
            "findings": [],
            "hardGates": [{"id": "HG-acceptance", "passed": True, "description": "Acceptance has evidence.",
                           "evidenceRefs": [ev], "rationaleSummary": "AC-1 has direct evidence."}],
            "score": 96, "remainingRemediations": remaining, "decision": decision, "diagnosisGate": None,
            "remediationWorkOrder": None, "rationaleSummary": "Within scope and evidence-backed."}


CLAIM = "The request fails at CORS preflight."


def release_audit_body(r, ev=None, claim_ev=None, results=("result-01",), plans=("plan-01",),
                       review="quality-review-01", decision="release", criteria=("AC-1",), remaining=1):
    ev = ev or r.ref("evidence-01")
    body = {"schemaVersion": "1.0", "id": "release-audit-01", "runId": r.id, "originalRequestRef": r.request,
            "taskContractRef": r.ref("contract-01"), "workPlanRefs": [r.ref(p) for p in plans],
            "workResultRefs": [r.ref(x) for x in results], "qualityReviewRef": r.ref(review),
            "userFidelity": [{"id": "fidelity-01", "subjectRef": r.request, "description": "It answers the request.",
                              "status": "pass", "evidenceRefs": [ev], "rationaleSummary": "Directly captured."}],
            "modeCompliance": "pass",
            "claimEvidenceMatrix": [{"claimId": "claim-01", "claim": CLAIM, "criterionIds": list(criteria),
                                     "basis": "direct", "status": "supported", "evidenceRefs": [claim_ev or ev],
                                     "rationaleSummary": "The evidence shows it."}],
            "unresolvedRisks": [], "findings": [], "remainingRemediations": remaining, "decision": decision,
            "remediationDefect": None, "userReportRef": r.ref("user-report-01"),
            "rationaleSummary": "Faithful, compliant and supported."}
    if decision != "release":
        body["claimEvidenceMatrix"] = []
        body["unresolvedRisks"] = [f"The {decision} audit keeps an unresolved boundary."]
    return body


def user_report_body(r, status="completed", ev=None, findings=None, changes=(), verifications=None):
    ev = ev or r.ref("evidence-01")
    done = status == "completed"
    return {"schemaVersion": "1.0", "id": "user-report-01", "runId": r.id, "terminalStatus": status,
            "summary": f"The run ended {status}.",
            "completionClaims": [{"id": "claim-01", "text": CLAIM, "status": "observed", "evidenceRefs": [ev],
                                  "confidence": 1}] if done else [],
            "findingRefs": list(findings) if findings is not None else [],
            "changeRefs": list(changes),
            "verificationRefs": list(verifications) if verifications is not None else ([ev] if done else []),
            "unresolvedRisks": [] if done else [f"The run ended {status} with an open boundary."],
            "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + r.id,
            "rationaleSummary": "The report mirrors the release decision."}


def clarification_body(r, cid="clarification-01", expansion=False, choices=None, evidence=None):
    choice = lambda i, effect, authority="within_current_authority": {
        "id": i, "label": i.replace("-", " ").title(), "consequence": f"Choosing {i}.",
        "authorityEffect": authority, "runEffect": effect}
    if choices is None:
        choices = ([choice("bounded", "resume"), choice("new-run", "new_run", "requires_new_run"),
                    choice("cancel", "cancel")] if expansion
                   else [choice("local-only", "resume"), choice("cancel", "cancel")])
    return {"schemaVersion": "1.0", "id": cid, "runId": r.id, "question": "Which user-owned choice applies?",
            "reason": "permission_expanding" if expansion else "user_owned_materially_divergent",
            "divergence": "Different answers change the bounded output.",
            "evidenceInspected": list(evidence) if evidence is not None else [r.request],
            "blockedBoundary": "repository.write" if expansion else "user_owned_scope",
            "responseConstraints": "Pick one choice id.", "responseChoices": choices,
            "permissionExpansionRequired": expansion, "rationaleSummary": "Only the user can decide."}


def scenario_body(r, sid="scenario-01", narrative="The dashboard renders without project data."):
    return {"schemaVersion": "1.0", "id": sid, "runId": r.id, "problemFrameRef": r.ref("frame-01"),
            "title": "Web client cannot reach the API", "narrative": narrative,
            "actor": "A developer in a local monorepo", "observableSymptoms": ["The dashboard shows offline."],
            "desiredOutcome": "An evidence-backed diagnosis.",
            "sourceMap": [{"field": "observableSymptoms[0]", "sourceRefs": [r.request]}],
            "promptReadinessRubricRef": "artifact://system/rubrics/contract-readiness-v1",
            "rationaleSummary": "A sourced presentation of the frame."}


class ParityCase(unittest.TestCase):
    """One `telic serve` over a repository of FILES for the whole class."""

    FILES = {}

    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="telic-parity-")
        cls.repo = make_git_repo(os.path.join(cls.base, "repo"), dict(cls.FILES))
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=cls.repo, TELIC_STATE_DIR=os.path.join(cls.base, "state"))
        cls.server = McpProcess([telic_binary(), "serve"], env)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        shutil.rmtree(cls.base, ignore_errors=True)

    def new_run(self):
        return Run(self, self.server)



# ===================================================================================================================
# test/full-flow-conformance.test.ts
# ===================================================================================================================

FF_CLAIM = "The authorized workflow completed with direct evidence."


class FullFlowTest(ParityCase):
    FILES = {"AGENTS.md": "# Rules\nKeep intent, authorization, evidence and tests.\n",
             API: "export const projectsEndpoint = '/api/projects';\n",
             "apps/api/cors.ts": "export const allowedOrigins = ['http://localhost:5173'];\n",
             "src/existing.ts": "export {};\n", "infra/prod.yml": "production: true\n"}
    ACTIVE = ("AGENTS.md", API, "apps/api/cors.ts")

    def harness(self, mode, active=None):
        caps = {"report_only": [], "fix_only": ["repository.read", "repository.write"],
                "analyze_and_fix": ["repository.read", "repository.write"]}.get(mode, ["repository.read"])
        request = ("Report the supplied communication-failure request without inspecting the repository."
                   if mode == "report_only" else
                   "Investigate the apps/web API client and prepare only the authorized result.")
        r = self.new_run().start(request, mode, caps)
        r.ground(self.ACTIVE if active is None else active)
        selected = r.selected()
        repo = [ref for ref in sorted(selected) if ref.startswith("repo://") and ref != RULES]
        r.repo_ref = API_REF if API_REF in selected else (repo[0] if repo else "repo://unused-report-only")
        r.rule_ref = RULES if RULES in selected else r.repo_ref
        r.trace_ref = f"trace://{r.id}/{r.trace()[0]['id']}"
        r.mode = mode
        return r

    @staticmethod
    def mode_permissions(mode):
        if mode == "report_only":
            return no_permissions()
        if mode in ("fix_only", "analyze_and_fix"):
            return permissions(read=["**"], write=["src/**"])
        return permissions(read=["**"])

    def accept_intent(self, r, third=False):
        mode = r.mode
        frame = frame_body(r, mode, rules=[] if mode == "report_only" else [r.rule_ref])
        if mode in ("fix_only", "analyze_and_fix"):
            frame["constraints"] = ["Writes are limited to src/**."]
            frame["nonGoals"] = ["Do not mutate infrastructure or production state."]
        if mode == "analyze_and_fix":
            frame["draftAcceptanceCriteria"][0]["stage"] = "diagnosis"
            frame["draftAcceptanceCriteria"].append(criterion("AC-2", "completion", "Apply and verify the correction.",
                                                              ["repository_diff_and_post_change_inspection"]))
            if third:
                frame["draftAcceptanceCriteria"].append(criterion("AC-3", "completion", "Verify a second condition.",
                                                                  ["second_completion_evidence"]))
        r.submit("ProblemFrame", frame)
        if r.run["topology"] == "micro":
            return
        checks = {"report_only": [], "plan_only": [],
                  "analyze_and_fix": [verification("repository.read", "diagnosis", "VR-DIAG"),
                                      verification("repository.read", "completion", "VR-COMP")]
                  }.get(mode, [verification("repository.read")])
        contract = contract_body(r, mode, frame, context=[] if mode == "report_only" else [r.repo_ref],
                                 rules=frame["applicableRuleRefs"], perms=self.mode_permissions(mode), checks=checks)
        r.submit("TaskContract", contract)
        r.submit("PromptReview", prompt_review_body(r))

    def plan(self, r, pid="plan-01", nid="investigate", mutation=None, inputs=None):
        mode = r.mode
        mutation = mode == "fix_only" if mutation is None else mutation
        calls = 0 if mode == "report_only" else (2 if mutation else 1)
        tools = [] if mode == "report_only" else (["repository.write", "repository.read"] if mutation
                                                  else ["repository.read"])
        perms = (permissions(read=["**"], write=["src/**"]) if mutation
                 else no_permissions() if mode == "report_only" else permissions(read=["**"]))
        n = node(nid, tools, tools, perms, calls, inputs or [r.ref("contract-01")],
                 criteria=["AC-2"] if mode == "analyze_and_fix" and mutation else ["AC-1"],
                 context=[] if mode == "report_only" else [r.repo_ref])
        return plan_body(r, [n], pid)

    def capture(self, r, eid="evidence-01", content='{"result":"bounded-direct-evidence"}'):
        kind = "diff" if r.mode == "fix_only" or (r.mode == "analyze_and_fix" and eid != "evidence-01") else "repository"
        return r.submit("Evidence", evidence_body(r, eid, kind, content))

    def result(self, r, rid="result-01", pid="plan-01", nid="investigate", eid="evidence-01", mutation=False,
               cid="AC-1"):
        ev = r.ref(eid)
        body = result_body(r, ev, rid, nid, pid, cid=cid)
        body["observations"][0]["id"] = f"observation-{rid}"
        if mutation:
            body["actions"] = [action("repository.write", "src/fix.ts", [ev], f"action-{rid}"),
                               action("repository.read", "src/fix.ts", [ev], f"verify-{rid}")]
            body["filesChanged"] = [file_change("src/fix.ts", ev, "created")]
        else:
            body["actions"] = [action("repository.read", API, [ev], f"action-{rid}")]
        return body

    def review(self, r, qid="quality-review-01", plans=("plan-01",), results=(), ev=None, remaining=1,
               decision="pass", kind=None):
        ev = ev or r.trace_ref
        aaf = r.mode == "analyze_and_fix"
        body = quality_review_body(r, ev, None, results=results, plans=plans, rules=(), qid=qid, decision=decision,
                                   remaining=remaining)
        body["acceptanceResults"] = [
            {"criterionId": c, "status": "pass",
             "evidenceRefs": [r.ref("evidence-01") if c == "AC-1" and aaf else ev],
             "rationaleSummary": "Direct bounded evidence."}
            for c in (["AC-1", "AC-2"] if aaf and decision != "proceed_to_fix" else ["AC-1"])]
        if r.mode != "report_only":
            body["ruleCompliance"] = [{"id": f"rule-{qid}", "subjectRef": r.rule_ref, "description": "In scope.",
                                       "status": "pass", "evidenceRefs": [ev], "rationaleSummary": "Bounded."}]
        vr = lambda vid, ref: {"requirementId": vid, "capability": "repository.read", "status": "pass",
                               "evidenceRefs": [ref], "rationaleSummary": "Completed with direct evidence."}
        if aaf:
            body["verificationResults"] = [vr("VR-DIAG", r.ref("evidence-01"))] + (
                [] if decision == "proceed_to_fix" else [vr("VR-COMP", ev)])
        elif r.mode not in ("report_only", "plan_only"):
            body["verificationResults"] = [vr("VR-1", ev)]
        body["hardGates"][0].update(id=f"gate-{qid}", evidenceRefs=[ev])
        body["score"] = 100
        if kind:
            body["reviewKind"] = kind
        return body

    def audit(self, r, plans=("plan-01",), results=(), review="quality-review-01", ev=None, decision="release",
              remaining=1):
        ev = ev or r.trace_ref
        body = release_audit_body(r, ev, results=results, plans=plans, review=review, decision=decision,
                                  criteria=["AC-1", "AC-2"] if r.mode == "analyze_and_fix" else ["AC-1"],
                                  remaining=remaining)
        if decision == "release":
            body["claimEvidenceMatrix"][0].update(claimId="completion-01", claim=FF_CLAIM)
        return body

    def report(self, r, status, ev=None):
        ev = ev or r.trace_ref
        listed = r.artifacts()
        control = [a for a in listed if a["type"] in ("ReleaseAudit", "PromptReview")]
        changes = []
        for a in listed:
            if a["type"] == "WorkResult":
                for change in r.body(a["id"])["filesChanged"]:
                    if change["diffRef"] not in changes:
                        changes.append(change["diffRef"])
        verifications = []
        if status == "completed" and r.mode not in ("report_only", "plan_only"):
            verifications = [r.ref("evidence-01"), ev] if r.mode == "analyze_and_fix" else [ev]
        body = user_report_body(r, status, ev, changes=changes, verifications=verifications,
                                findings=[] if status == "completed" or not control else [r.ref(control[-1]["id"])])
        if status == "completed":
            body["completionClaims"][0].update(id="completion-01", text=FF_CLAIM)
        return body

    def latest_review(self, r):
        return r.artifacts("QualityReview")[-1]["id"]

    def reverify_if_needed(self, r, **review):
        if r.run["phase"] == "agent_3_evidence_reverify":
            r.submit("QualityReview", self.review(r, qid="quality-review-reverify", kind="evidence_reverify", **review))

    def complete_simple(self, mode):
        r = self.harness(mode)
        self.accept_intent(r)
        if r.run["topology"] != "micro":
            r.submit("WorkPlan", self.plan(r))
        executes = mode in ("analyze_only", "fix_only")
        ev, results = r.ref("plan-01"), []
        if executes:
            self.assertEqual((r.action["kind"], r.action["phase"]), ("phase", "agent_4_execute"))
            self.capture(r)
            ev = r.ref("evidence-01")
            r.submit("WorkResult", self.result(r, mutation=mode == "fix_only"))
            results = ["result-01"]
        else:
            self.assertEqual((r.action["kind"], r.action["phase"]), ("phase", "agent_3_quality_review"))
        r.submit("QualityReview", self.review(r, results=results, ev=ev))
        self.reverify_if_needed(r, results=results, ev=ev)
        if r.run["topology"] != "micro":
            r.submit("ReleaseAudit", self.audit(r, results=results, ev=ev, review=self.latest_review(r)))
        terminal = r.submit("UserReport", self.report(r, "completed", ev))
        return r, terminal, executes

    def analyze_to_audit(self, failed_verification=False, active=None):
        r = self.harness("analyze_only", active)
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        review = self.review(r, results=["result-01"], ev=r.ref("evidence-01"),
                             decision="partial" if failed_verification else "pass")
        if failed_verification:
            review["verificationResults"][0].update(status="unverified", evidenceRefs=[])
        r.submit("QualityReview", review)
        return r

    def check_completed(self, mode):
        r, terminal, executes = self.complete_simple(mode)
        self.assertEqual((terminal["run"]["requestedMode"], terminal["run"]["status"]), (mode, "completed"))
        self.assertEqual((terminal["nextAction"]["kind"], terminal["nextAction"]["status"],
                          terminal["nextAction"]["reportRef"]), ("terminal", "completed", r.ref("user-report-01")))
        types = r.types()
        self.assertEqual("WorkResult" in types, executes)
        required = (["ProblemFrame", "TaskContract", "WorkPlan", "QualityReview", "UserReport"]
                    if r.run["topology"] == "micro" else
                    ["ProblemFrame", "TaskContract", "PromptReview", "WorkPlan", "QualityReview", "ReleaseAudit",
                     "UserReport"])
        for t in required:
            self.assertIn(t, types)

    # covers TEL-221 TEL-228 TEL-231: report_only reaches completed (micro: frame, spot-check, report).
    def test_ff01_report_only_completes(self):
        self.check_completed("report_only")

    # covers TEL-008 TEL-221 TEL-227 TEL-228: plan_only reaches completed with the plan as its deliverable.
    def test_ff02_plan_only_completes(self):
        self.check_completed("plan_only")

    # covers TEL-222 TEL-223 TEL-225 TEL-227 TEL-228: analyze_only reaches completed through execution.
    def test_ff03_analyze_only_completes(self):
        self.check_completed("analyze_only")

    # covers TEL-178 TEL-222 TEL-228: fix_only reaches completed with its diff retained.
    def test_ff04_fix_only_completes(self):
        self.check_completed("fix_only")

    # covers TEL-229 TEL-232 TEL-245: repository-only evidence for a browser cause: the audit stays partial, the report
    # says failed_verification, and the read-only run changed no file.
    def test_ff05_recommendation_bias_fixture_ends_failed_verification(self):
        base = tempfile.mkdtemp(prefix="telic-parity-bias-")
        try:
            repo = make_git_repo(os.path.join(base, "repo"), {"src/ranking.ts": RANKING})
            env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(base, "state"))
            server = McpProcess([telic_binary(), "serve"], env)
            try:
                self.server, saved = server, self.server
                try:
                    r = self.analyze_to_audit(True, active=["AGENTS.md", "src/ranking.ts"])
                    self.assertEqual(r.repo_ref, "repo://src/ranking.ts")
                    audit = self.audit(r, results=["result-01"], ev=r.ref("evidence-01"), decision="partial")
                    audit["userFidelity"][0]["status"] = "unverified"
                    audit["claimEvidenceMatrix"] = [{
                        "claimId": "browser-verification-01", "criterionIds": ["AC-1"], "basis": "direct",
                        "claim": "Browser or runtime evidence confirmed the data-bias cause.", "status": "unverified",
                        "evidenceRefs": [], "rationaleSummary": "Only repository evidence exists."}]
                    audit["unresolvedRisks"] = ["Input-data bias stays unverified without browser or runtime evidence."]
                    r.submit("ReleaseAudit", audit)
                    report = self.report(r, "failed_verification")
                    report["unresolvedRisks"] = list(audit["unresolvedRisks"])
                    terminal = r.submit("UserReport", report)
                    self.assertEqual((terminal["nextAction"]["kind"], terminal["nextAction"]["status"]),
                                     ("terminal", "failed_verification"))
                    for t in ["ProblemFrame", "TaskContract", "PromptReview", "WorkPlan", "Evidence", "WorkResult",
                              "QualityReview", "ReleaseAudit", "UserReport"]:
                        self.assertIn(t, r.types())
                finally:
                    self.server = saved
            finally:
                server.close()
            with open(os.path.join(repo, "src/ranking.ts"), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), RANKING)
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def diagnosis_gate(self, r, criteria=("AC-2",)):
        review = self.review(r, results=["result-01"], ev=r.ref("evidence-01"), decision="proceed_to_fix")
        review["diagnosisGate"] = {
            "id": "diagnosis-gate-01", "status": "supported", "rootCause": "The captured evidence supports the cause.",
            "directEvidenceRefs": [r.ref("evidence-01")],
            "correctionWorkOrder": {"id": "correction-01", "targetCriterionIds": list(criteria),
                                    "objective": "Create the bounded src/fix.ts correction.",
                                    "allowedCapabilities": ["repository.write", "repository.read"],
                                    "permissions": permissions(read=["**"], write=["src/**"]),
                                    "sourceRefs": [r.ref("evidence-01")], "maximumToolCalls": 2,
                                    "rationaleSummary": "One scoped correction."},
            "withinApprovedScope": True, "permissionsSufficient": True,
            "rationaleSummary": "Evidence, scope and authority allow a fix plan."}
        return review

    def diagnose(self, third=False):
        r = self.harness("analyze_and_fix")
        self.accept_intent(r, third)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        return r

    # covers TEL-032 TEL-037 TEL-040 TEL-150 TEL-224 TEL-228: analyze_and_fix: read-only diagnosis, proceed_to_fix
    # with no write until the fix plan, the bounded fix, review, audit, completed.
    def test_ff06_analyze_and_fix_through_the_diagnosis_gate(self):
        r = self.diagnose()
        gated = r.submit("QualityReview", self.diagnosis_gate(r))
        self.assertEqual(gated["nextAction"]["phase"], "agent_3_plan")
        self.assertEqual(gated["nextAction"]["effectivePermissions"]["repository"]["write"], [])
        fix = self.plan(r, "plan-02", "fix", True, [r.ref("contract-01"), r.ref("quality-review-01")])
        authorized = r.submit("WorkPlan", fix)
        self.assertEqual((authorized["nextAction"]["phase"], authorized["nextAction"]["workNodeId"]),
                         ("agent_4_execute", "fix"))
        self.assertEqual(authorized["nextAction"]["effectivePermissions"]["repository"]["write"], ["src/**"])
        self.capture(r, "evidence-02", '{"diff":"bounded-fix"}')
        r.submit("WorkResult", self.result(r, "result-02", "plan-02", "fix", "evidence-02", True, "AC-2"))
        after = dict(plans=["plan-02"], results=["result-02"], ev=r.ref("evidence-02"))
        r.submit("QualityReview", self.review(r, "quality-review-02", **after))
        self.reverify_if_needed(r, **after)
        r.submit("ReleaseAudit", self.audit(r, ["plan-01", "plan-02"], ["result-01", "result-02"],
                                            self.latest_review(r), r.ref("evidence-02")))
        terminal = r.submit("UserReport", self.report(r, "completed", r.ref("evidence-02")))
        self.assertEqual(terminal["run"]["status"], "completed")
        self.assertEqual(len(r.artifacts("WorkPlan")), 2)

    # covers TEL-133: the correction order must name every completion criterion (AC-3 left out).
    def test_ff07_correction_order_must_cover_every_completion_criterion(self):
        r = self.diagnose(third=True)
        r.refuse("QualityReview", self.diagnosis_gate(r, ["AC-2"]), r"must cover every authorized criterion exactly once")

    # covers TEL-157: a passing acceptance result must cite exactly its WorkResult coverage evidence.
    def test_ff08_acceptance_without_matching_coverage_is_refused(self):
        r = self.harness("analyze_only")
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r, "evidence-01", '{"result":"executed"}')
        self.capture(r, "evidence-02", '{"result":"unrelated"}')
        r.submit("WorkResult", self.result(r))
        review = self.review(r, results=["result-01"], ev=r.ref("evidence-01"))
        review["acceptanceResults"][0]["evidenceRefs"] = [r.ref("evidence-02")]
        r.refuse("QualityReview", review, r"lacks matching WorkResult coverage")

    def audited(self, decision, status):
        r = self.analyze_to_audit()
        r.submit("ReleaseAudit", self.audit(r, results=["result-01"], ev=r.ref("evidence-01"), decision=decision))
        terminal = r.submit("UserReport", self.report(r, status))
        self.assertEqual(terminal["run"]["status"], status)
        self.assertEqual((terminal["nextAction"]["kind"], terminal["nextAction"]["status"]), ("terminal", status))

    # covers TEL-227 TEL-229 TEL-232: a partial audit ends the run partial.
    def test_ff09_audited_partial_is_preserved(self):
        self.audited("partial", "partial")

    # covers TEL-227 TEL-230 TEL-233: a blocking audit ends the run blocked.
    def test_ff10_audited_block_is_preserved(self):
        self.audited("block", "blocked")

    # covers TEL-229 TEL-232: failed_verification: run status partial, terminal action phase partial, status
    # failed_verification.
    def test_ff11_failed_verification_projection(self):
        r = self.analyze_to_audit(True)
        audit = self.audit(r, results=["result-01"], ev=r.ref("evidence-01"), decision="partial")
        audit["userFidelity"][0]["status"] = "unverified"
        audit["claimEvidenceMatrix"] = [{"claimId": "verification-01", "claim": "The verification completed.",
                                         "criterionIds": ["AC-1"], "basis": "direct", "status": "unverified",
                                         "evidenceRefs": [], "rationaleSummary": "No direct verification evidence."}]
        audit["unresolvedRisks"] = ["The required verification is still incomplete."]
        r.submit("ReleaseAudit", audit)
        terminal = r.submit("UserReport", self.report(r, "failed_verification"))
        self.assertEqual(terminal["run"]["status"], "partial")
        self.assertEqual((terminal["nextAction"]["kind"], terminal["nextAction"]["phase"],
                          terminal["nextAction"]["status"]), ("terminal", "partial", "failed_verification"))

    # covers TEL-181: a UserReport traceRef of another run is refused.
    def test_ff12_trace_ref_of_another_run_is_refused(self):
        r = self.analyze_to_audit()
        r.submit("ReleaseAudit", self.audit(r, results=["result-01"], ev=r.ref("evidence-01")))
        report = self.report(r, "completed", r.ref("evidence-01"))
        report["traceRef"] = "trace://another-run"
        r.refuse("UserReport", report, r"traceRef|current run|cross-run trace")

    # covers TEL-224 TEL-239 TEL-228: one scoped remediation is consumed, the second review passes, release, completed.
    def test_ff13_one_remediation_then_release(self):
        r = self.harness("analyze_only")
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        failed = self.review(r, results=["result-01"], ev=r.ref("evidence-01"), decision="remediate")
        failed["acceptanceResults"][0]["status"] = "fail"
        failed["hardGates"][0]["passed"] = False
        failed["score"] = 55
        failed["remediationWorkOrder"] = {
            "id": "remediation-01", "failedCriterionIds": ["AC-1"], "objective": "Repeat the bounded inspection.",
            "allowedCapabilities": ["repository.read"], "permissions": permissions(read=["**"]),
            "sourceRefs": [r.ref("evidence-01")], "maximumToolCalls": 1, "rationaleSummary": "One bounded retry."}
        remediation = r.submit("QualityReview", failed)
        self.assertEqual(remediation["run"]["budgets"]["postExecutionRemediationsRemaining"], 0)
        r.submit("WorkPlan", self.plan(r, "plan-02", "remediate", inputs=[r.ref("quality-review-01")]))
        self.capture(r, "evidence-02", '{"result":"remediated"}')
        r.submit("WorkResult", self.result(r, "result-02", "plan-02", "remediate", "evidence-02"))
        r.submit("QualityReview", self.review(r, "quality-review-02", ["plan-02"], ["result-02"], r.ref("evidence-02"),
                                              remaining=0))
        r.submit("ReleaseAudit", self.audit(r, ["plan-01", "plan-02"], ["result-01", "result-02"], "quality-review-02",
                                            r.ref("evidence-02"), remaining=0))
        terminal = r.submit("UserReport", self.report(r, "completed", r.ref("evidence-02")))
        self.assertEqual(terminal["run"]["status"], "completed")
        self.assertEqual(terminal["run"]["budgets"]["postExecutionRemediationsRemaining"], 0)

    # covers TEL-119 TEL-180 TEL-220 TEL-230: a blocking PromptReview goes to the report; blocked.
    def test_ff14_prompt_review_block_ends_blocked(self):
        r = self.harness("analyze_only")
        r.submit("ProblemFrame", frame_body(r, rules=[r.rule_ref]))
        r.submit("TaskContract", contract_body(r, perms=permissions(read=["**"]), context=[r.repo_ref],
                                               rules=[r.rule_ref], checks=[verification("repository.read")]))
        blocked = r.submit("PromptReview", prompt_review_body(r, "block"))
        self.assertEqual((blocked["nextAction"]["kind"], blocked["nextAction"]["phase"],
                          blocked["nextAction"]["requiredOutputType"]), ("phase", "user_report", "UserReport"))
        report = self.report(r, "blocked")
        report["summary"] = "Contract review blocked the run before planning."
        terminal = r.submit("UserReport", report)
        self.assertEqual(terminal["run"]["status"], "blocked")
        self.assertEqual((terminal["nextAction"]["kind"], terminal["nextAction"]["status"],
                          terminal["nextAction"]["reportRef"]), ("terminal", "blocked", r.ref("user-report-01")))

    # covers TEL-007 TEL-090 TEL-093: ScenarioSpec replay is idempotent (no new artifact or event), a changed
    # replay conflicts, and a second spec for the frame is refused.
    def test_ff15_scenario_spec_replay_and_one_per_frame(self):
        r = self.harness("analyze_only")
        r.submit("ProblemFrame", frame_body(r, rules=[r.rule_ref]))
        first = r.submit("ScenarioSpec", scenario_body(r))
        count, events = len(r.artifacts()), len(r.trace())
        replay = r.submit("ScenarioSpec", scenario_body(r))
        self.assertEqual(replay["artifact"], first["artifact"])
        self.assertEqual((len(r.artifacts()), len(r.trace())), (count, events))
        r.refuse("ScenarioSpec", scenario_body(r, narrative="A conflicting replay."), r"replay conflicts|immutable")
        r.refuse("ScenarioSpec", scenario_body(r, "scenario-02"), r"one ScenarioSpec|only one")

    # covers TEL-007 TEL-015: Evidence replay is idempotent, a changed replay conflicts, and one WorkPlan takes at
    # most 128 Evidence artifacts.
    def test_ff16_evidence_replay_and_the_128_quota(self):
        r = self.harness("analyze_only")
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        evidence = evidence_body(r, content='{"result":"bounded-direct-evidence"}')
        first = r.submit("Evidence", evidence)
        count, events = len(r.artifacts()), len(r.trace())
        self.assertEqual(r.submit("Evidence", copy.deepcopy(evidence))["artifact"], first["artifact"])
        self.assertEqual((len(r.artifacts()), len(r.trace())), (count, events))
        r.refuse("Evidence", dict(evidence, content='{"result":"conflicting-replay"}'), r"replay conflicts|immutable")
        for index in range(2, 129):
            r.submit("Evidence", evidence_body(r, f"evidence-{index:03d}", content=f'{{"sample":{index}}}'))
        self.assertEqual(len(r.artifacts("Evidence")), 128)
        r.refuse("Evidence", evidence_body(r, "evidence-129", content='{"sample":129}'), r"quota.*128|128.*quota")

    def planning_artifact_as_evidence(self, where, artifact_id):
        r = self.harness("analyze_only")
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r)
        result = self.result(r)
        if where == "top-level":
            result["evidenceRefs"] = [r.ref(artifact_id)]
        else:
            result["actions"][0]["evidenceRefs"] = [r.ref(artifact_id)]
        r.refuse("WorkResult", result, r"must target direct evidence")

    # covers TEL-141: a TaskContract is not evidence of executed work (top-level evidenceRefs).
    def test_ff17_top_level_evidence_cannot_be_a_contract(self):
        self.planning_artifact_as_evidence("top-level", "contract-01")

    # covers TEL-141: a WorkPlan is not evidence of a completed action.
    def test_ff18_action_evidence_cannot_be_a_plan(self):
        self.planning_artifact_as_evidence("action", "plan-01")

    # covers TEL-041 TEL-183 TEL-185: the accepted action's ALLOW is traced with its layers and the result.
    def test_ff19_accepted_action_permission_is_traced(self):
        r = self.harness("analyze_only")
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        checks = r.checks()
        self.assertEqual(len(checks), 1)
        policy = [r.ref("contract-01"), r.ref("plan-01")]
        self.assertEqual((checks[0]["actor"], checks[0]["phase"], checks[0]["inputRefs"], checks[0]["outputRefs"]),
                         ("controller", "agent_4_execute", policy, [r.ref("result-01")]))
        decision = checks[0]["permissionDecision"]
        self.assertEqual((decision["decision"], decision["capability"], decision["scope"], decision["policyRefs"]),
                         ("allow", "repository.read", API, policy))

if __name__ == "__main__":
    run_tests(sys.argv)
