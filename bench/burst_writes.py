#!/usr/bin/env python3
"""Back-to-back durable writes over stdio, as an agent's burst or a script
would send them: N telic_start_run calls, each sent as soon as the previous
answer arrived (a raw newline-delimited client that does not parse the
answers, so the client costs little). For each binary, in alternating runs
on fresh ledgers: the total time, the p50 of each block of 500 calls, the
size of the ledger's WAL file after the N calls, and how long the server
took to exit once its stdin closed (it checkpoints what the WAL holds).

D-P16 is what this shows: before it the WAL was never reused while writes
kept coming, so it grew by every commit's pages.

Usage: bench/burst_writes.py BINARY [BINARY ...]  (env N=4000, RUNS=2)"""

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
from mcp_client import make_git_repo  # noqa: E402


def burst(binary, n, base, index):
    state = os.path.join(base, f"state-{index}")
    os.mkdir(state)
    env = dict(os.environ, TELIC_REPOSITORY_ROOT=os.path.join(base, "repo"), TELIC_STATE_DIR=state)
    server = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, cwd=os.path.join(base, "repo"))

    def request(i, method, params):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        server.stdin.flush()
        line = server.stdout.readline()
        if not line or b'"isError":true' in line or b'"error":{' in line:
            sys.exit(f"{binary}: call {i} failed: {line[:300]!r}")

    request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "burst_writes", "version": "1"}})
    latencies = []
    t0 = time.perf_counter()
    for i in range(n):
        t = time.perf_counter()
        request(i + 1, "tools/call", {"name": "telic_start_run",
                                      "arguments": {"original_request": f"Explain step {i}", "mode": "plan_only"}})
        latencies.append(time.perf_counter() - t)
    t1 = time.perf_counter()
    wal = sum(os.path.getsize(f) for f in glob.glob(os.path.join(state, "**", "*-wal"), recursive=True))
    server.stdin.close()
    server.wait()
    t2 = time.perf_counter()
    blocks = [f"{statistics.median(latencies[i:i + 500]) * 1000:.3f}" for i in range(0, n, 500)]
    return t1 - t0, blocks, wal, t2 - t1


def main():
    binaries = [os.path.abspath(b) for b in sys.argv[1:]]
    if not binaries:
        sys.exit(__doc__)
    n, runs = int(os.environ.get("N", "4000")), int(os.environ.get("RUNS", "2"))
    base = tempfile.mkdtemp(prefix="telic-burst-")
    try:
        make_git_repo(os.path.join(base, "repo"))
        print(f"load before: {open('/proc/loadavg').read().strip()}")
        print(f"{n} back-to-back telic_start_run calls over stdio, {runs} alternating runs per binary")
        index = 0
        for _ in range(runs):
            for binary in binaries:
                total, blocks, wal, exit_s = burst(binary, n, base, index)
                index += 1
                print(f"{binary}: {total:.2f} s; p50 ms per 500 calls {' '.join(blocks)}; "
                      f"WAL {wal / 1048576:.1f} MiB; exit after stdin closed {exit_s * 1000:.0f} ms")
        print(f"load after: {open('/proc/loadavg').read().strip()}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
