#!/usr/bin/env bash
# Where the CPU of a PostgreSQL write goes (issue 18 target 4): one
# `telic serve --http` on a throwaway durable PostgreSQL (scripts/pg-test-server),
# telic_start_run under wrk (-t2 -c16, as bench/http_bench.sh) for DURATION
# seconds, then the CPU time (utime + stime from /proc) the telic process and
# the PostgreSQL processes spent, in total and per write.
#
# Usage: bench/pg_write_cpu.sh [TELIC_BINARY]
# Environment: DURATION seconds (5), CONNECTIONS (16).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
telic="${1:-$root/build/telic}"
duration="${DURATION:-5}"
connections="${CONNECTIONS:-16}"
command -v wrk >/dev/null || { echo "wrk is missing (Debian package wrk; scripts/setup installs it)" >&2; exit 2; }
work="$(mktemp -d /tmp/telic-pg-cpu.XXXXXX)"
chmod 755 "$work"  # the PostgreSQL server's user must reach its directory
pg_dir="$work/pg"
mkdir -p "$pg_dir" "$work/repo" "$work/state"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  "$root/scripts/pg-test-server" stop "$pg_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "# bench" >"$work/repo/README.md"
export TELIC_REPOSITORY_ROOT="$work/repo" TELIC_STATE_DIR="$work/state"
pg_url="$(PG_DURABLE=1 "$root/scripts/pg-test-server" start "$pg_dir")"
source "$root/bench/http_common.sh"

ticks() {  # ticks PID... -> the sum of their utime + stime (clock ticks)
  local total=0 pid
  for pid in "$@"; do
    if [[ -r "/proc/$pid/stat" ]]; then
      total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0) ))
    fi
  done
  echo "$total"
}

start_telic_http "$work/serve.log" "$telic" --db "$pg_url"
session="$(mcp "$port" "" "$init_body")"
pg_pids=($(pgrep -x postgres))
telic_before="$(ticks "$server_pid")"
pg_before="$(ticks "${pg_pids[@]}")"
line="$(TELIC_TARGETS="127.0.0.1:$port=$session" TELIC_BODY="$write_body" wrk -t2 -c "$connections" -d "${duration}s" \
        -s "$root/bench/mcp_call.lua" "http://127.0.0.1:$port/mcp" | grep '^RESULT')"
pg_pids=($(pgrep -x postgres))  # backends started during the run count too (from their start)
telic_after="$(ticks "$server_pid")"
pg_after="$(ticks "${pg_pids[@]}")"
requests="$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<<"$line")"
hz="$(getconf CLK_TCK)"
echo "telic_start_run on PostgreSQL: ${line#RESULT }"
awk -v t=$(( telic_after - telic_before )) -v p=$(( pg_after - pg_before )) -v n="$requests" -v hz="$hz" 'BEGIN {
  printf "CPU seconds: telic %.2f, PostgreSQL %.2f; per write: telic %.3f ms, PostgreSQL %.3f ms\n",
         t / hz, p / hz, t / hz / n * 1000, p / hz / n * 1000 }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
