"""The reference implementation's conformance scenarios, replayed over MCP (issue 5).

The TypeScript reference (Dukeabaddon/Telic) tests its controller through its
in-process service: start a run, ground it, submit artifacts, answer a
clarification, cancel, read the run, the trace and the replay, check a tool
action. Every test case of its test/ folder that uses only those operations
is driven here the way a host would, over real stdio MCP (`telic_*` tools,
run tokens included), and must end the same way: the same submissions
accepted, the same ones refused (matching the reference's message, or
telic's where only the wording differs, as noted), the same terminal outcome.
docs/PARITY.md maps each reference case to its test here (and to the older
e2e tests that already covered some of them).

Each class plays one reference file's setup (repository, request, host
capabilities, grounding); one `telic serve` per class, one run per test. The
bodies are built here from each scenario: they keep the shape the scenario
needs and nothing more. Where telic records something differently, a focused
test is marked expectedFailure and says why (three, listed in PARITY.md).

Run: python3 test_reference_parity.py /path/to/telic   (PARITY_VERBOSE=1 prints each refusal)"""

import contextlib
import copy
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

from mcp_client import McpProcess, apply_file_change, make_git_repo, reset_git_repo, run_tests, telic_binary

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
    """A submission the scenario expects to be accepted was refused."""


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

    def change_file(self, path, change):
        """Makes the change once per run and path in the work tree telic shares, and returns its real
        (beforeHash, afterHash): telic checks claimed FileChanges against the files (issue 38)."""
        changes = self.__dict__.setdefault("changes", {})
        if path not in changes:
            changes[path] = apply_file_change(self.test.repo, path, change, f"changed by run {self.id}")
        return changes[path]

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
        were, except `trace_grows` new permission_checked events (None: any number of them)."""
        before = self.snapshot()
        result = self.server.call("telic_submit_artifact", self.args(artifact_type, body, source_refs))
        payload = result["structuredContent"]
        self.test.assertTrue(result.get("isError"), f"{artifact_type} accepted, expected /{pattern}/")
        if os.environ.get("PARITY_VERBOSE"):
            print(f"\n  refused {artifact_type}: {payload['code']}: {payload['error']}", file=sys.stderr)
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
        return copy.deepcopy(self.artifact(artifact_id)["body"])

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


def file_change(path, diff_ref, change="modified", run=None):
    """A FileChange; with `run`, the host really makes it (Run.change_file) and claims the real hashes. Without,
    the hashes are invented: only for submissions refused by an earlier rule."""
    if run is not None:
        before, after = run.change_file(path, change)
    else:
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


@contextlib.contextmanager
def serving(files):
    """`telic serve` on a fresh git repository of `files` (path -> text) with its own state directory."""
    base = tempfile.mkdtemp(prefix="telic-parity-")
    try:
        repo = make_git_repo(os.path.join(base, "repo"), dict(files))
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(base, "state"))
        server = McpProcess([telic_binary(), "serve"], env)
        try:
            yield server, repo
        finally:
            server.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


class ParityCase(unittest.TestCase):
    """One `telic serve` over a repository of FILES for the whole class."""

    FILES = {}

    @classmethod
    def setUpClass(cls):
        cls.stack = contextlib.ExitStack()
        cls.server, cls.repo = cls.stack.enter_context(serving(cls.FILES))

    def setUp(self):
        reset_git_repo(self.repo)  # each run starts from the committed files (runs change the files they claim)

    @classmethod
    def tearDownClass(cls):
        cls.stack.close()

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
        calls = 0 if mode == "report_only" else (3 if mutation and mode == "fix_only" else 2 if mutation else 1)
        tools = [] if mode == "report_only" else (["repository.write", "repository.read"] if mutation
                                                  else ["repository.read"])
        perms = (permissions(read=["**"], write=["src/**"]) if mutation
                 else no_permissions() if mode == "report_only" else permissions(read=["**"]))
        n = node(nid, tools, tools, perms, calls, inputs or [r.ref("contract-01")],
                 criteria=["AC-2"] if mode == "analyze_and_fix" and mutation else ["AC-1"],
                 context=[] if mode == "report_only" else [r.repo_ref])
        return plan_body(r, [n], pid)

    def capture(self, r, eid="evidence-01", content='{"result":"bounded-direct-evidence"}'):
        diff = r.mode == "fix_only" or (r.mode == "analyze_and_fix" and eid != "evidence-01")
        kind = "diff" if diff else "repository"
        return r.submit("Evidence", evidence_body(r, eid, kind, content))

    def result(self, r, rid="result-01", pid="plan-01", nid="investigate", eid="evidence-01", mutation=False,
               cid="AC-1"):
        ev = r.ref(eid)
        body = result_body(r, ev, rid, nid, pid, cid=cid)
        body["observations"][0]["id"] = f"observation-{rid}"
        if mutation:
            # telic requires a fix_only preflight before the first write (TEL-031, D57); the reference accepts
            # the same result with or without it.
            preflight = [action("repository.read", API, [ev], f"preflight-{rid}")] if r.mode == "fix_only" else []
            body["actions"] = preflight + [action("repository.write", "src/fix.ts", [ev], f"action-{rid}"),
                                           action("repository.read", "src/fix.ts", [ev], f"verify-{rid}")]
            body["filesChanged"] = [file_change("src/fix.ts", ev, "created", run=r)]
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

    # covers TEL-221 TEL-228: report_only (micro here: frame, spot-check, report) reaches completed.
    def test_ff01_report_only_completes(self):
        self.check_completed("report_only")

    # covers TEL-008 TEL-221 TEL-227 TEL-228: plan_only reaches completed with the plan as its deliverable.
    def test_ff02_plan_only_completes(self):
        self.check_completed("plan_only")

    # covers TEL-222 TEL-223 TEL-225 TEL-227 TEL-228: analyze_only reaches completed through execution.
    def test_ff03_analyze_only_completes(self):
        self.check_completed("analyze_only")

    # covers TEL-178 TEL-222 TEL-228: fix_only (forensic here: reverify before the audit) reaches completed with its
    # diff retained.
    def test_ff04_fix_only_completes(self):
        self.check_completed("fix_only")

    # covers TEL-179 TEL-229 TEL-232: repository-only evidence for a browser cause: the audit stays partial, the report
    # says failed_verification, and the read-only run changed no file.
    # The reference copies its demo fixture (only src/ranking.ts; the active path AGENTS.md does not exist).
    def test_ff05_recommendation_bias_fixture_ends_failed_verification(self):
        with serving({"src/ranking.ts": RANKING}) as (server, repo):
            self.server = server  # this test's own repository; the class's server stays untouched
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
                with open(os.path.join(repo, "src/ranking.ts"), encoding="utf-8") as handle:
                    self.assertEqual(handle.read(), RANKING)
            finally:
                del self.server

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
        r.refuse("QualityReview", self.diagnosis_gate(r, ["AC-2"]),
                 r"must cover every authorized criterion exactly once")

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

    # covers TEL-007 TEL-093: ScenarioSpec replay is idempotent (no new artifact or event), a changed
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

    # covers TEL-007 (quota: PROTOCOL §13.16): Evidence replay is idempotent, a changed replay conflicts, and
    # one WorkPlan takes at most 128 Evidence artifacts.
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

    # covers TEL-041 TEL-183 TEL-185: the accepted action's ALLOW is traced with its policy layers and scope.
    def test_ff19_accepted_action_permission_is_traced(self):
        r = self.harness("analyze_only")
        self.accept_intent(r)
        r.submit("WorkPlan", self.plan(r))
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        checks = r.checks()
        self.assertEqual(len(checks), 1)
        policy = [r.ref("contract-01"), r.ref("plan-01")]
        # (the reference also links the event to the accepted result, outputRefs [result-01]: telic does not,
        # see test_ap02_allow_event_names_the_accepted_result)
        self.assertEqual((checks[0]["actor"], checks[0]["phase"], checks[0]["inputRefs"]),
                         ("controller", "agent_4_execute", policy))
        decision = checks[0]["permissionDecision"]
        self.assertEqual((decision["decision"], decision["capability"], decision["scope"], decision["policyRefs"]),
                         ("allow", "repository.read", API, policy))


# ===================================================================================================================
# test/closure-and-authority-conformance.test.ts
# ===================================================================================================================

class ClosureAuthorityTest(ParityCase):
    FILES = {"AGENTS.md": "# Rules\nKeep authority, closure and cumulative budgets.\n",
             API: "export const endpoint = '/api/projects';\n"}

    def harness(self, mode="analyze_only", caps=("repository.read",), **start):
        r = self.new_run().start("Perform bounded work while preserving authority and evidence closure.", mode, caps,
                                 **start)
        r.ground(["AGENTS.md", API])
        r.mode = mode
        return r

    def frame(self, r, source_refs=None):
        body = frame_body(r, r.mode)
        if r.mode == "fix_only":
            body["constraints"] = ["Mutate only within explicit authority."]
            body["nonGoals"] = ["Do not modify unrelated paths."]
        return body

    def contract(self, r, capability="repository.read", perms=None):
        return contract_body(r, r.mode, r.body("frame-01"), perms=perms or permissions(read=["**"]),
                             checks=[verification(capability)])

    def accepted_contract(self, r, capability="repository.read", perms=None):
        r.submit("ProblemFrame", self.frame(r))
        r.submit("TaskContract", self.contract(r, capability, perms))
        r.submit("PromptReview", prompt_review_body(r))

    def plan(self, r, budgets, pid="plan-01", capability="repository.read", perms=None, total=None, control=None):
        nodes = [node(f"node-{i + 1:02d}", [capability], [capability], copy.deepcopy(perms or permissions(read=["**"])),
                      calls, [r.ref("contract-01")] + ([control] if control else []))
                 for i, calls in enumerate(budgets)]
        return plan_body(r, nodes, pid, total)

    def capture(self, r, kind="repository", eid="evidence-01", source_refs=None):
        r.submit("Evidence", evidence_body(r, eid, kind), source_refs)
        return r.ref(eid)

    def result(self, r, nid, ev, rid="result-01", capability="repository.read", target=API, mutating=None,
               action_ev=None):
        return result_body(r, ev, rid, nid, actions=[action(capability, target, [action_ev or ev], f"action-{rid}",
                                                            mutating)])

    def review(self, r, ev, capability="repository.read", verification_ev=None, results=None):
        return quality_review_body(r, ev, capability, verification_ev,
                                   results=results if results is not None else ["result-01"])

    def lineage(self, r):
        request = r.artifacts("ClarificationRequest")[0]["id"]
        answer = [a for a in r.artifacts("UserMessage") if r.ref(request) in a["sourceRefs"]][0]["id"]
        return [r.ref(request), r.ref(answer)]

    def ledger(self, r):
        state = r.server.ok("telic_get_run", {"run_id": r.id})
        return state["run"], state["artifacts"], state["nextAction"], r.trace()

    # (no catalogue item: PROTOCOL §6.4 source_refs) a caller source ref that is not a reference URI is
    # refused; nothing changes.
    def test_ca01_invalid_source_ref(self):
        r = self.harness()
        before = self.ledger(r)
        # same refusal; telic refuses it as a tool argument (D3): "/source_refs/0: must match pattern ..."
        r.refuse("ProblemFrame", self.frame(r),
                 r"sourceRefs must be unique valid reference URIs|/source_refs/0: must match pattern",
                 source_refs=["not-a-reference"])
        self.assertEqual(self.ledger(r), before)

    # (no catalogue item: PROTOCOL §6.4 source_refs) duplicate caller source refs are refused, not normalised.
    def test_ca02_duplicate_source_refs(self):
        r = self.harness()
        before = self.ledger(r)
        r.refuse("ProblemFrame", self.frame(r), r"sourceRefs must be unique|source_refs", source_refs=[r.request] * 2)
        self.assertEqual(self.ledger(r), before)

    # (no catalogue item: PROTOCOL §6.4 source_refs) more than 256 caller source refs are refused.
    def test_ca03_more_than_256_source_refs(self):
        r = self.harness()
        before = self.ledger(r)
        refs = [f"repo://generated/source-{i}.ts" for i in range(257)]
        r.refuse("ProblemFrame", self.frame(r), r"sourceRefs exceed the 256 item limit|at most 256|256",
                 source_refs=refs)
        self.assertEqual(self.ledger(r), before)

    def reused_identifier(self, where):
        r = self.harness()
        frame = self.frame(r)
        fact = frame["knownFacts"][0]["id"]
        if where == "knownFacts":
            frame["knownFacts"].append(dict(frame["knownFacts"][0], claim="A second fact reuses the id."))
        elif where == "inferences":
            frame["inferences"] = [{"id": fact, "claim": "An inference reuses the id.", "sourceRefs": [r.request],
                                    "confidence": 0.5}]
        elif where == "unknowns":
            frame["unknowns"] = [{"id": fact, "question": "Which boundary is unknown?",
                                  "classification": "discoverable", "impact": "The diagnosis may stay incomplete.",
                                  "evidenceInspected": [API_REF]}]
        else:
            frame["draftAcceptanceCriteria"][0]["id"] = fact
        # Same refusal; the wording differs: the reference says "identifier <id> must be unique across the frame".
        r.refuse("ProblemFrame", frame, r"identifier .* must be unique across the frame|duplicate id \"fact-01\"")

    # covers TEL-012: a fact id reused by another fact is refused.
    def test_ca04_frame_id_reused_in_known_facts(self):
        self.reused_identifier("knownFacts")

    # covers TEL-012: a fact id reused by an inference is refused.
    def test_ca05_frame_id_reused_in_inferences(self):
        self.reused_identifier("inferences")

    # covers TEL-012: a fact id reused by an unknown is refused.
    def test_ca06_frame_id_reused_in_unknowns(self):
        self.reused_identifier("unknowns")

    # covers TEL-012: a fact id reused by a criterion is refused.
    def test_ca07_frame_id_reused_in_criteria(self):
        self.reused_identifier("criteria")

    def fix_harness(self, caps=("repository.read", "repository.write"), **start):
        r = self.harness("fix_only", caps, **start)
        return r

    @staticmethod
    def write_scope():
        return permissions(read=["**"], write=["apps/web/src/**"])

    # covers TEL-145: a partial WorkResult cannot hide a completed write without its FileChange.
    def test_ca08_partial_result_cannot_hide_a_write(self):
        r = self.fix_harness()
        perms = self.write_scope()
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [2], capability="repository.write", perms=perms)
        plan["nodes"][0]["allowedTools"] = plan["nodes"][0]["requiredCapabilities"] = ["repository.read",
                                                                                      "repository.write"]
        r.submit("WorkPlan", plan)
        ev = self.capture(r, "diff")
        result = self.result(r, "node-01", ev, capability="repository.write", mutating=True)
        result["status"] = "partial"
        r.refuse("WorkResult", result, r"completed repository\.write action lacks an exact FileChange")

    # covers TEL-136: a completion verifier scheduled before the writing node is refused.
    def test_ca09_verifier_before_the_mutating_node(self):
        r = self.fix_harness()
        perms = self.write_scope()
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [1, 1], perms=perms)
        plan["nodes"][0]["permissions"] = permissions(read=["**"])
        second = plan["nodes"][1]
        second.update(dependsOn=["node-01"], allowedTools=["repository.write"],
                      requiredCapabilities=["repository.write"])
        r.refuse("WorkPlan", plan, r"completion verification .* after mutating node")

    # covers TEL-146: in one node the verification read must come after the write.
    def test_ca10_same_node_verification_before_the_write(self):
        r = self.fix_harness()
        perms = self.write_scope()
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [2], perms=perms)
        plan["nodes"][0]["allowedTools"] = plan["nodes"][0]["requiredCapabilities"] = ["repository.read",
                                                                                      "repository.write"]
        r.submit("WorkPlan", plan)
        ev = self.capture(r, "diff")
        result = self.result(r, "node-01", ev)
        result["actions"].append(action("repository.write", API, [ev], "action-write"))
        result["filesChanged"] = [file_change(API, ev)]
        r.refuse("WorkResult", result, r"completion verification .* after the final mutating action")

    # covers TEL-003 TEL-141: repo:// context cannot prove a completed action.
    def test_ca11_repo_ref_as_action_evidence(self):
        r = self.harness()
        self.accepted_contract(r)
        r.submit("WorkPlan", self.plan(r, [1]))
        ev = self.capture(r)
        r.refuse("WorkResult", self.result(r, "node-01", ev, action_ev=API_REF),
                 r"Repository context cannot prove an executed outcome.*actions")

    # covers TEL-155: repo:// context cannot prove a passed verification.
    def test_ca12_repo_ref_as_verification_evidence(self):
        r = self.harness()
        self.accepted_contract(r)
        r.submit("WorkPlan", self.plan(r, [1]))
        ev = self.capture(r)
        r.submit("WorkResult", self.result(r, "node-01", ev))
        r.refuse("QualityReview", self.review(r, ev, verification_ev=API_REF),
                 r"Repository context cannot prove an executed outcome.*verificationResults")

    # covers TEL-146: a fix whose only action is the (mutating) verification command has no verification
    # after its last mutation. The run has no repository.read grant, so telic's grounding selects no repository
    # file (GROUNDING.md, "Permissions"): frame and contract cite none here (the reference's cite AGENTS.md and
    # api.ts, see test_ca13b_grounding_without_read_grant_selects_nothing).
    def test_ca13_mutating_only_completion_verification(self):
        command = "npm test"
        r = self.fix_harness(("shell.execute",), shell_execute_allowlist=[command])
        perms = permissions(execute=[command])
        frame = self.frame(r)
        frame["applicableRuleRefs"] = []
        r.submit("ProblemFrame", frame)
        r.submit("TaskContract", contract_body(r, r.mode, r.body("frame-01"), context=[], rules=[], perms=perms,
                                               checks=[verification("shell.execute")]))
        r.submit("PromptReview", prompt_review_body(r))
        plan = self.plan(r, [1], capability="shell.execute", perms=perms)
        plan["nodes"][0]["contextRefs"] = []
        r.submit("WorkPlan", plan)
        ev = self.capture(r, "tool_output")
        r.refuse("WorkResult", self.result(r, "node-01", ev, capability="shell.execute", target=command, mutating=True),
                 r"completion verification .* after the final mutating action")

    # Deliberate difference (GROUNDING.md "Differences from the reference": may_read filters the inventory, issue 6):
    # a run whose host grants no repository.read grounds nothing from the repository, so a frame may not cite
    # AGENTS.md or api.ts. The reference selects them anyway and accepts the frame and contract of
    # test_ca13. telic's reading is the safer one: no read grant, no repository content in the run.
    @unittest.expectedFailure
    def test_ca13b_grounding_without_read_grant_selects_nothing(self):
        r = self.fix_harness(("shell.execute",), shell_execute_allowlist=["npm test"])
        self.assertTrue({RULES, API_REF} <= r.selected(), r.selected())

    # covers TEL-156: verification evidence captured before the write does not count, even if a later read exists.
    def test_ca14_pre_mutation_evidence_with_a_later_verifier(self):
        r = self.fix_harness()
        perms = self.write_scope()
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [3], perms=perms)
        plan["nodes"][0]["allowedTools"] = plan["nodes"][0]["requiredCapabilities"] = ["repository.read",
                                                                                      "repository.write"]
        r.submit("WorkPlan", plan)
        old = self.capture(r, "diff", "evidence-old")
        new = self.capture(r, "diff", "evidence-new")
        result = self.result(r, "node-01", new)
        read = result["actions"][0]
        result["actions"] = [dict(read, id="action-read-old", evidenceRefs=[old]),
                             action("repository.write", API, [old], "action-write"),
                             dict(read, id="action-read-new", evidenceRefs=[new])]
        result["filesChanged"] = [file_change(API, old, run=r)]
        result["evidenceRefs"] = [old, new]
        r.submit("WorkResult", result)
        r.refuse("QualityReview", self.review(r, new, verification_ev=old),
                 r"verification .* lacks a completed capability action")

    # covers TEL-155 TEL-156: completion evidence must come from the node scheduled after the write.
    def test_ca15_completion_evidence_bound_to_the_post_mutation_node(self):
        r = self.fix_harness()
        perms = self.write_scope()
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [1, 1, 1], perms=perms)
        first, second, third = plan["nodes"]
        first.update(acceptanceCriteria=[], permissions=permissions(read=["**"]))
        second.update(dependsOn=["node-01"], allowedTools=["repository.write"],
                      requiredCapabilities=["repository.write"], acceptanceCriteria=[])
        third.update(dependsOn=["node-02"], permissions=permissions(read=["**"]))
        r.submit("WorkPlan", plan)
        old = self.capture(r, "repository", "evidence-old")
        preflight = self.result(r, "node-01", old, "result-preflight")
        preflight["acceptanceCoverage"] = []
        r.submit("WorkResult", preflight)
        diff = self.capture(r, "diff", "evidence-diff")
        mutation = self.result(r, "node-02", diff, "result-mutation", "repository.write", mutating=True)
        mutation["acceptanceCoverage"] = []
        mutation["filesChanged"] = [file_change(API, diff, run=r)]
        r.submit("WorkResult", mutation)
        new = self.capture(r, "repository", "evidence-new")
        r.submit("WorkResult", self.result(r, "node-03", new, "result-verification"))
        review = self.review(r, new, verification_ev=old,
                             results=["result-preflight", "result-mutation", "result-verification"])
        r.refuse("QualityReview", review, r"verification .* lacks a completed capability action")

    def expansion_without(self, missing):
        r = self.harness()
        request = clarification_body(r, "clarification-permission-expansion", expansion=True)
        request["responseChoices"] = [c for c in request["responseChoices"] if c["id"] != missing]
        # Same refusal; the wording differs: the reference says "requires both a bounded current-authority choice
        # and an explicit new-run choice".
        r.refuse("ClarificationRequest", request,
                 r"requires both a bounded current-authority choice and an explicit new-run choice"
                 r"|needs a resume choice within current authority and a new-run choice")

    # covers TEL-071 TEL-076 TEL-079: a permission-expanding question must offer a bounded choice.
    def test_ca16_expansion_needs_the_bounded_choice(self):
        self.expansion_without("bounded")

    # covers TEL-071 TEL-079: a permission-expanding question must offer a new-run choice.
    def test_ca17_expansion_needs_the_new_run_choice(self):
        self.expansion_without("new-run")

    # covers TEL-076 TEL-081: the bounded answer resumes the paused phase.
    def test_ca18_bounded_choice_resumes(self):
        r = self.harness()
        r.submit("ClarificationRequest", clarification_body(r, "clarification-permission-expansion", expansion=True))
        answered = r.answer("bounded")
        self.assertEqual((answered["run"]["status"], answered["run"]["phase"], answered["run"]["resumePhase"]),
                         ("running", "agent_1_frame", None))
        self.assertEqual((answered["nextAction"]["kind"], answered["nextAction"]["phase"]), ("phase", "agent_1_frame"))

    def terminal_choice(self, choice):
        r = self.harness()
        r.submit("ClarificationRequest", clarification_body(r, "clarification-permission-expansion", expansion=True))
        answered = r.answer(choice)
        self.assertEqual(answered["run"]["status"], "cancelled")
        terminal = answered["nextAction"]
        self.assertEqual((terminal["kind"], terminal["phase"], terminal["status"], terminal["reportRef"]),
                         ("terminal", "cancelled", "cancelled", None))

    # covers TEL-078 TEL-079 TEL-214: the new-run answer cancels this run.
    def test_ca19_new_run_choice_cancels(self):
        self.terminal_choice("new-run")

    # covers TEL-078 TEL-214: the cancel answer cancels this run.
    def test_ca20_cancel_choice_cancels(self):
        self.terminal_choice("cancel")

    # covers TEL-077: a ScenarioSpec citing the answer does not discharge the lineage; the contract must cite it.
    def test_ca21_lineage_pending_after_scenario_spec(self):
        r = self.harness()
        r.submit("ProblemFrame", self.frame(r))
        r.submit("ClarificationRequest", clarification_body(r, "clarification-permission-expansion", expansion=True))
        r.answer("bounded")
        lineage = self.lineage(r)
        r.submit("ScenarioSpec", scenario_body(r), lineage)
        r.refuse("TaskContract", self.contract(r),
                 r"resumed phase artifact must cite the exact clarification request and answer")
        r.submit("TaskContract", self.contract(r), lineage)

    # covers TEL-077: Evidence citing the answer does not discharge the lineage; the WorkResult must cite it.
    def test_ca22_lineage_pending_after_evidence(self):
        r = self.harness()
        self.accepted_contract(r)
        r.submit("WorkPlan", self.plan(r, [1]))
        r.submit("ClarificationRequest", clarification_body(r, "clarification-permission-expansion", expansion=True))
        r.answer("bounded")
        lineage = self.lineage(r)
        ev = self.capture(r, source_refs=lineage)
        result = self.result(r, "node-01", ev)
        r.refuse("WorkResult", result, r"resumed phase artifact must cite the exact clarification request and answer")
        r.submit("WorkResult", result, lineage)

    # covers TEL-072 TEL-080 TEL-230 TEL-245: a second boundary goes to a blocked report without a second question.
    def test_ca23_second_boundary_routes_to_blocked_report(self):
        r = self.harness()
        r.submit("ClarificationRequest", clarification_body(r, "clarification-permission-expansion", expansion=True))
        r.answer("bounded")
        r.submit("ProblemFrame", self.frame(r), self.lineage(r))
        routed = r.submit("ClarificationRequest",
                          clarification_body(r, "clarification-second-boundary", expansion=True))
        self.assertEqual((routed["run"]["status"], routed["run"]["phase"], routed["run"]["outcomeHint"]),
                         ("running", "agent_5_report", "blocked"))
        self.assertEqual((routed["nextAction"]["kind"], routed["nextAction"]["phase"],
                          routed["nextAction"]["requiredOutputType"]), ("phase", "user_report", "UserReport"))
        report = user_report_body(r, "blocked", findings=[r.ref("clarification-second-boundary")])
        report["summary"] = "A second divergence exhausted the one-question budget."
        self.assertEqual(r.submit("UserReport", report)["run"]["status"], "blocked")

    # covers TEL-134 TEL-135: a plan that cannot run the contracted browser verification is refused.
    def test_ca24_plan_cannot_perform_required_verification(self):
        r = self.harness(caps=("repository.read", "browser.inspect"))
        perms = permissions(read=["**"], browser=True)
        self.accepted_contract(r, "browser.inspect", perms)
        before = self.ledger(r)
        r.refuse("WorkPlan", self.plan(r, [1]), r"required verification VR-1.*browser\.inspect.*WorkPlan")
        self.assertEqual(self.ledger(r), before)

    # covers TEL-129: a node's tool budget must cover its required capabilities.
    def test_ca25_node_budget_below_required_capabilities(self):
        r = self.harness(caps=("repository.read", "browser.inspect"))
        perms = permissions(read=["**"], browser=True)
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [1], perms=perms)
        plan["nodes"][0]["requiredCapabilities"] = plan["nodes"][0]["allowedTools"] = ["repository.read",
                                                                                      "browser.inspect"]
        r.refuse("WorkPlan", plan, r"tool budget cannot satisfy its required capabilities")

    # covers TEL-130: a node requiring subagent.spawn must reserve a child.
    def test_ca26_spawn_without_child_budget(self):
        r = self.harness(caps=("repository.read", "subagent.spawn"), native_subagents="available")
        perms = permissions(read=["**"], spawn=(1, 1))
        self.accepted_contract(r, "repository.read", perms)
        plan = self.plan(r, [1], capability="subagent.spawn", perms=perms)
        plan["globalBudgets"]["maximumSubagentDepth"] = 1
        r.refuse("WorkPlan", plan, r"requires a child budget for subagent\.spawn")

    # covers TEL-241 TEL-246: exactly 4,000 reserved calls are accepted and leave 0.
    def test_ca27_exactly_4000_calls(self):
        r = self.harness()
        self.accepted_contract(r)
        accepted = r.submit("WorkPlan", self.plan(r, [1000] * 4))
        self.assertEqual((accepted["nextAction"]["kind"], accepted["nextAction"]["phase"],
                          accepted["nextAction"]["remainingBudgets"]["remainingPlanToolCalls"]),
                         ("phase", "agent_4_execute", 0))

    # covers TEL-131 TEL-241: one plan reserving 4,001 calls is refused, nothing changes.
    def test_ca28_single_plan_over_4000(self):
        r = self.harness()
        self.accepted_contract(r)
        before = self.ledger(r)
        r.refuse("WorkPlan", self.plan(r, [1000] * 4 + [1], total=4000), r"node tool budgets exceed the global budget")
        self.assertEqual(self.ledger(r), before)

    # covers TEL-224 TEL-241 TEL-246: the cumulative 4,000-call budget spans plans; the refused second plan leaves
    # the remediation review in force.
    def test_ca29_cumulative_plans_over_4000(self):
        r = self.harness()
        self.accepted_contract(r)
        first = self.plan(r, [1000, 1000, 1000, 500])
        planned = r.submit("WorkPlan", first)
        self.assertEqual(planned["nextAction"]["remainingBudgets"]["remainingPlanToolCalls"], 500)
        ev = self.capture(r)
        results = []
        for i, n in enumerate(first["nodes"]):
            rid = f"result-{i + 1:02d}"
            r.submit("WorkResult", self.result(r, n["id"], ev, rid))
            results.append(rid)
        review = self.review(r, ev, results=results)
        review["acceptanceResults"][0]["status"] = "fail"
        review["verificationResults"][0]["status"] = "fail"
        review["hardGates"][0]["passed"] = False
        review.update(score=50, decision="remediate")
        review["findings"] = [{"id": "finding-remediation", "severity": "blocking", "claim": "Needs one more pass.",
                               "sourceRefs": [ev], "rubricDimension": "acceptance",
                               "requiredCorrection": "Re-run the bounded verification.", "preserveFields": [],
                               "correctionFields": [], "rationaleSummary": "Within current authority."}]
        review["remediationWorkOrder"] = {
            "id": "remediation-order-01", "failedCriterionIds": ["AC-1"], "objective": "Repeat the verification.",
            "allowedCapabilities": ["repository.read"], "permissions": permissions(read=["**"]), "sourceRefs": [ev],
            "maximumToolCalls": 1000, "rationaleSummary": "Bounded and evidence-backed."}
        reviewed = r.submit("QualityReview", review)
        control = r.ref("quality-review-01")
        self.assertEqual((reviewed["nextAction"]["kind"], reviewed["nextAction"]["phase"],
                          reviewed["nextAction"]["remainingBudgets"]["remainingPlanToolCalls"]),
                         ("phase", "agent_3_plan", 500))
        self.assertIn(control, reviewed["nextAction"]["inputRefs"])
        before = self.ledger(r)
        r.refuse("WorkPlan", self.plan(r, [501], "plan-02", control=control),
                 r"cumulative run tool-call budget of 4000")
        self.assertEqual(self.ledger(r), before)
        current = r.server.ok("telic_get_next_action", {"run_id": r.id})["nextAction"]
        self.assertEqual(current["remainingBudgets"]["remainingPlanToolCalls"], 500)
        self.assertIn(control, current["inputRefs"])


# ===================================================================================================================
# test/controller-security-conformance.test.ts
# ===================================================================================================================

class ControllerSecurityTest(ParityCase):
    """The reference stores a hand-made ContextManifest through its internal controller (api.ts selected, AGENTS.md
    pinned); over MCP the run is grounded with those two files as active paths, which selects the same refs."""

    FILES = {"AGENTS.md": "# Rules\nKeep authorization.\n", API: "export const endpoint = '/api/projects';\n",
             "apps/api/cors.ts": "export const allowedOrigins = ['http://localhost:5173'];\n",
             "src/allowed.ts": "export const allowed = true;\n", "infra/prod.yml": "environment: production\n"}

    def harness(self, mode="analyze_only",
                caps=("repository.read", "shell.inspect", "browser.inspect", "runtime.inspect"), **start):
        r = self.new_run().start("Investigate the apps/web client and apps/api communication boundary.", mode, caps,
                                 **start)
        r.ground(["AGENTS.md", API])
        self.assertTrue({RULES, API_REF} <= r.selected())
        return r

    @staticmethod
    def result(r):
        """The reference's template WorkResult: one browser inspection, one observation, one inference."""
        ev = r.ref("evidence-01")
        body = result_body(r, ev, actions=[action("browser.inspect", "http://localhost:3000", [ev], "action-01")])
        body["inferences"] = [{"id": "claim-02", "text": "The origin allowlist is the supported cause.",
                               "status": "inferred", "evidenceRefs": [ev], "confidence": 0.95}]
        return body

    @staticmethod
    def report(r):
        body = user_report_body(r, "completed", findings=[r.ref("result-01")])
        body["nextActions"] = [{"id": "next-01", "description": "Authorize a separate fix run.",
                                "requiresAuthorization": True}]
        return body

    def accept_contract(self, r, mode, perms=None):
        frame = frame_body(r, mode)
        contract = contract_body(r, mode, frame_body(r, mode), perms=perms or broad_read())
        if mode in ("fix_only", "analyze_and_fix"):
            for body in (frame, contract):
                body["nonGoals"] = []
                body["constraints"] = ["Stay inside the explicit permission scopes."]
            contract["verificationRequirements"][0]["capability"] = "repository.read"
        r.submit("ProblemFrame", frame)
        r.submit("TaskContract", contract)
        r.submit("PromptReview", prompt_review_body(r))

    def capture(self, r):
        r.submit("Evidence", evidence_body(r, kind="browser", content='{"result":"bounded-local-evidence"}'))

    def to_audit(self, r):
        self.accept_contract(r, "analyze_only")
        r.submit("WorkPlan", plan_body(r))
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        r.submit("QualityReview", quality_review_body(r))

    @staticmethod
    def scoped_fix():
        return permissions(read=["**"], write=["src/**"], shell_inspect=True, execute=["npm test"])

    def fix_harness(self):
        r = self.harness("fix_only", ("repository.read", "repository.write", "shell.inspect", "shell.execute"),
                         shell_execute_allowlist=["npm test"])
        self.accept_contract(r, "fix_only", self.scoped_fix())
        return r

    def fix_plan(self, r, tools):
        plan = plan_body(r)
        plan["nodes"][0].update(allowedTools=list(tools), requiredCapabilities=list(tools),
                                permissions=self.scoped_fix())
        r.submit("WorkPlan", plan)
        self.capture(r)

    # covers TEL-045 TEL-139: a write outside the node's write scope is refused.
    def test_cs01_write_outside_node_scope(self):
        r = self.fix_harness()
        self.fix_plan(r, ["repository.write", "repository.read"])
        result = self.result(r)
        result["actions"] = [action("repository.write", "infra/prod.yml", [r.ref("evidence-01")], "write-outside")]
        r.refuse("WorkResult", result, r"target|scope|permission", trace_grows=None)

    # covers TEL-045 TEL-145: a changed file outside the write scope is refused.
    def test_cs02_changed_file_outside_node_scope(self):
        r = self.fix_harness()
        self.fix_plan(r, ["repository.write", "repository.read"])
        result = self.result(r)
        result["actions"] = [action("repository.write", "src/allowed.ts", [r.ref("evidence-01")], "write-allowed")]
        result["filesChanged"] = [{"path": "infra/prod.yml", "changeType": "modified", "beforeHash": ZERO,
                                   "afterHash": ZERO, "diffRef": r.ref("evidence-01")}]
        r.refuse("WorkResult", result, r"file|path|scope|permission", trace_grows=None)

    # covers TEL-047: a command missing from the node's exact allowlist is refused.
    def test_cs03_command_outside_allowlist(self):
        r = self.fix_harness()
        self.fix_plan(r, ["shell.execute", "repository.read"])
        result = self.result(r)
        result["actions"] = [action("shell.execute", "rm -rf build", [r.ref("evidence-01")], "unlisted", True)]
        r.refuse("WorkResult", result, r"command|allowlist|target|permission", trace_grows=None)

    # covers TEL-141: a TaskContract cited as execution evidence is refused.
    def test_cs04_contract_is_not_execution_evidence(self):
        r = self.harness()
        self.accept_contract(r, "analyze_only")
        r.submit("WorkPlan", plan_body(r))
        contract = r.ref("contract-01")
        result = self.result(r)
        for entry in result["observations"] + result["inferences"] + result["actions"] + result["acceptanceCoverage"]:
            entry["evidenceRefs"] = [contract]
        result["evidenceRefs"] = [contract]
        r.refuse("WorkResult", result, r"evidence.*(?:artifact|type)|artifact.*evidence")

    # covers TEL-171 TEL-164: an honest blocking audit recording failed mode compliance is accepted.
    def test_cs05_blocking_audit_with_failed_mode_compliance(self):
        r = self.harness()
        self.to_audit(r)
        audit = release_audit_body(r, decision="release")
        audit.update(decision="block", modeCompliance="fail")
        audit["userFidelity"][0]["status"] = "fail"
        audit["claimEvidenceMatrix"][0]["status"] = "unsupported"
        r.submit("ReleaseAudit", audit)
        self.assertEqual(r.action["phase"], "user_report")

    # covers TEL-180 TEL-220 TEL-230: an early contract block ends in a typed blocked UserReport.
    def test_cs06_early_contract_block(self):
        r = self.harness()
        r.submit("ProblemFrame", frame_body(r))
        r.submit("TaskContract", contract_body(r))
        review = prompt_review_body(r)
        review["decision"] = "block"
        review["hardGates"][0]["passed"] = False
        blocked = r.submit("PromptReview", review)
        self.assertEqual((blocked["nextAction"]["kind"], blocked["nextAction"]["phase"],
                          blocked["nextAction"]["logicalRole"]), ("phase", "user_report", "release_auditor"))
        report = self.report(r)
        report.update(terminalStatus="blocked", completionClaims=[], findingRefs=[r.ref("prompt-review-01")],
                      changeRefs=[], verificationRefs=[], summary="Contract review blocked execution.")
        terminal = r.submit("UserReport", report)
        self.assertEqual(terminal["run"]["status"], "blocked")
        self.assertEqual((terminal["nextAction"]["kind"], terminal["nextAction"]["status"],
                          terminal["nextAction"]["reportRef"]), ("terminal", "blocked", r.ref("user-report-01")))

    def permissions_not_honored(self, decision, status):
        r = self.harness()
        self.to_audit(r)
        audit = release_audit_body(r)
        audit.update(decision=decision, modeCompliance="fail")
        r.submit("ReleaseAudit", audit)
        report = self.report(r)
        report.update(terminalStatus=status, permissionsHonored=False, completionClaims=[],
                      findingRefs=[r.ref("release-audit-01")], summary="A permission violation stopped the release.")
        self.assertEqual(r.submit("UserReport", report)["run"]["status"], status)

    # covers TEL-179 TEL-230: an honest blocked report after permissions were not honored is accepted.
    def test_cs07_blocked_report_after_permission_violation(self):
        self.permissions_not_honored("block", "blocked")

    # covers TEL-179 TEL-229: an honest partial report after permissions were not honored is accepted.
    def test_cs08_partial_report_after_permission_violation(self):
        self.permissions_not_honored("partial", "partial")

    # covers TEL-176: a completed report may not add a claim the audit did not approve.
    def test_cs09_unaudited_completion_claim(self):
        r = self.harness()
        self.to_audit(r)
        r.submit("ReleaseAudit", release_audit_body(r))
        report = self.report(r)
        report["completionClaims"][0].update(id="claim-unreviewed",
                                             text="The production database was repaired and deployed.")
        report["summary"] = "An unreviewed production repair is claimed as complete."
        r.refuse("UserReport", report, r"claim.*(?:audit|release|approved|drift)")

    # covers TEL-001 TEL-002 TEL-077 TEL-081: a clarification during planning keeps the original request;
    # an audit citing the answer as the original request is refused.
    def test_cs10_original_request_survives_a_late_clarification(self):
        r = self.harness()
        self.accept_contract(r, "analyze_only")
        r.submit("ClarificationRequest", clarification_body(r, evidence=[RULES]))
        r.answer("local-only")
        messages = r.artifacts("UserMessage")
        self.assertEqual(len(messages), 2)
        followup = [m["id"] for m in messages if m["id"] != r.request_id][0]
        self.assertEqual(r.artifact(r.id)["body"]["originalRequestRef"], r.ref(r.request_id))
        r.submit("WorkPlan", plan_body(r), [r.ref("clarification-01"), r.ref(followup)])
        self.capture(r)
        r.submit("WorkResult", self.result(r))
        r.submit("QualityReview", quality_review_body(r))
        r.refuse("ReleaseAudit", dict(release_audit_body(r), originalRequestRef=r.ref(followup)), r"original|lineage")
        r.submit("ReleaseAudit", release_audit_body(r))

    def failed_prerequisite(self, status):
        r = self.harness()
        self.accept_contract(r, "analyze_only")
        plan = plan_body(r)
        plan["nodes"].append(dict(copy.deepcopy(plan["nodes"][0]), id="dependent-verification",
                                  dependsOn=["investigate"], objective="Verify after the prerequisite."))
        plan["globalBudgets"]["maximumToolCalls"] = 24
        r.submit("WorkPlan", plan)
        self.capture(r)
        result = self.result(r)
        result["status"] = status
        result["actions"][0]["status"] = "failed" if status == "failed" else "skipped"
        result["acceptanceCoverage"][0]["status"] = "fail" if status == "failed" else "unverified"
        result["unresolvedIssues"] = ["The prerequisite did not complete."]
        submitted = r.submit("WorkResult", result)
        self.assertNotEqual((submitted["nextAction"].get("phase"), submitted["nextAction"].get("workNodeId")),
                            ("agent_4_execute", "dependent-verification"))

    # covers TEL-223: a failed prerequisite does not unlock its dependent node.
    def test_cs11_failed_prerequisite_keeps_dependent_locked(self):
        self.failed_prerequisite("failed")

    # covers TEL-223: a blocked prerequisite does not unlock its dependent node.
    def test_cs12_blocked_prerequisite_keeps_dependent_locked(self):
        self.failed_prerequisite("blocked")

    # covers TEL-131: node tool budgets above the global budget are refused.
    def test_cs13_node_budgets_above_global(self):
        r = self.harness()
        self.accept_contract(r, "analyze_only")
        plan = plan_body(r, total=12)
        plan["nodes"][0]["budgets"]["maximumToolCalls"] = 13
        r.refuse("WorkPlan", plan, r"tool.*budget")

    # covers TEL-126: a child budget beyond the node's subagent permission is refused.
    def test_cs14_child_budget_beyond_subagent_permission(self):
        r = self.harness()
        self.accept_contract(r, "analyze_only")
        plan = plan_body(r)
        plan["nodes"][0]["budgets"]["maximumChildren"] = 3
        r.refuse("WorkPlan", plan, r"child|subagent|budget|permission")

    # covers TEL-129 TEL-139: a WorkResult with more actions than its node's tool budget is refused.
    def test_cs15_result_over_node_tool_budget(self):
        r = self.harness()
        self.accept_contract(r, "analyze_only")
        plan = plan_body(r)
        plan["nodes"][0]["budgets"]["maximumToolCalls"] = 1
        plan["globalBudgets"]["maximumToolCalls"] = 1
        r.submit("WorkPlan", plan)
        self.capture(r)
        result = self.result(r)
        result["actions"].append(dict(copy.deepcopy(result["actions"][0]), id="action-over-budget"))
        r.refuse("WorkResult", result, r"tool.*budget|budget.*tool", trace_grows=None)


