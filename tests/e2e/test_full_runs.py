"""Complete runs over real stdio MCP, driven like a host (issue 5)."""

import json
import sys

from mcp_client import Workspace, run_tests, serve
import scenario as sc
import unittest


class FullRunTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.server = serve(self.ws)
        self.scenario = sc.load("analyze_and_fix")
        self.driver = sc.Driver(self.server, self.scenario, self.ws.repo)
        self.driver.write_repository()

    def tearDown(self):
        self.server.close()
        self.ws.close()

    # covers TEL-001 TEL-004 TEL-008 TEL-198 TEL-210 TEL-211 TEL-215 TEL-216 TEL-219 TEL-222 TEL-223 TEL-224 TEL-225 TEL-227 TEL-228: the seed's analyze_and_fix flow end to end.
    def test_analyze_and_fix_completes_through_every_phase(self):
        d = self.driver
        d.start()
        self.assertEqual(d.run["topology"], "forensic")
        phases = [d.action["phase"]]
        for step in self.scenario["steps"]:
            d.do(step)
            if phases[-1] != d.action["phase"]:
                phases.append(d.action["phase"])
        self.assertEqual(phases, ["context_discovery", "agent_1_frame", "agent_2_compile", "agent_1_review",
                                  "agent_3_plan", "agent_4_execute", "agent_3_quality_review", "agent_3_plan",
                                  "agent_4_execute", "agent_3_quality_review", "agent_3_evidence_reverify",
                                  "agent_5_release_audit", "user_report", "completed"])
        self.assertEqual(d.run["status"], "completed")
        self.assertEqual(d.action["kind"], "terminal")
        self.assertEqual(d.action["reportRef"], f"artifact://{d.run['runId']}/user-report-01")
        replay = self.server.ok("telic_replay_run", {"run_id": d.run["runId"]})["report"]
        self.assertTrue(replay["stateCheck"]["consistent"], replay["stateCheck"])
        trace = self.server.ok("telic_get_trace", {"run_id": d.run["runId"], "limit": 500})["events"]
        types = [e["eventType"] for e in trace]
        self.assertIn("permission_checked", types)
        self.assertEqual([e["sequence"] for e in trace], list(range(1, len(trace) + 1)))


if __name__ == "__main__":
    run_tests(sys.argv)
