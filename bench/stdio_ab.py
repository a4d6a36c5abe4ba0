#!/usr/bin/env python3
"""Two (or more) telic builds over stdio, interleaved in one run: each round
gives every binary N calls of each row of bench/issue18_table.py (start_run,
get_run, get_next_action, an Evidence submission), in turn, so machine load
hits all alike. Prints p50 / p99 per binary and each binary's p50 as a ratio
of the first's, per row. For a change that moves a row by a few percent,
which the one-run table cannot show apart from the noise.

Usage: bench/stdio_ab.py BINARY_A BINARY_B [...]  (env N=100, ROUNDS=10)"""

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from issue18_table import SUBMIT_SCENARIO, Peer, p50, p99, scenario, uptime, make_git_repo  # noqa: E402

ROWS = ["telic_start_run", "telic_get_run", "telic_get_next_action", "telic_submit_artifact"]


def main():
    binaries = [os.path.abspath(b) for b in sys.argv[1:]]
    if len(binaries) < 2:
        sys.exit(__doc__)
    n, rounds = int(os.environ.get("N", "100")), int(os.environ.get("ROUNDS", "10"))
    base = tempfile.mkdtemp(prefix="telic-stdio-ab-")
    repo = os.path.join(base, "repo")
    make_git_repo(repo)
    scenario.Driver(None, scenario.load(SUBMIT_SCENARIO), repo).write_repository()
    peers = []
    for i, binary in enumerate(binaries):
        state = os.path.join(base, f"state-{i}")
        os.mkdir(state)
        env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=state)
        peers.append(Peer(f"bin{i}", [binary, "serve"], env, repo))
    print(f"load before: {uptime()}")
    try:
        for peer in peers:
            peer.open()
        for r in range(rounds):
            order = peers if r % 2 == 0 else list(reversed(peers))
            for peer in order:
                peer.round(n, r * n)
    finally:
        for peer in peers:
            if peer.server:
                peer.close()
        shutil.rmtree(base, ignore_errors=True)
    print(f"load after: {uptime()}")
    print(f"\n{rounds} interleaved rounds x {n} calls per binary over stdio; ms p50 / p99 (ratio: p50 / first's p50)")
    print("| row | " + " | ".join(binaries) + " |")
    print("| --- |" + " ---: |" * len(binaries))
    for row in ROWS:
        first = p50(peers[0].samples[row])
        cells = []
        for peer in peers:
            s = peer.samples[row]
            cells.append(f"{p50(s):.3f} / {p99(s):.3f} ({p50(s) / first:.3f})")
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
