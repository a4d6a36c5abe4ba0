#!/usr/bin/env bash
# Soak of one `telic serve --http` instance on SQLite under continuous
# durable writes (telic_start_run, wrk -t2 -c16 as bench/http_bench.sh): the
# same server and ledger through WINDOWS back-to-back windows of SECONDS each.
# After each window it prints the window's writes/s, the server's RSS and
# peak RSS (VmRSS, split into anonymous and file-backed pages, / VmHWM), the WAL file's size and the ledger's size, so
# growth over a long run shows (issue 18 target 6: no growth in memory; D-P16:
# the WAL is reused, not grown). At the end it counts the runs in the ledger
# against the writes wrk saw answered.
#
# Usage: bench/http_soak.sh [TELIC_BINARY] [WINDOWS] [SECONDS]   (build/telic, 6, 10)
# Environment: CONNECTIONS (16); STORE=postgresql runs the server on a durable
# throwaway PostgreSQL (scripts/pg-test-server, fsync on) instead of SQLite,
# and prints "-" for the WAL and ledger columns (PostgreSQL's own files).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
telic="$(realpath "${1:-$root/build/telic}")"
windows="${2:-6}"
seconds="${3:-10}"
connections="${CONNECTIONS:-16}"
command -v wrk >/dev/null || { echo "wrk is missing (Debian package wrk; scripts/setup installs it)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is missing (Debian package sqlite3)" >&2; exit 2; }
[[ -x "$telic" ]] || { echo "telic binary not found: $telic" >&2; exit 2; }
source "$root/bench/http_common.sh"
bench_work telic-http-soak
export TELIC_REPOSITORY_ROOT="$work/repo" TELIC_STATE_DIR="$work/state"
store_args=()
if [[ "${STORE:-sqlite}" == postgresql ]]; then
  command -v psql >/dev/null || { echo "psql is missing (Debian package postgresql)" >&2; exit 2; }
  pg_dir="$(mktemp -d /tmp/telic-soak-pg.XXXXXX)"  # its own: the server may run as another user
  trap 'if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; fi; "$root/scripts/pg-test-server" stop "$pg_dir" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  pg_url="$(PG_DURABLE=1 "$root/scripts/pg-test-server" start "$pg_dir")"
  store_args=(--db "$pg_url")
elif [[ "${STORE:-sqlite}" != sqlite ]]; then
  echo "STORE must be sqlite or postgresql" >&2
  exit 2
fi

mib() { awk -v b="${1:-0}" 'BEGIN { printf "%.1f", b / 1048576 }'; }
status_mb() { awk -v k="$1:" '$1 == k { printf "%.1f", $2 / 1024 }' "/proc/$pid/status"; }

start_telic_http "$work/serve.log" "$telic" "${store_args[@]}"
pid="$server_pid"
session="$(mcp "$port" "" "$init_body")"
ledger="$(find "$TELIC_STATE_DIR" -name '*.sqlite3' -print -quit 2>/dev/null || true)"
# size_mib FILE: a file's size in MiB, "-" on PostgreSQL.
size_mib() { if [[ -n "$ledger" ]]; then mib "$(stat -c %s "$1" 2>/dev/null || echo 0)"; else echo -; fi; }
echo "telic HTTP soak: $windows windows x ${seconds}s of telic_start_run on ${STORE:-sqlite}, wrk -t2 -c$connections, $(nproc) cores, $(date -u +%FT%TZ)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| window | writes/s | answered | RSS MB | of it anonymous | of it files | peak MB | WAL MiB | ledger MiB |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
echo "| start | - | - | $(status_mb VmRSS) | $(status_mb RssAnon) | $(status_mb RssFile) | $(status_mb VmHWM) | $(size_mib "$ledger-wal") | $(size_mib "$ledger") |"
answered=0
for ((window = 1; window <= windows; window++)); do
  line="$(TELIC_TARGETS="127.0.0.1:$port=$session" TELIC_BODY="$write_body" wrk -t2 -c "$connections" -d "${seconds}s" \
          -s "$root/bench/mcp_call.lua" "http://127.0.0.1:$port/mcp" | grep '^RESULT')"
  rps="$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$line")"
  requests="$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")"
  failed="$(sed -n 's/.* failed=\([0-9]*\).*/\1/p' <<<"$line")"
  answered=$((answered + requests - failed))
  echo "| $window | $rps | $answered | $(status_mb VmRSS) | $(status_mb RssAnon) | $(status_mb RssFile) | $(status_mb VmHWM) | $(size_mib "$ledger-wal") | $(size_mib "$ledger") |"
done
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""
if [[ -n "$ledger" ]]; then
  stored="$(sqlite3 "$ledger" 'SELECT count(*) FROM runs')"
else
  stored="$(psql -X -At -d "$pg_url" -c 'SELECT count(*) FROM runs')"
fi
echo "runs stored: $stored; writes answered without error: $answered"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ "$stored" -lt "$answered" ]]; then
  echo "FEWER RUNS STORED THAN ANSWERED" >&2
  exit 1
fi
