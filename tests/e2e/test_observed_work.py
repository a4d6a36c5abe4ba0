"""The referee looks at the work (issue 38), over real stdio MCP: claimed
FileChanges are checked against the work tree telic shares with the host,
telic stores its own diff of each as observed Evidence, and a report that
claims completion is refused while the work tree holds an undeclared change.

Run: python3 test_observed_work.py /path/to/telic"""

import copy
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import unittest

from mcp_client import Workspace, run_tests, serve, telic_binary
from test_modes import Host, criterion, passed, review

APP = "src/app.ts"
OLD = "export const answer = 42;\n"
NEW = "export const answer = 43;\n"
NOT_SHARED = "not observed: the server does not see the host's work tree"


def sha(text):
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def evidence(eid, kind, content="export const answer = 42;"):
    return {"id": eid, "kind": kind, "capturedAt": "2026-12-02T10:00:00.000Z", "summary": "Captured.",
            "contentType": "text/plain", "encoding": "utf8", "content": content, "sourceRefs": [], "redactions": [],
            "rationaleSummary": "Host capture."}


class ObservedWorkTest(unittest.TestCase):
    SERVE_ENV = {}

    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws, **self.SERVE_ENV)
        self.h = Host(self.server)

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def path(self, rel):
        return os.path.join(self.ws.repo, rel)

    def write(self, rel, text):
        os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
        with open(self.path(rel), "w", encoding="utf-8") as handle:
            handle.write(text)

    def start_fix(self, **extra):
        """A micro fix_only run up to its execution node, with the host's diff and read evidence stored."""
        h = self.h
        h.start(original_request="Fix the typo in src/app.ts", mode="fix_only",
                host_capabilities=["repository.read", "repository.write"], **extra)
        h.ground()
        h.submit("ProblemFrame", h.frame("fix_only", [criterion("AC-1")]))
        self.assertEqual(h.action["workNodeId"], "micro-execute")
        h.submit("Evidence", evidence("diff-1", "diff"))
        h.submit("Evidence", evidence("read-1", "repository"))

    def result(self, before, after, path=APP, change="modified"):
        h = self.h
        act = lambda i, cap, mutating, refs: {"id": i, "capability": cap, "target": path, "mutating": mutating,
                                              "status": "completed", "evidenceRefs": refs, "rationaleSummary": "Done."}
        return {"id": "result-1", "workPlanRef": h.ref("plan-01"), "nodeId": "micro-execute", "status": "completed",
                "observations": [], "inferences": [],
                "actions": [act("p", "repository.read", False, [h.ref("read-1")]),
                            act("w", "repository.write", True, [h.ref("diff-1")]),
                            act("r", "repository.read", False, [h.ref("read-1")])],
                "filesChanged": [{"path": path, "changeType": change, "beforeHash": before, "afterHash": after,
                                  "diffRef": h.ref("diff-1")}],
                "toolEventRefs": [], "evidenceRefs": [h.ref("diff-1"), h.ref("read-1")], "testResults": [],
                "acceptanceCoverage": [passed("AC-1", [h.ref("read-1")])], "unresolvedIssues": [], "deviations": [],
                "rationaleSummary": "Fixed and re-read."}

    def refuse(self, body, pointer, *needles):
        h = self.h
        before = self.server.ok("telic_get_run", {"run_id": h.id})
        failure = h.refuse("WorkResult", body, needles[0])
        for needle in needles[1:]:
            self.assertIn(needle, failure["error"])
        self.assertEqual([i["pointer"] for i in failure.get("issues", [])], [pointer], failure)
        after = self.server.ok("telic_get_run", {"run_id": h.id})
        self.assertEqual(before["run"], after["run"])  # nothing stored
        self.assertEqual(len(before["artifacts"]), len(after["artifacts"]))
        return failure

    def review_and_report(self, changes, status="completed"):
        """The spot review and a report: changeRefs holds the host's diff (the WorkResult's diffRef, exactly);
        the claim cites the evidence after it (telic's own diff)."""
        h = self.h
        verification = [{"requirementId": "VR-MICRO", "capability": "repository.read", "status": "pass",
                         "evidenceRefs": [h.ref("read-1")], "rationaleSummary": "Re-read after the write."}]
        h.submit("QualityReview", review(h, "pass", [passed("AC-1", [h.ref("read-1")])], [h.ref("plan-01")],
                                         [h.ref("result-1")], verification))
        return {"id": "report-01", "terminalStatus": status, "summary": "Answer fixed.",
                "completionClaims": [{"id": "c1", "text": "The answer is 43.", "status": "observed",
                                      "evidenceRefs": [h.ref("read-1")] + changes[1:], "confidence": 1}],
                "findingRefs": [], "changeRefs": changes[:1], "verificationRefs": [], "unresolvedRisks": [],
                "permissionsHonored": True, "nextActions": [], "traceRef": "trace://" + h.id,
                "rationaleSummary": "Evidence-backed."}

    # An invented afterHash (the reference's own micro fix_only body) is refused: the file was never touched.
    def test_invented_after_hash_is_refused(self):
        self.start_fix()
        failure = self.refuse(self.result(sha(OLD), "sha256:" + "1" * 64), "/filesChanged/0/afterHash",
                              "does not match the file's bytes now", APP, "sha256:" + "1" * 64, sha(OLD))
        self.assertEqual(failure["code"], "invalid_argument")

    def test_unchanged_file_claimed_modified_is_refused(self):
        self.start_fix()
        self.refuse(self.result(sha(OLD), sha(NEW)), "/filesChanged/0/afterHash", "the file is unchanged")

    def test_wrong_before_hash_and_false_creation_are_refused(self):
        self.start_fix()
        self.write(APP, NEW)
        self.refuse(self.result("sha256:" + "0" * 64, sha(NEW)), "/filesChanged/0/beforeHash", "beforeHash")
        self.refuse(self.result(None, sha(NEW), change="created"), "/filesChanged/0/changeType", "existed before")

    def test_a_symlink_in_place_of_the_file_is_refused(self):
        self.start_fix()
        outside = os.path.join(self.ws.base, "outside.ts")
        with open(outside, "w", encoding="utf-8") as handle:
            handle.write(NEW)
        os.remove(self.path(APP))
        os.symlink(outside, self.path(APP))
        failure = self.h.refuse("WorkResult", self.result(sha(OLD), sha(NEW)), "")
        self.assertIn(failure["code"], ("invalid_argument", "permission_denied"))
        self.assertRegex(failure["error"], "symlink|outside")

    # A run that changes the file it claims completes, with telic's own diff as observed evidence.
    def test_completes_with_observed_diff_evidence(self):
        h = self.h
        self.start_fix()
        self.write(APP, NEW)
        accepted = h.submit("WorkResult", self.result(sha(OLD), sha(NEW)))
        observation = accepted["observation"]
        self.assertTrue(observation["observed"], observation)
        self.assertEqual(observation["filesChecked"][0]["afterHash"], sha(NEW))
        diff_ref = observation["diffEvidenceRefs"][0]
        diff = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": diff_ref.rsplit("/", 1)[1]})["artifact"]
        self.assertEqual(diff["producer"], "controller")  # observed: produced by telic, not the executor
        self.assertEqual(diff["body"]["kind"], "diff")
        self.assertIn("-export const answer = 42;\n+export const answer = 43;\n", diff["body"]["content"])
        host_diff = self.server.ok("telic_get_artifact", {"run_id": h.id, "artifact_id": "diff-1"})["artifact"]
        self.assertEqual(host_diff["producer"], "executor")  # claimed
        report = self.review_and_report([h.ref("diff-1"), diff_ref])
        done = h.submit("UserReport", report)
        self.assertEqual(h.run["status"], "completed")
        self.assertEqual(done["observation"]["undeclaredChanges"], [])
        show = subprocess.run([telic_binary(), "show", h.id], env=self.ws.env(), capture_output=True, text=True)
        self.assertEqual(show.returncode, 0, show.stderr)
        self.assertIn("observed", show.stdout)
        self.assertIn("claimed", show.stdout)

    # A change nobody declared refuses a completion claim, with the list; undone, the run completes.
    def test_undeclared_change_refuses_completion(self):
        h = self.h
        self.start_fix()
        self.write(APP, NEW)
        h.submit("WorkResult", self.result(sha(OLD), sha(NEW)))
        self.write("src/sneaky.ts", "export const sneaky = true;\n")
        os.remove(self.path("README.md"))
        report = self.review_and_report([h.ref("diff-1")])
        failure = h.refuse("UserReport", report, "no accepted FileChange declares")
        self.assertIn("README.md (undeclared)", failure["error"])
        self.assertIn("src/sneaky.ts (undeclared)", failure["error"])
        self.assertEqual(h.run["status"], "running")
        os.remove(self.path("src/sneaky.ts"))
        self.write("README.md", "# demo\n")
        h.submit("UserReport", report)
        self.assertEqual(h.run["status"], "completed")

    # require_observed: the run may complete only on telic's own evidence (its diff here).
    def test_require_observed_is_a_start_option(self):
        h = self.h
        failure = self.server.fails("telic_start_run", {"original_request": "Fix it", "mode": "fix_only",
                                                        "observation": "trust_me"})
        self.assertEqual(failure["code"], "invalid_argument")
        self.start_fix(observation="require_observed")
        self.write(APP, NEW)
        h.submit("WorkResult", self.result(sha(OLD), sha(NEW)))
        h.submit("UserReport", self.review_and_report([h.ref("diff-1")]))
        self.assertEqual(h.run["status"], "completed")


