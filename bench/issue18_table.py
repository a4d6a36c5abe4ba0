#!/usr/bin/env python3
"""Issue 18's stdio table in one run: telic, the floor and (when given) the
reference server, measured interleaved (rounds of telic / floor / reference
/ SQLite commit, so machine load hits all of them alike), with the ratios the
issue's targets are stated in.

Usage: bench/issue18_table.py TELIC_BINARY [N] [ROUNDS]
  REFERENCE_NODE=/path/node REFERENCE_SERVER=/path/dist/mcp/server.js to add
  the reference. Prints `uptime` before and after: rerun when the load is high.

Rows:
  reads      telic_get_run, telic_get_next_action: p50/p99; "added" is p50
             above the floor, the floor answering with a message of the same
             size and shape (the response telic gave, replayed by
             bench/echo_floor.py with FLOOR_REPLIES). Target 1: telic added
             <= 0.10 x reference added; telic p99 <= 0.25 x reference p99.
  writes     telic_start_run p50 against floor (small reply) + one fsync'd
             SQLite commit (python sqlite3, WAL, synchronous=FULL, one
             512-byte row per transaction) measured in the same rounds.
             Target 2: <= 1.3x. fsync/fdatasync per call: strace -f -ttt
             over a separate N-call run, counting those made while the calls
             ran (skipped without strace). The same strace counts the WAL
             pages telic's commit writes (P); an information row then sets
             telic against the floor of its own design: the floor replying
             with telic's start_run result (same size) + a commit writing P
             pages, measured in the same rounds.
  submission telic_submit_artifact of host-captured Evidence on a run in its
             execute phase (examples/analyze_and_fix.json driven up to its
             first Evidence step; a new evidence id per call): one durable
             write each. Same floor as start_run (target 2: <= 1.3x); the
             floor's reply of the same size is shown beside it.
  start-up   spawn + initialize until the reply, telic vs floor. Target 3: <= 2x.
             The floor is the C++ echo (bench/echo_floor.cc, built as
             telic_echo_floor beside the telic binary when TELIC_BENCH is on);
             without it, the Python echo (its interpreter start-up is ~30 ms).
  memory     telic's RSS (VmRSS) after start (and the submission run's set-up,
             which grounds a repository) and after all calls of this run.
Not here (their own scripts): HTTP concurrency bench/http_bench.sh, history
sizes bench/controller_bench.cc, grounding bench/grounding_bench.sh."""

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
# Benchmarks time the servers, not the e2e output-schema check (which would
# also fail on the reference server).
os.environ.setdefault("TELIC_CHECK_OUTPUT_SCHEMAS", "0")
from mcp_client import McpProcess, make_git_repo  # noqa: E402
import scenario  # noqa: E402

READS = ["telic_get_run", "telic_get_next_action"]
# The submission measured: host-captured Evidence while a run executes, one
# durable write (the artifact, its events, the run's state) per call, with a
# new id each time, so the same call can be repeated on one run.
SUBMIT_SCENARIO = "analyze_and_fix"
SUBMIT_BEFORE = "the executor captures the source as evidence"
SUBMITS_PER_RUN = 100  # telic takes at most 128 Evidence per WorkPlan: a new run after these
FLOOR_SUBMIT_ARGS = {}  # set from the probe's submission


def p50(values):
    return statistics.median(values) * 1000


