#!/usr/bin/env python3
"""What telic puts into a host model's context (issue 39): the bytes and
tokens of every tools/call result of complete runs, per profile.

Drives over MCP stdio, once per profile (default, lean):
  - analyze_and_fix: examples/analyze_and_fix.json through tests/e2e/scenario.py
    (start, the envelope read, 17 steps: 18 calls);
  - demo: `telic demo`'s call sequence (the same scenario as host telic-demo
    under require_observed, with the test run twice by telic_run_check, then
    the UserReport read and telic_replay_run: 22 calls);
  - fix_only: the micro fix_only run of tests/e2e/test_modes.py by a cautious
    host that calls telic_get_next_action and telic_get_run before every
    state-changing call (26 calls, 3 of them refused submissions);
and the reference server too when REFERENCE_NODE and REFERENCE_SERVER are set
(the default profile's calls; the reference has no profiles).

Prints per profile and run: calls, bytes and tokens of the results along the
structuredContent path (compact JSON, what Claude Code, Codex and VS Code
pass on) and the text path (the text block, what Gemini CLI passes on), the
largest result, results over 10,000 bytes, and tools/list bytes on the wire
and model-facing tokens (name, description and inputSchema of every tool).

Tokens: the o200k tokenizer of npm's gpt-tokenizer, installed on first use
into $TELIC_BENCH_CACHE (default ~/.cache/telic-bench); without node/npm or
the registry, bytes/4 (the table says which).

Run: python3 bench/context_bench.py build/telic [--json] [--profiles=default,lean]"""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
os.environ.setdefault("TELIC_CHECK_OUTPUT_SCHEMAS", "0")  # measure the results, not the checker

from mcp_client import McpProcess, apply_file_change, make_git_repo  # noqa: E402
import scenario as sc  # noqa: E402
from test_modes import Host, criterion, passed, review  # noqa: E402

CACHE = os.environ.get("TELIC_BENCH_CACHE", os.path.expanduser("~/.cache/telic-bench"))
TOKENIZER_JS = r"""
const enc = require(process.argv[1]);
const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(texts.map((t) => enc.encode(t).length)));
"""


def tokenizer_module():
    """The o200k encoder module of gpt-tokenizer, installed into CACHE once; None if impossible."""
    module = os.path.join(CACHE, "node_modules", "gpt-tokenizer", "cjs", "encoding", "o200k_base.js")
    if os.path.exists(module):
        return module
    if not shutil.which("node") or not shutil.which("npm"):
        return None
    os.makedirs(CACHE, exist_ok=True)
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", CACHE, "gpt-tokenizer@3"],
                          capture_output=True, timeout=300)
    return module if done.returncode == 0 and os.path.exists(module) else None


class Counter:
    def __init__(self):
        self.module = tokenizer_module()
        self.method = "o200k (npm gpt-tokenizer)" if self.module else "bytes/4 (no tokenizer installed)"

    def tokens(self, texts):
        if not self.module:
            return [len(t.encode("utf-8")) // 4 for t in texts]
        done = subprocess.run(["node", "-e", TOKENIZER_JS, self.module], input=json.dumps(texts).encode(),
                              capture_output=True, check=True)
        return json.loads(done.stdout)


class Recorder:
    """Wraps McpProcess.call to keep every tools/call result."""

    def __init__(self, server):
        self.results = []
        original = server.call

        def call(name, arguments=None, omit_arguments=False):
            result = original(name, arguments, omit_arguments)
            self.results.append((name, result))
            return result
        server.call = call


def refuse(host, artifact_type, body):
    """A submission the server must refuse; the reference's errors carry no `code`, so only isError is checked."""
    result = host.server.call("telic_submit_artifact", dict(host.tokens(), artifact_type=artifact_type, body=body))
    assert result.get("isError") is True, f"{artifact_type} unexpectedly accepted"


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def start_server(binary, profile, repo, state, reference=None):
    env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=state)
    env.pop("TELIC_PROFILE", None)
    if reference:
        argv = [reference[0], reference[1]]
        return McpProcess(argv, env, cwd=repo, wait_ready=False)
    argv = [binary, "serve"] + (["--profile", profile] if profile != "default" else [])
    return McpProcess(argv, env)


def tools_list(server):
    tools = server.request("tools/list")["result"]["tools"]
    wire = len(compact({"tools": tools}).encode("utf-8"))
    facing = [compact({k: t[k] for k in ("name", "description", "inputSchema") if k in t}) for t in tools]
    return wire, facing


def drive_analyze_and_fix(server, repo, demo=False):
    scenario = sc.load("analyze_and_fix")
    driver = sc.Driver(server, scenario, repo)
    driver.write_repository()
    if demo:
        return drive_demo(server, repo, scenario, driver)
    driver.start()
    for step in scenario["steps"]:
        driver.do(step)


