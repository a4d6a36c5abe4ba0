"""A crash at any moment loses no acknowledged write.

A client streams telic_start_run calls at a `telic serve` child without waiting
for answers and SIGKILLs the server at random moments, then restarts it on the
same state directory. Every run whose start_run response was received must
still be there, complete and unchanged. Every run in the ledger, acknowledged
or not, must be whole: both artifacts and both trace events, never a part.

The seed is printed. Set TELIC_CRASH_SEED to replay a run and
TELIC_CRASH_ROUNDS to change how many kills happen.
"""

# covers TEL-001 TEL-007 TEL-012 TEL-013 TEL-017 TEL-021 TEL-256

import hashlib
import json
import os
import queue
import random
import sqlite3
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_client import McpProcess, Workspace, run_tests, telic_binary  # noqa: E402

MODES = ["report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix"]

# Fragments that are hard to carry byte for byte.
FRAGMENTS = [
    "plain ascii",
    'double "quotes" and \'single\' quotes',
    "back\\slash \\n not-a-newline \\u0041",
    "line one\nline two\n",
    "windows\r\nline\r\n",
    "\ttabs\tand  double  spaces  ",
    "snowman \u2603, accents \u00e9\u00e8\u00ea, CJK \u4e2d\u6587\u5b57",
    "emoji \U0001F600\U0001F680 and ZWJ \U0001F469\u200d\U0001F4BB",
    "combining e\u0301 and RTL \u05e9\u05dc\u05d5\u05dd \u202eevil\u202c",
    '{"json": ["looking", 1, null], "x": "}"}',
    "control \u0001\u001f and DEL \u007f and NBSP\u00a0",
    "NUL \u0000 in the middle",
    "surrogate-pair math \U0001D400\U0001D401 and BOM \ufeff",
    "</script><!-- -->; DROP TABLE runs; --",
    "fix the bug in src/app.ts and run the tests",
]


def make_request(rng, tag):
    """A unique original_request mixing awkward fragments; `tag` makes it unique."""
    parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.15:
        parts.append("long " + "\u00e9x\"\n" * rng.randint(200, 2000))
    parts.insert(rng.randint(0, len(parts)), f"[{tag}]")
    return rng.choice(["", " ", "\n"]).join(parts)


class Stream:
    """One server life: a writer thread sends start_run calls without waiting,
    a reader thread records every complete response it gets back."""

    def __init__(self, test, mcp, rng, tag, sent, acked, first_id):
        self.test = test
        self.mcp = mcp
        self.rng = random.Random(rng.random())  # own generator: the writer thread uses it
        self.tag = tag
        self.sent = sent  # request text -> message id (shared across lives)
        self.acked = acked  # run id -> request text (shared across lives)
        self.next_id = first_id
        self.pending = {}  # message id -> request text
        self.lock = threading.Lock()
        self.first_ack = threading.Event()
        self.stop = threading.Event()
        self.errors = []
        self.acks = 0
        self.writer = threading.Thread(target=self._write, daemon=True)
        self.reader = threading.Thread(target=self._read, daemon=True)

    def start(self):
        self.reader.start()
        self.writer.start()

    def _write(self):
        n = 0
        while not self.stop.is_set():
            n += 1
            request = make_request(self.rng, f"{self.tag}-{n}")
            msg_id = self.next_id
            self.next_id += 1
            args = {"original_request": request, "mode": self.rng.choice(MODES)}
            if self.rng.random() < 0.3:
                args["host_name"] = "crash-host \u2603"
            message = {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                       "params": {"name": "telic_start_run", "arguments": args}}
            data = (json.dumps(message, ensure_ascii=self.rng.random() < 0.5) + "\n").encode("utf-8")
            with self.lock:
                self.pending[msg_id] = request
                self.sent[request] = msg_id
            try:
                self.mcp.send_raw(data)
            except (BrokenPipeError, OSError, ValueError):
                return

    def _read(self):
        while True:
            try:
                line = self.mcp.lines.get(timeout=60)
            except queue.Empty:
                self.errors.append("no output from the server for 60 s")
                return
            if line is None:
                return
            if not line.endswith("\n"):
                return  # a response cut short by the kill was never received
            try:
                reply = json.loads(line)
            except ValueError as error:
                self.errors.append(f"unparsable complete line: {error}: {line[:200]!r}")
                continue
            with self.lock:
                request = self.pending.pop(reply.get("id"), None)
            if request is None:
                self.errors.append(f"reply to an unknown id: {line[:200]!r}")
                continue
            result = reply.get("result") or {}
            payload = result.get("structuredContent") or {}
            if result.get("isError") or payload.get("ok") is not True:
                self.errors.append(f"start_run failed: {line[:400]!r}")
                continue
            run = payload["run"]
            if run["runId"] in self.acked:
                self.errors.append(f"run id {run['runId']} acknowledged twice")
            if run.get("version") != 1 or run.get("status") != "running":
                self.errors.append(f"fresh run is not running at version 1: {run}")
            self.acked[run["runId"]] = request
            self.acks += 1
            self.first_ack.set()

    def join(self):
        self.stop.set()
        self.writer.join(timeout=30)
        self.reader.join(timeout=30)
        self.test.assertFalse(self.writer.is_alive() or self.reader.is_alive(), "stream threads did not finish")
        self.test.assertEqual(self.errors, [])


