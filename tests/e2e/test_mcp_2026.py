"""MCP revision 2026-07-28 beside 2025-11-25 (issue 20), over real stdio and
real Streamable HTTP: per-request `_meta`, server/discover, the refusals
(missing or mismatched headers, unknown version, removed methods), resources,
subscriptions/listen, and a complete analyze_and_fix run driven by a
2026-07-28 client and by a 2025-11-25 client whose stored runs agree apart
from ids and times."""

import http.client
import json
import os
import re
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpServer, McpHttpClient  # noqa: E402
from mcp_client import Workspace, run_tests, serve  # noqa: E402
from modern_client import MODERN, ModernHttp, ModernStdio, meta, with_meta  # noqa: E402
import scenario as sc  # noqa: E402

START = {"original_request": "Explain src/app.ts", "mode": "analyze_only"}


class StdioModernTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.process = serve(self.ws)
        self.addCleanup(self.process.kill)
        self.modern = ModernStdio(self.process)

    def test_discover_then_calls_without_initialize(self):
        result = self.modern.request("server/discover")["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["supportedVersions"][0], MODERN)
        self.assertIn("2025-11-25", result["supportedVersions"])
        self.assertEqual(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "telic")
        tools = self.modern.request("tools/list")["result"]
        self.assertEqual(tools["resultType"], "complete")
        self.assertIn("ttlMs", tools)
        self.assertIn(tools["cacheScope"], ("public", "private"))
        names = [t["name"] for t in tools["tools"]]
        self.assertEqual(names, [t["name"] for t in self.modern.request("tools/list")["result"]["tools"]])
        run = self.modern.ok("telic_start_run", START)["run"]
        self.assertEqual(run["status"], "running")

    def test_unknown_version_and_removed_methods_are_refused(self):
        reply = self.process.request("tools/list", {"_meta": meta(version="1900-01-01")})
        self.assertEqual(reply["error"]["code"], -32022)
        self.assertEqual(reply["error"]["data"]["requested"], "1900-01-01")
        self.assertIn(MODERN, reply["error"]["data"]["supported"])
        for method in ("ping", "logging/setLevel", "initialize"):
            self.assertEqual(self.modern.request(method, {"level": "info"})["error"]["code"], -32601, method)

    def test_both_eras_on_one_process(self):
        legacy = self.process.initialize("2025-11-25")
        self.assertEqual(legacy["protocolVersion"], "2025-11-25")
        self.assertNotIn("resultType", self.process.request("tools/list")["result"])
        self.assertEqual(self.modern.request("tools/list")["result"]["resultType"], "complete")
        self.assertEqual(self.process.request("ping")["result"], {})

    def test_artifacts_are_resources_and_listen_sees_new_ones(self):
        sub = {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
               "params": with_meta({"notifications": {"resourcesListChanged": True}})}
        self.process.send_raw(json.dumps(sub) + "\n")
        ack = self.process.read()
        self.assertEqual(ack["method"], "notifications/subscriptions/acknowledged")
        self.assertEqual(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1")
        # start_run: the list-changed notification arrives before the tool's reply.
        self.process.send_raw(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                          "params": with_meta({"name": "telic_start_run", "arguments": START})}) + "\n")
        changed = self.process.read()
        self.assertEqual(changed["method"], "notifications/resources/list_changed")
        self.assertEqual(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1")
        run_id = self.process.read()["result"]["structuredContent"]["run"]["runId"]
        uri = f"artifact://{run_id}/{run_id}"
        listed = [r["uri"] for r in self.modern.request("resources/list")["result"]["resources"]]
        self.assertIn(uri, listed)
        self.assertIn(f"trace://{run_id}", listed)
        body = self.modern.request("resources/read", {"uri": uri})["result"]["contents"][0]["text"]
        via_tool = self.modern.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": run_id})["artifact"]["body"]
        self.assertEqual(json.loads(body), via_tool)
        templates = self.modern.request("resources/templates/list")["result"]["resourceTemplates"]
        self.assertIn("artifact://{run_id}/{artifact_id}", [t["uriTemplate"] for t in templates])
        done = self.modern.request("completion/complete", {
            "ref": {"type": "ref/resource", "uri": "artifact://{run_id}/{artifact_id}"},
            "argument": {"name": "run_id", "value": run_id[:4]}})["result"]
        self.assertIn(run_id, done["completion"]["values"])
        self.assertEqual(self.modern.request("resources/read", {"uri": "artifact://nope/nope"})["error"]["code"], -32602)
        self.process.notify("notifications/cancelled", {"requestId": "listen-1"})
        self.modern.ok("telic_start_run", START)  # no notification any more: the next line is this reply
        self.assertEqual(self.modern.request("ping")["error"]["code"], -32601)

    def test_legacy_resource_errors_keep_their_code(self):
        self.process.initialize()
        reply = self.process.request("resources/read", {"uri": "artifact://nope/nope"})
        self.assertEqual(reply["error"]["code"], -32002)


class HttpModernTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        self.server = HttpServer(self.ws.env())
        self.addCleanup(self.server.kill)
        self.http = McpHttpClient(self.server)
        self.addCleanup(self.http.close)
        self.modern = ModernHttp(self.http)

    def test_stateless_requests_need_no_session(self):
        result = self.modern.request("server/discover")["result"]
        self.assertEqual(result["supportedVersions"][0], MODERN)
        payload = self.modern.ok("telic_start_run", START)
        run_id = payload["run"]["runId"]
        # A Mcp-Session-Id header is ignored, even an unknown one.
        message = self.modern.message("tools/call", {"name": "telic_get_run", "arguments": {"run_id": run_id}})
        status, headers, reply = self.modern.post(message, headers={"Mcp-Session-Id": "no-such-session"})
        self.assertEqual(status, 200, reply)
        self.assertNotIn("mcp-session-id", headers)
        self.assertEqual(reply["result"]["structuredContent"]["run"]["runId"], run_id)
        read = self.modern.request("resources/read", {"uri": f"run://{run_id}"})["result"]
        self.assertEqual(json.loads(read["contents"][0]["text"])["run"]["runId"], run_id)

    def test_header_refusals(self):
        call = self.modern.message("tools/call", {"name": "telic_list_runs", "arguments": {}})
        cases = {
            "no MCP-Protocol-Version": dict(drop=["MCP-Protocol-Version"]),
            "no Mcp-Method": dict(drop=["Mcp-Method"]),
            "no Mcp-Name": dict(drop=["Mcp-Name"]),
            "Mcp-Name differs": dict(override={"Mcp-Name": "telic_get_run"}),
            "Mcp-Method differs": dict(override={"Mcp-Method": "tools/list"}),
            "version header differs": dict(override={"MCP-Protocol-Version": "2025-11-25"}),
            "Mcp-Name bad base64": dict(override={"Mcp-Name": "=?base64?***?="}),
        }
        for name, change in cases.items():
            status, _, reply = self.modern.post(call, **change)
            self.assertEqual(status, 400, name)
            self.assertEqual(reply["error"]["code"], -32020, name)
            self.assertEqual(reply["id"], call["id"], name)
        # The body says 2026-07-28 but no header at all: still a header mismatch.
        status, _, reply = self.modern.post(call, drop=["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"])
        self.assertEqual((status, reply["error"]["code"]), (400, -32020))
        # A base64-encoded Mcp-Name that decodes to the body's name is accepted.
        status, _, reply = self.modern.post(call, override={"Mcp-Name": "=?base64?dGVsaWNfbGlzdF9ydW5z?="})
        self.assertEqual(status, 200, reply)

    def test_unknown_version_and_method(self):
        message = self.modern.message("tools/list", version="1900-01-01")
        status, _, reply = self.modern.post(message, override={"MCP-Protocol-Version": "1900-01-01"})
        self.assertEqual(status, 400)
        self.assertEqual(reply["error"]["code"], -32022)
        self.assertIn("2025-11-25", reply["error"]["data"]["supported"])
        status, _, reply = self.modern.post(self.modern.message("ping"))
        self.assertEqual((status, reply["error"]["code"]), (404, -32601))

    def test_legacy_session_beside_modern_requests(self):
        legacy = McpHttpClient(self.server)
        self.addCleanup(legacy.close)
        legacy.initialize()
        self.assertNotIn("resultType", legacy.request("tools/list")["result"])
        self.assertEqual(self.modern.request("tools/list")["result"]["resultType"], "complete")
        # A legacy request without a session is still refused as before.
        status, _, _ = legacy.post(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
                                   legacy.headers(session=False, version=False))
        self.assertEqual(status, 400)

    def test_listen_stream_delivers_list_changes(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        self.addCleanup(conn.close)
        message = self.modern.message("subscriptions/listen", {"notifications": {"resourcesListChanged": True,
                                                                                 "promptsListChanged": True}})
        from modern_client import mirrored_headers
        conn.request("POST", "/mcp", body=json.dumps(message),
                     headers=dict(self.modern.base_headers(), **mirrored_headers(message)))
        response = conn.getresponse()
        self.assertEqual(response.status, 200)
        self.assertTrue(response.getheader("Content-Type").startswith("text/event-stream"))
        events = []

        def read_events():
            data = b""
            while len(events) < 2:
                line = response.fp.readline()
                if not line:
                    return
                if line.startswith(b"data: "):
                    events.append(json.loads(line[6:]))

        reader = threading.Thread(target=read_events, daemon=True)
        reader.start()
        other = ModernHttp(McpHttpClient(self.server))
        self.addCleanup(other.http.close)
        deadline_ok = False
        for _ in range(50):
            if events:
                deadline_ok = True
                break
            threading.Event().wait(0.1)
        self.assertTrue(deadline_ok, "no acknowledgement on the listen stream")
        self.assertEqual(events[0]["method"], "notifications/subscriptions/acknowledged")
        other.ok("telic_start_run", START)
        reader.join(10)
        self.assertEqual(len(events), 2, events)
        self.assertEqual(events[1]["method"], "notifications/resources/list_changed")
        self.assertEqual(events[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], message["id"])


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}|\b[0-9a-f]{64}\b|\b[0-9a-f]{40}\b")  # + git commits (commit time)
HEX_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])")  # ids derived from the run id
VOLATILE_KEYS = {"hash", "prevHash", "sha256", "durationMs", "elapsedMs"}


