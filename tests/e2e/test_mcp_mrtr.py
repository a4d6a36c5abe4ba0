"""The run's clarification as a 2026-07-28 multi round-trip request (issue 20
item 4), over real stdio and real Streamable HTTP with a raw JSON-RPC client:
telic_get_next_action on a run awaiting clarification answers a client that
declares form elicitation with an InputRequiredResult; the retry with
inputResponses + requestState records the answer through today's
clarification path (the stored run equals one answered with
clarification_response); a forged or tampered requestState and a replayed
inputResponses are refused and change nothing; hosts without elicitation and
2025-11-25 hosts keep today's tool result."""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpServer, McpHttpClient  # noqa: E402
from mcp_client import Workspace, run_tests, serve  # noqa: E402
from modern_client import ModernHttp, ModernStdio  # noqa: E402
import scenario as sc  # noqa: E402
from test_mcp_2026 import stored_run  # noqa: E402
from test_run_rules import CLARIFICATION  # noqa: E402

ELICITATION = {"elicitation": {"form": {}}}
CHOICES = ["greeting-only", "stop", "bigger"]


def ask(client, workspace):
    """Drives analyze_and_fix to its clarification; returns the driver."""
    driver = sc.Driver(client, sc.load("analyze_and_fix"), workspace.repo)
    driver.write_repository()
    driver.start()
    driver.run_steps(until="frames the problem")
    body = sc.substitute(CLARIFICATION, driver.names)
    driver._update(client.ok("telic_submit_artifact",
                             dict(driver.tokens(), artifact_type="ClarificationRequest", body=body)))
    assert driver.run["status"] == "awaiting_clarification"
    return driver