class NotSharedTest(ObservedWorkTest):
    """`TELIC_WORKTREE=none` (or --no-worktree): telic says what it did not see, never a silent pass."""

    SERVE_ENV = {"TELIC_WORKTREE": "none"}

    def test_invented_after_hash_is_refused(self):
        h = self.h
        self.start_fix()
        accepted = h.submit("WorkResult", self.result(sha(OLD), "sha256:" + "1" * 64))
        self.assertEqual(accepted["observation"], {"observed": False, "reason": NOT_SHARED, "policy": "checked"})
        done = h.submit("UserReport", self.review_and_report([h.ref("diff-1")]))
        self.assertEqual(done["observation"]["reason"], NOT_SHARED)

    def test_require_observed_is_a_start_option(self):
        h = self.h
        self.start_fix(observation="require_observed")
        h.submit("WorkResult", self.result(sha(OLD), "sha256:" + "1" * 64))
        h.refuse("UserReport", self.review_and_report([h.ref("diff-1")]), "require_observed")

    test_unchanged_file_claimed_modified_is_refused = None
    test_wrong_before_hash_and_false_creation_are_refused = None
    test_a_symlink_in_place_of_the_file_is_refused = None
    test_completes_with_observed_diff_evidence = None
    test_undeclared_change_refuses_completion = None