CHECK_SCRIPT, CHECK_COMMAND = "test_greet.sh", "sh test_greet.sh"
CHECK_SCRIPT_TEXT = ("# The greeting test: greet() must say \"Hello\".\n"
                     "if grep -q 'return f\"Hello, {name}!\"' src/greet.py; then\n"
                     "  echo 'test_greet: 1 passed'\n"
                     "else\n"
                     "  echo \"test_greet: 1 failed: greet() returns $(grep -o 'f\"[^,]*' src/greet.py)\"\n"
                     "  exit 1\n"
                     "fi\n")


def commit_all(repo):
    """Commits the work tree as `telic demo` commits its repository before it starts."""
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "demo"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)


def drive_demo(server, repo, scenario, driver):
    """`telic demo`'s calls (src/cli/demo.cc): the scenario as host telic-demo under require_observed, the
    test run by telic_run_check before and after the fix and cited by the WorkResult, the release audit and
    the report; then the UserReport read and telic_replay_run."""
    with open(os.path.join(repo, CHECK_SCRIPT), "w", encoding="utf-8") as handle:
        handle.write(CHECK_SCRIPT_TEXT)
    commit_all(repo)
    caps = scenario["start"].get("host_capabilities", ["repository.read"]) + ["shell.execute"]
    driver.start(host_name="telic-demo", host_capabilities=caps, authorization_granted=caps,
                 shell_execute_allowlist=[CHECK_COMMAND], observation="require_observed")
    fix_claim = [c["id"] for step in scenario["steps"] if step.get("submit") == "UserReport"
                 for c in step["body"]["completionClaims"]][-1]
    passed_ref = diff_ref = None

    def check():
        nonlocal passed_ref
        result = server.call("telic_run_check", {"run_id": driver.run["runId"], "command": CHECK_COMMAND,
                                                 "node_id": driver.action.get("workNodeId") or ""})
        if result["structuredContent"].get("ok") and result["structuredContent"]["check"]["passed"]:
            passed_ref = result["structuredContent"]["check"]["evidenceRef"]

    for step in scenario["steps"]:
        if "write_file" in step:
            check()
            driver.do(step)
            check()
            continue
        if "submit" in step and passed_ref:
            step = copy.deepcopy(step)
            body = step["body"]
            if step["submit"] == "WorkResult" and body.get("filesChanged"):
                body["testResults"] = [{"id": "test-greet", "name": CHECK_SCRIPT, "status": "passed", "commandRef": None,
                                        "outputRef": passed_ref, "exitCode": 0,
                                        "rationaleSummary": "telic ran the test in its sandbox."}]
            rows = {"UserReport": ("completionClaims", "id"), "ReleaseAudit": ("claimEvidenceMatrix", "claimId")}
            if step["submit"] in rows:
                key, id_key = rows[step["submit"]]
                for row in body.get(key, []):
                    if row.get(id_key) == fix_claim:
                        row["evidenceRefs"] = row["evidenceRefs"] + ([diff_ref] if diff_ref else []) + [passed_ref]
        payload = driver.do(step)
        observed = (payload or {}).get("observation") or {}
        if observed.get("diffEvidenceRefs"):
            diff_ref = observed["diffEvidenceRefs"][0]
    ref = driver.action["reportRef"]
    server.ok("telic_get_artifact", {"run_id": driver.run["runId"], "artifact_id": ref.rsplit("/", 1)[1]})
    server.ok("telic_replay_run", {"run_id": driver.run["runId"]})


class CautiousHost(Host):
    """Reads the next action and the run before every state-changing call."""

    def look(self):
        self.server.ok("telic_get_next_action", {"run_id": self.id})
        self.server.ok("telic_get_run", {"run_id": self.id})

    def ground(self):
        self.look()
        return super().ground()

    def submit(self, artifact_type, body, **extra):
        self.look()
        return super().submit(artifact_type, body, **extra)


