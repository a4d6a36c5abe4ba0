-- wrk script for telic's HTTP benchmark: every request is one MCP tools/call
-- POST /mcp. TELIC_TARGETS lists "host:port=session" pairs; wrk thread i
-- sends to target i mod n (so one wrk run can load several instances).
-- TELIC_BODY is the JSON-RPC body.
local targets = {}
local next_target = 0
local threads = {}

function setup(thread)
  if #targets == 0 then
    for entry in string.gmatch(os.getenv("TELIC_TARGETS"), "[^,]+") do
      local host, port, session = string.match(entry, "^(.+):(%d+)=(.+)$")
      table.insert(targets, {addr = wrk.lookup(host, port)[1], host = host .. ":" .. port, session = session})
    end
  end
  local target = targets[(next_target % #targets) + 1]
  next_target = next_target + 1
  thread.addr = target.addr
  thread:set("session", target.session)
  thread:set("host", target.host)  -- telic refuses a Host that is not its own
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.body = os.getenv("TELIC_BODY")
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
  wrk.headers["Mcp-Session-Id"] = session
  wrk.headers["Host"] = host
  failures = 0
end

function response(status, headers, body)
  if status ~= 200 or string.find(body, '"isError":true', 1, true) then
    if failures == 0 and os.getenv("TELIC_BENCH_DEBUG") then
      io.stderr:write(string.format("first failure: HTTP %d %s\n", status, string.sub(body, 1, 300)))
    end
    failures = failures + 1
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local tool_errors = 0
  for _, thread in ipairs(threads) do tool_errors = tool_errors + (thread:get("failures") or 0) end
  io.write(string.format("RESULT requests=%d seconds=%.2f rps=%.1f p50_ms=%.2f p99_ms=%.2f failed=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, tool_errors, summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
