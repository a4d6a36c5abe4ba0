#!/usr/bin/env bash
# HTTP benchmark (issue 8): MCP tools/call over Streamable HTTP, measured with
# wrk (Debian package) — requests/s and p50/p99 latency for one instance on
# SQLite, one instance on PostgreSQL and two instances on one PostgreSQL, for
# a write (telic_start_run: one transaction with 2 artifacts + 2 events) and a
# read (telic_get_run); plus MCP ping as the transport-only baseline. The write rows compare SQLite and PostgreSQL write
# throughput in the same run. PostgreSQL runs durable (fsync on), as SQLite
# does (synchronous=FULL).
#
# Issue 18 target 4 is stated against two baselines of the same run, printed
# last: the single-connection fsync'd commit rate of the same SQLite file
# (python sqlite3, WAL, synchronous=FULL, one 512-byte row per transaction;
# target: SQLite writes/s >= 2x it) and the ping rate (reads/s >= 0.3x it).
#
# Usage: bench/http_bench.sh [TELIC_BINARY]
# Environment: DURATION seconds per measurement (10), CONNECTIONS (16),
# THREADS wrk threads (2; even, split over the instances).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
telic="$(realpath "${1:-$root/build/telic}")"
duration="${DURATION:-10}"
connections="${CONNECTIONS:-16}"
threads="${THREADS:-2}"
command -v wrk >/dev/null || { echo "wrk not found: run scripts/setup (Debian package wrk)" >&2; exit 2; }
[[ -x "$telic" ]] || { echo "telic binary not found: $telic" >&2; exit 2; }

work="$(mktemp -d /tmp/telic-http-bench.XXXXXX)"
pg_dir="$(mktemp -d /tmp/telic-bench-pg.XXXXXX)"  # its own: the server may run as another user
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$root/scripts/pg-test-server" stop "$pg_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/repo" "$work/state"
echo "# bench" >"$work/repo/README.md"
export TELIC_REPOSITORY_ROOT="$work/repo" TELIC_STATE_DIR="$work/state"

pg_url="$(PG_DURABLE=1 "$root/scripts/pg-test-server" start "$pg_dir")"

new_schema() {  # a fresh schema on the server; prints its URL
  local schema="bench_$RANDOM$RANDOM"
  psql -X -q -d "$pg_url" -c "CREATE SCHEMA $schema" >/dev/null
  echo "${pg_url}&options=-csearch_path%3D${schema}"
}

source "$root/bench/http_common.sh"

serve() {  # serve DB -> sets $port to that of a new `telic serve --http` (no subshell: keeps $pids)
  start_telic_http "$work/serve-$RANDOM.log" "$telic" --db "$1"
  pids+=("$server_pid")
}

# measure LABEL KIND DB [DB...]: one instance per DB, wrk spread over them.
measure() {
  local label="$1" kind="$2"
  shift 2
  local targets="" body="$write_body" session
  for db in "$@"; do
    serve "$db"
    session="$(mcp "$port" "" "$init_body")"
    targets="${targets:+$targets,}127.0.0.1:$port=$session"
  done
  if [[ "$kind" == ping ]]; then
    body='{"jsonrpc":"2.0","id":4,"method":"ping"}'
  elif [[ "$kind" == read ]]; then
    body="$(read_body "$port" "$session")"
  fi
  local line
  line="$(TELIC_TARGETS="$targets" TELIC_BODY="$body" wrk -t "$threads" -c "$connections" -d "${duration}s" \
          -s "$root/bench/mcp_call.lua" "http://127.0.0.1:$port/mcp" | grep '^RESULT')"
  printf '%-34s %-6s %s\n' "$label" "$kind" "${line#RESULT }"
  rps["$label $kind"]="$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$line")"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

declare -A rps
echo "telic HTTP benchmark: wrk -t$threads -c$connections -d${duration}s, $(nproc) cores, $(date -u +%FT%TZ)"
shared="$(new_schema)"
measure "1 instance, SQLite" write "$work/state/bench.sqlite3"
measure "1 instance, PostgreSQL" write "$(new_schema)"
measure "2 instances, one PostgreSQL" write "$shared" "$shared"
measure "1 instance, SQLite" read "$work/state/bench.sqlite3"
measure "1 instance, PostgreSQL" read "$shared"
measure "2 instances, one PostgreSQL" read "$shared" "$shared"
measure "1 instance (transport only)" ping "$work/state/bench.sqlite3"

# Single-connection fsync'd commits/s on the same SQLite file (no server running).
commit_rate="$(python3 - "$work/state/bench.sqlite3" "$duration" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS bench_commit_floor (id INTEGER PRIMARY KEY, body TEXT)")
n, start = 0, time.perf_counter()
while time.perf_counter() - start < float(sys.argv[2]):
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO bench_commit_floor (body) VALUES (?)", ("x" * 512,))
    db.execute("COMMIT")
    n += 1
print("%.1f" % (n / (time.perf_counter() - start)))
PY
)"
printf '%-34s %-6s rps=%s\n' "1 connection, fsync'd commits" commit "$commit_rate"
awk -v w="${rps[1 instance, SQLite write]}" -v r="${rps[1 instance, SQLite read]}" \
    -v p="${rps[1 instance (transport only) ping]}" -v c="$commit_rate" 'BEGIN {
  printf "target 4: SQLite writes/s / commit rate = %.2fx (>= 2x); SQLite reads/s / ping rate = %.2fx (>= 0.3x)\n", w / c, r / p }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
