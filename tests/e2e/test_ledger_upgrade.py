"""End-to-end: a ledger written by an earlier telic opens in this one.

tests/fixtures/ledgers/ holds a SQLite ledger and a PostgreSQL dump written
by main at the commit manifest.json names (write_ledgers.py there says how).
This telic must migrate each forward on open and then read the same facts
back: every run verifies (artifact digests and the trace hash chain), the
completed run replays to the same state, run statuses and task states are as
written, and the migrated ledger takes a new complete run. Run as
`python3 test_ledger_upgrade.py <telic>`."""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_client import require_postgres  # noqa: E402
from mcp_client import Workspace, run_tests, telic_binary  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ledgers")
with open(os.path.join(FIXTURES, "manifest.json")) as manifest_file:
    MANIFEST = json.load(manifest_file)


class LedgerUpgradeMixin:
    """Subclasses set self.db (a ledger holding the fixture) and self.facts."""

    def cli(self, *args, timeout=300):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TELIC_") or k == "TELIC_BIN"}
        proc = subprocess.run([telic_binary(), *args, "--db", self.db], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=self.ws.base)
        self.assertEqual(proc.returncode, 0, f"telic {' '.join(args)}: {proc.stderr}{proc.stdout[-2000:]}")
        return proc.stdout

    def statuses(self):
        return {r["runId"]: r["status"] for r in json.loads(self.cli("runs", "--json"))["runs"]}

    def check_the_written_facts(self):
        statuses = self.statuses()
        self.assertEqual(statuses.get(self.facts["completed_run"]), "completed")
        self.assertEqual(statuses.get(self.facts["cancelled_run"]), "cancelled")
        for run_id in statuses:
            self.cli("verify", run_id)
        self.cli("replay", self.facts["completed_run"])
        self.assertIn("release_auditor", self.cli("show", self.facts["completed_run"]) +
                      self.cli("trace", self.facts["completed_run"]))
        tasks = {t["taskId"]: t["state"] for t in json.loads(self.cli("tasks", "--json"))["tasks"]}
        self.assertEqual(tasks, self.facts["tasks"])
        return statuses

    # covers issue 41 (the ledger format migrates forward)
    def test_a_ledger_written_by_main_opens_verifies_and_takes_a_new_run(self):
        before = self.check_the_written_facts()
        self.cli("demo", "--workdir", os.path.join(self.ws.base, "demo"))
        after = self.check_the_written_facts()
        new_runs = set(after) - set(before)
        self.assertEqual(len(new_runs), 1, after)
        self.assertEqual(after[new_runs.pop()], "completed")


class SqliteLedgerUpgradeTest(LedgerUpgradeMixin, unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        # Its own folder: a ledger's folder is a state directory, which grounding never reads.
        os.makedirs(os.path.join(self.ws.base, "ledger"))
        self.db = os.path.join(self.ws.base, "ledger", "main.sqlite3")
        shutil.copyfile(os.path.join(FIXTURES, "main.sqlite3"), self.db)
        self.facts = MANIFEST["sqlite"]

    # covers issue 41 item 1 (D-S28), TEL-255, TEL-256, TEL-013, TEL-007: schema 8
    # rebuilt the tables in place, every body byte for byte under its hash.
    # Read with Python's sqlite3 as a second opinion: no blobs table is left,
    # every artifact carries the body its sha256 names, the foreign keys and
    # the file are whole, and the append-only guards are back.
    def test_schema_8_moved_every_body_into_its_artifact(self):
        self.check_the_written_facts()
        db = sqlite3.connect(self.db)
        try:
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
            self.assertEqual(db.execute("PRAGMA foreign_key_check").fetchall(), [])
            self.assertEqual(db.execute("SELECT value FROM telic_meta WHERE key = 'schema_version'").fetchone(), ("8",))
            self.assertIsNone(db.execute("SELECT name FROM sqlite_master WHERE name = 'blobs'").fetchone())
            rows = db.execute("SELECT sha256, CAST(body AS BLOB) FROM artifacts").fetchall()
            self.assertGreater(len(rows), 10)
            for sha, body in rows:
                self.assertEqual("sha256:" + hashlib.sha256(body).hexdigest(), sha)
            for sql in ("UPDATE artifacts SET body = '{}'", "DELETE FROM artifacts", "DELETE FROM trace_events",
                        "DELETE FROM runs"):
                with self.assertRaises(sqlite3.DatabaseError, msg=sql):
                    db.execute(sql)
                db.rollback()
        finally:
            db.close()


    # covers issue 41 item 1 (D-S28), TEL-013: a pre-8 ledger read from disk is
    # untrusted. One artifact's blob is missing and another's was replaced by
    # a hostile body (4,000-deep nesting, 2 MB, an escape sequence). Schema 8
    # keeps both artifact rows (an inner join would drop the first, a NOT NULL
    # body would refuse the whole ledger), and each reads as data_loss; the
    # error shows no raw control character and the other run still verifies.
    def test_a_tampered_pre_8_ledger_migrates_and_shows_its_damage(self):
        run = self.facts["cancelled_run"]
        db = sqlite3.connect(self.db)
        rows = db.execute("SELECT artifact_id, sha256 FROM artifacts WHERE run_id = ? ORDER BY seq", (run,)).fetchall()
        self.assertEqual(len(rows), 2)
        (missing_id, missing_sha), (forged_id, forged_sha) = rows
        for sha in (missing_sha, forged_sha):
            self.assertEqual(db.execute("SELECT count(*) FROM artifacts WHERE sha256 = ?", (sha,)).fetchone(), (1,))
        hostile = "[" * 4000 + '"\x1b[31m' + "x" * 2_000_000 + '"' + "]" * 4000
        db.executescript("DROP TRIGGER blobs_append_only; DROP TRIGGER blobs_immutable;")
        db.execute("DELETE FROM blobs WHERE sha256 = ?", (missing_sha,))
        db.execute("UPDATE blobs SET body = ? WHERE sha256 = ?", (hostile, forged_sha))
        db.commit()
        db.close()
        self.cli("verify", self.facts["completed_run"])
        env = {k: v for k, v in os.environ.items() if not k.startswith("TELIC_") or k == "TELIC_BIN"}
        proc = subprocess.run([telic_binary(), "verify", run, "--db", self.db], capture_output=True, text=True,
                              timeout=300, env=env, cwd=self.ws.base)
        self.assertNotEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("\x1b", proc.stdout + proc.stderr)
        self.assertLess(len(proc.stdout + proc.stderr), 20_000)
        db = sqlite3.connect(self.db)
        try:
            kept = dict(db.execute("SELECT artifact_id, body IS NULL FROM artifacts WHERE run_id = ?", (run,)).fetchall())
        finally:
            db.close()
        self.assertEqual(kept, {missing_id: 1, forged_id: 0}, "both artifact rows survive the migration")
        self.assertIn(run, self.statuses())


class PostgresLedgerUpgradeTest(LedgerUpgradeMixin, unittest.TestCase):
    def setUp(self):
        pg = require_postgres(self)
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        schema = "upgrade_" + os.urandom(6).hex()
        with open(os.path.join(FIXTURES, "main.pg.sql")) as dump:
            sql = dump.read().replace(MANIFEST["postgres_schema"], schema)
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", pg.url], input=sql, text=True,
                       check=True, stdout=subprocess.DEVNULL)
        separator = "&" if "?" in pg.url else "?"
        self.db = f"{pg.url}{separator}options=-csearch_path%3D{schema}"
        self.facts = MANIFEST["postgres"]


if __name__ == "__main__":
    run_tests(sys.argv)
