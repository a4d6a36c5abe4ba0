"""Run bundles and OpenTelemetry export (issue 22 §3-4).

A complete analyze_and_fix run (driven by `telic demo` over MCP) and a run
with broker decisions (a `telic serve` child answering
telic_check_tool_action) are exported as bundles, checked with no ledger,
imported into a fresh SQLite ledger and into PostgreSQL where `telic verify`
passes with the same digests and hashes, and tampered with byte by byte. The
same runs are exported as OTLP/HTTP JSON to a small receiver (http.server)
and the span tree is checked against the trace.
"""

import http.server
import json
import os
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import require_postgres  # noqa: E402
from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402

SECTIONS = ["artifacts", "bundleDigest", "format", "formatVersion", "run", "runId", "sections", "trace", "verification"]


def telic(ws, *args, expect=0, test=None):
    proc = subprocess.run([telic_binary(), *args], env=ws.env(), capture_output=True, timeout=300)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    if test is not None:
        test.assertEqual(proc.returncode, expect, f"telic {' '.join(args)}: {err}{out[:600]}")
    elif proc.returncode != expect:
        raise AssertionError(f"telic {' '.join(args)} exited {proc.returncode}: {err}{out[:600]}")
    return out, err


def top_level_keys(data):
    """The byte offset of each top-level key's opening quote in a JSON object."""
    starts, depth, in_string, escaped, key_start = {}, 0, False, False, None
    for pos, byte in enumerate(data):
        c = chr(byte)
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
                if key_start is not None and data[pos + 1:pos + 2] == b":":
                    starts[data[key_start + 1:pos].decode()] = key_start
                key_start = None
        elif c == '"':
            in_string = True
            key_start = pos if depth == 1 else None
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
    return starts


class Fixture:
    """The two runs every test reads, made once for the module."""

    def __init__(self):
        self.ws = Workspace()
        # Its own folder: the ledger's folder is the state directory, which grounding never reads.
        os.makedirs(os.path.join(self.ws.base, "ledger"))
        self.ledger = os.path.join(self.ws.base, "ledger", "source.sqlite3")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TELIC_") or k == "TELIC_BIN"}
        demo = subprocess.run([telic_binary(), "demo", "--db", self.ledger, "--workdir", os.path.join(self.ws.base, "demo")],
                              capture_output=True, text=True, timeout=300, env=env)
        if demo.returncode != 0:
            raise RuntimeError("telic demo failed: " + demo.stderr + demo.stdout[-2000:])
        out, _ = telic(self.ws, "runs", "--json", "--db", self.ledger)
        [self.complete] = [run["runId"] for run in json.loads(out)["runs"]]
        mcp = serve(self.ws, "--db", self.ledger)
        try:
            mcp.initialize()
            granted = ["repository.read", "repository.write", "shell.execute"]
            started = mcp.ok("telic_start_run", {
                "original_request": "Fix the failing test in src/app.ts", "mode": "fix_only",
                "host_capabilities": granted, "authorization_granted": granted,
                "shell_execute_allowlist": ["npm test"]})
            self.brokered = started["run"]["runId"]
            tokens = {"run_id": self.brokered, "action_id": started["nextAction"]["id"],
                      "expected_run_version": started["run"]["version"]}
            mcp.ok("telic_check_tool_action", {**tokens, "capability": "shell.execute", "target": "npm test"})
            mcp.ok("telic_check_tool_action", {**tokens, "capability": "repository.write", "target": "../outside.txt"})
        finally:
            mcp.close()
        self.bundle = os.path.join(self.ws.base, "complete.bundle")
        telic(self.ws, "export", self.complete, "-o", self.bundle, "--db", self.ledger)


FIXTURE = None


def setUpModule():  # noqa: N802
    global FIXTURE
    FIXTURE = Fixture()


def tearDownModule():  # noqa: N802
    FIXTURE.ws.close()


class FixtureTest(unittest.TestCase):
    def setUp(self):
        self.ws, self.ledger = FIXTURE.ws, FIXTURE.ledger
        self.complete, self.brokered, self.bundle = FIXTURE.complete, FIXTURE.brokered, FIXTURE.bundle

    def cli(self, *args, expect=0):
        return telic(self.ws, *args, expect=expect, test=self)

    def trace_hashes(self, run_id, db):
        out, _ = self.cli("trace", run_id, "--json", "--db", db)
        return [event["hash"] for event in json.loads(out)["events"]]

    def digests(self, run_id, db):
        out, _ = self.cli("show", run_id, "--json", "--db", db)
        return [(a["id"], a["sha256"]) for a in json.loads(out)["artifacts"]]



