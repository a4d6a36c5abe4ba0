"""The tasks extension (io.modelcontextprotocol/tasks) for telic_ground_context
on a large generated repository (issue 20 item 5), over real stdio and real
Streamable HTTP with a raw 2026-07-28 JSON-RPC client: the call answers with a
task handle, tasks/get shows it working (with a progress message) and then its
result; tasks/cancel stops the grounding and nothing is stored; clients that do
not declare the extension get today's synchronous result, and task methods
without it are refused."""

import os
import re
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpServer, McpHttpClient  # noqa: E402
from mcp_client import Workspace, run_tests, serve  # noqa: E402
from modern_client import ModernHttp, ModernStdio  # noqa: E402

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
# A plain (non-Git) tree of this many files: the bounded filesystem walk
# inventories all of them (budget max_inventory_files below), which takes long
# enough for a poll to find the task working and a cancel to stop it mid-walk.
FILES = 60000
PER_DIRECTORY = 500
BUDGET = {"max_inventory_files": 100000}
START = {"original_request": "Explain what src/app.ts does", "mode": "analyze_only"}


def large_repository(repo):
    shutil.rmtree(os.path.join(repo, ".git"))
    for d in range(FILES // PER_DIRECTORY):
        directory = os.path.join(repo, "gen", f"d{d:03d}")
        os.makedirs(directory)
        for f in range(PER_DIRECTORY):
            with open(os.path.join(directory, f"f{f:03d}.txt"), "w", encoding="utf-8") as handle:
                handle.write(f"generated {d} {f}\n")


class TasksCase:
    """The same checks over either transport (`self.client` declares the extension, `self.plain` does not)."""

    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        large_repository(cls.ws.repo)

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def start_run(self):
        payload = self.client.ok("telic_start_run", START)
        run, action = payload["run"], payload["nextAction"]
        return {"run_id": run["runId"], "action_id": action["id"], "expected_run_version": run["version"]}

    def state(self, run_id):
        detail = self.client.ok("telic_get_run", {"run_id": run_id})
        trace = self.client.ok("telic_get_trace", {"run_id": run_id, "limit": 500})["events"]
        return detail["run"], detail["artifacts"], trace

    def ground_task(self, tokens):
        reply = self.client.request("tools/call", {"name": "telic_ground_context", "arguments": dict(tokens, budget=BUDGET)})
        task = reply["result"]
        self.assertEqual(task["resultType"], "task", reply)
        self.assertRegex(task["taskId"], r"^[0-9a-f]{64}$")
        self.assertEqual(task["status"], "working")
        self.assertEqual(task["ttlMs"], 3600000)
        self.assertGreater(task["pollIntervalMs"], 0)
        self.assertNotIn("result", task)
        return task

    def get(self, task_id):
        result = self.client.request("tasks/get", {"taskId": task_id})["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["taskId"], task_id)
        return result

    def poll(self, task_id):
        """Polls to a terminal status; returns (statuses seen, messages seen, final task)."""
        statuses, messages = [], []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            task = self.get(task_id)
            statuses.append(task["status"])
            if "statusMessage" in task:
                messages.append(task["statusMessage"])
            if task["status"] in ("completed", "failed", "cancelled"):
                return statuses, messages, task
            time.sleep(task["pollIntervalMs"] / 1000)
        self.fail("the task did not finish")

    # The handle, polling while it works (with progress), and the result the
    # synchronous call would have returned; the run advanced exactly once.
    def test_grounding_task_works_then_completes(self):
        tokens = self.start_run()
        task = self.ground_task(tokens)
        statuses, messages, final = self.poll(task["taskId"])
        self.assertEqual(statuses[0], "working", statuses)
        self.assertEqual(final["status"], "completed", final)
        for message in messages[:-1]:
            self.assertRegex(message, r"^(inventory: \d+ paths found|(inventory|rank|read): \d+ of \d+)$")
        result = final["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertFalse(result.get("isError"), result)
        payload = result["structuredContent"]
        self.assertTrue(payload["ok"])
        self.assertEqual(payload["run"]["phase"], "agent_1_frame")
        self.assertEqual(payload["run"]["version"], tokens["expected_run_version"] + 1)
        self.assertGreater(payload["manifest"]["budget"]["candidateFiles"], 1000)
        run, artifacts, _ = self.state(tokens["run_id"])
        self.assertEqual(run["version"], tokens["expected_run_version"] + 1)
        self.assertIn("ContextManifest", [a["type"] for a in artifacts])
        # A second poll returns the same terminal state.
        self.assertEqual(self.get(task["taskId"])["result"], result)

    # tasks/cancel stops the grounding: the task ends cancelled and the run is
    # exactly as before (no documents, no manifest, no event, same version).
    def test_cancelled_grounding_stores_nothing(self):
        tokens = self.start_run()
        before = self.state(tokens["run_id"])
        task = self.ground_task(tokens)
        cancel = self.client.request("tasks/cancel", {"taskId": task["taskId"]})["result"]
        self.assertEqual(cancel, {"resultType": "complete", "_meta": cancel["_meta"]})
        statuses, _, final = self.poll(task["taskId"])
        self.assertEqual(final["status"], "cancelled", statuses)
        self.assertNotIn("result", final)
        self.assertEqual(self.state(tokens["run_id"]), before)
        # The run can still be grounded (synchronously, without the extension).
        result = self.plain.call("telic_ground_context", dict(tokens, budget=BUDGET))
        self.assertEqual(result["structuredContent"]["run"]["version"], tokens["expected_run_version"] + 1)

    def test_refusals_and_discovery(self):
        discover = self.client.request("server/discover")["result"]
        self.assertEqual(discover["capabilities"]["extensions"], {"io.modelcontextprotocol/tasks": {}})
        for params in ({"taskId": "0" * 64}, {"taskId": "not-a-task"}):
            for method in ("tasks/get", "tasks/cancel"):
                reply = self.client.request(method, params)
                self.assertEqual(reply["error"]["code"], -32602, (method, params, reply))
        reply = self.client.request("tasks/update", {"taskId": "0" * 64, "inputResponses": {}})
        self.assertEqual(reply["error"]["code"], -32602)
        # Without the extension: no task, and the task methods are refused.
        refused = self.refused_without_extension("tasks/get", {"taskId": "0" * 64})
        self.assertEqual(refused["code"], -32021)
        self.assertEqual(refused["data"]["requiredCapabilities"], TASKS)


class StdioTasksTest(TasksCase, unittest.TestCase):
    def setUp(self):
        self.process = serve(self.ws)
        self.addCleanup(self.process.kill)
        self.client = ModernStdio(self.process, capabilities=TASKS)
        self.plain = ModernStdio(self.process)

    def refused_without_extension(self, method, params):
        return self.plain.request(method, params)["error"]

    def test_malformed_task_ids_are_invalid_params(self):
        for params in ({"taskId": 7}, {}, {"taskId": None}):
            self.assertEqual(self.client.request("tasks/get", params)["error"]["code"], -32602, params)
        reply = self.client.request("tasks/update", {"taskId": "0" * 64, "inputResponses": []})
        self.assertEqual(reply["error"]["code"], -32602)

    def test_legacy_clients_keep_the_synchronous_call(self):
        self.process.initialize("2025-11-25")
        self.assertEqual(self.process.request("tasks/get", {"taskId": "0" * 64})["error"]["code"], -32601)
        tokens = self.start_run()
        result = self.process.request("tools/call", {"name": "telic_ground_context",
                                                     "arguments": dict(tokens, budget={"max_inventory_files": 10})})
        self.assertNotIn("resultType", result["result"])
        self.assertTrue(result["result"]["structuredContent"]["ok"])


class HttpTasksTest(TasksCase, unittest.TestCase):
    def setUp(self):
        self.server = HttpServer(self.ws.env())
        self.addCleanup(self.server.kill)
        http = McpHttpClient(self.server)
        self.addCleanup(http.close)
        self.client = ModernHttp(http, capabilities=TASKS)
        self.plain = ModernHttp(http)

    def refused_without_extension(self, method, params):
        status, _, reply = self.plain.post(self.plain.message(method, params))
        self.assertEqual(status, 400)
        return reply["error"]

    def test_task_methods_need_a_matching_mcp_name(self):
        message = self.client.message("tasks/get", {"taskId": "a" * 64})
        status, _, reply = self.client.post(message, override={"Mcp-Name": "b" * 64})
        self.assertEqual(status, 400)
        self.assertEqual(reply["error"]["code"], -32020)
        status, _, reply = self.client.post(message, drop=["Mcp-Name"])
        self.assertEqual(status, 400)
        self.assertEqual(reply["error"]["code"], -32020)


if __name__ == "__main__":
    run_tests(sys.argv)
