"""Hostile bundles, ledgers and tool arguments against the real binary (issue 40 rows 3, 4 and 9).

A run with a few hundred broker decisions is exported once; each test edits
and reseals the bundle (every section digest and the bundleDigest
recomputed, so the checks behind the digests are reached) or edits the
ledger under telic, and checks that telic refuses with a precise error and
exit 1, never a crash, and prints nothing that drives a terminal. Deep
nesting over MCP stdio is a JSON-RPC error and the server stays up. A
`telic import` killed with SIGKILL leaves its scratch ledger only under the
state directory, and the next command removes it.
"""

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402

DECISIONS = 300
DEEP = "[" * 50000 + "]" * 50000
HOSTILE_IDS = ["\x1b]0;pwned\x07\x1b[2J", "run\x00id", "a/b", "../x", "a" * (100 * 1024)]


def canonical(value):
    """telic's canonical JSON for the values a bundle holds (ASCII keys, no floats)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_ref(text):
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def reseal(doc, placeholder=None, raw=None):
    """Bundle bytes for `doc` with every digest recomputed; the JSON string
    `placeholder` is replaced by the raw text `raw` (digests included)."""
    def text(value):
        out = canonical(value)
        return out.replace(json.dumps(placeholder), raw) if placeholder else out

    doc = dict(doc)
    doc.pop("bundleDigest", None)
    doc["sections"] = {name: sha256_ref(text(doc[name])) for name in ("run", "artifacts", "trace", "verification")}
    doc["bundleDigest"] = sha256_ref(text(doc))
    return (text(doc) + "\n").encode("utf-8")


class HostileBundleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        os.makedirs(os.path.join(cls.ws.base, "ledger"))
        cls.ledger = os.path.join(cls.ws.base, "ledger", "source.sqlite3")
        mcp = serve(cls.ws, "--db", cls.ledger)
        try:
            mcp.initialize()
            granted = ["repository.read", "shell.execute"]
            started = mcp.ok("telic_start_run", {
                "original_request": "Explain src/app.ts", "mode": "fix_only", "host_capabilities": granted,
                "authorization_granted": granted, "shell_execute_allowlist": ["npm test"]})
            cls.run_id = started["run"]["runId"]
            tokens = {"run_id": cls.run_id, "action_id": started["nextAction"]["id"],
                      "expected_run_version": started["run"]["version"]}
            for i in range(DECISIONS):
                mcp.ok("telic_check_tool_action", {**tokens, "capability": "shell.execute", "target": f"npm test {i}"})
        finally:
            mcp.close()
        cls.bundle_bytes = cls.telic("export", cls.run_id, "--db", cls.ledger).stdout
        cls.doc = json.loads(cls.bundle_bytes)

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    @classmethod
    def telic(cls, *args, expect=0, env=None):
        proc = subprocess.run([telic_binary(), *args], env=env or cls.ws.env(), capture_output=True, timeout=300)
        if proc.returncode != expect:
            raise AssertionError(f"telic {' '.join(args)[:200]} exited {proc.returncode}, not {expect}: "
                                 f"{proc.stderr[:600]!r}{proc.stdout[:600]!r}")
        return proc

    def write(self, name, data):
        path = os.path.join(self.ws.base, name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def edited(self, edit):
        doc = json.loads(self.bundle_bytes)
        edit(doc)
        return doc

    def assert_refused(self, bundle, needle):
        """verify --bundle and import both exit 1 naming `needle`; nothing is imported."""
        target = os.path.join(self.ws.base, "target.sqlite3")
        verify = self.telic("verify", "--bundle", bundle, expect=1)
        imported = self.telic("import", bundle, "--db", target, expect=1)
        for proc in (verify, imported):
            shown = proc.stdout + proc.stderr
            self.assertIn(needle.encode(), shown)
            self.assertNotIn(b"\x1b", shown)
            self.assertNotIn(b"\x00", shown)
            self.assertLess(len(shown), 4000)
        self.assertIn(b"the bundle was not imported (nothing was written)", imported.stderr)
        runs = json.loads(self.telic("runs", "--json", "--db", target).stdout)
        self.assertEqual(runs["runs"], [])

    def test_the_exported_bundle_verifies_and_reseals_to_the_same_bytes(self):
        self.assertEqual(reseal(self.doc), self.bundle_bytes)
        self.telic("verify", "--bundle", self.write("good.bundle", self.bundle_bytes))

    # covers issue 40 row 3: 50,000 nested arrays in run.extra, every digest right: exit 1, no SIGSEGV
    def test_deep_nesting_in_run_extra_is_refused(self):
        doc = self.edited(lambda d: d["run"]["extra"].__setitem__("deep", "DEEP-PLACEHOLDER"))
        bundle = self.write("deep-extra.bundle", reseal(doc, "DEEP-PLACEHOLDER", DEEP))
        self.assert_refused(bundle, "nesting exceeds depth 128 at /run/extra/deep/")

    # covers issue 40 row 3: 50,000 nested arrays as an artifact body with its right sha256: exit 1, no SIGSEGV
    def test_deep_nesting_in_an_artifact_body_is_refused(self):
        def edit(d):
            d["artifacts"][0]["body"] = DEEP
            d["artifacts"][0]["sha256"] = sha256_ref(DEEP)
        bundle = self.write("deep-body.bundle", reseal(self.edited(edit)))
        self.assert_refused(bundle, "(/artifacts/0/body) is not JSON: invalid JSON at byte 128: nesting exceeds depth 128")

    # covers issue 40 row 4: run, artifact and event ids with escapes, NUL, '/', '../' or 100 KB are refused with a pointer
    def test_hostile_ids_are_refused_with_their_pointer(self):
        for i, hostile in enumerate(HOSTILE_IDS):
            def run_id(d):
                d["runId"] = d["run"]["runId"] = hostile
            edits = [(run_id, "bundle /run/runId: is not an identifier"),
                     (lambda d: d["artifacts"][0].__setitem__("id", hostile), "bundle /artifacts/0/id: is not an identifier"),
                     (lambda d: d["trace"][2].__setitem__("eventId", hostile), "bundle /trace/2/eventId: is not an identifier")]
            for j, (edit, needle) in enumerate(edits):
                with self.subTest(id=hostile[:20], field=needle):
                    bundle = self.write(f"id-{i}-{j}.bundle", reseal(self.edited(edit)))
                    self.assert_refused(bundle, needle)

    # covers issue 40 row 4: what the CLI prints from a ledger is escaped (runs, show, trace, verify, replay, artifact)
    def test_ledger_text_is_escaped_when_printed(self):
        ledger = os.path.join(self.ws.base, "tampered.sqlite3")
        self.telic("import", self.write("escape.bundle", self.bundle_bytes), "--db", ledger)
        evil = "x\x1b]0;pwned\x07\x1b[2J\x9b2J\x7f"
        escaped = b"x\\x1b]0;pwned\\x07\\x1b[2J\\u009b2J\\x7f"
        artifact = self.doc["artifacts"][0]["id"]
        commands = (["runs"], ["show", self.run_id], ["trace", self.run_id], ["verify", self.run_id],
                    ["replay", self.run_id], ["artifact", self.run_id, artifact], ["show", self.run_id, "--json"],
                    ["show", evil])

        def nothing_raw_is_printed():
            for args in commands:
                with self.subTest(args=args[0]):
                    proc = subprocess.run([telic_binary(), *args, "--db", ledger], env=self.ws.env(),
                                          capture_output=True, timeout=120)
                    shown = proc.stdout + proc.stderr
                    self.assertIn(proc.returncode, (0, 1), shown[:400])
                    for raw in (b"\x1b", b"\x07", b"\xc2\x9b", b"\x7f"):
                        self.assertNotIn(raw, shown, f"{args[0]} printed a raw control character")

        with sqlite3.connect(ledger) as db:  # tampered with as a hostile user could: the triggers go first
            db.execute("DROP TRIGGER trace_immutable")
            db.execute("DROP TRIGGER artifacts_immutable")
            db.execute("UPDATE trace_events SET actor = ?, summary = ? WHERE run_id = ? AND sequence = 2",
                       (evil, evil, self.run_id))
            db.execute("UPDATE artifacts SET producer = ? WHERE run_id = ?", (evil, self.run_id))
        nothing_raw_is_printed()
        self.assertIn(escaped, self.telic("trace", self.run_id, "--db", ledger).stdout)
        # A word of a closed vocabulary that is none of its words is unreadable
        # (data_loss naming the row and column), and still printed escaped.
        with sqlite3.connect(ledger) as db:
            db.execute("UPDATE runs SET phase = ?, topology = ? WHERE run_id = ?", (evil, evil, self.run_id))
        nothing_raw_is_printed()
        proc = self.telic("runs", "--db", ledger, expect=1)
        self.assertIn(f"runs row {self.run_id}: topology is not readable".encode(), proc.stderr)
        self.assertIn(escaped, proc.stderr)

    # covers issue 40 row 9: a killed import leaves nothing outside the state directory; the next command cleans
    def test_a_killed_import_leaves_scratch_only_in_the_state_directory(self):
        bundle = self.write("kill.bundle", self.bundle_bytes)
        state = os.path.join(self.ws.base, "kill-state")
        scratch = os.path.join(state, "scratch")
        tmp = tempfile.mkdtemp(prefix="telic-e2e-tmp-")
        env = self.ws.env(TELIC_STATE_DIR=state, TMPDIR=tmp)
        caught = False
        for _ in range(10):
            proc = subprocess.Popen([telic_binary(), "import", bundle], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            while proc.poll() is None:
                if os.path.isdir(scratch) and any(os.scandir(scratch)):
                    os.kill(proc.pid, signal.SIGKILL)
                    caught = True
                    break
            proc.wait()
            if caught:
                break
            self.telic("runs", "delete", self.run_id, "--force", env=env)  # imported before it was caught: again
        self.assertTrue(caught, "the import was never caught while it held its scratch ledger")
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        self.assertEqual(os.listdir(tmp), [], "nothing is written to TMPDIR")
        leftovers = os.listdir(scratch)
        self.assertEqual(len(leftovers), 1, leftovers)
        self.telic("runs", env=env)  # the next command cleans up
        self.assertEqual(os.listdir(scratch), [])
        os.rmdir(tmp)


class DeepArgumentsOverStdioTest(unittest.TestCase):
    # covers issue 40 row 3: deep tool arguments are a JSON-RPC error with the offset; the server stays up
    def test_deep_tool_arguments_are_refused_and_the_server_stays_up(self):
        ws = Workspace()
        mcp = serve(ws)
        try:
            mcp.initialize()
            for depth in (129, 50000):
                deep = "[" * depth + "]" * depth
                line = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"telic_start_run",'
                        '"arguments":{"original_request":"x","mode":"report_only","extra":' + deep + '}}}\n')
                mcp.proc.stdin.write(line.encode())  # past the client's own checker, which Python's recursion stops
                mcp.proc.stdin.flush()
                reply = mcp.read()
                self.assertEqual(reply["error"]["code"], -32700, reply)
                self.assertIn("nesting exceeds depth 128 at /params/arguments/extra", reply["error"]["message"])
                self.assertIn("invalid JSON at byte ", reply["error"]["message"])
            started = mcp.ok("telic_start_run", {"original_request": "x", "mode": "report_only"})
            nested = {"a": None}
            for _ in range(140):
                nested = {"a": nested}
            refused = mcp.fails("telic_submit_artifact", {
                "run_id": started["run"]["runId"], "action_id": started["nextAction"]["id"],
                "expected_run_version": started["run"]["version"], "artifact_type": "ProblemFrame",
                "body_json": json.dumps(nested)})
            self.assertIn("body_json must contain valid JSON", refused["error"])
            for hostile in HOSTILE_IDS:  # ids in tool arguments are checked by their schema (the wire's grammar)
                refused = mcp.fails("telic_get_run", {"run_id": hostile})
                self.assertEqual(refused["code"], "invalid_argument", refused)
                self.assertIn("/run_id", json.dumps(refused))
            self.assertTrue(mcp.request("tools/list")["result"]["tools"])  # still serving
        finally:
            mcp.close()
            ws.close()


if __name__ == "__main__":
    run_tests(sys.argv)
