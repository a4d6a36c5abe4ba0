"""End-to-end: telic serve over real stdio pipes — lifecycle, every tool,
bad input answered with the right error while the server keeps serving."""
# Requirement IDs are named on the tests that check them.

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import READY, McpProcess, Workspace, run_tests, serve, telic_binary  # noqa: E402

TOOLS = ["telic_start_run", "telic_ground_context", "telic_get_next_action", "telic_cancel_run",
         "telic_submit_artifact", "telic_list_runs", "telic_get_run", "telic_get_artifact", "telic_get_schema",
         "telic_get_trace",
         "telic_check_tool_action", "telic_replay_run"]
# The task-graph tools follow the run tools (tests/e2e/test_task_graph.py).
TOOLS += ["telic_create_task", "telic_spawn_subtask", "telic_dispatch_tasks", "telic_list_tasks", "telic_get_task",
          "telic_report_verdict", "telic_submit_report", "telic_record_verification", "telic_resolve_task",
          "telic_approve_action", "telic_use_approval", "telic_create_story", "telic_set_story_status"]
# telic's check runner follows them (tests/e2e/test_run_check.py).
TOOLS += ["telic_run_check"]


def canonical(value):
    """Canonical JSON as telic computes digests over (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class StdioProtocolTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)

    def tearDown(self):
        self.server.close()
        self.ws.close()

    def start(self, request="Explain what src/app.ts does", mode="report_only", **extra):
        return self.server.ok("telic_start_run", {"original_request": request, "mode": mode, **extra})

    def test_initialize_negotiates_versions(self):
        for version in ["2025-11-25", "2025-06-18", "2025-03-26"]:
            result = self.server.initialize(version)
            self.assertEqual(result["protocolVersion"], version)
        self.assertEqual(self.server.initialize("1999-01-01")["protocolVersion"], "2025-11-25")
        result = self.server.initialize()
        self.assertEqual(result["serverInfo"]["name"], "telic")
        self.assertIn("tools", result["capabilities"])
        self.assertIn("prompts", result["capabilities"])

    def test_ping_and_unknown_methods(self):
        self.server.initialize()
        self.assertEqual(self.server.request("ping")["result"], {})
        for method in ["nope", "server/discover", "subscriptions/listen"]:  # the last two are 2026-07-28 only
            reply = self.server.request(method)
            self.assertEqual(reply["error"]["code"], -32601, method)

    def test_tools_list_declares_self_contained_schemas(self):
        self.server.initialize()
        tools = self.server.request("tools/list")["result"]["tools"]
        self.assertEqual([t["name"] for t in tools], TOOLS)
        for tool in tools:
            schema = tool["inputSchema"]
            self.assertEqual(schema["type"], "object")
            # As the reference's listing: no top-level additionalProperties; the server still refuses unknown keys.
            self.assertNotIn("additionalProperties", schema, tool["name"])
            self.assertIn("annotations", tool)
            self.assertTrue(tool["title"] and tool["description"])
            self.assertNotIn("common.json", json.dumps(schema), "schemas must be self-contained")

    def test_start_run_stores_the_exact_request(self):  # covers TEL-001, TEL-013, TEL-017, TEL-021
        request = 'Fix "the bug"\n\tin ünïcödé — 😀 and a backslash \\ plus \u0001 control'
        started = self.start(request, "analyze_only")
        run = started["run"]
        self.assertEqual(run["status"], "running")
        self.assertEqual(run["phase"], "context_grounding")
        self.assertEqual(run["version"], 1)
        action = started["nextAction"]
        self.assertEqual(action["id"], f"action:{run['runId']}:1")
        self.assertEqual(action["phase"], "context_discovery")
        self.assertEqual(action["requiredOutputType"], "ContextManifest")
        self.assertIn("ClarificationRequest", action["additionalOutputSchemas"])
        self.assertEqual(action["effectivePermissions"]["repository"]["read"], ["**"])
        detail = self.server.ok("telic_get_run", {"run_id": run["runId"]})
        types = [a["type"] for a in detail["artifacts"]]
        self.assertEqual(types, ["UserMessage", "RunEnvelope"])
        message = detail["artifacts"][0]
        art = self.server.ok("telic_get_artifact", {"run_id": run["runId"], "artifact_id": message["id"]})["artifact"]
        self.assertEqual(art["body"]["content"], request)
        digest = "sha256:" + hashlib.sha256(canonical(art["body"]).encode("utf-8")).hexdigest()
        self.assertEqual(art["sha256"], digest)
        self.assertEqual(action["inputRefs"], [f"artifact://{run['runId']}/{a['id']}" for a in detail["artifacts"]])

    def test_grants_the_host_lacks_are_not_recorded(self):  # covers TEL-022
        started = self.start("Fix the typo in README.md", "fix_only", host_capabilities=["repository.read"],
                             authorization_granted=["repository.read", "repository.write"])
        run_id = started["run"]["runId"]
        envelope = self.server.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": run_id})["artifact"]["body"]
        self.assertEqual(envelope["host"]["capabilities"], ["repository.read"])
        self.assertEqual(envelope["authorization"]["granted"]["repository"]["write"], [])
        self.assertEqual(envelope["host"]["nativeSubagents"], "unknown")
        self.assertEqual(envelope["budgets"]["maximumParallelWorkers"], 1)

    def test_report_only_grounding_records_the_fixed_manifest(self):  # covers TEL-005, TEL-252
        started = self.start()
        run_id, action = started["run"]["runId"], started["nextAction"]
        args = {"run_id": run_id, "action_id": action["id"], "expected_run_version": 1}
        bad = self.server.fails("telic_ground_context", dict(args, budget={"max_files": 0}))
        self.assertEqual(bad["issues"][0]["pointer"], "/budget/max_files")
        grounded = self.server.ok("telic_ground_context", args)
        self.assertEqual(grounded["run"]["phase"], "agent_1_frame")
        self.assertEqual(grounded["run"]["version"], 2)
        manifest = grounded["manifest"]
        self.assertEqual(manifest["id"], "context-report-only-" + run_id[:12])
        self.assertEqual(manifest["inventorySource"], "filesystem")
        self.assertEqual(manifest["candidates"], [])
        action = grounded["nextAction"]
        self.assertEqual(action["phase"], "agent_1_frame")
        self.assertEqual(action["requiredOutputType"], "ProblemFrame")
        self.assertEqual(action["contextManifestRef"], f"artifact://{run_id}/{manifest['id']}")
        self.assertIn(action["contextManifestRef"], action["inputRefs"])
        self.assertIs(action["requiredOutputSchema"]["additionalProperties"], False)
        again = self.server.fails("telic_ground_context", args)
        self.assertEqual(again["error"], "Stale run version 1; current version is 2")
        events = self.server.ok("telic_get_trace", {"run_id": run_id})["events"]
        self.assertEqual(events[-1]["eventType"], "phase_submitted")
        self.assertEqual(events[-1]["outputRefs"], [action["contextManifestRef"]])

    def test_grounding_selects_and_stores_repository_sources(self):  # covers TEL-056
        started = self.start("Explain what src/app.ts does", "plan_only")
        run_id, action = started["run"]["runId"], started["nextAction"]
        grounded = self.server.ok("telic_ground_context", {"run_id": run_id, "action_id": action["id"],
                                                            "expected_run_version": 1})
        manifest = grounded["manifest"]
        self.assertEqual(manifest["inventorySource"], "git")
        paths = [c["path"] for c in manifest["candidates"] if c["decision"] == "selected"]
        self.assertIn("src/app.ts", paths)
        self.assertEqual(len(manifest["derivedRefs"]), len(paths))
        document_id = manifest["derivedRefs"][0].rsplit("/", 1)[1]
        document = self.server.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": document_id})["artifact"]
        self.assertEqual(document["type"], "ContextDocument")
        self.assertEqual(document["producer"], "controller")
        types = [e["eventType"] for e in self.server.ok("telic_get_trace", {"run_id": run_id})["events"]]
        self.assertEqual(types[-1], "phase_submitted")

    def test_get_next_action_is_idempotent(self):
        run_id = self.start()["run"]["runId"]
        first = self.server.ok("telic_get_next_action", {"run_id": run_id})
        second = self.server.ok("telic_get_next_action", {"run_id": run_id})
        self.assertEqual(first, second)

    def test_envelope_records_authorization(self):  # covers TEL-021, TEL-023
        started = self.start("Look at the server logs", "analyze_only",
                             host_capabilities=["repository.read", "network.read", "shell.inspect"],
                             authorization_granted=["repository.read", "network.read", "shell.inspect"],
                             network_read_domains=["Example.COM", "example.com"])
        run_id = started["run"]["runId"]
        self.assertEqual(started["run"]["topology"], "forensic")
        envelope = self.server.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": run_id})["artifact"]
        granted = envelope["body"]["authorization"]["granted"]
        self.assertEqual(granted["network"]["readDomains"], ["example.com"])
        self.assertTrue(granted["shell"]["inspect"])

    def test_start_run_rejections(self):
        cases = [
            ({"original_request": "x", "mode": "yolo"}, "/mode"),
            ({"original_request": "", "mode": "report_only"}, "/original_request"),
            ({"original_request": "x", "mode": "report_only", "surprise": 1}, ""),
            ({"original_request": 7, "mode": "report_only"}, "/original_request"),
            ({"original_request": "x" * 32769, "mode": "report_only"}, "/original_request"),
            ({"original_request": "x", "mode": "report_only", "prior_run_id": "not-a-uuid"}, "/prior_run_id"),
        ]
        for arguments, pointer in cases:
            payload = self.server.fails("telic_start_run", arguments)
            self.assertEqual(payload["code"], "invalid_argument")
            self.assertIn(pointer, [i["pointer"] for i in payload["issues"]], arguments)
        payload = self.server.fails("telic_start_run", {"original_request": "   ", "mode": "report_only"})
        self.assertEqual(payload["error"], "Original request is required")
        payload = self.server.fails("telic_start_run", {"original_request": "x", "mode": "fix_only",
                                                        "shell_execute_allowlist": ["npm test"]})
        self.assertIn("shell.execute", payload["error"])
        payload = self.server.fails("telic_start_run", {"original_request": "x", "mode": "analyze_only",
                                                        "host_capabilities": ["network.read"],
                                                        "authorization_granted": ["network.read"],
                                                        "network_read_domains": ["https://example.com"]})
        self.assertIn("exact DNS names", payload["error"])
        payload = self.server.fails("telic_start_run", {"original_request": "x", "mode": "fix_only",
                                                        "host_capabilities": ["shell.execute"],
                                                        "authorization_granted": ["shell.execute"],
                                                        "shell_execute_allowlist": ["npm test && rm -rf /"]})
        self.assertIn("non-compound", payload["error"])
        payload = self.server.fails("telic_start_run", omit_arguments=True)
        self.assertEqual(payload["code"], "invalid_argument")
        self.assertEqual(self.server.ok("telic_list_runs", {})["runs"], [], "rejections must store nothing")

    def test_every_violation_is_reported(self):
        payload = self.server.fails("telic_start_run", {"original_request": "", "mode": "x", "host_name": "",
                                                        "extra": True})
        pointers = sorted(i["pointer"] for i in payload["issues"])
        self.assertEqual(pointers, ["", "/host_name", "/mode", "/original_request"])
        codes = {i["pointer"]: i["code"] for i in payload["issues"]}
        self.assertEqual(codes[""], "unrecognized_keys")
        self.assertEqual(codes["/mode"], "invalid_value")

    def test_unknown_run_and_artifact(self):
        missing = "00000000-0000-4000-8000-000000000000"
        for tool, args in [("telic_get_run", {"run_id": missing}),
                           ("telic_get_next_action", {"run_id": missing}),
                           ("telic_get_trace", {"run_id": missing}),
                           ("telic_cancel_run", {"run_id": missing, "action_id": "a", "expected_run_version": 1})]:
            payload = self.server.fails(tool, args)
            self.assertEqual(payload["error"], f"Run not found: {missing}", tool)
            self.assertEqual(payload["code"], "not_found")
        run_id = self.start()["run"]["runId"]
        payload = self.server.fails("telic_get_artifact", {"run_id": run_id, "artifact_id": "nope"})
        self.assertEqual(payload["error"], "Artifact not found: nope")
        payload = self.server.fails("telic_get_run", {"run_id": "../etc/passwd"})
        self.assertEqual(payload["issues"][0]["pointer"], "/run_id")

    def test_cancel_checks_tokens_then_is_terminal(self):  # covers TEL-251
        started = self.start()
        run_id, action_id = started["run"]["runId"], started["nextAction"]["id"]
        stale = self.server.fails("telic_cancel_run", {"run_id": run_id, "action_id": action_id,
                                                       "expected_run_version": 2})
        self.assertEqual(stale["error"], "Stale run version 2; current version is 1")
        foreign = self.server.fails("telic_cancel_run", {"run_id": run_id, "action_id": "action:x:1",
                                                         "expected_run_version": 1})
        self.assertIn("action_id", foreign["error"])
        cancelled = self.server.ok("telic_cancel_run", {"run_id": run_id, "action_id": action_id,
                                                        "expected_run_version": 1})
        self.assertEqual(cancelled["run"]["status"], "cancelled")
        self.assertEqual(cancelled["run"]["version"], 2)
        self.assertEqual(cancelled["nextAction"]["kind"], "terminal")
        self.assertEqual(cancelled["nextAction"]["status"], "cancelled")
        self.assertIsNone(cancelled["nextAction"]["reportRef"])
        again = self.server.ok("telic_cancel_run", {"run_id": run_id, "action_id": cancelled["nextAction"]["id"],
                                                    "expected_run_version": 2})
        self.assertEqual(again["run"], cancelled["run"])
        events = self.server.ok("telic_get_trace", {"run_id": run_id})["events"]
        self.assertEqual([e["eventType"] for e in events], ["run_started", "topology_classified", "run_terminated"])
        self.assertEqual([e["sequence"] for e in events], [1, 2, 3])
        self.assertEqual(events[2]["actor"], "user")

    def test_trace_paging(self):
        run_id = self.start()["run"]["runId"]
        page = self.server.ok("telic_get_trace", {"run_id": run_id, "after_sequence": 0, "limit": 1})
        self.assertEqual([e["sequence"] for e in page["events"]], [1])
        self.assertTrue(page["hasMore"])
        page = self.server.ok("telic_get_trace", {"run_id": run_id, "after_sequence": 1, "limit": 1})
        self.assertEqual([e["sequence"] for e in page["events"]], [2])
        self.assertFalse(page["hasMore"])
        self.server.fails("telic_get_trace", {"run_id": run_id, "limit": 0})
        self.server.fails("telic_get_trace", {"run_id": run_id, "limit": 501})

    def test_list_runs_newest_first_and_limits(self):
        ids = [self.start(f"request {i}")["run"]["runId"] for i in range(3)]
        runs = self.server.ok("telic_list_runs", {})["runs"]
        self.assertEqual(set(r["runId"] for r in runs), set(ids))
        self.assertNotIn("repositoryRoot", runs[0])
        self.assertEqual(len(self.server.ok("telic_list_runs", {"limit": 1})["runs"]), 1)
        for bad in [0, 101, 1.5, "3"]:
            self.server.fails("telic_list_runs", {"limit": bad})

    def test_prompts(self):  # covers TEL-248, TEL-249
        prompts = self.server.request("prompts/list")["result"]["prompts"]
        self.assertEqual([p["name"] for p in prompts], ["telic_workflow"])
        reply = self.server.request("prompts/get", {"name": "telic_workflow",
                                                    "arguments": {"original_request": 'say "hi"', "mode": "plan_only"}})
        result = reply["result"]
        self.assertIn("without a model API", result["description"])
        text = result["messages"][0]["content"]["text"]
        self.assertIn('"say \\"hi\\""', text)
        self.assertIn("Requested mode: plan_only", text)
        self.assertIn("Never mutate in report_only, plan_only, or analyze_only mode.", text)
        bad = self.server.request("prompts/get", {"name": "telic_workflow", "arguments": {"original_request": "x"}})
        self.assertEqual(bad["error"]["code"], -32602)
        self.assertIn("/mode", bad["error"]["message"])
        unknown = self.server.request("prompts/get", {"name": "nope", "arguments": {}})
        self.assertEqual(unknown["error"]["code"], -32602)
        self.assertEqual(self.server.ok("telic_list_runs", {})["runs"], [], "rendering changes no state")

    def test_malformed_input_never_kills_the_server(self):
        self.server.initialize()
        bad_lines = [
            b"{not json\n",
            b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n',
            b"42\n",
            b'{"jsonrpc":"1.0","id":5,"method":"ping"}\n',
            b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}\n',
            b'{"jsonrpc":"2.0","id":6,"method":"ping","extra":1}\n',
            b'{"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}\n',
            b'{"jsonrpc":"2.0","id":8,"method":"ping","id":9}\n',
            b"\xff\xfe garbage \x00\n",
            b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{}}}\n',
            b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"telic_list_runs","arguments":[1]}}\n',
            b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}\n',
            b"[" * 10000 + b"\n",
        ]
        expected_codes = [-32700, -32600, -32600, -32600, -32600, -32600, -32602, -32700, -32700, -32602, -32602,
                          -32602, -32700]
        for line, code in zip(bad_lines, expected_codes):
            self.server.send_raw(line)
            reply = self.server.read()
            self.assertEqual(reply["error"]["code"], code, line[:60])
            self.assertEqual(self.server.request("ping")["result"], {})
        # A blank line and a notification get no reply.
        self.server.send_raw(b"\n")
        self.server.notify("notifications/cancelled", {"requestId": 99})
        self.server.no_reply()
        self.assertEqual(self.server.request("ping")["result"], {})

    def test_oversized_message_is_refused_and_the_server_continues(self):
        self.server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (17 * 1024 * 1024) + b'"}}\n')
        reply = self.server.read(timeout=60)
        self.assertEqual(reply["error"]["code"], -32600)
        self.assertIn("exceeds", reply["error"]["message"])
        self.assertEqual(self.server.request("ping")["result"], {})

    def test_stdout_carries_only_json_and_stderr_one_ready_line(self):
        self.start()
        self.server.request("ping")
        self.assertEqual(self.server.close(), 0)
        self.assertEqual(len(self.server.stderr_lines), 1)
        self.assertTrue(self.server.stderr_lines[0].startswith("Telic MCP ready for "))

    def test_sigterm_exits_cleanly_and_state_survives(self):
        run_id = self.start()["run"]["runId"]
        self.server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.proc.wait(timeout=20), 0)
        self.server = serve(self.ws)
        self.assertEqual(self.server.ok("telic_get_run", {"run_id": run_id})["run"]["runId"], run_id)


class LedgerOpensInTheBackgroundTest(unittest.TestCase):
    """`telic serve` over stdio answers initialize while its SQLite ledger
    opens on another thread (D-START6); tool calls wait for the open, and a
    failed open ends the process as a failed start: exit 1, one line."""

    def setUp(self):
        self.ws = Workspace()
        first = subprocess.run([telic_binary(), "serve"], input=b"", capture_output=True, env=self.ws.env(), timeout=60)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.ledger = os.path.join(self.ws.state, "telic.sqlite3")
        # Another process holds the ledger exclusively: telic's open waits (busy timeout 5 s).
        self.holder = sqlite3.connect(self.ledger, isolation_level=None)
        self.holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        self.holder.execute("BEGIN EXCLUSIVE")

    def tearDown(self):
        self.holder.close()
        self.ws.close()

    def test_initialize_is_answered_while_the_ledger_is_locked_and_calls_wait_for_it(self):
        server = McpProcess([telic_binary(), "serve"], self.ws.env(), wait_ready=False)
        try:
            self.assertEqual(server.initialize()["serverInfo"]["name"], "telic")
            self.assertNotIn(READY, "".join(server.stderr_lines))
            server.send_raw(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                                        "params": {"name": "telic_list_runs", "arguments": {}}}) + "\n")
            server.no_reply(0.5)  # waits for the ledger
            self.holder.execute("COMMIT")
            self.holder.close()
            reply = server.read(timeout=10)
            self.assertEqual(reply["id"], 99)
            self.assertIs(reply["result"]["structuredContent"]["ok"], True)
            server.wait_for_stderr(READY)
        finally:
            code = server.close()
        self.assertEqual(code, 0)
        self.assertEqual("".join(server.stderr_lines).count(READY), 1)

    def test_a_ledger_that_stays_locked_ends_the_start_with_one_line_and_status_1(self):
        server = McpProcess([telic_binary(), "serve"], self.ws.env(), wait_ready=False)
        self.assertEqual(server.initialize()["serverInfo"]["name"], "telic")
        server.send_raw(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                                    "params": {"name": "telic_list_runs", "arguments": {}}}) + "\n")
        self.assertEqual(server.proc.wait(timeout=30), 1)
        server._stderr_thread.join(timeout=5)
        self.assertTrue(server.lines.get(timeout=5) is None, "no reply after the failed open")
        err = "".join(server.stderr_lines)
        self.assertTrue(err.startswith("Telic MCP failed: "), err)
        self.assertIn("locked", err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertNotIn(READY, err)


if __name__ == "__main__":
    run_tests(sys.argv)
