#!/usr/bin/env python3
"""A/B of `telic ground` builds on one repository: every binary runs
`telic ground --json` in turn (A B A B ...), so machine load hits them alike,
and the median and first quartile of each are printed. For differences of a
few milliseconds that bench/grounding_bench.sh (one binary, fewer runs, with
a shell around each) cannot resolve on a busy machine.

Usage: bench/ground_ab.py REPOSITORY RUNS TELIC [TELIC ...]
  REPOSITORY  e.g. one that `KEEP=1 BENCH_DIR=DIR bench/grounding_bench.sh
              TELIC 20000` generated (DIR/repo)"""

import os
import statistics
import subprocess
import sys
import time

REQUEST = "fix the session token refresh in the api client"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    repo, runs, binaries = sys.argv[1], int(sys.argv[2]), [os.path.abspath(b) for b in sys.argv[3:]]
    samples = {binary: [] for binary in binaries}
    for binary in binaries:  # one warm-up run each
        subprocess.run([binary, "ground", "--json", REQUEST], cwd=repo, stdout=subprocess.DEVNULL, check=True)
    for _ in range(runs):
        for binary in binaries:
            start = time.monotonic_ns()
            subprocess.run([binary, "ground", "--json", REQUEST], cwd=repo, stdout=subprocess.DEVNULL, check=True)
            samples[binary].append((time.monotonic_ns() - start) / 1e6)
    print(f"telic ground --json on {repo}, {runs} alternating runs, load {os.getloadavg()[0]:.2f}")
    for binary in binaries:
        values = sorted(samples[binary])
        print(f"{binary}: median {statistics.median(values):.1f} ms, first quartile {values[len(values) // 4]:.1f} ms")


if __name__ == "__main__":
    main()
