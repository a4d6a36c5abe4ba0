#!/usr/bin/env python3
"""Server CPU time per call (utime+stime of the server process from /proc,
all threads), for A/B comparisons of telic binaries that wall time on a
loaded machine cannot resolve. Each binary serves its own fresh state
directory over stdio; the binaries are measured in alternating rounds (A B A
B ...) so that machine load hits them alike. Prints microseconds of server
CPU per call (median over rounds) for telic_start_run, telic_get_run and
telic_get_next_action.

Usage: bench/server_cpu.py [N] [ROUNDS] BINARY [BINARY ...]"""

import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
# Benchmarks time the servers, not the e2e output-schema check (which would
# also fail on the reference server).
os.environ.setdefault("TELIC_CHECK_OUTPUT_SCHEMAS", "0")
from mcp_client import McpProcess, make_git_repo  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14, 15)


def measure(server, run_id, n, offset):
    out = {}
    pid = server.proc.pid
    calls = {
        "telic_start_run": lambda i: {"original_request": f"Explain what src/app.ts does ({offset + i})",
                                      "mode": "plan_only"},
        "telic_get_run": lambda i: {"run_id": run_id},
        "telic_get_next_action": lambda i: {"run_id": run_id},
    }
    for tool, args in calls.items():
        before = cpu_seconds(pid)
        for i in range(n):
            server.call(tool, args(i))
        out[tool] = (cpu_seconds(pid) - before) / n * 1e6
    return out


def main():
    args = sys.argv[1:]
    n = int(args.pop(0)) if args and args[0].isdigit() else 300
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 5
    binaries = [os.path.abspath(b) for b in args]
    base = tempfile.mkdtemp(prefix="telic-cpu-")
    repo = make_git_repo(os.path.join(base, "repo"))
    servers = []
    for i, binary in enumerate(binaries):
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(base, f"state-{i}"))
        server = McpProcess([binary, "serve"], env, cwd=repo)
        server.initialize()
        run_id = server.ok("telic_start_run", {"original_request": "warm up", "mode": "plan_only"})["run"]["runId"]
        measure(server, run_id, 20, -100)  # warm-up
        servers.append((binary, server, run_id, []))
    for r in range(rounds):
        for binary, server, run_id, samples in servers:
            samples.append(measure(server, run_id, n, r * n))
    print(f"server CPU per call, us (median of {rounds} rounds x {n} calls); load: "
          f"{open('/proc/loadavg').read().split()[:3]}")
    for binary, server, run_id, samples in servers:
        row = {tool: statistics.median(s[tool] for s in samples) for tool in samples[0]}
        print(f"{binary}: " + ", ".join(f"{tool} {value:.0f}" for tool, value in row.items()))
        server.close()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