# ===================================================================================================================
# test/trust-boundary-conformance.test.ts
# ===================================================================================================================

def executed_test(output_ref):
    return {"id": "test-01", "name": "bounded verification", "status": "passed", "commandRef": None,
            "outputRef": output_ref, "exitCode": 0, "rationaleSummary": "The executed test claims success."}


class TrustBoundaryTest(ParityCase):
    FILES = {"AGENTS.md": "# Rules\nRequire direct, capability-compatible evidence.\n",
             API: "export const endpoint = '/api/projects';\n", "infra/prod.yml": "production: true\n",
             "src/old.ts": "export const old = 1;\n"}

    def harness(self, mode="analyze_only", caps=("repository.read",), **start):
        """A grounded, framed run. Without a repository.read grant telic grounds no repository file (see
        test_ca13b), so the frame and contract then cite no repository ref; the rule under test is unchanged."""
        r = self.new_run().start("Perform the requested bounded work and preserve direct evidence for every claim.",
                                 mode, caps, **start)
        r.ground(["AGENTS.md", API, "src/old.ts"])
        r.mode = mode
        r.reads = {RULES, API_REF} <= r.selected()
        documents = r.artifacts("ContextDocument")
        r.document = r.ref(documents[0]["id"]) if documents else None
        frame = frame_body(r, mode, rules=[RULES] if r.reads else [])
        if mode == "analyze_and_fix":
            frame["draftAcceptanceCriteria"] = [
                criterion("AC-DIAGNOSIS", "diagnosis", "Identify the supported failure boundary.",
                          ["direct_diagnosis_evidence"]),
                criterion("AC-COMPLETION", "completion", "Complete and verify the bounded correction.",
                          ["direct_completion_evidence"])]
        else:
            frame["draftAcceptanceCriteria"] = [criterion("AC-1", "completion", "Complete the task with evidence.",
                                                          ["direct_evidence"])]
        if mode != "analyze_only":
            frame["constraints"] = ["Mutate only within explicitly authorized scope."]
            frame["nonGoals"] = ["Do not change unrelated files."]
        r.submit("ProblemFrame", frame)
        return r

    @staticmethod
    def perms_for(capability, scopes=("**",)):
        return {"repository.read": lambda: permissions(read=scopes),
                "repository.write": lambda: permissions(read=["**"], write=scopes),
                "repository.delete": lambda: permissions(read=["**"], delete=scopes),
                "shell.inspect": lambda: permissions(shell_inspect=True),
                "shell.execute": lambda: permissions(execute=scopes),
                "browser.inspect": lambda: permissions(browser=True),
                "network.read": lambda: permissions(domains=scopes)}[capability]()

    def contract(self, r, perms, checks):
        return contract_body(r, r.mode, r.body("frame-01"), context=[API_REF] if r.reads else [],
                             rules=[RULES] if r.reads else [], perms=perms, checks=checks)

    def pipeline(self, r, capability, perms):
        check = "repository.read" if capability in ("repository.write", "repository.delete") else capability
        r.submit("TaskContract", self.contract(r, perms, [verification(check)]))
        r.submit("PromptReview", prompt_review_body(r))
        tools = list(dict.fromkeys([capability, check]))
        n = node(tools=tools, required=tools, perms=copy.deepcopy(perms), calls=4, r=r,
                 context=[API_REF] if r.reads else [])
        r.submit("WorkPlan", plan_body(r, [n]))

    def capture(self, r, eid, kind):
        r.submit("Evidence", evidence_body(r, eid, kind, json.dumps({"kind": kind, "bounded": True})))
        return r.ref(eid)

    def result(self, r, ev, actions=None, files=(), tests=(), acceptance_ev=None):
        body = result_body(r, ev, actions=actions, files=files, tests=tests)
        body["acceptanceCoverage"][0]["evidenceRefs"] = [acceptance_ev or ev]
        return body

    def review(self, r, ev, verification_ev=None):
        return quality_review_body(r, ev, "repository.read", verification_ev)

    def permission_trace_ref(self, r):
        return f"trace://{r.id}/{r.checks()[-1]['id']}"

    def read_run_with_result(self):
        r = self.harness()
        self.pipeline(r, "repository.read", self.perms_for("repository.read"))
        ev = self.capture(r, "evidence-01", "repository")
        r.submit("WorkResult", self.result(r, ev))
        return r, ev

    # covers TEL-141 TEL-014: a permission_checked event is not acceptance evidence (after a DENY was recorded).
    def test_tb01_permission_event_is_not_acceptance_evidence(self):
        r = self.harness()
        self.pipeline(r, "repository.read", self.perms_for("repository.read", ["apps/web/**"]))
        ev = self.capture(r, "evidence-01", "repository")
        denied = self.result(r, ev, actions=[action("repository.read", "infra/prod.yml", [ev])])
        r.refuse("WorkResult", denied, r"outside node|scope|permission", trace_grows=1)
        r.refuse("WorkResult", self.result(r, ev, acceptance_ev=self.permission_trace_ref(r)),
                 r"trace event is not direct evidence")

    # covers TEL-155: a permission_checked event is not verification evidence.
    def test_tb02_permission_event_is_not_verification_evidence(self):
        r, ev = self.read_run_with_result()
        r.refuse("QualityReview", self.review(r, ev, self.permission_trace_ref(r)),
                 r"trace event is not direct evidence")

    # covers TEL-175: a permission_checked event is not release evidence.
    def test_tb03_permission_event_is_not_release_evidence(self):
        r, ev = self.read_run_with_result()
        trace_ref = self.permission_trace_ref(r)
        r.submit("QualityReview", self.review(r, ev))
        r.refuse("ReleaseAudit", release_audit_body(r, ev, trace_ref), r"trace event is not direct evidence")

    # covers TEL-142: a completed result must record its node's required capability.
    def test_tb04_completed_result_without_required_action(self):
        r = self.harness()
        self.pipeline(r, "repository.read", self.perms_for("repository.read"))
        ev = self.capture(r, "evidence-01", "repository")
        r.refuse("WorkResult", self.result(r, ev, actions=[]), r"missing required capability repository\.read")

    def mutation_without_file_change(self, capability, target):
        r = self.harness("fix_only", ("repository.read", capability))
        self.pipeline(r, capability, self.perms_for(capability, ["src/**"]))
        ev = self.capture(r, "evidence-01", "diff")
        r.refuse("WorkResult", self.result(r, ev, actions=[action(capability, target, [ev])]),
                 r"lacks an exact FileChange")

    # covers TEL-145: a completed write needs its FileChange.
    def test_tb05_write_without_file_change(self):
        self.mutation_without_file_change("repository.write", "src/fix.ts")

    # covers TEL-145: a completed delete needs its FileChange.
    def test_tb06_delete_without_file_change(self):
        self.mutation_without_file_change("repository.delete", "src/old.ts")

    # covers TEL-155: repository Evidence cannot be a FileChange diff.
    def test_tb07_repository_evidence_as_diff(self):
        r = self.harness("fix_only", ("repository.read", "repository.write"))
        self.pipeline(r, "repository.write", self.perms_for("repository.write", ["src/**"]))
        ev = self.capture(r, "evidence-01", "diff")
        bad = self.capture(r, "not-a-diff", "repository")
        result = self.result(r, ev, actions=[action("repository.write", "src/fix.ts", [ev]),
                                             action("repository.read", API, [bad])],
                             files=[file_change("src/fix.ts", bad, "created")])
        r.refuse("WorkResult", result, r"evidence kind repository is incompatible.*diffRef")

    # covers TEL-155: repository Evidence cannot back a browser action.
    def test_tb08_repository_evidence_for_browser_action(self):
        r = self.harness(caps=("browser.inspect",))
        self.pipeline(r, "browser.inspect", self.perms_for("browser.inspect"))
        ev = self.capture(r, "evidence-01", "repository")
        r.refuse("WorkResult", self.result(r, ev, actions=[action("browser.inspect", "http://localhost:3000", [ev])]),
                 r"evidence kind repository is incompatible.*actions")

    # covers TEL-141 TEL-144: a user confirmation is not executed test output.
    def test_tb09_user_confirmation_as_test_output(self):
        r = self.harness()
        self.pipeline(r, "repository.read", self.perms_for("repository.read"))
        ev = self.capture(r, "evidence-01", "repository")
        output = self.capture(r, "user-confirmation", "user_confirmation")
        r.refuse("WorkResult", self.result(r, ev, tests=[executed_test(output)]),
                 r"evidence kind user_confirmation is incompatible.*outputRef")

    # covers TEL-141: a ContextDocument is not executed test output.
    def test_tb10_context_document_as_test_output(self):
        r = self.harness()
        self.pipeline(r, "repository.read", self.perms_for("repository.read"))
        ev = self.capture(r, "evidence-01", "repository")
        r.refuse("WorkResult", self.result(r, ev, tests=[executed_test(r.document)]),
                 r"ContextDocument cannot prove an executed outcome.*outputRef")

    def denied_url(self):
        r = self.harness(caps=("network.read",), network_read_domains=["api.example.com"])
        self.pipeline(r, "network.read", self.perms_for("network.read", ["api.example.com"]))
        ev = self.capture(r, "evidence-01", "tool_output")
        url = "https://user:trace-secret-value@api.example.com/v1/items?token=query-secret-value#private"
        r.refuse("WorkResult", self.result(r, ev, actions=[action("network.read", url, [ev])]),
                 r"permission|outside node", trace_grows=1)
        return r, json.dumps(r.trace(), separators=(",", ":"))

    # covers TEL-054 TEL-186: a URL with credentials is denied and no secret of it reaches the trace.
    def test_tb11_denied_network_target_is_redacted(self):
        r, trace = self.denied_url()
        self.assertNotIn("trace-secret-value", trace)
        self.assertNotIn("query-secret-value", trace)
        self.assertEqual(r.checks("deny")[-1]["permissionDecision"]["scope"], "invalid_network_target")

    # Deliberate difference (PERMISSIONS.md "Network", API.md): telic refuses any userinfo in a URL before it
    # looks at the host and records the DENY with scope "invalid_network_target"; the reference parses the host
    # out and records "api.example.com". Both deny and keep the secrets out; telic's record is the more
    # conservative (it does not claim which host a credentialed URL meant).
    @unittest.expectedFailure
    def test_tb11b_denied_credentialed_url_is_traced_with_its_host(self):
        self.assertIn('"scope":"api.example.com"', self.denied_url()[1])

    # covers TEL-047 TEL-103: a generic shell.execute grant authorizes no command.
    def test_tb12_generic_shell_execute_grants_no_command(self):
        r = self.harness("fix_only", ("repository.read", "shell.execute"))
        self.assertEqual(r.artifact(r.id)["body"]["authorization"]["granted"]["shell"]["executeAllowlist"], [])
        r.refuse("TaskContract", self.contract(r, self.perms_for("shell.execute", ["npm test"]),
                                               [verification("shell.execute")]),
                 r"permissions exceed immutable authorization")

    # covers TEL-049: free shell text is not a typed shell.inspect target; the DENY is traced.
    def test_tb13_raw_command_as_shell_inspect(self):
        r = self.harness(caps=("shell.inspect",))
        self.pipeline(r, "shell.inspect", self.perms_for("shell.inspect"))
        ev = self.capture(r, "evidence-01", "tool_output")
        r.refuse("WorkResult", self.result(r, ev, actions=[action("shell.inspect", "rm -rf /", [ev])]),
                 r"typed read-only inspection", trace_grows=1)
        self.assertTrue(any(e["permissionDecision"]["capability"] == "shell.inspect"
                            and e["permissionDecision"]["scope"] == "rm -rf /" for e in r.checks("deny")))

    def no_verification(self, mode):
        r = self.harness(mode)
        r.refuse("TaskContract", self.contract(r, self.perms_for("repository.read"), []),
                 # same refusal; telic words it "<mode> needs at least one required verification"
                 r"require at least one required verification|needs at least one required verification")

    # covers TEL-100: analyze_only needs a required verification.
    def test_tb14_analyze_only_needs_verification(self):
        self.no_verification("analyze_only")

    # covers TEL-034 TEL-100: fix_only needs a required verification.
    def test_tb15_fix_only_needs_verification(self):
        self.no_verification("fix_only")

    # covers TEL-034 TEL-100 TEL-101: analyze_and_fix needs a required verification.
    def test_tb16_analyze_and_fix_needs_verification(self):
        self.no_verification("analyze_and_fix")

    def one_stage(self, stage):
        r = self.harness("analyze_and_fix")
        r.refuse("TaskContract", self.contract(r, self.perms_for("repository.read"),
                                               [verification("repository.read", stage)]),
                 # same refusal; telic words it "needs required verification in both the diagnosis and completion
                 # stages"
                 r"requires required diagnosis and completion verification"
                 r"|needs required verification in both the diagnosis and completion stages")

    # covers TEL-101: analyze_and_fix with a diagnosis verification only is refused.
    def test_tb17_analyze_and_fix_diagnosis_only(self):
        self.one_stage("diagnosis")

    # covers TEL-034 TEL-101: analyze_and_fix with a completion verification only is refused.
    def test_tb18_analyze_and_fix_completion_only(self):
        self.one_stage("completion")


