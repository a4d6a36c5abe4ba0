#!/usr/bin/env python3
"""What a host waits for when a session starts: spawn `serve` and time, over
stdio, initialize (from the spawn), then tools/list, the first telic_start_run
and a second one, each from the previous reply. Medians over RUNS spawns per
server; the servers alternate, and each keeps one state directory across its
spawns (the ledger exists, as in a host's second session).

Usage: bench/first_calls.py BINARY [BINARY ...]
Environment: RUNS (15); REFERENCE_NODE and REFERENCE_SERVER add the
TypeScript reference server (node server.js) as one more column."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
from mcp_client import make_git_repo  # noqa: E402

STEPS = ["initialize (from spawn)", "tools/list", "first telic_start_run", "second telic_start_run"]


def session(argv, env, repo):
    """One spawn; the milliseconds of each step."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=repo)

    def ask(msg_id, method, params):
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}) + "\n")
                         .encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"{argv[-2:]} closed stdout during {method}")
        return time.perf_counter()

    marks = [started]
    marks.append(ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "first-calls", "version": "1"}}))
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    marks.append(ask(2, "tools/list", {}))
    for n in (3, 4):
        marks.append(ask(n, "tools/call", {"name": "telic_start_run", "arguments": {
            "original_request": f"Explain what src/app.ts does ({n})", "mode": "report_only"}}))
    proc.stdin.close()
    proc.wait(timeout=30)
    return [(b - a) * 1000 for a, b in zip(marks, marks[1:])]


def main():
    binaries = sys.argv[1:]
    if not binaries:
        raise SystemExit(__doc__)
    servers = [(os.path.abspath(b), [os.path.abspath(b), "serve"]) for b in binaries]
    node, script = os.environ.get("REFERENCE_NODE"), os.environ.get("REFERENCE_SERVER")
    if node and script:
        servers.append(("reference", [node, script]))
    runs = int(os.environ.get("RUNS", "15"))
    base = tempfile.mkdtemp(prefix="telic-first-calls-")
    repo = make_git_repo(os.path.join(base, "repo"))
    times = {name: [] for name, _ in servers}
    for i in range(runs):
        for k, (name, argv) in enumerate(servers):
            state = os.path.join(base, f"state-{k}")
            env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=state)
            times[name].append(session(argv, env, repo))
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"medians of {runs} sessions, ms")
    print("| step | " + " | ".join(name for name, _ in servers) + " |")
    print("| --- |" + " ---: |" * len(servers))
    for s, step in enumerate(STEPS):
        cells = [f"{statistics.median(row[s] for row in times[name]):.1f}" for name, _ in servers]
        print(f"| {step} | " + " | ".join(cells) + " |")
    totals = [f"{statistics.median(sum(row) for row in times[name]):.1f}" for name, _ in servers]
    print("| all four | " + " | ".join(totals) + " |")


if __name__ == "__main__":
    main()
