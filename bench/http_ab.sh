#!/usr/bin/env bash
# A/B of two telic builds over Streamable HTTP: requests/s of one
# `telic serve --http` instance under wrk (-t2 -c16, as bench/http_bench.sh),
# the two builds in alternating rounds (A B A B ...) so that machine load hits
# both alike, each round on a fresh ledger. Prints every round and the median.
#
# Usage: bench/http_ab.sh ROUNDS write|read TELIC_A TELIC_B [TELIC ...]
#   write: telic_start_run (durable, one group-committed transaction each)
#   read:  telic_get_run of one run
# Environment: DURATION seconds per round (3), CONNECTIONS (16), LEDGER
# (sqlite, the default, or postgres: one durable server from
# scripts/pg-test-server for all rounds, a fresh schema for each).
set -euo pipefail
if [[ $# -lt 4 ]]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
rounds="$1"
kind="$2"
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
duration="${DURATION:-3}"
connections="${CONNECTIONS:-16}"
command -v wrk >/dev/null || { echo "wrk is missing (Debian package wrk; scripts/setup installs it)" >&2; exit 2; }
ledger="${LEDGER:-sqlite}"
[[ "$ledger" == sqlite || "$ledger" == postgres ]] || { echo "LEDGER must be sqlite or postgres" >&2; exit 2; }
source "$root/bench/http_common.sh"
bench_work telic-http-ab
export TELIC_REPOSITORY_ROOT="$work/repo"
db_args=()
if [[ "$ledger" == postgres ]]; then
  pg_dir="$(mktemp -d /tmp/telic-ab-pg.XXXXXX)"  # its own: the server may run as another user
  trap 'if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"
        "$root/scripts/pg-test-server" stop "$pg_dir" >/dev/null 2>&1 || true' EXIT
  pg_url="$(PG_DURABLE=1 "$root/scripts/pg-test-server" start "$pg_dir")"
fi

declare -A results wals
for ((round = 1; round <= rounds; round++)); do
  for index in $(seq 0 $(( $# - 1 ))); do
    binaries=("$@")
    binary="${binaries[$index]}"
    export TELIC_STATE_DIR="$work/state-$round-$index"
    log="$work/serve-$round-$index.log"
    if [[ "$ledger" == postgres ]]; then
      schema="ab_${round}_${index}_$RANDOM"
      psql -X -q -d "$pg_url" -c "CREATE SCHEMA $schema" >/dev/null
      db_args=(--db "${pg_url}&options=-csearch_path%3D${schema}")
    fi
    start_telic_http "$log" "$binary" "${db_args[@]}"
    pid="$server_pid"
    session="$(mcp "$port" "" "$init_body")"
    body="$write_body"
    if [[ "$kind" == read ]]; then body="$(read_body "$port" "$session")"; fi
    line="$(TELIC_TARGETS="127.0.0.1:$port=$session" TELIC_BODY="$body" wrk -t2 -c "$connections" -d "${duration}s" \
            -s "$root/bench/mcp_call.lua" "http://127.0.0.1:$port/mcp" | grep '^RESULT')"
    results[$index]="${results[$index]:-} $(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$line")"
    # The WAL's size at the round's end (D-P16: it is reused, not grown).
    wal="$(find "$TELIC_STATE_DIR" -name '*-wal' -printf '%s' -quit 2>/dev/null || true)"
    wals[$index]="${wals[$index]:-} $(( ${wal:-0} / 1048576 ))"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
  done
done
echo "telic HTTP A/B, $ledger $kind: wrk -t2 -c$connections -d${duration}s, $rounds alternating rounds, $(nproc) cores"
for index in $(seq 0 $(( $# - 1 ))); do
  binaries=("$@")
  median="$(tr ' ' '\n' <<<"${results[$index]}" | grep . | sort -n |
            awk '{a[NR]=$1} END {printf "%.1f", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')"
  echo "${binaries[$index]}: median ${median} requests/s (rounds:${results[$index]}; WAL MiB at each round's end:${wals[$index]})"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