# ===================================================================================================================
# test/remaining-invariants-conformance.test.ts
# ===================================================================================================================

class RemainingInvariantsTest(ParityCase):
    FILES = {"AGENTS.md": "# Rules\nKeep authority, acceptance and terminal outcomes.\n",
             API: "export const endpoint = '/api/projects';\n", "infra/prod.yml": "production: true\n"}

    def framed(self):
        r = self.new_run().start("Inspect only the bounded apps/web request path.", "analyze_only")
        r.ground(["AGENTS.md", API])
        self.assertTrue({RULES, API_REF} <= r.selected())
        r.submit("ProblemFrame", frame_body(r))
        return r

    def contract(self, r, scopes=("**",)):
        r.submit("TaskContract", contract_body(r, perms=permissions(read=scopes),
                                               checks=[verification("repository.read")]))

    def revision_review(self, r, preserve, correction):
        review = prompt_review_body(r, "revise")
        review["findings"] = [{"id": "revision-finding-01", "severity": "blocking",
                               "claim": "The contract needs one bounded correction.",
                               "sourceRefs": [r.ref("contract-01")], "rubricDimension": "testableAcceptance",
                               "requiredCorrection": correction, "preserveFields": list(preserve),
                               "correctionFields": ["requiredOutputs"],
                               "rationaleSummary": "Only the named correction is authorized."}]
        r.submit("PromptReview", review)

    def revised(self, r, change):
        body = r.body("contract-01")
        body.update(id="contract-02", version=2)
        change(body)
        return body, [r.ref("contract-01"), r.ref("prompt-review-01")]

    def executor(self):
        r = self.framed()
        self.contract(r)
        r.submit("PromptReview", prompt_review_body(r))
        n = node(tools=["repository.read"], required=["repository.read"], perms=permissions(read=["apps/web/**"]),
                 calls=1, r=r)
        r.submit("WorkPlan", plan_body(r, [n]))
        r.submit("Evidence", evidence_body(r, content='{"path":"apps/web/src/api.ts"}'))
        return r

    def result(self, r, act=None, acceptance="pass"):
        ev = r.ref("evidence-01")
        body = result_body(r, ev, actions=[act or action("repository.read", API, [ev])])
        if acceptance == "not_applicable":
            body["acceptanceCoverage"][0].update(status="not_applicable", evidenceRefs=[])
        return body

    def review(self, r, decision="pass"):
        body = quality_review_body(r, capability="repository.read")
        if decision == "block":
            body["verificationResults"][0]["status"] = "fail"
            body["acceptanceResults"][0]["status"] = "fail"
            body["hardGates"][0]["passed"] = False
            body.update(decision="block", score=20)
            body["findings"] = [{"id": "blocking-quality-finding-01", "severity": "blocking",
                                 "claim": "The quality gate rejected the result.", "sourceRefs": [r.ref("evidence-01")],
                                 "rubricDimension": "acceptance", "requiredCorrection": None, "preserveFields": [],
                                 "correctionFields": [], "rationaleSummary": "Release cannot downgrade it."}]
        return body

    # covers TEL-103 TEL-116: a revised contract may not broaden the v1 permissions.
    def test_ri01_revision_cannot_broaden_permissions(self):
        r = self.framed()
        self.contract(r, ["apps/web/**"])
        self.revision_review(r, ["objective", "intentMode"], "Clarify only the required output wording.")
        body, refs = self.revised(r, lambda c: c.update(permissions=permissions(read=["**"])))
        r.refuse("TaskContract", body, r"permission.*broaden|exceed.*prior|revision.*permission", refs)

    # covers TEL-116: a revised contract may change nothing outside the review's correction.
    def test_ri02_revision_outside_the_correction(self):
        r = self.framed()
        self.contract(r)
        self.revision_review(r, ["objective", "intentMode", "permissions"], "Change only the requiredOutputs wording.")
        body, refs = self.revised(r, lambda c: c["scope"]["include"].append("infra"))
        r.refuse("TaskContract", body, r"revision.*field|outside.*correction|unauthorized.*change", refs)

    def downgrade(self, decision):
        r = self.executor()
        r.submit("WorkResult", self.result(r))
        r.submit("QualityReview", self.review(r, "block"))
        r.refuse("ReleaseAudit", release_audit_body(r, decision=decision),
                 r"passing current QualityReview|quality.*block|blocked.*(?:partial|release)|downgrade")

    # covers TEL-172: a partial audit cannot downgrade a blocking review.
    def test_ri03_partial_audit_after_block(self):
        self.downgrade("partial")

    # covers TEL-169 TEL-172: a releasing audit cannot follow a blocking review.
    def test_ri04_release_after_block(self):
        self.downgrade("release")

    # covers TEL-143: a completed WorkResult cannot mark its required criterion not_applicable.
    def test_ri05_result_not_applicable_criterion(self):
        r = self.executor()
        # same refusal; telic's schema words it "a completed result needs every acceptance criterion covered with pass"
        r.refuse("WorkResult", self.result(r, acceptance="not_applicable"),
                 r"required.*acceptance|not_applicable|must pass|every acceptance criterion covered with pass",
                 trace_grows=None)

    # covers TEL-152: a passing review cannot mark a required criterion not_applicable.
    def test_ri06_review_not_applicable_criterion(self):
        r = self.executor()
        r.submit("WorkResult", self.result(r))
        review = self.review(r)
        review["acceptanceResults"][0].update(status="not_applicable", evidenceRefs=[])
        # same refusal; telic's schema words it "pass needs every acceptance result to pass"
        r.refuse("QualityReview", review,
                 r"required.*acceptance|not_applicable|must pass|needs every acceptance result to pass")

    # covers TEL-045 TEL-183: an identical refused action is traced as one DENY, not two.
    def test_ri07_identical_denials_are_traced_once(self):
        r = self.executor()
        rejected = self.result(r, action("repository.read", "infra/prod.yml", [r.ref("evidence-01")]))
        r.refuse("WorkResult", rejected, r"outside node|scope|permission", trace_grows=1)
        r.refuse("WorkResult", copy.deepcopy(rejected), r"outside node|scope|permission", trace_grows=0)
        matching = [e for e in r.checks("deny") if e["permissionDecision"]["capability"] == "repository.read"
                    and e["permissionDecision"]["scope"] == "infra/prod.yml"]
        self.assertEqual(len(matching), 1)

    # covers TEL-029 TEL-183: an analyze_only write attempt is refused and traced as one DENY.
    def test_ri08_analyze_only_mutation_is_denied_and_traced(self):
        r = self.executor()
        r.refuse("WorkResult", self.result(r, action("repository.write", "src/fix.ts", [r.ref("evidence-01")])),
                 r"cannot accept mutating|mutation|permission", trace_grows=1)
        denials = r.checks("deny")
        self.assertEqual(len(denials), 1)
        decision = denials[0]["permissionDecision"]
        self.assertEqual((decision["decision"], decision["capability"], decision["scope"]),
                         ("deny", "repository.write", "src/fix.ts"))