def normalized(value, names):
    """Replaces ids (in first-seen order), times and digests with stable tokens."""
    if isinstance(value, dict):
        return {normalized(k, names): ("*" if k in VOLATILE_KEYS else normalized(v, names)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v, names) for v in value]
    if isinstance(value, str):
        value = UUID.sub(lambda m: names.setdefault(m.group(0), f"ID{len(names)}"), value)
        for path, token in names.get("__paths__", {}).items():
            value = value.replace(path, token)
        value = TIME.sub("TIME", value)
        value = DIGEST.sub("DIGEST", value)
        return HEX_ID.sub(lambda m: names.setdefault(m.group(0), f"HEX{len(names)}"), value)
    return value


def stored_run(client, run_id, workspace):
    """The run, its trace and every artifact body as stored, normalized."""
    detail = client.ok("telic_get_run", {"run_id": run_id})
    trace = client.ok("telic_get_trace", {"run_id": run_id, "limit": 500})["events"]
    bodies = {a["id"]: client.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": a["id"]})["artifact"]["body"]
              for a in detail["artifacts"]}
    names = {run_id: "RUN", "__paths__": {workspace.base: "WORKSPACE"}}
    return normalized({"run": detail["run"], "artifacts": detail["artifacts"], "trace": trace, "bodies": bodies}, names)


class CompleteRunBothRevisionsTest(unittest.TestCase):
    def drive(self, make_client):
        ws = Workspace()
        self.addCleanup(ws.close)
        process = serve(ws)
        self.addCleanup(process.kill)
        client = make_client(process)
        driver = sc.Driver(client, sc.load("analyze_and_fix"), ws.repo)
        driver.write_repository()
        driver.start()
        driver.run_steps()
        self.assertEqual(driver.run["status"], "completed")
        return stored_run(client, driver.run["runId"], ws)

    def test_analyze_and_fix_is_stored_alike_by_both_revisions(self):
        def legacy(process):
            process.initialize("2025-11-25")
            return process

        old = self.drive(legacy)
        new = self.drive(lambda process: ModernStdio(process))
        self.assertEqual(len(old["trace"]), len(new["trace"]))
        self.maxDiff = 4000
        for a, b in zip(old["trace"], new["trace"]):
            self.assertEqual(a, b)
        self.assertEqual(old["bodies"].keys(), new["bodies"].keys())
        for key in old["bodies"]:
            self.assertEqual(old["bodies"][key], new["bodies"][key], key)
        self.assertEqual(old, new)


if __name__ == "__main__":
    run_tests(sys.argv)
