"""W3C trace context from a request's `params._meta` lands on the trace events
that request caused (issue 20 item 6), over real stdio and real HTTP, in the
2025-11-25 and the 2026-07-28 revisions: `telic trace RUN --json` shows each
event's `traceparent`/`tracestate`; events of requests without one (or with
an invalid one, which is ignored, D-MCPA2) have none; `telic verify` still
passes (the context is outside the hash, D-MCPA3) and `telic_get_trace`
keeps the reference's TraceEvent shape.

Run: python3 test_trace_context.py /path/to/telic"""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpServer  # noqa: E402
from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402
from modern_client import ModernHttp, ModernStdio  # noqa: E402

PARENT_A = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
PARENT_B = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
STATE = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
START = {"original_request": "Explain src/app.ts", "mode": "analyze_only"}


class TraceContextTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)

    def cli(self, *args):
        done = subprocess.run([telic_binary(), *args], env=self.ws.env(), capture_output=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr.decode())
        return done.stdout.decode()

    def events(self, run_id):
        return json.loads(self.cli("trace", run_id, "--json"))["events"]

    def call(self, client, name, arguments, meta=None):
        """tools/call with extra `_meta` members; returns structuredContent."""
        params = {"name": name, "arguments": arguments}
        if isinstance(client, (ModernStdio, ModernHttp)):
            reply = client.request("tools/call", params, **(meta or {}))  # beside the revision's own _meta keys
        else:
            if meta:
                params["_meta"] = meta
            reply = client.request("tools/call", params)
        result = reply["result"]
        self.assertFalse(result.get("isError"), result)
        return result["structuredContent"]

    def drive(self, client):
        """start (traced A + tracestate), check (untraced), check (invalid),
        check (traced B); returns the run id."""
        started = self.call(client, "telic_start_run", START, ({"traceparent": PARENT_A, "tracestate": STATE}))
        run_id = started["run"]["runId"]
        tokens = {"run_id": run_id, "action_id": started["nextAction"]["id"],
                  "expected_run_version": started["run"]["version"], "capability": "repository.read"}
        self.call(client, "telic_check_tool_action", tokens, None)
        self.call(client, "telic_check_tool_action", tokens,
                  ({"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}))
        self.call(client, "telic_check_tool_action", tokens, ({"traceparent": PARENT_B, "tracestate": "Bad=1"}))
        return run_id

    def check_run(self, run_id):
        events = self.events(run_id)
        checks = [e for e in events if e["eventType"] == "broker_decision"]
        started = [e for e in events if e["eventType"] != "broker_decision"]
        self.assertGreaterEqual(len(started), 1)
        self.assertEqual(len(checks), 3)
        for event in started:
            self.assertEqual(event.get("traceparent"), PARENT_A, event)
            self.assertEqual(event.get("tracestate"), STATE, event)
        self.assertNotIn("traceparent", checks[0])  # no context sent
        self.assertNotIn("traceparent", checks[1])  # an all-zero trace id is ignored
        self.assertEqual(checks[2].get("traceparent"), PARENT_B)
        self.assertNotIn("tracestate", checks[2])  # an invalid tracestate is dropped alone
        verified = subprocess.run([telic_binary(), "verify", run_id], env=self.ws.env(), capture_output=True, timeout=60)
        self.assertEqual(verified.returncode, 0, verified.stdout.decode() + verified.stderr.decode())

    def test_stdio_legacy_and_modern(self):
        server = serve(self.ws)
        self.addCleanup(server.kill)
        server.initialize()
        legacy_run = self.drive(server)
        self.check_run(legacy_run)
        modern = ModernStdio(server)
        modern_run = self.drive(modern)
        self.check_run(modern_run)
        # telic_get_trace keeps the reference's TraceEvent shape (no trace context members).
        page = self.call(server, "telic_get_trace", {"run_id": legacy_run})
        self.assertTrue(page["events"])
        for event in page["events"]:
            self.assertNotIn("traceparent", event)
        self.assertEqual(server.close(), 0)

    def test_http_legacy_and_modern(self):
        http = HttpServer(self.ws.env())
        self.addCleanup(http.kill)
        client = http.client()
        self.addCleanup(client.close)
        client.initialize()
        self.check_run(self.drive(client))
        self.check_run(self.drive(ModernHttp(client)))


if __name__ == "__main__":
    run_tests(sys.argv)