def start_server(ws, wait_ready=True):
    return McpProcess([telic_binary(), "serve"], ws.env(), wait_ready=wait_ready)


def canonical_json(value):
    """telic's canonical JSON (sorted keys, no spaces, JSON.stringify escaping)
    for the plain values a trace event holds."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def trace_hash(row):
    """Recomputes a trace event's chained hash from its stored columns."""
    (run_id, seq, kind, prev, _, event_id, timestamp, actor, phase,
     input_refs, output_refs, decision, summary, budget) = row
    record = {"eventId": event_id, "runId": run_id, "sequence": seq, "timestamp": timestamp, "actor": actor,
              "phase": phase, "eventType": kind, "inputRefs": json.loads(input_refs),
              "outputRefs": json.loads(output_refs),
              "permissionDecision": json.loads(decision) if decision is not None else None,
              "summary": summary, "budgetSnapshot": json.loads(budget), "prevHash": prev}
    return "sha256:" + hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def check_sqlite(test, ledger, sent, acked):
    """Checks the ledger file directly with SQLite, as a second opinion
    independent of telic's own reading code."""
    db = sqlite3.connect(ledger, timeout=30)
    try:
        test.assertEqual(db.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
        test.assertEqual(db.execute("PRAGMA foreign_key_check").fetchall(), [])
        runs = {row[0]: row[1:] for row in
                db.execute("SELECT run_id, status, phase, version, schema_version FROM runs")}
        artifacts = {}
        # Each artifact row carries its body (schema 8); its sha256 must match it.
        for run_id, artifact_id, kind, sha, body in db.execute(
                "SELECT run_id, artifact_id, type, sha256, CAST(body AS BLOB) FROM artifacts ORDER BY seq"):
            test.assertIsNotNone(body, f"artifact {artifact_id} has no body")
            test.assertEqual("sha256:" + hashlib.sha256(body).hexdigest(), sha, "an artifact's hash does not match its body")
            artifacts.setdefault(run_id, []).append((artifact_id, kind, json.loads(body.decode("utf-8"))))
        events = {}
        for row in db.execute(
                "SELECT run_id, sequence, event_type, prev_hash, hash, event_id, timestamp, actor, phase, "
                "input_refs_json, output_refs_json, permission_decision_json, summary, budget_snapshot_json "
                "FROM trace_events ORDER BY run_id, sequence"):
            run_id, seq, kind, prev, digest = row[:5]
            test.assertEqual(trace_hash(row), digest, f"trace event {run_id}/{seq} does not match its hash")
            events.setdefault(run_id, []).append((seq, kind, prev, digest))
        test.assertLessEqual(set(artifacts) | set(events), set(runs), "artifacts or events without a run")
        contents = {}
        for run_id, (status, phase, version, schema_version) in runs.items():
            test.assertEqual((status, phase, version, schema_version), ("running", "context_grounding", 1, "1.0"))
            kinds = sorted(kind for _, kind, _ in artifacts.get(run_id, []))
            test.assertEqual(kinds, ["RunEnvelope", "UserMessage"], f"run {run_id} is half-written")
            trail = events.get(run_id, [])
            test.assertEqual([(seq, kind) for seq, kind, _, _ in trail],
                             [(1, "run_started"), (2, "topology_classified")], f"run {run_id} trace is incomplete")
            test.assertEqual(trail[0][2], "")
            test.assertEqual(trail[1][2], trail[0][3], "trace events do not chain")
            by_kind = {kind: (artifact_id, body) for artifact_id, kind, body in artifacts[run_id]}
            message_id, message = by_kind["UserMessage"]
            envelope_id, envelope = by_kind["RunEnvelope"]
            test.assertEqual(envelope_id, run_id)
            test.assertEqual(envelope["originalRequestRef"], f"artifact://{run_id}/{message_id}")
            test.assertEqual((message["id"], message["runId"]), (message_id, run_id))
            content = message["content"]
            # No phantom runs: each run is one of the requests the client sent, once.
            test.assertIn(content, sent, f"run {run_id} holds a request nobody sent")
            test.assertNotIn(content, contents, f"request stored twice: {run_id} and {contents.get(content)}")
            contents[content] = run_id
        for run_id, request in acked.items():
            test.assertIn(run_id, runs, f"acknowledged run {run_id} was lost")
            test.assertEqual(contents.get(request), run_id)
        return runs
    finally:
        db.close()


def check_over_mcp(test, ws, runs, acked):
    """Reads every run back through a fresh server; acknowledged runs must keep
    the exact request, and every artifact must pass the digest check on read."""
    mcp = start_server(ws)
    try:
        mcp.initialize()
        for run_id in sorted(runs):
            detail = mcp.ok("telic_get_run", {"run_id": run_id})
            test.assertEqual((detail["run"]["status"], detail["run"]["version"]), ("running", 1))
            kinds = {meta["type"]: meta for meta in detail["artifacts"]}
            test.assertEqual(sorted(kinds), ["RunEnvelope", "UserMessage"])
            message = mcp.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": kinds["UserMessage"]["id"]})
            envelope = mcp.ok("telic_get_artifact", {"run_id": run_id, "artifact_id": run_id})
            test.assertEqual(envelope["artifact"]["type"], "RunEnvelope")
            test.assertEqual(envelope["artifact"]["body"]["originalRequestRef"],
                             f"artifact://{run_id}/{kinds['UserMessage']['id']}")
            for stored in (message["artifact"], envelope["artifact"]):
                test.assertEqual(stored["sha256"], kinds[stored["type"]]["sha256"])
            if run_id in acked:
                content = message["artifact"]["body"]["content"]
                test.assertEqual(content.encode("utf-8", "surrogatepass"),
                                 acked[run_id].encode("utf-8", "surrogatepass"),
                                 f"run {run_id}: request not byte-identical")
            trace = mcp.ok("telic_get_trace", {"run_id": run_id})
            test.assertEqual([(e["sequence"], e["eventType"]) for e in trace["events"]],
                             [(1, "run_started"), (2, "topology_classified")])
            test.assertFalse(trace["hasMore"])
        test.assertEqual(mcp.close(), 0)
    finally:
        if mcp.proc.poll() is None:
            mcp.kill()


class CrashDurabilityTest(unittest.TestCase):
    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.close)
        seed = os.environ.get("TELIC_CRASH_SEED")
        self.seed = int(seed) if seed else random.SystemRandom().randrange(2 ** 32)
        self.rounds = int(os.environ.get("TELIC_CRASH_ROUNDS", "8"))
        print(f"\n[{self.id()}] seed={self.seed} rounds={self.rounds} "
              f"(replay with TELIC_CRASH_SEED={self.seed})", flush=True)
        self.rng = random.Random(self.seed)
        self.sent = {}
        self.acked = {}
        self.kills = 0
        self.ledger = os.path.join(self.ws.state, "telic.sqlite3")
        self.reader_counts = None  # set while CLI readers run alongside
        self.kills_during_reads = 0

    def killed(self):
        self.kills += 1
        if self.reader_counts and self.reader_counts["active"]:
            self.kills_during_reads += 1

    def crash_round(self, index, max_delay=0.060):
        """Starts a server, streams calls, SIGKILLs it at a random moment."""
        rng = self.rng
        if index > 0 and rng.random() < 0.2:
            # A crash while the server is still opening and migrating the ledger.
            mcp = start_server(self.ws, wait_ready=False)
            time.sleep(rng.uniform(0, 0.015))
            mcp.kill()
            self.killed()
        mcp = start_server(self.ws)
        try:
            mcp.initialize()
            stream = Stream(self, mcp, rng, f"r{index}", self.sent, self.acked, first_id=1000)
            delay = rng.uniform(0.005, max_delay)
            stream.start()
            # Anchor on the first answer so every round kills mid-stream, not
            # before the first write; then wait a random 5-60 ms more.
            self.assertTrue(stream.first_ack.wait(60), "no start_run answer within 60 s")
            time.sleep(delay)
            mcp.proc.kill()  # SIGKILL: no chance to flush or close anything
            mcp.proc.wait()
            self.killed()
            stream.join()
            return stream.acks
        finally:
            if mcp.proc.poll() is None:
                mcp.kill()

    def final_check(self):
        self.assertGreater(len(self.acked), 0)
        runs = check_sqlite(self, self.ledger, self.sent, self.acked)
        check_over_mcp(self, self.ws, runs, self.acked)
        # The ledger is still healthy after a clean shutdown, too.
        check_sqlite(self, self.ledger, self.sent, self.acked)
        print(f"  {self.kills} kills, {len(self.sent)} calls sent, {len(self.acked)} acknowledged, "
              f"{len(runs)} runs in the ledger", flush=True)
        return runs

    def test_sigkill_mid_stream_loses_no_acknowledged_run(self):
        started = time.time()
        for index in range(self.rounds):
            self.crash_round(index)
            if self.rng.random() < 0.5:
                # Look at the file exactly as the crash left it, before telic recovers it.
                check_sqlite(self, self.ledger, self.sent, self.acked)
        # Last: kill right after an answer arrives, the tightest window there is.
        mcp = start_server(self.ws)
        try:
            mcp.initialize()
            request = make_request(self.rng, "last") + " \u2603\n\"end\""
            self.sent[request] = -1
            payload = mcp.ok("telic_start_run", {"original_request": request, "mode": "fix_only"})
            mcp.proc.kill()
            mcp.proc.wait()
            self.killed()
            self.acked[payload["run"]["runId"]] = request
        finally:
            if mcp.proc.poll() is None:
                mcp.kill()
        self.final_check()
        print(f"  took {time.time() - started:.1f} s", flush=True)

    def test_sigkill_while_another_process_reads(self):
        started = time.time()
        env = self.ws.env()
        failures = []
        counts = {"runs": 0, "verify": 0, "active": 0}
        stop = threading.Event()
        reader_rng = random.Random(self.rng.random())
        lock = threading.Lock()

        def cli(*args):
            with lock:
                counts["active"] += 1
            try:
                proc = subprocess.run([telic_binary(), *args, "--json"], env=env, capture_output=True, timeout=60)
            finally:
                with lock:
                    counts["active"] -= 1
            return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")

        def verify(run_id):
            rc, out, err = cli("verify", run_id)
            counts["verify"] += 1
            try:
                report = json.loads(out)
            except ValueError:
                report = None
            if rc != 0 or not report or report.get("ok") is not True or report.get("problems") != [] \
                    or (report.get("artifacts"), report.get("artifactsVerified"), report.get("traceEvents")) != (2, 2, 2):
                failures.append(f"verify {run_id}: rc={rc} out={out[:400]!r} err={err[:400]!r}")

        def read_loop():
            while not stop.is_set():
                rc, out, err = cli("runs", "--limit", "100")
                counts["runs"] += 1
                try:
                    listed = json.loads(out)["runs"]
                except (ValueError, KeyError, TypeError):
                    listed = None
                if rc != 0 or listed is None:
                    failures.append(f"runs: rc={rc} out={out[:400]!r} err={err[:400]!r}")
                    continue
                for run in listed:
                    if (run.get("status"), run.get("version")) != ("running", 1):
                        failures.append(f"runs lists a run in a strange state: {run}")
                if listed:
                    verify(listed[0]["runId"])  # the newest: committed, maybe never acknowledged
                known = list(self.acked)  # one C-level copy; the stream reader adds to it
                if known:
                    verify(reader_rng.choice(known))

        # The ledger must exist before the readers start (else "No Telic ledger exists").
        first = start_server(self.ws)
        first.initialize()
        first.close()
        readers = [threading.Thread(target=read_loop, daemon=True) for _ in range(2)]
        self.reader_counts = counts
        for reader in readers:
            reader.start()
        try:
            for index in range(self.rounds):
                self.crash_round(index, max_delay=0.120)
        finally:
            stop.set()
            for reader in readers:
                reader.join(timeout=120)
        self.assertEqual(failures, [])
        self.assertGreater(counts["runs"], 0)
        runs = self.final_check()
        # check_sqlite already re-hashed every blob and trace event; a sample
        # through the CLI keeps the test short (each call is a process start).
        for run_id in reader_rng.sample(sorted(self.acked), min(12, len(self.acked))):
            verify(run_id)
        self.assertEqual(failures, [])
        print(f"  readers: {counts['runs']} runs listings, {counts['verify']} verifies, {len(runs)} runs, "
              f"{self.kills_during_reads} of {self.kills} kills while a reader process was running; "
              f"took {time.time() - started:.1f} s", flush=True)


if __name__ == "__main__":
    run_tests(sys.argv)