# ===================================================================================================================
# test/clarification-handoff-conformance.test.ts
# ===================================================================================================================

class ClarificationHandoffTest(ParityCase):
    FILES = {"AGENTS.md": "# Rules\nClarifications keep exact artifact lineage.\n",
             API: "export const endpoint = '/api/projects';\n",
             "apps/api/cors.ts": "export const allowedOrigins = ['http://localhost:5173'];\n"}
    # internal phase, producer of a ClarificationRequest there, NextAction phase
    PHASES = [("context_grounding", "controller", "context_discovery"),
              ("agent_1_frame", "scenario_author", "agent_1_frame"),
              ("agent_2_compile", "task_compiler", "agent_2_compile"),
              ("agent_1_review", "scenario_author", "agent_1_review"),
              ("agent_2_revise", "task_compiler", "agent_2_revision"),
              ("agent_3_plan", "quality_controller", "agent_3_plan"),
              ("agent_4_execute", "executor", "agent_4_execute"),
              ("agent_3_review", "quality_controller", "agent_3_quality_review")]

    def advance(self, r, target):
        """Drives a fresh run until it waits in the internal phase `target`."""
        if target == "context_grounding":
            return
        r.ground(["AGENTS.md", API, "apps/api/cors.ts"])
        self.assertTrue({RULES, API_REF} <= r.selected())
        if target == "agent_1_frame":
            return
        r.submit("ProblemFrame", frame_body(r))
        if target == "agent_2_compile":
            return
        r.submit("TaskContract", contract_body(r, perms=permissions(read=["**"]),
                                               checks=[verification("repository.read")]))
        if target == "agent_1_review":
            return
        if target == "agent_2_revise":
            review = prompt_review_body(r, "revise")
            flat(review, 80)
            review["findings"] = [{"id": "prompt-finding-01", "severity": "blocking",
                                   "claim": "One bounded clarification is needed before planning.",
                                   "sourceRefs": [r.ref("contract-01")], "rubricDimension": "testableAcceptance",
                                   "requiredCorrection": "Record the user's local-only choice.",
                                   "preserveFields": ["objective", "intentMode", "permissions"],
                                   "correctionFields": ["unresolvedQuestions"],
                                   "rationaleSummary": "One revision keeps the intent."}]
            r.submit("PromptReview", review)
            return
        r.submit("PromptReview", prompt_review_body(r))
        if target == "agent_3_plan":
            return
        n = node(tools=["repository.read"], required=["repository.read"], perms=permissions(read=["**"]), calls=1, r=r)
        r.submit("WorkPlan", plan_body(r, [n]))
        if target == "agent_4_execute":
            return
        r.submit("Evidence", evidence_body(r, content='{"path":"/api/projects"}'))
        r.submit("WorkResult", result_body(r))  # now in agent_3_review

    def pause_and_resume(self, phase, producer, protocol_phase):
        r = self.new_run().start("Investigate the bounded apps/web API communication issue.", "analyze_only")
        self.advance(r, phase)
        self.assertEqual(r.reload()["run"]["phase"], phase)
        body = clarification_body(r, "clarification-" + phase.replace("_", "-"))
        clarification = r.ref(body["id"])
        paused = r.submit("ClarificationRequest", body)
        self.assertEqual((paused["nextAction"]["kind"], paused["nextAction"]["phase"],
                          paused["nextAction"]["clarificationRequestRef"]),
                         ("clarification", "awaiting_clarification", clarification))
        stored = r.artifact(body["id"])
        self.assertEqual((stored["type"], stored["producer"], stored["body"]), ("ClarificationRequest", producer, body))
        resumed = r.answer("local-only")
        answer_id = [m["id"] for m in r.artifacts("UserMessage") if m["id"] != r.request_id][0]
        answer = r.artifact(answer_id)
        self.assertEqual(answer["body"]["content"], "local-only")
        self.assertIn(clarification, answer["sourceRefs"])
        self.assertEqual((resumed["run"]["status"], resumed["run"]["phase"], resumed["run"]["resumePhase"]),
                         ("running", phase, None))
        self.assertEqual((resumed["nextAction"]["kind"], resumed["nextAction"]["phase"]), ("phase", protocol_phase))
        self.assertIn(clarification, resumed["nextAction"]["inputRefs"])
        self.assertIn(r.ref(answer_id), resumed["nextAction"]["inputRefs"])
        trace = r.trace()
        requested = [e for e in trace if clarification in e["outputRefs"]][0]
        answered = [e for e in trace if r.ref(answer_id) in e["outputRefs"]][0]
        self.assertEqual((requested["eventType"], requested["phase"]), ("clarification_requested", protocol_phase))
        self.assertIn(r.request, requested["inputRefs"])
        self.assertEqual((answered["eventType"], answered["phase"]), ("transition_allowed", protocol_phase))
        self.assertIn(clarification, answered["inputRefs"])


