// The W3C trace context of the host request being served (issue 20 item 6).
//
// A request's params._meta may carry `traceparent` (and `tracestate`); the MCP
// layer validates them and opens a TraceContextScope around the request, and
// every trace event created on that thread while it is open records them
// (TraceEventRecord::traceparent/tracestate), so a run's events join the
// host's OpenTelemetry trace. The context is per thread: work handed to
// another thread takes CurrentTraceContext() along and opens its own scope.
// The fields are stored beside the event, outside its hash (docs/DECISIONS.md
// D-MCPA3).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/records.h"

namespace telic::store {

struct TraceContext {
  std::string traceparent;                // a valid W3C traceparent
  std::optional<std::string> tracestate;  // a valid W3C tracestate, when sent
};

// True for a W3C Trace Context traceparent: version-traceid-parentid-flags in
// lowercase hex (2-32-16-2 digits), version not "ff", neither id all zeros;
// version 00 is exactly 55 characters, a later version may append
// "-<more>" (at most 256 characters in all).
bool IsValidTraceparent(std::string_view value);

// True for a W3C tracestate: at most 512 characters, at most 32 comma-separated
// list members (blank members allowed), each key=value with a key of
// [a-z0-9][a-z0-9_*/-]{0,255} optionally "@" [a-z][a-z0-9_*/-]{0,13}, and a
// value of 1-256 printable ASCII characters other than ',' and '=' that does
// not end in a space.
bool IsValidTracestate(std::string_view value);

// The context of the request served on this thread, if any.
const std::optional<TraceContext>& CurrentTraceContext();

// Makes `context` current on this thread until destroyed, then restores the
// previous one. Nested scopes are allowed; a scope with nullopt clears.
class TraceContextScope {
 public:
  explicit TraceContextScope(std::optional<TraceContext> context);
  ~TraceContextScope();
  TraceContextScope(const TraceContextScope&) = delete;
  TraceContextScope& operator=(const TraceContextScope&) = delete;

 private:
  std::optional<TraceContext> previous_;
};

// Copies the current context into `event` (when there is one and `event` has
// no traceparent yet). Called where trace events are created.
void StampTraceContext(TraceEventRecord& event);

}  // namespace telic::store
