#!/usr/bin/env python3
"""Issue 18 target 6: telic's memory while it serves a large ledger.

1. Fills a fresh ledger with RUNS runs (telic_start_run over stdio, several
   requests written before their replies are read, so filling is quick).
2. Starts a new `telic serve` on that ledger and prints its RSS (VmRSS) after
   initialize.
3. Sends CALLS calls, a mix of what a host does all day: reads of random runs
   (telic_get_run, telic_get_next_action, telic_get_trace, telic_get_artifact),
   telic_list_runs, and new runs (telic_start_run, 1 in 20). Prints RSS every
   tenth of the way, then at the end with the peak (VmHWM).

Target: RSS <= 30 MB, and no growth over the calls (the last samples no
higher than the first ones beyond allocator noise).

Usage: bench/memory_bench.py TELIC_BINARY [RUNS] [CALLS]   (10000, 100000)
Not a test: speed and memory live in bench/, behaviour in tests/."""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
from mcp_client import make_git_repo  # noqa: E402

BATCH = 64  # requests written before their replies are read


class Server:
    """`telic serve` over raw pipes: no per-call schema check, no threads."""

    def __init__(self, binary, env, cwd):
        self.proc = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "memory-bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def request(self, method, params):
        return self.batch([(method, params)])[0]

    def batch(self, calls):
        """Writes every call, then reads as many replies; returns them in order."""
        lines = []
        for method, params in calls:
            lines.append(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
            self.next_id += 1
        self.proc.stdin.write(("\n".join(lines) + "\n").encode())
        self.proc.stdin.flush()
        replies = [json.loads(self.proc.stdout.readline()) for _ in calls]
        for reply in replies:
            if "error" in reply:
                raise RuntimeError(f"JSON-RPC error: {reply['error']}")
        return replies

    def tools(self, calls):
        return self.batch([("tools/call", {"name": name, "arguments": args}) for name, args in calls])

    def status(self, field):
        with open(f"/proc/{self.proc.pid}/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # kB -> MB
        return 0.0

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def start_args(i):
    return {"original_request": f"Explain what src/app.ts does ({i})", "mode": "plan_only"}


def fill(server, runs):
    """Starts `runs` runs; returns (run_id, first artifact id) per run."""
    made = []
    for first in range(0, runs, BATCH):
        count = min(BATCH, runs - first)
        for reply in server.tools([("telic_start_run", start_args(first + k)) for k in range(count)]):
            payload = reply["result"]["structuredContent"]
            made.append((payload["run"]["runId"], payload["run"]["runId"]))
    return made


def mixed_calls(rng, runs, n):
    calls = []
    for _ in range(n):
        run_id, artifact_id = rng.choice(runs)
        pick = rng.random()
        if pick < 0.30:
            calls.append(("telic_get_run", {"run_id": run_id}))
        elif pick < 0.60:
            calls.append(("telic_get_next_action", {"run_id": run_id}))
        elif pick < 0.75:
            calls.append(("telic_get_trace", {"run_id": run_id}))
        elif pick < 0.85:
            calls.append(("telic_get_artifact", {"run_id": run_id, "artifact_id": artifact_id}))
        elif pick < 0.95:
            calls.append(("telic_list_runs", {}))
        else:
            calls.append(("telic_start_run", start_args(rng.randrange(1 << 30))))
    return calls


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    run_count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    call_count = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    base = tempfile.mkdtemp(prefix="telic-memory-")
    try:
        repo = make_git_repo(os.path.join(base, "repo"))
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(base, "state"))
        print(f"load before: {os.getloadavg()[0]:.2f}")
        t0 = time.time()
        filler = Server(binary, env, repo)
        runs = fill(filler, run_count)
        filler.close()
        ledger = os.path.join(base, "state", "telic.sqlite3")
        print(f"filled {len(runs)} runs in {time.time() - t0:.1f} s; ledger {os.path.getsize(ledger) / 1e6:.1f} MB")

        server = Server(binary, env, repo)
        rng = random.Random(6)
        print("| calls done | RSS MB | peak MB |")
        print("| ---: | ---: | ---: |")
        print(f"| 0 | {server.status('VmRSS'):.1f} | {server.status('VmHWM'):.1f} |")
        step = max(1, call_count // 10)
        done = 0
        t1 = time.time()
        while done < call_count:
            chunk = min(BATCH, call_count - done)
            server.tools(mixed_calls(rng, runs, chunk))
            done += chunk
            if done % step < chunk or done == call_count:
                print(f"| {done} | {server.status('VmRSS'):.1f} | {server.status('VmHWM'):.1f} |", flush=True)
        elapsed = time.time() - t1
        print(f"{call_count} calls in {elapsed:.1f} s ({call_count / elapsed:.0f} calls/s); "
              f"load after: {os.getloadavg()[0]:.2f}")
        server.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
