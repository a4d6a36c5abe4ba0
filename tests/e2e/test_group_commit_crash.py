"""A crash while 16 HTTP writers stream loses no acknowledged write.

`telic serve --http` on SQLite commits concurrent writes in groups (one
transaction and one fsync for every change queued while the previous commit
ran; issue 18 target 4). No writer may be answered before the commit holding
its change is durable. Sixteen clients, each on its own keep-alive connection
and MCP session, send telic_start_run calls back to back; the server is
SIGKILLed at a random moment, restarted on the same ledger, and killed again.
Afterwards every acknowledged run must be in the ledger, complete and
byte-identical, and every run in the ledger must be whole (the checks of
test_crash_durability.py, read with Python's own sqlite3).

The seed is printed; TELIC_CRASH_SEED replays it, TELIC_CRASH_ROUNDS sets the
number of kills (default 4).
"""

# covers TEL-001 TEL-007 TEL-012 TEL-013 TEL-017

import http.client
import os
import random
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_client import HttpError, HttpServer  # noqa: E402
from mcp_client import Workspace, run_tests  # noqa: E402
from test_crash_durability import MODES, check_over_mcp, check_sqlite, make_request  # noqa: E402

WRITERS = 16


class Writer:
    """One HTTP client streaming start_run calls until its connection dies."""

    def __init__(self, server, rng, tag, sent, acked, errors):
        self.server, self.rng, self.tag = server, rng, tag
        self.sent, self.acked, self.errors = sent, acked, errors
        self.acks = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            client = self.server.client()
            client.initialize()
        except (OSError, http.client.HTTPException, HttpError, AssertionError):
            return  # killed before this session began
        n = 0
        while True:
            n += 1
            request = make_request(self.rng, f"{self.tag}-{n}")
            self.sent[request] = self.tag
            try:
                result = client.call("telic_start_run",
                                     {"original_request": request, "mode": self.rng.choice(MODES)})
            except (OSError, http.client.HTTPException, HttpError, ValueError):
                return  # the server died: this call was never acknowledged
            payload = result.get("structuredContent") or {}
            if result.get("isError") or payload.get("ok") is not True:
                self.errors.append(f"start_run failed: {str(result)[:400]}")
                return
            run = payload["run"]
            if run["runId"] in self.acked:
                self.errors.append(f"run id {run['runId']} acknowledged twice")
            self.acked[run["runId"]] = request
            self.acks += 1


class GroupCommitCrashTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        seed = os.environ.get("TELIC_CRASH_SEED")
        self.seed = int(seed) if seed else random.SystemRandom().randrange(2 ** 32)
        self.rounds = int(os.environ.get("TELIC_CRASH_ROUNDS", "4"))
        print(f"\n[{self.id()}] seed={self.seed} rounds={self.rounds} "
              f"(replay with TELIC_CRASH_SEED={self.seed})", flush=True)
        self.rng = random.Random(self.seed)
        self.ledger = os.path.join(self.ws.state, "telic.sqlite3")

    def test_sigkill_while_16_http_writers_stream_loses_no_acknowledged_run(self):
        sent, acked, errors = {}, {}, []
        for index in range(self.rounds):
            server = HttpServer(self.ws.env())
            try:
                writers = [Writer(server, random.Random(self.rng.random()), f"r{index}w{i}", sent, acked, errors)
                           for i in range(WRITERS)]
                for writer in writers:
                    writer.thread.start()
                # Kill mid-stream: after a few answers, then a random 10-150 ms more.
                deadline = time.time() + 60
                while sum(w.acks for w in writers) < WRITERS and time.time() < deadline:
                    time.sleep(0.005)
                self.assertGreaterEqual(sum(w.acks for w in writers), WRITERS, "too few answers within 60 s")
                time.sleep(self.rng.uniform(0.010, 0.150))
                server.kill()  # SIGKILL
                for writer in writers:
                    writer.thread.join(timeout=60)
                    self.assertFalse(writer.thread.is_alive(), "a writer did not stop after the kill")
            finally:
                if server.proc.poll() is None:
                    server.kill()
            self.assertEqual(errors, [])
            # The file as the crash left it, before telic opens it again.
            check_sqlite(self, self.ledger, sent, acked)
        runs = check_sqlite(self, self.ledger, sent, acked)
        check_over_mcp(self, self.ws, runs, acked)
        print(f"  {self.rounds} kills, {len(sent)} calls sent, {len(acked)} acknowledged, "
              f"{len(runs)} runs in the ledger", flush=True)


if __name__ == "__main__":
    run_tests(sys.argv)
