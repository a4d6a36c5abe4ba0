"""Retention and deletion (issue 22 §2): `telic runs delete|prune|deleted`
and `telic serve`'s prune on start, on a SQLite ledger and on PostgreSQL.

Runs are started and cancelled by a real `telic serve` child over MCP; the
CLI then deletes them. A deleted run is gone from every command, its
tombstone keeps the final trace hash it had, a live run needs --force and is
cancelled first (its trace says so), and an ordinary DELETE outside telic
still fails.
"""

import json
import os
import sqlite3
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import psql, require_postgres  # noqa: E402
from mcp_client import Workspace, run_tests, serve, telic_binary  # noqa: E402


class RetentionBase:
    db_args = []

    def setUp(self):
        self.ws = Workspace()

    def tearDown(self):
        self.ws.close()

    def cli(self, *args, expect=0):
        proc = subprocess.run([telic_binary(), *args, *self.db_args], env=self.ws.env(), capture_output=True,
                              timeout=120)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        self.assertEqual(proc.returncode, expect, f"telic {' '.join(args)}: {err}{out[:400]}")
        return out, err

    def start_runs(self, live=0, cancelled=0):
        """Starts runs over MCP; returns (live ids, cancelled ids)."""
        mcp = serve(self.ws, *self.db_args)
        live_ids, cancelled_ids = [], []
        try:
            mcp.initialize()
            for i in range(live + cancelled):
                started = mcp.ok("telic_start_run", {"original_request": f"request {i}", "mode": "report_only"})
                run = started["run"]
                if i < cancelled:
                    mcp.ok("telic_cancel_run", {"run_id": run["runId"], "action_id": started["nextAction"]["id"],
                                                "expected_run_version": run["version"]})
                    cancelled_ids.append(run["runId"])
                else:
                    live_ids.append(run["runId"])
        finally:
            mcp.close()
        return live_ids, cancelled_ids

    def trace(self, run_id):
        out, _ = self.cli("trace", run_id, "--json")
        return json.loads(out)["events"]

    # covers issue 22 §2 (delete, tombstone with the final trace hash, --force cancels first)
    def test_delete_records_a_tombstone_and_force_cancels_a_live_run_first(self):
        live, ended = self.start_runs(live=1, cancelled=2)
        final_hash = self.trace(ended[0])[-1]["hash"]
        out, _ = self.cli("runs", "delete", ended[0], "--json")
        [tombstone] = json.loads(out)["deleted"]
        self.assertEqual(tombstone["runId"], ended[0])
        self.assertEqual(tombstone["finalTraceHash"], final_hash)
        self.assertEqual(tombstone["status"], "cancelled")
        self.assertEqual(tombstone["reason"], "delete")
        self.assertIn("@", tombstone["deletedBy"])
        _, err = self.cli("show", ended[0], expect=1)
        self.assertIn(f"Run not found: {ended[0]}", err)
        self.cli("trace", ended[0], expect=1)
        out, _ = self.cli("runs", "--json")
        self.assertNotIn(ended[0], [run["runId"] for run in json.loads(out)["runs"]])
        self.cli("verify", ended[1])  # the other run is untouched

        before = self.trace(live[0])
        _, err = self.cli("runs", "delete", live[0], ended[1], expect=1)
        self.assertIn("--force", err)
        self.cli("show", ended[1])  # nothing was deleted by the refused call
        out, _ = self.cli("runs", "delete", live[0], "--force", "--json")
        [forced] = json.loads(out)["deleted"]
        self.assertEqual(forced["status"], "cancelled")
        self.assertEqual(forced["traceEvents"], len(before) + 1)
        self.assertNotEqual(forced["finalTraceHash"], before[-1]["hash"])

        out, _ = self.cli("runs", "deleted", "--json")
        self.assertEqual([t["runId"] for t in json.loads(out)["tombstones"]], [live[0], ended[0]])
        out, _ = self.cli("runs", "deleted")
        self.assertIn(ended[0], out)
        self.assertIn(final_hash[:19], out)
        _, err = self.cli("runs", "delete", "no-such-run", expect=1)
        self.assertIn("Run not found: no-such-run", err)

    # covers issue 22 §2 (prune by age, --keep, --dry-run; live runs are never pruned)
    def test_prune_deletes_only_ended_runs_older_than_the_cutoff(self):
        live, ended = self.start_runs(live=1, cancelled=3)
        time.sleep(1.2)
        out, _ = self.cli("runs", "prune", "--older-than", "1s", "--keep", "2", "--dry-run", "--json")
        # The two newest-created runs are kept: the live one and the last cancelled one.
        self.assertEqual(json.loads(out)["wouldDelete"], [ended[1], ended[0]])
        self.cli("show", ended[0])
        out, _ = self.cli("runs", "prune", "--older-than", "1s", "--keep", "2", "--json")
        self.assertEqual(sorted(t["runId"] for t in json.loads(out)["deleted"]), sorted(ended[:2]))
        self.cli("show", live[0])
        self.cli("show", ended[2])
        out, _ = self.cli("runs", "prune", "--older-than", "1h", "--json")
        self.assertEqual(json.loads(out)["deleted"], [])
        _, err = self.cli("runs", "prune", "--older-than", "1s", "--status", "running", expect=2)
        self.assertIn("running", err)
        _, err = self.cli("runs", "prune", "--older-than", "yesterday", expect=1)
        self.assertIn("invalid duration", err)


