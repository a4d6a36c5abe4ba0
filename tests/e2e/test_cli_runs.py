"""`telic runs` on a ledger with more runs than one page (issue 21 item 3).

One `telic serve` child starts 130 runs in two modes and cancels some of them;
the CLI then lists them a page at a time (`--before`, the printed `next:`
command), all at once (`--all`), and filtered (`--status`, `--mode`), as a
table and as JSON. telic_list_runs keeps its contract (limit 1..100, newest
updated first).
"""

import json
import os
import shlex
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402

RUNS = 130


class RunsPagingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = Workspace()
        mcp = serve(cls.ws)
        try:
            mcp.initialize()
            cls.started = []  # oldest first
            cls.cancelled = set()
            for i in range(RUNS):
                mode = "analyze_and_fix" if i % 3 == 0 else "report_only"
                started = mcp.ok("telic_start_run", {"original_request": f"request {i}", "mode": mode})
                run = started["run"]
                cls.started.append((run["createdAt"], run["runId"], mode))
                if i % 10 == 0:
                    mcp.ok("telic_cancel_run", {"run_id": run["runId"], "action_id": started["nextAction"]["id"],
                                                "expected_run_version": run["version"]})
                    cls.cancelled.add(run["runId"])
            cls.list_runs = mcp.call("telic_list_runs", {"limit": 101})
            cls.list_runs_100 = mcp.ok("telic_list_runs", {"limit": 100})
        finally:
            mcp.close()

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def cli(self, *args, expect=0):
        proc = subprocess.run([telic_binary(), *args], env=self.ws.env(), capture_output=True, timeout=60)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        self.assertEqual(proc.returncode, expect, f"telic {' '.join(args)}: {err}{out[:400]}")
        return out, err

    def json_pages(self, *args):
        """Follows nextCursor from the first page; (run ids, number of pages)."""
        ids, pages, before = [], 0, []
        while True:
            out, _ = self.cli("runs", "--json", *args, *before)
            page = json.loads(out)
            pages += 1
            ids += [run["runId"] for run in page["runs"]]
            if page["nextCursor"] is None:
                return ids, pages
            self.assertEqual(page["nextCursor"], ids[-1])
            before = ["--before", page["nextCursor"]]

    def newest_first(self, keep=lambda run_id, mode: True):
        """The promised order: createdAt descending, then runId ascending
        (two runs can be created within one millisecond)."""
        runs = sorted(self.started, key=lambda run: run[1])
        runs.sort(key=lambda run: run[0], reverse=True)
        return [run_id for _, run_id, mode in runs if keep(run_id, mode)]

    def test_json_pages_list_every_run_once_newest_created_first(self):
        ids, pages = self.json_pages("--limit", "50")
        self.assertEqual(pages, 3)
        self.assertEqual(ids, self.newest_first())

    def test_all_lists_every_run_in_one_document(self):
        out, _ = self.cli("runs", "--all", "--json")
        page = json.loads(out)
        self.assertIsNone(page["nextCursor"])
        self.assertEqual([run["runId"] for run in page["runs"]], self.newest_first())
        self.assertEqual(set(page["runs"][0]), set(self.list_runs_100["runs"][0]),
                         "the CLI's rows are telic_list_runs' RunSummary")
        table, _ = self.cli("runs", "--all")
        lines = table.splitlines()
        self.assertTrue(lines[0].startswith("RUN"))
        self.assertEqual(len(lines), RUNS + 2)  # header, rule, one line per run
        self.assertNotIn("next:", table)

    def test_the_printed_next_command_lists_the_following_page(self):
        seen, args, pages = [], ["runs", "--status", "running", "--limit", "40"], 0
        while True:
            out, _ = self.cli(*args)
            pages += 1
            lines = out.splitlines()
            next_lines = [line for line in lines if line.startswith("next: ")]
            rows = [line for line in lines[2:] if not line.startswith("next: ")]
            seen += [row.split()[0] for row in rows]
            for row in rows:
                self.assertEqual(row.split()[3], "running")
            if not next_lines:
                break
            command = shlex.split(next_lines[0][len("next: "):])
            self.assertEqual(command[0], "telic")
            args = command[1:]
            self.assertIn("--status", args, "the next command keeps the filters")
        self.assertEqual(seen, self.newest_first(lambda run_id, mode: run_id not in self.cancelled))
        self.assertEqual(pages, 3)

    def test_filters_by_status_and_mode(self):
        ids, _ = self.json_pages("--status", "cancelled", "--limit", "5")
        self.assertEqual(ids, self.newest_first(lambda run_id, mode: run_id in self.cancelled))
        ids, _ = self.json_pages("--mode", "analyze_and_fix", "--limit", "7")
        self.assertEqual(ids, self.newest_first(lambda run_id, mode: mode == "analyze_and_fix"))
        ids, _ = self.json_pages("--mode", "report_only", "--status", "cancelled")
        self.assertEqual(ids, self.newest_first(
            lambda run_id, mode: mode == "report_only" and run_id in self.cancelled))
        out, _ = self.cli("runs", "--json", "--mode", "fix_only")
        self.assertEqual(json.loads(out), {"nextCursor": None, "runs": []})

    def test_bad_arguments_are_refused_with_a_reason(self):
        _, err = self.cli("runs", "--before", "run_does_not_exist", expect=1)
        self.assertIn("Unknown cursor run_does_not_exist", err)
        _, err = self.cli("runs", "--limit", "101", expect=2)
        self.assertIn("--limit", err)
        _, err = self.cli("runs", "--status", "finished", expect=2)
        self.assertIn("--status", err)
        _, err = self.cli("runs", "--mode", "yolo", expect=2)
        self.assertIn("--mode", err)
        _, err = self.cli("runs", "--all", "--limit", "5", expect=2)
        self.assertIn("excludes", err)

    def test_telic_list_runs_keeps_its_contract(self):
        self.assertTrue(self.list_runs.get("isError"), "limit 101 is refused as before")
        runs = self.list_runs_100["runs"]
        self.assertEqual(len(runs), 100)
        updated = [run["updatedAt"] for run in runs]
        self.assertEqual(updated, sorted(updated, reverse=True), "newest updated first")


if __name__ == "__main__":
    run_tests(sys.argv)
