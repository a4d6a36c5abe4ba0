#!/usr/bin/env python3
"""WAL pages a telic_start_run commit writes, by B-tree.

Usage: bench/wal_pages.py TELIC [CALLS] [EARLIER_RUNS]

Starts EARLIER_RUNS runs first (a ledger of that size; 0 by default), then
CALLS (100) start_runs under `strace -f -xx -e pwrite64`. Each WAL frame's
24-byte header names the page it carries; after the server stops, SQLite's
dbstat names the B-tree (table or index) each page belongs to. Prints the
frames and commits per start_run, then the frames per B-tree, most first.
A page is attributed to the B-tree that owns it at the end (a page that
changed owner after a split counts for the later one)."""

import collections
import os
import re
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import issue18_table as t  # noqa: E402

FRAME_HEADER = re.compile(r'pwrite64\(\d+, "((?:\\x[0-9a-f]{2})+)", 24,')


def start_runs(server, count, label):
    for i in range(count):
        server.call("telic_start_run", {"original_request": f"{label} {i}", "mode": "plan_only"})


def main():
    telic = os.path.abspath(sys.argv[1])
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    earlier = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    base = tempfile.mkdtemp(prefix="telic-wal-pages-")
    repo = t.make_git_repo(os.path.join(base, "repo"))
    env = dict(os.environ, TELIC_REPOSITORY_ROOT=repo, TELIC_STATE_DIR=os.path.join(base, "state"))
    if earlier:
        server = t.McpProcess([telic, "serve"], env, cwd=repo)
        server.initialize()
        start_runs(server, earlier, "earlier")
        server.close()
    log = os.path.join(base, "strace.log")
    server = t.McpProcess(["strace", "-f", "-ttt", "-xx", "-s", "32", "-e", "trace=pwrite64", "-o", log,
                           telic, "serve"], env, cwd=repo)
    server.initialize()
    start_runs(server, 1, "warm up")
    first = time.time()
    start_runs(server, calls, "count")
    last = time.time()
    server.close()
    frames, commits = collections.Counter(), 0
    with open(log) as f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) < 3 or not first <= float(parts[1]) <= last:
                continue
            match = FRAME_HEADER.match(parts[2])
            if not match:
                continue
            header = bytes(int(h, 16) for h in match.group(1).split("\\x")[1:])
            frames[int.from_bytes(header[0:4], "big")] += 1
            commits += int.from_bytes(header[4:8], "big") != 0  # a commit frame records the database size
    db = sqlite3.connect(os.path.join(base, "state", "telic.sqlite3"))
    owner = {page: f"{name} ({kind})" for name, page, kind in db.execute("SELECT name, pageno, pagetype FROM dbstat")}
    db.close()
    by_tree = collections.Counter()
    for page, count in frames.items():
        by_tree[owner.get(page, "pointer map or free page")] += count
    print(f"{telic}: {earlier} earlier runs, {calls} start_runs")
    print(f"WAL frames per start_run {sum(frames.values()) / calls:.2f}, commits per start_run {commits / calls:.2f}")
    for tree, count in by_tree.most_common():
        print(f"  {count / calls:6.2f}  {tree}")


if __name__ == "__main__":
    main()
