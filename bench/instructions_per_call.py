#!/usr/bin/env python3
"""Server instructions per call (valgrind callgrind Ir), immune to machine
load: each binary serves a fresh state directory under callgrind twice, once
with N1 and once with N2 calls of each measured tool after the same warm-up,
and (Ir(N2) - Ir(N1)) / (N2 - N1) is printed per tool. Start-up and shutdown
cancel out.

Usage: bench/instructions_per_call.py BINARY [BINARY ...]
Environment: N1 (20), N2 (120)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
# Benchmarks time the servers, not the e2e output-schema check (which would
# also fail on the reference server).
os.environ.setdefault("TELIC_CHECK_OUTPUT_SCHEMAS", "0")
from mcp_client import McpProcess, make_git_repo  # noqa: E402

TOOLS = ["telic_start_run", "telic_get_run", "telic_get_next_action"]


def instructions(binary, tool, n, base):
    state = tempfile.mkdtemp(prefix="state-", dir=base)
    out = os.path.join(state, "callgrind.out")
    env = dict(os.environ, TELIC_REPOSITORY_ROOT=os.path.join(base, "repo"), TELIC_STATE_DIR=state)
    server = McpProcess(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve"], env,
                        cwd=os.path.join(base, "repo"))
    server.initialize()
    run_id = server.ok("telic_start_run", {"original_request": "warm up", "mode": "plan_only"})["run"]["runId"]
    for i in range(5):
        server.call("telic_get_run", {"run_id": run_id})
        server.call("telic_get_next_action", {"run_id": run_id})
    for i in range(n):
        if tool == "telic_start_run":
            server.call(tool, {"original_request": f"Explain what src/app.ts does ({i})", "mode": "plan_only"})
        else:
            server.call(tool, {"run_id": run_id})
    server.close(timeout=120)
    summary = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True).stdout
    match = re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", summary) or re.search(r"([\d,]+)\s+PROGRAM TOTALS",
                                                                                          summary)
    return int(match.group(1).replace(",", ""))


def main():
    n1, n2 = int(os.environ.get("N1", "20")), int(os.environ.get("N2", "120"))
    base = tempfile.mkdtemp(prefix="telic-ir-")
    make_git_repo(os.path.join(base, "repo"))
    print(f"server instructions per call (callgrind Ir, ({n2} - {n1} calls) difference)")
    for binary in map(os.path.abspath, sys.argv[1:]):
        row = []
        for tool in TOOLS:
            per_call = (instructions(binary, tool, n2, base) - instructions(binary, tool, n1, base)) / (n2 - n1)
            row.append(f"{tool} {per_call / 1000:.0f}k")
        print(f"{binary}: " + ", ".join(row), flush=True)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