def p99(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Peer:
    """One server process (telic, floor or reference) with its samples."""

    def __init__(self, name, argv, env, repo):
        self.name, self.argv, self.env, self.repo = name, argv, env, repo
        self.samples = {tool: [] for tool in ["telic_start_run", *READS, "telic_submit_artifact"]}
        self.startup = []
        self.server = None
        self.run_id = None
        self.driver = None  # a run in its execute phase (servers; the floors echo)
        self.rss = []

    def open(self):
        t0 = time.perf_counter()
        self.server = McpProcess(self.argv, self.env, cwd=self.repo, wait_ready=False)
        self.server.initialize()
        self.startup.append(time.perf_counter() - t0)
        self.server.wait_for_stderr("Telic MCP ready for")
        self.run_id = self.start()["structuredContent"]["run"]["runId"]
        if not self.name.startswith("floor"):
            self.new_submission_run()
        self.rss.append(rss_kb(self.server.proc.pid))

    def start(self, i=0):
        return self.server.call("telic_start_run", {"original_request": f"Explain what src/app.ts does ({i})",
                                                    "mode": "plan_only"})

    def new_submission_run(self):
        """A run driven up to its first Evidence step (not timed)."""
        self.driver = scenario.Driver(self.server, scenario.load(SUBMIT_SCENARIO), self.repo)
        self.driver.start()
        self.driver.run_steps(until=SUBMIT_BEFORE)
        self.submitted = 0

    def submit_args(self, i):
        """The arguments of submission i, built before it is timed. A floor
        gets the probe's (FLOOR_SUBMIT_ARGS): a request of the same size."""
        if not self.driver:
            return FLOOR_SUBMIT_ARGS
        if self.submitted == SUBMITS_PER_RUN:
            self.new_submission_run()
        step = self.driver.step(SUBMIT_BEFORE)
        return self.driver.submit_args(step, dict(self.driver.body(step), id=f"bench-evidence-{i}"))

    def submit(self, args):
        """The timed call alone; check_submission() looks at its result."""
        return self.server.call("telic_submit_artifact", args)

    def check_submission(self, result):
        """Outside the timed span: a server's submission must have been
        accepted (the floors echo)."""
        if not self.driver:
            return
        assert not result.get("isError"), f"telic_submit_artifact failed: {result}"
        self.submitted += 1
        self.driver._update(result["structuredContent"])

    def round(self, n, offset):
        for i in range(n):
            t0 = time.perf_counter()
            self.start(offset + i)
            t1 = time.perf_counter()
            self.server.call("telic_get_run", {"run_id": self.run_id})
            t2 = time.perf_counter()
            self.server.call("telic_get_next_action", {"run_id": self.run_id})
            t3 = time.perf_counter()
            self.samples["telic_start_run"].append(t1 - t0)
            self.samples["telic_get_run"].append(t2 - t1)
            self.samples["telic_get_next_action"].append(t3 - t2)
            args = self.submit_args(offset + i)
            t4 = time.perf_counter()
            result = self.submit(args)
            self.samples["telic_submit_artifact"].append(time.perf_counter() - t4)
            self.check_submission(result)

    def startup_once(self):
        t0 = time.perf_counter()
        server = McpProcess(self.argv, self.env, cwd=self.repo, wait_ready=False)
        server.initialize()
        self.startup.append(time.perf_counter() - t0)
        server.close()

    def close(self):
        self.rss.append(rss_kb(self.server.proc.pid))
        self.server.close()


def sqlite_commits(path, n, pages=1):
    """n fsync'd commits (WAL, synchronous=FULL) of one 512-byte row each into
    `pages` tables: one row, one page (plus page 1, the header) by default;
    with pages=P, P - 1 tables, so each commit writes about P WAL pages."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    tables = [f"t{k}" for k in range(max(1, pages - 1))]
    for table in tables:
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, body TEXT)")
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        for table in tables:
            db.execute(f"INSERT INTO {table} (body) VALUES (?)", ("x" * 512,))
        db.execute("COMMIT")
        out.append(time.perf_counter() - t0)
    db.close()
    return out


def fsyncs_per_call(telic, env, repo, n):
    """fsync+fdatasync per start_run, counted by `strace -f -ttt` over n calls
    and kept only while the calls ran (start-up's and shutdown's fsyncs, e.g.
    the checkpoint when the last connection closes, are not per call):
    (on the thread that answers, i.e. the write path; on other threads, i.e.
    the background WAL checkpointer), and the 4096-byte pages written per call
    on the write path (the WAL frames of its commit)."""
    if not shutil.which("strace"):
        return None
    log = tempfile.mktemp(prefix="telic-strace-")
    server = McpProcess(["strace", "-f", "-ttt", "-e", "trace=fsync,fdatasync,pwrite64", "-o", log, telic, "serve"], env,
                        cwd=repo)
    server.initialize()
    server.call("telic_start_run", {"original_request": "warm up", "mode": "plan_only"})
    first = time.time()
    for i in range(n):
        server.call("telic_start_run", {"original_request": f"count fsyncs ({i})", "mode": "plan_only"})
    last = time.time()
    server.close()
    by_thread, pages_by_thread, threads = {}, {}, set()
    with open(log) as f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) < 3:
                continue
            threads.add(parts[0])
            if not first <= float(parts[1]) <= last:
                continue
            if parts[2].startswith(("fsync(", "fdatasync(")):
                by_thread[parts[0]] = by_thread.get(parts[0], 0) + 1
            elif parts[2].startswith("pwrite64(") and parts[2].rstrip().endswith("= 4096"):
                pages_by_thread[parts[0]] = pages_by_thread.get(parts[0], 0) + 1
    os.unlink(log)
    # stdio requests are answered on the main thread: the lowest thread id.
    main_thread = min(threads, key=int) if threads else None
    on_path = by_thread.get(main_thread, 0)
    return on_path / n, (sum(by_thread.values()) - on_path) / n, pages_by_thread.get(main_thread, 0) / n


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    telic = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    print("load before:", uptime())
    base = tempfile.mkdtemp(prefix="telic-issue18-")
    repo = make_git_repo(os.path.join(base, "repo"))
    scenario.Driver(None, scenario.load(SUBMIT_SCENARIO), repo).write_repository()

    def env(name):
        return dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(base, "state-" + name))

    # The floor replays telic's own responses: capture one per read tool.
    probe = Peer("probe", [telic, "serve"], env("probe"), repo)
    probe.open()
    replies = {tool: probe.server.call(tool, {"run_id": probe.run_id}) for tool in READS}
    replies["telic_start_run"] = probe.start(1)
    FLOOR_SUBMIT_ARGS.update(probe.submit_args(0))
    replies["telic_submit_artifact"] = probe.server.call("telic_submit_artifact", FLOOR_SUBMIT_ARGS)
    probe.close()
    replies_path = os.path.join(base, "floor-replies.json")
    with open(replies_path, "w", encoding="utf-8") as f:
        json.dump(replies, f, ensure_ascii=False)
    sizes = {tool: len(json.dumps(replies[tool], separators=(",", ":"), ensure_ascii=False)) for tool in READS}
    floor_argv = [sys.executable, os.path.join(HERE, "echo_floor.py")]

    peers = [Peer("telic", [telic, "serve"], env("telic"), repo),
             Peer("floor", floor_argv, dict(env("floor"), FLOOR_REPLIES=replies_path), repo),
             Peer("floor-small", floor_argv, env("floor-small"), repo)]
    node, server_js = os.environ.get("REFERENCE_NODE"), os.environ.get("REFERENCE_SERVER")
    if node and server_js:
        peers.append(Peer("reference", [node, server_js], env("reference"), repo))
    for peer in peers:
        peer.open()
    # The pages telic's start_run commit writes, for the informational floor.
    fsyncs = fsyncs_per_call(telic, env("strace"), repo, n)
    wal_pages = max(1, round(fsyncs[2])) if fsyncs else None
    commits, page_commits = [], []
    for r in range(rounds):
        for peer in peers:
            peer.round(n, r * n)
        commits += sqlite_commits(os.path.join(base, "commit.sqlite3"), n)
        if wal_pages:
            page_commits += sqlite_commits(os.path.join(base, "commit-pages.sqlite3"), n, wal_pages)
    for peer in peers:
        peer.close()
    startup_peers = list(peers)
    cxx_floor = os.path.join(os.path.dirname(telic), "telic_echo_floor")
    if os.access(cxx_floor, os.X_OK):
        startup_peers.append(Peer("floor-cxx", [cxx_floor], env("floor-cxx"), repo))
    for _ in range(rounds * 4):
        for peer in startup_peers:
            peer.startup_once()
    by = {peer.name: peer for peer in startup_peers}
    ref = by.get("reference")

    print(f"\n{rounds} interleaved rounds x {n} calls per peer over stdio; ms (p50 / p99)")
    print("| row | telic | floor | reference | ratio | target |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for tool in READS:
        t, f = by["telic"].samples[tool], by["floor"].samples[tool]
        line = f"| {tool} ({sizes[tool]} B) | {p50(t):.3f} / {p99(t):.3f} | {p50(f):.3f} / {p99(f):.3f} |"
        if ref:
            rs = ref.samples[tool]
            added_ratio = (p50(t) - p50(f)) / max(1e-9, p50(rs) - p50(f))
            line += (f" {p50(rs):.3f} / {p99(rs):.3f} | added {added_ratio:.2f}x, p99 {p99(t) / p99(rs):.2f}x |"
                     " added <= 0.10x, p99 <= 0.25x |")
        else:
            line += f" - | added {p50(t) - p50(f):.3f} ms | (needs the reference) |"
        print(line)
    t, f = by["telic"].samples["telic_start_run"], by["floor-small"].samples["telic_start_run"]
    floor_commit = p50(f) + p50(commits)
    line = (f"| telic_start_run (durable) | {p50(t):.3f} / {p99(t):.3f} | {p50(f):.3f} + commit {p50(commits):.3f}"
            f" = {floor_commit:.3f} |")
    line += f" {p50(ref.samples['telic_start_run']):.3f} / {p99(ref.samples['telic_start_run']):.3f} |" if ref else " - |"
    print(line + f" {p50(t) / floor_commit:.2f}x | <= 1.3x |")
    ts, fs = by["telic"].samples["telic_submit_artifact"], by["floor-small"].samples["telic_submit_artifact"]
    same = by["floor"].samples["telic_submit_artifact"]
    line = (f"| telic_submit_artifact (Evidence, durable) | {p50(ts):.3f} / {p99(ts):.3f} | {p50(fs):.3f} + commit"
            f" {p50(commits):.3f} = {p50(fs) + p50(commits):.3f} (same-size reply {p50(same):.3f}) |")
    if ref:
        line += f" {p50(ref.samples['telic_submit_artifact']):.3f} / {p99(ref.samples['telic_submit_artifact']):.3f} |"
    else:
        line += " - |"
    print(line + f" {p50(ts) / (p50(fs) + p50(commits)):.2f}x | <= 1.3x |")
    if page_commits:
        same = by["floor"].samples["telic_start_run"]
        design_floor = p50(same) + p50(page_commits)
        print(f"| telic_start_run vs its own design's floor (information) | {p50(t):.3f} | same-size reply"
              f" {p50(same):.3f} + {wal_pages}-page commit {p50(page_commits):.3f} = {design_floor:.3f} | - |"
              f" {p50(t) / design_floor:.2f}x | - |")
    shown = "-" if fsyncs is None else f"{fsyncs[0]:.2f} (+ {fsyncs[1]:.2f} background checkpoint)"
    print(f"| fsync+fdatasync per start_run, write path | {shown} | 1 (the commit) | - | - | exactly 1 |")
    if fsyncs:
        print(f"| WAL pages per start_run commit | {fsyncs[2]:.1f} | 1-2 (the floor's commit) | - | - | - |")
    startup_floor = by.get("floor-cxx") or by["floor-small"]
    ts, fs = by["telic"].startup, startup_floor.startup
    label = "C++ echo" if startup_floor.name == "floor-cxx" else "Python echo"
    line = f"| start-up + initialize ({label} floor) | {p50(ts):.1f} | {p50(fs):.1f} |"
    line += f" {p50(ref.startup):.1f} |" if ref else " - |"
    print(line + f" {p50(ts) / p50(fs):.2f}x | <= 2x |")
    rss = by["telic"].rss
    print(f"| telic RSS start / end (MB, {rounds * n * 4} calls) | {rss[0] / 1024:.1f} / {rss[-1] / 1024:.1f} | - | - |"
          f" growth {(rss[-1] - rss[0]) / 1024:.1f} MB | <= 30 MB, no growth |")
    print("\nload after:", uptime())
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
