#!/usr/bin/env python3
"""Compares telic with the reference TypeScript server in the same run:
N telic_start_run round trips (plus get_run and get_trace) over real stdio,
one client process, same machine, same temporary repository.

Usage: bench/compare_reference.py TELIC_BINARY [N]
The floor (bench/echo_floor.py: answers every request with a fixed result,
stores nothing) always runs beside telic. The peer runs only when REFERENCE_NODE (a Node 24 binary) and
REFERENCE_SERVER (the reference's dist/mcp/server.js) are set; otherwise only
telic is measured. Never used in CI (the peer needs the npm registry)."""

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
# Benchmarks time the servers, not the e2e output-schema check (which would
# also fail on the reference server).
os.environ.setdefault("TELIC_CHECK_OUTPUT_SCHEMAS", "0")
from mcp_client import McpProcess, make_git_repo  # noqa: E402


def measure(argv, repo, state, n):
    env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=state)
    server = McpProcess(argv, env, cwd=repo)
    server.initialize()
    timings = {"start_run": [], "get_run": [], "get_trace": []}
    for i in range(n):
        t0 = time.perf_counter()
        result = server.call("telic_start_run", {"original_request": f"Explain what src/app.ts does ({i})",
                                                 "mode": "plan_only"})
        t1 = time.perf_counter()
        run_id = result["structuredContent"]["run"]["runId"]
        server.call("telic_get_run", {"run_id": run_id})
        t2 = time.perf_counter()
        server.call("telic_get_trace", {"run_id": run_id})
        t3 = time.perf_counter()
        timings["start_run"].append(t1 - t0)
        timings["get_run"].append(t2 - t1)
        timings["get_trace"].append(t3 - t2)
    server.close()
    return timings


def summary(values):
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def main():
    telic = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    base = tempfile.mkdtemp(prefix="telic-bench-")
    repo = make_git_repo(os.path.join(base, "repo"))
    peers = [("telic", [telic, "serve"]),
             ("floor", [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "echo_floor.py")])]
    node, server_js = os.environ.get("REFERENCE_NODE"), os.environ.get("REFERENCE_SERVER")
    if node and server_js:
        peers.append(("reference", [node, server_js]))
    results = {}
    for name, argv in peers:
        results[name] = measure(argv, repo, os.path.join(base, "state-" + name), n)
    print(f"{n} round trips per tool over stdio, one client; milliseconds (p50 / p99)")
    for tool in ["start_run", "get_run", "get_trace"]:
        line = f"  {tool:10}"
        for name in results:
            p50, p99 = summary(results[name][tool])
            line += f"  {name}: {p50:7.3f} / {p99:7.3f}"
        floor = summary(results["floor"][tool])[0]
        line += f"  (telic above floor: {summary(results['telic'][tool])[0] - floor:.3f})"
        if "reference" in results:
            ratio = summary(results["reference"][tool])[0] / summary(results["telic"][tool])[0]
            line += f"  (telic p50 is {ratio:.1f}x faster)" if ratio >= 1 else f"  (telic p50 is {1 / ratio:.1f}x slower)"
        print(line)


if __name__ == "__main__":
    main()