class RoundTripCase:
    """The same checks over either transport; `make_client(capabilities)`
    returns a 2026-07-28 client, `workspace` its repository."""

    def get_next_action(self, run_id, **extra):
        return self.client.request("tools/call", dict({"name": "telic_get_next_action",
                                                       "arguments": {"run_id": run_id}}, **extra))

    def snapshot(self, run_id):
        detail = self.client.ok("telic_get_run", {"run_id": run_id})
        trace = self.client.ok("telic_get_trace", {"run_id": run_id, "limit": 500})["events"]
        return detail["run"], detail["artifacts"], trace

    def input_required(self, run_id):
        reply = self.get_next_action(run_id)
        result = reply["result"]
        self.assertEqual(result["resultType"], "input_required", reply)
        return result

    def refused(self, run_id, reason, **extra):
        before = self.snapshot(run_id)
        reply = self.get_next_action(run_id, **extra)
        self.assertIn("error", reply, reply)
        self.assertEqual(reply["error"]["code"], -32602, reply)
        self.assertEqual(reply["error"]["data"]["reason"], reason, reply)
        self.assertEqual(self.snapshot(run_id), before, "a refused requestState must change nothing")
        return reply["error"]

    # The bounded question reaches the user as a form elicitation of the
    # ClarificationRequest's choices; asking stores nothing.
    def test_clarification_is_an_input_required_result(self):
        driver = ask(self.client, self.ws)
        run_id = driver.run["runId"]
        before = self.snapshot(run_id)
        result = self.input_required(run_id)
        self.assertEqual(self.snapshot(run_id), before)
        self.assertEqual(set(result["inputRequests"]), {"clarification"})
        request = result["inputRequests"]["clarification"]
        self.assertEqual(request["method"], "elicitation/create")
        self.assertEqual(request["params"]["mode"], "form")
        self.assertIn(CLARIFICATION["question"], request["params"]["message"])
        schema = request["params"]["requestedSchema"]
        self.assertEqual(schema["required"], ["choice"])
        self.assertEqual([c["const"] for c in schema["properties"]["choice"]["oneOf"]], CHOICES)
        self.assertEqual([c["title"] for c in schema["properties"]["choice"]["oneOf"]],
                         [c["label"] for c in CLARIFICATION["responseChoices"]])
        self.assertIsInstance(result["requestState"], str)
        self.assertEqual(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "telic")

    # The retry records the answer through telic_submit_artifact's clarification
    # path: the stored run equals one answered the old way (ids, times aside);
    # the same inputResponses presented again is a replay and changes nothing.
    def test_retry_records_the_answer_and_a_replay_is_refused(self):
        driver = ask(self.client, self.ws)
        run_id = driver.run["runId"]
        state = self.input_required(run_id)["requestState"]
        responses = {"clarification": {"action": "accept", "content": {"choice": "greeting-only"}}}
        reply = self.get_next_action(run_id, inputResponses=responses, requestState=state)
        result = reply["result"]
        self.assertEqual(result["resultType"], "complete", reply)
        self.assertFalse(result.get("isError"), reply)
        action = result["structuredContent"]["nextAction"]
        self.assertEqual(action["kind"], "phase")
        self.assertEqual(action["phase"], "agent_1_frame")
        trace = self.snapshot(run_id)[2]
        # clarification_answered, on the wire a transition by the user.
        self.assertEqual((trace[-1]["eventType"], trace[-1]["actor"]), ("transition_allowed", "user"))
        self.assertTrue(trace[-1]["rationaleSummary"].startswith("User supplied a bounded decision"))
        mrtr = stored_run(self.client, run_id, self.ws)

        self.refused(run_id, "replayed", inputResponses=responses, requestState=state)

        # The same run answered with today's clarification_response.
        other = self.other_workspace()
        legacy_driver = ask(self.other_client, other)
        legacy_driver._update(self.other_client.ok("telic_submit_artifact", dict(
            legacy_driver.tokens(), clarification_response="greeting-only")))
        self.maxDiff = 4000
        self.assertEqual(stored_run(self.other_client, legacy_driver.run["runId"], other), mrtr)

    # A forged, tampered or foreign requestState is refused before anything is recorded.
    def test_forged_and_tampered_request_state_are_refused(self):
        driver = ask(self.client, self.ws)
        run_id = driver.run["runId"]
        state = self.input_required(run_id)["requestState"]
        responses = {"clarification": {"action": "accept", "content": {"choice": "greeting-only"}}}
        prefix, payload, mac = state.split(".")
        flipped = mac[:-1] + ("0" if mac[-1] != "0" else "1")
        self.refused(run_id, "forged", inputResponses=responses, requestState=f"{prefix}.{payload}.{flipped}")
        tampered = bytes.fromhex(payload).replace(b'"version":', b'"version":1').hex()
        self.refused(run_id, "forged", inputResponses=responses, requestState=f"{prefix}.{tampered}.{mac}")
        self.refused(run_id, "forged", inputResponses=responses, requestState="v1." + "7b7d" + "." + "00" * 32)
        self.refused(run_id, "malformed", inputResponses=responses, requestState="not-a-state")
        self.refused(run_id, "missing_state", inputResponses=responses)
        # A state for this run presented for another run.
        other = ask(self.client, self.ws)
        self.refused(other.run["runId"], "other_run", inputResponses=responses, requestState=state)
        # A requestState on a tool telic never asked through.
        reply = self.client.request("tools/call", {"name": "telic_get_run", "arguments": {"run_id": run_id},
                                                   "inputResponses": responses, "requestState": state})
        self.assertEqual(reply["error"]["data"]["reason"], "other_tool")
        # Still answerable with the genuine state.
        reply = self.get_next_action(run_id, inputResponses=responses, requestState=state)
        self.assertEqual(reply["result"]["structuredContent"]["nextAction"]["phase"], "agent_1_frame")

    # covers TEL-075: a choice outside the request is the clarification path's
    # own refusal. Declining stores nothing and returns today's clarification
    # action; a retry without the answer is asked again.
    def test_decline_missing_and_unknown_answers(self):
        driver = ask(self.client, self.ws)
        run_id = driver.run["runId"]
        before = self.snapshot(run_id)
        state = self.input_required(run_id)["requestState"]
        reply = self.get_next_action(run_id, inputResponses={"clarification": {"action": "decline"}}, requestState=state)
        self.assertEqual(reply["result"]["resultType"], "complete")
        self.assertEqual(reply["result"]["structuredContent"]["nextAction"]["kind"], "clarification")
        again = self.get_next_action(run_id, inputResponses={}, requestState=state)["result"]
        self.assertEqual(again["resultType"], "input_required")
        wrong = {"clarification": {"action": "accept", "content": {"choice": "everything"}}}
        result = self.get_next_action(run_id, inputResponses=wrong, requestState=again["requestState"])["result"]
        self.assertTrue(result["isError"])
        self.assertIn("must equal one of the typed response choice identifiers", result["structuredContent"]["error"])
        self.assertEqual(self.snapshot(run_id), before)

    # Hosts that do not declare elicitation keep today's tool result.
    def test_without_elicitation_the_result_is_unchanged(self):
        driver = ask(self.client, self.ws)
        run_id = driver.run["runId"]
        plain = self.without_elicitation.request("tools/call", {"name": "telic_get_next_action",
                                                                 "arguments": {"run_id": run_id}})["result"]
        self.assertEqual(plain["resultType"], "complete")
        self.assertEqual(plain["structuredContent"]["nextAction"]["kind"], "clarification")
        self.assertNotIn("requestState", plain)