def _pause_test(phase, producer, protocol_phase):
    # covers TEL-070 TEL-075 TEL-076 TEL-081 TEL-212 TEL-213: pause this phase, answer, resume the same phase with
    # the request and the answer in the projection and the trace.
    def test(self):
        self.pause_and_resume(phase, producer, protocol_phase)
    return test


for _i, (_phase, _producer, _protocol) in enumerate(ClarificationHandoffTest.PHASES, 1):
    setattr(ClarificationHandoffTest, f"test_ch{_i:02d}_pause_and_resume_{_phase}",
            _pause_test(_phase, _producer, _protocol))


# ===================================================================================================================
# test/action-permission-trace-conformance.test.ts
# ===================================================================================================================

class ActionPermissionTraceTest(ParityCase):
    FILES = {"AGENTS.md": "# Rules\nRecord an auditable decision for every attempted action.\n",
             API: "export const endpoint = '/api/projects';\n", "infra/prod.yml": "production: true\n"}

    def executor(self):
        r = self.new_run().start("Inspect only the bounded apps/web API request path.", "analyze_only")
        r.ground(["AGENTS.md", API])
        self.assertTrue({RULES, API_REF} <= r.selected())
        r.submit("ProblemFrame", frame_body(r))
        r.submit("TaskContract", contract_body(r, perms=permissions(read=["**"]),
                                               checks=[verification("repository.read")]))
        r.submit("PromptReview", prompt_review_body(r))
        n = node(tools=["repository.read"], required=["repository.read"], perms=permissions(read=["apps/web/**"]),
                 calls=1, r=r)
        r.submit("WorkPlan", plan_body(r, [n]))
        r.submit("Evidence", evidence_body(r, content='{"path":"apps/web/src/api.ts"}'))
        return r

    @staticmethod
    def result(r, status="completed", actions=()):
        ev = r.ref("evidence-01")
        body = result_body(r, ev, status=status,
                           actions=[action("repository.read", target, [ev] if s == "completed" else [],
                                           f"action-{s}", False, s) for s, target in actions])
        if status != "completed":
            body["acceptanceCoverage"][0].update(status="unverified", evidenceRefs=[])
            body["unresolvedIssues"] = ["The requested action was denied."]
        return body

    def allowed_run(self):
        r = self.executor()
        r.submit("WorkResult", self.result(r, actions=[("completed", API)]))
        return r

    # covers TEL-041 TEL-183 TEL-184 TEL-185: one precise ALLOW is traced before the accepted WorkResult.
    def test_ap01_one_allow_before_the_accepted_result(self):
        r = self.allowed_run()
        trace = r.trace()
        checks = [e for e in trace if e["eventType"] == "permission_checked"]
        submitted = [e for e in trace if e["eventType"] == "phase_submitted" and r.ref("result-01") in e["outputRefs"]]
        self.assertEqual(len(checks), 1)
        policy = [r.ref("contract-01"), r.ref("plan-01")]
        decision = checks[0]["permissionDecision"]
        self.assertEqual((checks[0]["actor"], checks[0]["phase"], decision["decision"], decision["capability"],
                          decision["scope"], decision["policyRefs"]),
                         ("controller", "agent_4_execute", "allow", "repository.read", API, policy))
        self.assertEqual(len(submitted), 1)
        self.assertLess(checks[0]["sequence"], submitted[0]["sequence"])

    # covers TEL-185: the accepted WorkResult's permission_checked events name it in outputRefs (PROTOCOL §17.1:
    # "All share outputRefs = [the submitted artifact]"); telic wrote [] until session 3.
    def test_ap02_allow_event_names_the_accepted_result(self):
        r = self.allowed_run()
        self.assertEqual(r.checks()[0]["outputRefs"], [r.ref("result-01")])

    # covers TEL-185: a WorkResult without actions records no permission check.
    def test_ap03_no_actions_no_permission_check(self):
        r = self.executor()
        r.submit("WorkResult", self.result(r, "partial"))
        self.assertEqual(r.checks(), [])

    # covers TEL-185: skipped actions record no permission check.
    def test_ap04_skipped_actions_no_permission_check(self):
        r = self.executor()
        r.submit("WorkResult", self.result(r, "partial", [("skipped", API)]))
        self.assertEqual(r.checks(), [])

    def denied_and_honest(self, status):
        r = self.executor()
        r.submit("WorkResult", self.result(r, status, [("denied", "infra/prod.yml")]))
        checks = r.checks()
        self.assertEqual(len(checks), 1)
        decision = checks[0]["permissionDecision"]
        self.assertEqual((checks[0]["actor"], checks[0]["phase"], decision["decision"], decision["capability"],
                          decision["scope"]), ("controller", "agent_4_execute", "deny", "repository.read",
                                               "infra/prod.yml"))

    # covers TEL-144 TEL-185: a partial result recording a denied action is accepted with one DENY, no ALLOW.
    def test_ap05_partial_result_with_denied_action(self):
        self.denied_and_honest("partial")

    # covers TEL-144 TEL-185: a blocked result recording a denied action is accepted with one DENY, no ALLOW.
    def test_ap06_blocked_result_with_denied_action(self):
        self.denied_and_honest("blocked")

    # covers TEL-045 TEL-183 TEL-235: an out-of-scope completed action is refused atomically; only its DENY stays.
    def test_ap07_out_of_scope_action_refused_with_one_deny(self):
        r = self.executor()
        before = r.reload()["run"]
        r.refuse("WorkResult", self.result(r, actions=[("completed", "infra/prod.yml")]),
                 r"outside node|scope|permission", trace_grows=1)
        self.assertEqual(r.reload()["run"], before)
        self.assertNotIn("result-01", [a["id"] for a in r.artifacts()])
        event = r.trace()[-1]
        decision = event["permissionDecision"]
        self.assertEqual((event["actor"], event["phase"], event["eventType"], event["inputRefs"], event["outputRefs"],
                          decision["decision"], decision["capability"], decision["scope"]),
                         ("controller", "agent_4_execute", "permission_checked",
                          [r.ref("contract-01"), r.ref("plan-01")], [], "deny", "repository.read", "infra/prod.yml"))