class BundleTest(FixtureTest):
    # covers issue 22 §3 (export, check with no ledger)
    def test_export_then_verify_bundle_with_no_ledger(self):
        with open(self.bundle, "rb") as handle:
            data = handle.read()
        self.assertTrue(data.endswith(b"}\n"))
        self.assertEqual(oct(os.stat(self.bundle).st_mode & 0o777), "0o600")
        doc = json.loads(data)
        self.assertEqual(sorted(doc), SECTIONS)
        self.assertEqual(doc["runId"], self.complete)
        self.assertEqual([e["hash"] for e in doc["trace"]], self.trace_hashes(self.complete, self.ledger))
        self.assertTrue(doc["verification"]["verify"]["ok"])
        self.assertTrue(doc["verification"]["replay"]["stateCheck"]["consistent"])
        out, _ = self.cli("export", self.complete, "--db", self.ledger)
        self.assertEqual(out.encode(), data, "stdout export equals the file")
        out, _ = self.cli("verify", "--bundle", self.bundle, "--json")  # no --db: no ledger is read
        report = json.loads(out)
        self.assertTrue(report["ok"], report)
        self.assertEqual(report["bundleDigest"], doc["bundleDigest"])
        self.assertEqual(report["finalTraceHash"], doc["trace"][-1]["hash"])
        self.assertEqual(report["traceEvents"], len(doc["trace"]))

    # covers issue 22 §3 (import into another SQLite ledger; verify passes there)
    def test_import_into_a_fresh_sqlite_ledger_verifies_with_the_same_hashes(self):
        target = os.path.join(self.ws.base, "target.sqlite3")
        out, _ = self.cli("import", self.bundle, "--db", target, "--json")
        self.assertTrue(json.loads(out)["imported"]["ok"])
        self.cli("verify", self.complete, "--db", target)
        self.cli("replay", self.complete, "--db", target)
        self.assertEqual(self.trace_hashes(self.complete, target), self.trace_hashes(self.complete, self.ledger))
        self.assertEqual(self.digests(self.complete, target), self.digests(self.complete, self.ledger))
        _, err = self.cli("import", self.bundle, "--db", target, expect=1)
        self.assertIn(f"Run {self.complete} already exists in this ledger; the bundle was not imported", err)
        # Exported again from the target, the bundle is byte-identical.
        out, _ = self.cli("export", self.complete, "--db", target)
        with open(self.bundle) as handle:
            self.assertEqual(out, handle.read())

    # covers issue 22 §3 (import into PostgreSQL)
    def test_import_into_postgres_verifies_with_the_same_hashes(self):
        url = require_postgres(self).new_database_url()
        self.cli("import", self.bundle, "--db", url)
        self.cli("verify", self.complete, "--db", url)
        self.assertEqual(self.trace_hashes(self.complete, url), self.trace_hashes(self.complete, self.ledger))
        self.assertEqual(self.digests(self.complete, url), self.digests(self.complete, self.ledger))

    # covers issue 22 §3 (a changed byte in any section is detected; import writes nothing)
    def test_a_flipped_byte_in_each_section_is_detected(self):
        with open(self.bundle, "rb") as handle:
            data = handle.read()
        target = os.path.join(self.ws.base, "tampered-target.sqlite3")
        starts = top_level_keys(data)
        self.assertEqual(sorted(starts), SECTIONS)
        order = sorted(SECTIONS, key=lambda key: starts[key])
        for i, key in enumerate(order):
            start = starts[key] + len(key) + 3
            end = starts[order[i + 1]] if i + 1 < len(order) else len(data) - 2
            # A letter or digit inside the section's value, near its middle: the JSON stays valid.
            pos = next((p for p in range(start + (end - start) // 3, end) if chr(data[p]).isalnum()), None)
            self.assertIsNotNone(pos, (key, data[start - 20:end + 5]))
            flipped = bytearray(data)
            flipped[pos] = ord("b") if data[pos] == ord("a") else (ord("1") if chr(data[pos]).isdigit() and
                                                                   data[pos] != ord("1") else ord("a"))
            if flipped[pos] == data[pos]:
                flipped[pos] = ord("2")
            path = os.path.join(self.ws.base, f"tampered-{key}.bundle")
            with open(path, "wb") as handle:
                handle.write(bytes(flipped))
            out, _ = self.cli("verify", "--bundle", path, "--json", expect=1)
            report = json.loads(out)
            self.assertFalse(report["ok"], key)
            self.assertTrue(report["problems"], key)
            _, err = self.cli("import", path, "--db", target, expect=1)
            self.assertIn("nothing was written", err, key)
        for name, mutated in (("space", data[:1] + b" " + data[1:]), ("newline", data[:-1] + b" "),
                              ("truncated", data[: len(data) // 2] + b"\n")):
            path = os.path.join(self.ws.base, f"tampered-{name}.bundle")
            with open(path, "wb") as handle:
                handle.write(mutated)
            self.cli("verify", "--bundle", path, expect=1)
        if os.path.exists(target):
            out, _ = self.cli("runs", "--json", "--db", target)
            self.assertEqual(json.loads(out)["runs"], [])


class Receiver(http.server.BaseHTTPRequestHandler):
    bodies = []

    def do_POST(self):  # noqa: N802
        length = int(self.headers["Content-Length"])
        Receiver.bodies.append((self.path, self.headers["Content-Type"], self.rfile.read(length)))
        payload = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def attrs(span):
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


class OtlpExportTest(FixtureTest):
    def setUp(self):
        super().setUp()
        Receiver.bodies = []
        self.server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def export(self, run_id):
        self.cli("export", run_id, "--otlp", self.url, "--db", self.ledger)
        path, content_type, body = Receiver.bodies[-1]
        self.assertEqual(path, "/v1/traces")
        self.assertEqual(content_type, "application/json")
        return json.loads(body)

    def check_tree(self, run_id, otlp):
        out, _ = self.cli("trace", run_id, "--json", "--db", self.ledger)
        events = json.loads(out)["events"]
        [resource] = otlp["resourceSpans"]
        [scope] = resource["scopeSpans"]
        spans = scope["spans"]
        self.assertEqual(len({s["traceId"] for s in spans}), 1, "one trace per run")
        self.assertEqual(len(spans[0]["traceId"]), 32)
        by_id = {s["spanId"]: s for s in spans}
        self.assertEqual(len(by_id), len(spans))
        [root] = [s for s in spans if "parentSpanId" not in s]
        self.assertEqual(root["name"], "invoke_agent telic")
        self.assertEqual(attrs(root)["gen_ai.operation.name"], "invoke_agent")
        self.assertEqual(attrs(root)["gen_ai.agent.name"], "telic")
        self.assertEqual(attrs(root)["gen_ai.conversation.id"], run_id)
        phases = [s for s in spans if s.get("parentSpanId") == root["spanId"]]
        # Phase spans follow the trace's stretches of one phase, in order.
        stretches = []
        for e in events:
            if not stretches or stretches[-1] != e["phase"]:
                stretches.append(e["phase"])
        self.assertEqual([attrs(p)["telic.phase"] for p in phases], stretches)
        seen = []
        for phase in phases:
            seen += [int(attrs(ev)["telic.event.sequence"]) for ev in phase["events"]]
        decisions = [s for s in spans if s.get("parentSpanId") in {p["spanId"] for p in phases}]
        for span in decisions:
            a = attrs(span)
            event = events[int(a["telic.event.sequence"]) - 1]
            self.assertIsNotNone(event["permissionDecision"])
            self.assertEqual(attrs(by_id[span["parentSpanId"]])["telic.phase"], event["phase"])
            self.assertEqual(a["gen_ai.operation.name"], "execute_tool")
            self.assertEqual(a["gen_ai.tool.name"], event["permissionDecision"]["capability"])
            self.assertEqual(a["telic.event.hash"], event["hash"])
            if event["eventType"] == "broker_decision":
                self.assertEqual(a["mcp.method.name"], "tools/call")
            if event["permissionDecision"]["decision"] == "deny":
                self.assertEqual(a["error.type"], "permission_denied")
                self.assertEqual(span["status"]["code"], 2)
            seen.append(int(a["telic.event.sequence"]))
        self.assertEqual(sorted(seen), [e["sequence"] for e in events], "every event once")
        self.assertEqual(len(spans), 1 + len(phases) + len(decisions))
        return decisions

    # covers issue 22 §4 (OTLP/HTTP JSON to a receiver; span tree against the trace)
    def test_complete_run_spans_match_its_trace(self):
        otlp = self.export(self.complete)
        self.check_tree(self.complete, otlp)
        out, _ = self.cli("export", self.complete, "--otlp", "--db", self.ledger)
        self.assertEqual(json.loads(out), otlp, "stdout and POST carry the same spans; ids are deterministic")

    # covers issue 22 §4 (decision spans with GenAI / MCP attributes)
    def test_broker_decisions_become_execute_tool_spans(self):
        decisions = self.check_tree(self.brokered, self.export(self.brokered))
        names = sorted(attrs(s)["telic.permission.decision"] for s in decisions)
        self.assertEqual(names, ["allow", "deny"])

    # covers issue 22 §4 (loopback only unless --allow-remote; http(s) only)
    def test_unsafe_urls_are_refused(self):
        for url, reason in (("http://192.0.2.1:4318", "not a loopback host"), ("ftp://127.0.0.1/x", "only http"),
                            ("http://user:pw@127.0.0.1:4318", "credentials"), ("http://127.0.0.1:99999", "port")):
            _, err = self.cli("export", self.complete, "--otlp", url, "--db", self.ledger, expect=1)
            self.assertIn(reason, err)
        self.assertEqual(Receiver.bodies, [])


if __name__ == "__main__":
    run_tests(sys.argv)