class LargeWorkspace(Workspace):
    """A Workspace whose repository holds 100,000 committed files plus the default two, built with
    `git fast-import` on tmpfs when there is one (creating 100,000 files on a busy disk takes minutes)."""

    FILES = 100_000

    def __init__(self):
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.base = tempfile.mkdtemp(prefix="telic-e2e-large-", dir=shm)
        self.repo = os.path.join(self.base, "repo")
        self.state = os.path.join(self.base, "state")
        os.makedirs(self.repo)
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
        subprocess.run(["git", "init", "-q"], cwd=self.repo, check=True, env=env)
        files = {f"pkg{i // 1000:03}/file{i:05}.txt": f"{i}\n" for i in range(self.FILES)}
        files.update({"README.md": "# demo\n", APP: OLD})
        stream = [b"commit refs/heads/main\ncommitter t <t@example.invalid> 0 +0000\ndata 4\ninit\n"]
        for path, text in files.items():
            data = text.encode()
            stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        subprocess.run(["git", "fast-import", "--quiet"], cwd=self.repo, input=b"".join(stream), check=True, env=env)
        subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=self.repo, check=True, env=env)
        subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=self.repo, check=True, env=env)


class LargeRepositoryTest(ObservedWorkTest):
    """A repository of 100,000 committed files: grounding's baseline, the check and the undeclared-change scan
    stay within their limits."""

    def setUp(self):
        self.ws = LargeWorkspace()
        self.server = serve(self.ws)
        self.h = Host(self.server)

    def test_hundred_thousand_files(self):
        h = self.h
        started = time.monotonic()
        self.start_fix()
        self.write(APP, NEW)
        accepted = h.submit("WorkResult", self.result(sha(OLD), sha(NEW)))
        self.assertTrue(accepted["observation"]["observed"])
        with open(self.path("pkg050/file50000.txt"), "a", encoding="utf-8") as handle:
            handle.write("changed\n")
        failure = h.refuse("UserReport", self.review_and_report([h.ref("diff-1")]), "pkg050/file50000.txt (undeclared)")
        self.assertIn("no accepted FileChange declares", failure["error"])
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, 120, elapsed)
        print(f"100,000-file repository: grounded, checked and scanned in {elapsed:.1f} s")

    test_invented_after_hash_is_refused = None
    test_unchanged_file_claimed_modified_is_refused = None
    test_wrong_before_hash_and_false_creation_are_refused = None
    test_a_symlink_in_place_of_the_file_is_refused = None
    test_completes_with_observed_diff_evidence = None
    test_undeclared_change_refuses_completion = None
    test_require_observed_is_a_start_option = None


if __name__ == "__main__":
    run_tests(sys.argv)