class SqliteRetentionTest(RetentionBase, unittest.TestCase):
    def ledger(self):
        return os.path.join(self.ws.state, "telic.sqlite3")

    # covers issue 22 §2 (the append-only guards hold outside `telic runs delete`)
    def test_an_ordinary_delete_still_fails(self):
        _, ended = self.start_runs(cancelled=2)
        self.cli("runs", "delete", ended[1])  # a tombstone to try deleting
        db = sqlite3.connect(self.ledger())
        try:
            for sql in ("DELETE FROM trace_events", "DELETE FROM artifacts", "DELETE FROM runs",
                        "UPDATE artifacts SET body = '{}'", "DELETE FROM run_tombstones"):
                with self.assertRaises(sqlite3.DatabaseError, msg=sql):
                    db.execute(sql)
                db.rollback()
            self.assertEqual(db.execute("PRAGMA auto_vacuum").fetchone()[0], 2, "new ledgers are incremental")
        finally:
            db.close()
        self.cli("verify", ended[0])

    # covers issue 22 §2 (retention in the state directory's config.json, applied by telic serve on start)
    def test_serve_prunes_on_start_from_the_state_config(self):
        live, ended = self.start_runs(live=1, cancelled=2)
        time.sleep(1.2)
        config = os.path.join(self.ws.state, "config.json")
        with open(config, "w") as handle:
            json.dump({"retention": {"olderThan": "1s", "keep": 1, "bogus": 1}}, handle)
        proc = subprocess.run([telic_binary(), "serve"], env=self.ws.env(), input=b"", capture_output=True, timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("config.json: /retention/bogus: unknown key", proc.stderr.decode())
        self.cli("show", ended[0])  # nothing pruned with a config it cannot read
        with open(config, "w") as handle:
            json.dump({"retention": {"olderThan": "1s", "statuses": ["cancelled"]}}, handle)
        mcp = serve(self.ws)
        try:
            mcp.wait_for_stderr("retention (config.json) deleted 2 runs")
            mcp.initialize()
        finally:
            mcp.close()
        self.cli("show", live[0])
        out, _ = self.cli("runs", "deleted", "--json")
        tombstones = json.loads(out)["tombstones"]
        self.assertEqual(sorted(t["runId"] for t in tombstones), sorted(ended))
        self.assertEqual({(t["reason"], t["deletedBy"]) for t in tombstones}, {("retention", "telic serve")})


class PostgresRetentionTest(RetentionBase, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.url = require_postgres(self).new_database_url()
        self.db_args = ["--db", self.url]

    # covers issue 22 §2 (the append-only guards hold outside `telic runs delete`)
    def test_an_ordinary_delete_still_fails(self):
        _, ended = self.start_runs(cancelled=2)
        self.cli("runs", "delete", ended[1])  # a tombstone to try deleting
        for sql in ("DELETE FROM trace_events", "DELETE FROM artifacts", "DELETE FROM runs", "DELETE FROM blobs",
                    "DELETE FROM run_tombstones"):
            with self.assertRaises(subprocess.CalledProcessError, msg=sql):
                psql(self.url, sql)
        self.cli("verify", ended[0])


if __name__ == "__main__":
    run_tests(sys.argv)
