#include "store/trace_context.h"

#include <algorithm>

namespace telic::store {
namespace {

thread_local std::optional<TraceContext> t_trace_context;

bool IsLowerHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsAllZeros(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == '0'; });
}

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/';
}

// key = simple-key / multi-tenant-key (W3C Trace Context, tracestate).
bool IsValidTracestateKey(std::string_view key) {
  size_t at = key.find('@');
  std::string_view tenant = key.substr(0, at);
  if (tenant.empty() || tenant.size() > 256 || !std::all_of(tenant.begin(), tenant.end(), IsKeyChar)) return false;
  if (!((tenant[0] >= 'a' && tenant[0] <= 'z') || (tenant[0] >= '0' && tenant[0] <= '9'))) return false;
  if (at == std::string_view::npos) return true;
  if (tenant.size() > 241) return false;
  std::string_view system = key.substr(at + 1);
  return !system.empty() && system.size() <= 14 && system[0] >= 'a' && system[0] <= 'z' &&
         std::all_of(system.begin(), system.end(), IsKeyChar);
}

bool IsValidTracestateValue(std::string_view value) {
  if (value.empty() || value.size() > 256 || value.back() == ' ') return false;
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; });
}

std::string_view TrimOws(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

bool IsValidTraceparent(std::string_view value) {
  if (value.size() < 55 || value.size() > 256) return false;
  if (value[2] != '-' || value[35] != '-' || value[52] != '-') return false;
  std::string_view version = value.substr(0, 2), trace_id = value.substr(3, 32), parent_id = value.substr(36, 16),
                   flags = value.substr(53, 2);
  if (!IsLowerHex(version) || version == "ff" || !IsLowerHex(trace_id) || !IsLowerHex(parent_id) || !IsLowerHex(flags)) {
    return false;
  }
  if (IsAllZeros(trace_id) || IsAllZeros(parent_id)) return false;
  if (version == "00") return value.size() == 55;
  // A later version: its own fields follow a dash; telic reads only these.
  return value.size() == 55 || (value[55] == '-' && std::all_of(value.begin(), value.end(), [](char c) {
                                  return c > 0x20 && c < 0x7f;
                                }));
}

bool IsValidTracestate(std::string_view value) {
  if (value.size() > 512) return false;
  int members = 0;
  size_t from = 0;
  while (from <= value.size()) {
    size_t comma = value.find(',', from);
    std::string_view member = TrimOws(value.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
    if (!member.empty()) {
      size_t equals = member.find('=');
      if (equals == std::string_view::npos || ++members > 32) return false;
      if (!IsValidTracestateKey(member.substr(0, equals)) || !IsValidTracestateValue(member.substr(equals + 1))) {
        return false;
      }
    }
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return true;
}

const std::optional<TraceContext>& CurrentTraceContext() { return t_trace_context; }

TraceContextScope::TraceContextScope(std::optional<TraceContext> context) : previous_(std::move(t_trace_context)) {
  t_trace_context = std::move(context);
}

TraceContextScope::~TraceContextScope() { t_trace_context = std::move(previous_); }

void StampTraceContext(TraceEventRecord& event) {
  if (!t_trace_context || event.traceparent) return;
  event.traceparent = t_trace_context->traceparent;
  event.tracestate = t_trace_context->tracestate;
}

}  // namespace telic::store