class StdioRoundTripTest(RoundTripCase, unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        process = serve(self.ws)
        self.addCleanup(process.kill)
        self.process = process
        self.client = ModernStdio(process, capabilities=ELICITATION)
        self.without_elicitation = ModernStdio(process)
        self.other_client = None

    def other_workspace(self):
        other = Workspace()
        self.addCleanup(other.close)
        process = serve(other)
        self.addCleanup(process.kill)
        self.other_client = ModernStdio(process)
        return other

    # A 2025-11-25 client on the same process gets today's bytes.
    def test_legacy_client_keeps_the_tool_result(self):
        driver = ask(self.client, self.ws)
        self.process.initialize("2025-11-25")
        result = self.process.request("tools/call", {"name": "telic_get_next_action",
                                                     "arguments": {"run_id": driver.run["runId"]}})["result"]
        self.assertNotIn("resultType", result)
        self.assertEqual(result["structuredContent"]["nextAction"]["kind"], "clarification")


class HttpRoundTripTest(RoundTripCase, unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        server = HttpServer(self.ws.env())
        self.addCleanup(server.kill)
        self.server = server
        http = McpHttpClient(server)
        self.addCleanup(http.close)
        self.client = ModernHttp(http, capabilities=ELICITATION)
        self.without_elicitation = ModernHttp(http)
        self.other_client = None

    # Two retries with one state racing on two connections: exactly one answer
    # is recorded; the other is refused (replayed, or the run's version guard).
    def test_racing_retries_record_one_answer(self):
        driver = ask(self.client, self.ws)
        run_id = driver.run["runId"]
        state = self.input_required(run_id)["requestState"]
        responses = {"clarification": {"action": "accept", "content": {"choice": "greeting-only"}}}
        replies = [None, None]

        def retry(i):
            http = McpHttpClient(self.server)
            try:
                replies[i] = ModernHttp(http, capabilities=ELICITATION).request("tools/call", {
                    "name": "telic_get_next_action", "arguments": {"run_id": run_id},
                    "inputResponses": responses, "requestState": state})
            finally:
                http.close()

        threads = [threading.Thread(target=retry, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        won = [r for r in replies if "result" in r and not r["result"].get("isError")]
        lost = [r for r in replies if r not in won]
        self.assertEqual(len(won), 1, replies)
        loser = lost[0]
        if "error" in loser:
            self.assertEqual(loser["error"]["data"]["reason"], "replayed")
        else:
            self.assertIn(loser["result"]["structuredContent"]["code"], ("conflict", "stale_version"))
        answers = [a for a in self.snapshot(run_id)[1] if a["type"] == "UserMessage"]
        self.assertEqual(len(answers), 2, "the request and exactly one answer")

    def other_workspace(self):
        other = Workspace()
        self.addCleanup(other.close)
        server = HttpServer(other.env())
        self.addCleanup(server.kill)
        http = McpHttpClient(server)
        self.addCleanup(http.close)
        self.other_client = ModernHttp(http)
        return other


if __name__ == "__main__":
    run_tests(sys.argv)