# ===================================================================================================================
# test/cagt-loop*-conformance.test.ts and test/cagt-benchmark.test.ts (micro / standard / forensic topologies)
# ===================================================================================================================

class TopologyLoopsTest(ParityCase):
    FILES = {"src/index.ts": "export const x = 1;\n", "src/foo.ts": "export const bar = 1;\n"}
    QUESTION = "What does src/index.ts export?"
    TYPO = "Fix typo in src/foo.ts: bar→baz"

    def micro_report(self):
        r = self.new_run().start(self.QUESTION, "report_only")
        self.assertEqual(r.run["topology"], "micro")
        r.ground()
        frame = frame_body(r, "report_only", rules=[])
        frame.update(scope={"include": ["src"], "exclude": []}, constraints=[], nonGoals=[])
        r.submit("ProblemFrame", frame)
        return r

    @staticmethod
    def spot_review(r, ev, decision="pass", results=(), checks=()):
        body = quality_review_body(r, ev, None, results=results, rules=(), decision=decision)
        body["verificationResults"] = list(checks)
        body["hardGates"][0].update(id="spot-primary", description="Primary criterion satisfied.")
        return body

    @staticmethod
    def micro_report_body(r, ev, text, changes=(), verifications=()):
        body = user_report_body(r, "completed", ev, changes=changes, verifications=verifications)
        body["completionClaims"][0].update(id="completion-01", text=text)
        return body

    def phases(self, r):
        return {e["phase"] for e in r.trace() if e["phase"] != "terminal"}

    # covers TEL-175 TEL-141: a micro report claim citing a missing artifact is refused.
    def test_tl01_micro_claim_with_missing_evidence(self):
        r = self.micro_report()
        r.submit("QualityReview", self.spot_review(r, r.ref("plan-01")))
        report = self.micro_report_body(r, r.ref("missing-evidence"), "Unsupported claim.")
        report["completionClaims"][0]["id"] = "claim-bad"
        r.refuse("UserReport", report, r"Artifact reference does not exist|must target direct evidence")

    # (no catalogue item: micro escalation is PROTOCOL §11.3) a partial micro spot-check escalates to
    # standard contract review and is traced.
    def test_tl02_micro_partial_escalates_to_standard(self):
        r = self.micro_report()
        review = self.spot_review(r, r.ref("plan-01"), "partial")
        review["acceptanceResults"][0]["status"] = "fail"
        review["hardGates"][0]["passed"] = False
        review["score"] = 55
        escalated = r.submit("QualityReview", review)
        self.assertEqual((escalated["run"]["topology"], escalated["run"]["phase"]), ("standard", "agent_1_review"))
        self.assertTrue(any(e["eventType"] == "topology_escalated" and e["rationaleSummary"] == "MICRO_SPOT_PARTIAL"
                            for e in r.trace()))
        self.assertEqual(r.reload()["run"]["topology"], "standard")

    # (no catalogue item: PROTOCOL §11.1 classification) a short single-file fix_only request with a write
    # grant runs micro.
    def test_tl03_short_fix_only_is_micro(self):
        r = self.new_run().start(self.TYPO, "fix_only", ["repository.read", "repository.write"])
        self.assertEqual(r.run["topology"], "micro")

    def micro_fix(self, observations=True):
        r = self.new_run().start(self.TYPO, "fix_only", ["repository.read", "repository.write"])
        self.assertEqual(r.run["topology"], "micro")
        r.ground()
        frame = frame_body(r, "fix_only", rules=[])
        frame.update(scope={"include": ["src/foo.ts"], "exclude": []}, constraints=[], nonGoals=[])
        r.submit("ProblemFrame", frame)
        ev = r.ref("evidence-01")
        r.submit("Evidence", evidence_body(r, kind="diff", content='{"diff":"bar→baz"}'))
        result = result_body(r, ev, nid="micro-execute",
                             actions=[action("repository.read", "src/foo.ts", [ev], "preflight-01"),  # TEL-031, D57
                                      action("repository.write", "src/foo.ts", [ev], "action-01"),
                                      action("repository.read", "src/foo.ts", [ev], "verify-01")],
                             files=[file_change("src/foo.ts", ev, run=r)])
        if not observations:
            result["observations"] = []
        r.submit("WorkResult", result)
        check = {"requirementId": "VR-MICRO", "capability": "repository.read", "status": "pass", "evidenceRefs": [ev],
                 "rationaleSummary": "Repository evidence for the micro fix."}
        r.submit("QualityReview", self.spot_review(r, ev, results=["result-01"], checks=[check]))
        return r, ev

    # covers TEL-178 TEL-222 TEL-228: micro fix_only completes without PromptReview or ReleaseAudit, with a receipt.
    def test_tl04_micro_fix_only_completes_without_release_audit(self):
        r, ev = self.micro_fix()
        terminal = r.submit("UserReport", self.micro_report_body(r, ev, "The micro fix completed.", [ev], [ev]))
        self.assertEqual((terminal["run"]["status"], terminal["run"]["topology"]), ("completed", "micro"))
        types = r.types()
        self.assertNotIn("ReleaseAudit", types)
        self.assertNotIn("PromptReview", types)
        for t in ["ReceiptAudit", "ProblemFrame", "TaskContract", "WorkPlan", "Evidence", "WorkResult",
                  "QualityReview", "UserReport"]:
            self.assertIn(t, types)

    # covers TEL-013 (and PROTOCOL §11.4): a micro pass stores a verified ReceiptAudit and traces
    # digest_verified.
    def test_tl05_micro_pass_emits_a_verified_receipt(self):
        r, _ = self.micro_fix(observations=False)
        receipt = r.artifacts("ReceiptAudit")
        self.assertEqual(len(receipt), 1)
        self.assertEqual(r.artifact(receipt[0]["id"])["body"]["digestStatus"], "verified")
        self.assertIn("digest_verified", [e["eventType"] for e in r.trace()])

    def terminal_prior(self):
        prior = self.new_run().start(self.QUESTION, "report_only")
        prior.cancel()
        self.assertEqual(prior.run["status"], "cancelled")
        return prior

    # (no catalogue item: PROTOCOL §11.5 lineage) a run started with a terminal prior run records the link
    # and traces lineage_linked. (The reference ends the prior run through its ledger; over MCP it is cancelled.)
    def test_tl06_prior_run_lineage_is_linked_and_traced(self):
        prior = self.terminal_prior()
        linked = self.new_run().start("Fix typo in src/index.ts: x→y", "fix_only",
                                      ["repository.read", "repository.write"], prior_run_id=prior.id)
        self.assertEqual(linked.run["priorRunId"], prior.id)
        self.assertIn("lineage_linked", [e["eventType"] for e in linked.trace()])

    # (no catalogue item: PROTOCOL §11.5 lineage) a prior run unknown to this ledger (another repository's)
    # is refused.
    def test_tl07_prior_run_of_another_repository_is_refused(self):
        prior = self.terminal_prior()
        with serving({"README.md": "# other\n"}) as (other, _):
            failure = other.fails("telic_start_run", {"original_request": "Question B", "mode": "report_only",
                                                      "prior_run_id": prior.id})
            self.assertRegex(failure["error"], "does not exist")

    # covers TEL-027 TEL-041 TEL-185: the broker denies a write in a report_only run and traces the DENY.
    def test_tl08_broker_denies_write_in_report_only(self):
        r = self.new_run().start("Inspect repository only.", "report_only")
        decision = r.server.ok("telic_check_tool_action", dict(r.tokens(), capability="repository.write",
                                                               target="src/foo.ts"))["decision"]
        self.assertEqual((decision["allowed"], decision["reasonCode"]), (False, "policy_denied"))
        broker = [e for e in r.trace() if e["eventType"] == "broker_decision"]
        self.assertEqual(broker[0]["permissionDecision"]["decision"], "deny")

    # covers TEL-041 TEL-045: the broker allows a write the fix_only run's authority covers.
    def test_tl09_broker_allows_granted_write(self):
        r = self.new_run().start(self.TYPO, "fix_only", ["repository.read", "repository.write"])
        decision = r.server.ok("telic_check_tool_action", dict(r.tokens(), capability="repository.write",
                                                               target="src/foo.ts"))["decision"]
        self.assertEqual((decision["allowed"], decision["reasonCode"]), (True, "allowed"))

    # covers TEL-013 (and PROTOCOL §6.11): a forensic run's replay lists digest-only steps (no bodies), not
    # degraded.
    def test_tl10_forensic_replay_lists_digest_only_steps(self):
        r = self.new_run().start("Forensic deep inspection required.", "analyze_and_fix", topology_override="forensic")
        report = r.replay()
        self.assertEqual(report["topology"], "forensic")
        self.assertNotIn("degraded", report)
        self.assertGreater(len(report["steps"]), 0)
        for step in report["steps"]:
            self.assertNotIn("body", step)
            self.assertTrue(step["artifactRef"].startswith("artifact://"))

    # covers TEL-221 TEL-228: micro report_only benchmark scorecard: no PromptReview / ReleaseAudit, a receipt,
    # at most 5 phases including discovery, frame, spot-check and report.
    def test_tl11_micro_report_only_scorecard(self):
        r = self.micro_report()
        r.submit("QualityReview", self.spot_review(r, r.ref("plan-01")))
        terminal = r.submit("UserReport", self.micro_report_body(r, r.ref("plan-01"), "The micro report completed."))
        self.assertEqual(terminal["run"]["status"], "completed")
        types = r.types()
        self.assertEqual(("PromptReview" in types, "ReleaseAudit" in types, "ReceiptAudit" in types),
                         (False, False, True))
        phases = self.phases(r)
        self.assertLessEqual(len(phases), 5)
        self.assertTrue({"context_discovery", "agent_1_frame", "agent_3_quality_review", "user_report"} <= phases,
                        phases)

    # covers TEL-222 TEL-228: micro fix_only benchmark scorecard: at most 5 phases including execution.
    def test_tl12_micro_fix_only_scorecard(self):
        r, ev = self.micro_fix()
        r.submit("UserReport", self.micro_report_body(r, ev, "The micro fix completed.", [ev], [ev]))
        types = r.types()
        self.assertEqual(("ReleaseAudit" in types, "ReceiptAudit" in types), (False, True))
        phases = self.phases(r)
        self.assertLessEqual(len(phases), 5)
        self.assertTrue({"context_discovery", "agent_1_frame", "agent_4_execute", "agent_3_quality_review",
                         "user_report"} <= phases, phases)

    # (no catalogue item: PROTOCOL §11.1) topologyOverride standard makes a short report_only request standard.
    def test_tl13_standard_override(self):
        r = self.new_run().start("Summarize how packages/core and packages/mcp interact in a short report.",
                                 "report_only", topology_override="standard")
        self.assertEqual(r.run["topology"], "standard")

    # (no catalogue item: PROTOCOL §11.1) an analyze_and_fix request with a write grant is classified forensic.
    def test_tl14_forensic_classification(self):
        r = self.new_run().start("Forensic analyze_and_fix: reproduce the regression, capture evidence, and remediate "
                                 "with digest verification.", "analyze_and_fix",
                                 ["repository.read", "repository.write"])
        self.assertEqual(r.run["topology"], "forensic")

if __name__ == "__main__":
    run_tests(sys.argv)