def drive_fix_only(server, repo):
    h = CautiousHost(server)
    h.start(original_request="Fix the typo in src/app.ts", mode="fix_only",
            host_capabilities=["repository.read", "repository.write"])
    h.ground()
    h.submit("ProblemFrame", h.frame("fix_only", [criterion("AC-1")]))
    ev = lambda i, kind: {"id": i, "kind": kind, "capturedAt": "2026-12-02T10:00:00.000Z", "summary": "Captured.",
                          "contentType": "text/plain", "encoding": "utf8", "content": "export const answer = 42;",
                          "sourceRefs": [], "redactions": [], "rationaleSummary": "Host capture."}
    h.submit("Evidence", ev("diff-1", "diff"))
    h.submit("Evidence", ev("read-1", "repository"))
    action = lambda i, cap, mutating, refs: {"id": i, "capability": cap, "target": "src/app.ts", "mutating": mutating,
                                             "status": "completed", "evidenceRefs": refs, "rationaleSummary": "Done."}
    before, after = apply_file_change(repo, "src/app.ts", "modified")  # telic checks the claimed hashes
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
    early = dict(result, actions=[result["actions"][2], result["actions"][1]])
    refuse(h, "WorkResult", early)  # "must run after the final mutating action"
    refuse(h, "WorkResult", dict(result, actions=result["actions"][1:]))  # "must begin with a minimal preflight"
    h.submit("WorkResult", result)
    verification = [{"requirementId": "VR-MICRO", "capability": "repository.read", "status": "pass",
                     "evidenceRefs": [h.ref("read-1")], "rationaleSummary": "Re-read after the write."}]
    # review() names the QualityReview by the run's artifact count (one telic_get_run, recorded like the rest)
    h.submit("QualityReview", review(h, "pass", [passed("AC-1", [h.ref("read-1")])], [h.ref("plan-01")],
                                     [h.ref("result-1")], verification))
    report = {"id": "report-01", "terminalStatus": "completed", "summary": "Typo fixed.",
              "completionClaims": [{"id": "c1", "text": "Fixed.", "status": "observed",
                                    "evidenceRefs": [h.ref("read-1")], "confidence": 1}],
              "findingRefs": [], "changeRefs": [], "verificationRefs": [], "unresolvedRisks": [],
              "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + h.id,
              "rationaleSummary": "Evidence-backed."}
    refuse(h, "UserReport", report)  # "changeRefs must retain every accepted WorkResult diff"
    report["changeRefs"] = [h.ref("diff-1")]
    h.submit("UserReport", report)
    assert h.run["status"] == "completed", h.run


RUNS = [("analyze_and_fix", lambda s, r: drive_analyze_and_fix(s, r)),
        ("demo", lambda s, r: drive_analyze_and_fix(s, r, demo=True)),
        ("fix_only cautious", drive_fix_only)]


def measure(binary, profile, counter, reference=None):
    rows = []
    listed = None
    for name, drive in RUNS:
        if reference and name == "demo":
            continue
        base = tempfile.mkdtemp(prefix="telic-context-bench-")
        try:
            repo = make_git_repo(os.path.join(base, "repo"))
            server = start_server(binary, profile, repo, os.path.join(base, "state"), reference)
            server.initialize()
            if listed is None:
                listed = tools_list(server)
            recorder = Recorder(server)
            drive(server, repo)
            server.close()
        finally:
            shutil.rmtree(base, ignore_errors=True)
        structured = [compact(result.get("structuredContent", {})) for _, result in recorder.results]
        texts = [result["content"][0]["text"] for _, result in recorder.results]
        sizes = [len(s.encode("utf-8")) for s in structured]
        largest = max(range(len(sizes)), key=lambda i: sizes[i])
        rows.append({"run": name, "calls": len(structured),
                     "structuredBytes": sum(sizes), "structuredTokens": sum(counter.tokens(structured)),
                     "textBytes": sum(len(t.encode("utf-8")) for t in texts),
                     "textTokens": sum(counter.tokens(texts)),
                     "largestBytes": sizes[largest], "largestTool": recorder.results[largest][0],
                     "over10000": sum(1 for s in sizes if s > 10000),
                     "textOver40000Chars": sum(1 for t in texts if len(t) > 40000)})
    wire, facing = listed
    return {"profile": profile, "rows": rows, "toolsListBytes": wire, "toolsListTokens": sum(counter.tokens(facing))}


def print_table(results, method):
    print(f"tokens: {method}")
    print("| profile | run | calls | structuredContent bytes | tokens | text bytes | tokens | largest result "
          "| results > 10,000 B |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for result in results:
        for row in result["rows"]:
            print(f"| {result['profile']} | {row['run']} | {row['calls']} | {row['structuredBytes']:,} "
                  f"| {row['structuredTokens']:,} | {row['textBytes']:,} | {row['textTokens']:,} "
                  f"| {row['largestBytes']:,} B ({row['largestTool']}) | {row['over10000']} of {row['calls']} |")
    print()
    print("| profile | tools/list on the wire | model-facing tokens (name, description, inputSchema) |")
    print("| --- | ---: | ---: |")
    for result in results:
        print(f"| {result['profile']} | {result['toolsListBytes']:,} B | {result['toolsListTokens']:,} |")


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    binary = os.path.abspath(args[0] if args else os.path.join(HERE, "..", "build", "telic"))
    counter = Counter()
    profiles = next((a.split("=", 1)[1].split(",") for a in argv if a.startswith("--profiles=")), ["default", "lean"])
    results = [measure(binary, profile, counter) for profile in profiles]
    node, server = os.environ.get("REFERENCE_NODE"), os.environ.get("REFERENCE_SERVER")
    if node and server:
        results.append(measure(binary, "reference", counter, reference=(node, server)))
    if "--json" in argv:
        print(json.dumps({"tokenizer": counter.method, "results": results}, indent=2))
    else:
        print_table(results, counter.method)


if __name__ == "__main__":
    main(sys.argv)
