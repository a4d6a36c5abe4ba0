# Sourced by bench/http_bench.sh and bench/http_ab.sh (needs $root, the
# repository): the requests they send and how they start a server.

init_body='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
write_body='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"telic_start_run","arguments":{"original_request":"benchmark: explain how the entry point is wired","mode":"report_only"}}}'

mcp() {  # mcp PORT SESSION BODY -> prints the response (SESSION "": initializes, prints the session id)
  python3 "$root/bench/mcp_post.py" "$@"
}

read_body() {  # read_body PORT SESSION -> a telic_get_run request for a run it starts there
  local run_id
  run_id="$(mcp "$1" "$2" "$write_body" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["run"]["runId"])')"
  echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"telic_get_run\",\"arguments\":{\"run_id\":\"$run_id\"}}}"
}

# start_telic_http LOG TELIC [ARG ...]: starts `TELIC serve --http 127.0.0.1:0
# ARG ...` in the background (call it without a subshell), sets $server_pid,
# and once the server is ready $port; exits the script when it does not start
# within 30 s.
start_telic_http() {
  local log="$1" telic="$2"
  shift 2
  : >"$log"
  "$telic" serve --http 127.0.0.1:0 "$@" 2>"$log" &
  server_pid=$!
  for _ in $(seq 1 600); do
    if grep -q "Telic MCP ready" "$log"; then
      port="$(sed -n 's/.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/mcp.*/\1/p' "$log" | head -n 1)"
      [[ -n "$port" ]] && return
    fi
    sleep 0.05
  done
  echo "$telic serve --http did not start: $(cat "$log")" >&2
  exit 1
}

# bench_work PREFIX: makes $work, a temporary folder removed at exit together
# with the server whose pid is in $pid (when set), and a one-commit Git
# repository in $work/repo.
bench_work() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
  pid=""
  trap 'if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
  python3 - "$root" "$work/repo" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from mcp_client import make_git_repo
make_git_repo(sys.argv[2])
PY
}
