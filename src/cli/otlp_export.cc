#include "cli/otlp_export.h"

#include <arpa/inet.h>

#include <cstdio>
#include <ctime>
#include <optional>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/text.h"
#include "cli/http_features.h"
#include "controller/views.h"
#include "mcp/server.h"

namespace telic::cli {
namespace {

constexpr int kSpanKindInternal = 1;
constexpr int kStatusOk = 1;
constexpr int kStatusError = 2;

// The first `bytes` bytes of sha256(text) as lowercase hex; never all zeros
// (an invalid id in OTLP).
std::string DerivedId(const std::string& text, size_t bytes) {
  std::string hex = Sha256Hex(text).substr(0, bytes * 2);
  if (hex.find_first_not_of('0') == std::string::npos) hex.back() = '1';
  return hex;
}

std::string TraceId(const std::string& run_id) { return DerivedId("telic/otlp/trace/" + run_id, 16); }
std::string SpanId(const std::string& run_id, const std::string& key) {
  return DerivedId("telic/otlp/span/" + run_id + "/" + key, 8);
}

// "2026-12-02T08:15:53.310Z" as Unix nanoseconds (a decimal string, as
// OTLP/JSON encodes 64-bit integers); nullopt when it is not that form.
std::optional<std::string> UnixNanos(const std::string& iso) {
  int y, mo, d, h, mi, s, ms;
  char z = 0;
  if (iso.size() != 24 || std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &s, &ms, &z) != 8 ||
      z != 'Z') {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  int64_t seconds = ::timegm(&tm);
  return std::to_string((seconds * 1000 + ms) * 1'000'000);
}

Json Attr(const std::string& key, const std::string& value) { return {{"key", key}, {"value", {{"stringValue", value}}}}; }
Json IntAttr(const std::string& key, int64_t value) {
  return {{"key", key}, {"value", {{"intValue", std::to_string(value)}}}};
}

struct Span {
  Json json;
  std::string end;  // its endTimeUnixNano
};

Json NewSpan(const std::string& run_id, const std::string& key, const std::string& parent_key, const std::string& name,
             const std::string& start, const std::string& end) {
  Json span{{"traceId", TraceId(run_id)}, {"spanId", SpanId(run_id, key)}, {"name", name},
            {"kind", kSpanKindInternal},  {"startTimeUnixNano", start},      {"endTimeUnixNano", end},
            {"attributes", Json::array()}, {"events", Json::array()},        {"status", Json::object()}};
  if (!parent_key.empty()) span["parentSpanId"] = SpanId(run_id, parent_key);
  return span;
}

// An "execute_tool" span for a decision event (permission_checked, broker_decision).
Json DecisionSpan(const store::RunRecord& run, const store::TraceEventRecord& e, const std::string& parent_key,
                  const std::string& at) {
  const Json& d = *e.permission_decision;
  std::string capability = d.is_object() ? d.value("capability", "") : "";
  std::string decision = d.is_object() ? d.value("decision", "") : "";
  Json span = NewSpan(run.run_id, "event/" + std::to_string(e.sequence), parent_key,
                      "execute_tool" + (capability.empty() ? "" : " " + capability), at, at);
  auto& attrs = span["attributes"];
  attrs.push_back(Attr("gen_ai.operation.name", "execute_tool"));
  if (!capability.empty()) attrs.push_back(Attr("gen_ai.tool.name", capability));
  if (e.event_type == "broker_decision") attrs.push_back(Attr("mcp.method.name", "tools/call"));
  attrs.push_back(Attr("telic.event.type", e.event_type));
  attrs.push_back(IntAttr("telic.event.sequence", e.sequence));
  attrs.push_back(Attr("telic.event.hash", e.hash));
  attrs.push_back(Attr("telic.permission.decision", decision));
  attrs.push_back(Attr("telic.actor", e.actor));
  if (decision == "deny") {
    attrs.push_back(Attr("error.type", "permission_denied"));
    span["status"] = {{"code", kStatusError}, {"message", e.summary}};
  } else {
    span["status"] = {{"code", kStatusOk}};
  }
  return span;
}

Json SpanEvent(const store::TraceEventRecord& e, const std::string& at) {
  Json attributes = Json::array({IntAttr("telic.event.sequence", e.sequence), Attr("telic.event.hash", e.hash),
                                 Attr("telic.actor", e.actor), Attr("telic.summary", e.summary)});
  // The event that stored an Evidence says whose it is (store::Provenance).
  if (e.event_type == store::kEvidenceObservedEvent) attributes.push_back(Attr("telic.evidence.provenance", "observed"));
  if (e.event_type == store::kEvidenceClaimedEvent) attributes.push_back(Attr("telic.evidence.provenance", "claimed"));
  return {{"name", e.event_type}, {"timeUnixNano", at}, {"attributes", std::move(attributes)}};
}

Json RootSpan(const store::RunRecord& run, const std::string& start, const std::string& end, int64_t events) {
  Json span = NewSpan(run.run_id, "run", "", "invoke_agent telic", start, end);
  auto& attrs = span["attributes"];
  attrs.push_back(Attr("gen_ai.operation.name", "invoke_agent"));
  attrs.push_back(Attr("gen_ai.agent.name", "telic"));
  attrs.push_back(Attr("gen_ai.agent.id", run.run_id));
  attrs.push_back(Attr("gen_ai.conversation.id", run.run_id));
  attrs.push_back(Attr("telic.run.id", run.run_id));
  attrs.push_back(Attr("telic.run.mode", std::string(domain::Name(run.requested_mode))));
  attrs.push_back(Attr("telic.run.topology", std::string(domain::Name(run.topology))));
  attrs.push_back(Attr("telic.run.status", std::string(domain::Name(run.status))));
  attrs.push_back(IntAttr("telic.run.trace_events", events));
  if (run.status == domain::RunStatus::kBlocked || run.status == domain::RunStatus::kCancelled) {
    attrs.push_back(Attr("error.type", "run_" + std::string(domain::Name(run.status))));
    span["status"] = {{"code", kStatusError}, {"message", "run " + std::string(domain::Name(run.status))}};
  } else if (run.IsTerminal()) {
    span["status"] = {{"code", kStatusOk}};
  }
  return span;
}

bool IsLoopback(std::string host) {
  if (host == "localhost") return true;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace

Result<Json> BuildOtlpTrace(const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace) {
  std::vector<std::string> times;
  for (const auto& e : trace) {
    auto at = UnixNanos(e.timestamp);
    if (!at) return Fail(ErrorCode::kDataLoss, fmt::format("trace event {} has an unreadable timestamp", e.sequence));
    times.push_back(*at);
  }
  auto created = UnixNanos(run.created_at);
  auto updated = UnixNanos(run.updated_at);
  if (!created || !updated) return Fail(ErrorCode::kDataLoss, "the run has an unreadable timestamp");
  std::string start = times.empty() ? *created : times.front();
  std::string end = times.empty() ? *updated : times.back();
  Json spans = Json::array();
  spans.push_back(RootSpan(run, start, end, static_cast<int64_t>(trace.size())));
  // Phases: maximal stretches of consecutive events in one phase; each ends
  // where the next begins (the last where the run's trace ends).
  for (size_t first = 0; first < trace.size();) {
    size_t last = first;
    while (last + 1 < trace.size() && trace[last + 1].phase == trace[first].phase) ++last;
    std::string key = "phase/" + std::to_string(trace[first].sequence);
    std::string phase_end = last + 1 < trace.size() ? times[last + 1] : end;
    Json phase = NewSpan(run.run_id, key, "run", "phase " + trace[first].phase, times[first], phase_end);
    phase["attributes"] = Json::array({Attr("telic.phase", trace[first].phase),
                                       IntAttr("telic.event.first_sequence", trace[first].sequence),
                                       IntAttr("telic.event.last_sequence", trace[last].sequence)});
    std::vector<Json> decisions;
    for (size_t i = first; i <= last; ++i) {
      if (trace[i].permission_decision) {
        decisions.push_back(DecisionSpan(run, trace[i], key, times[i]));
      } else {
        phase["events"].push_back(SpanEvent(trace[i], times[i]));
      }
    }
    spans.push_back(std::move(phase));
    for (auto& d : decisions) spans.push_back(std::move(d));
    first = last + 1;
  }
  Json resource{{"attributes", Json::array({Attr("service.name", "telic"), Attr("service.version", mcp::kServerVersion)})}};
  Json scope{{"name", "telic"}, {"version", mcp::kServerVersion}};
  return Json{{"resourceSpans", Json::array({{{"resource", resource},
                                              {"scopeSpans", Json::array({{{"scope", scope}, {"spans", spans}}})}}})}};
}

void AddContextCostAttributes(Json& otlp, const std::vector<store::ContextCost>& costs) {
  Json total = controller::ContextCostToJson(costs);
  Json& root = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  for (const char* key : {"calls", "bytes", "estimatedTokens"}) {
    std::string name = key == std::string("estimatedTokens") ? "estimated_tokens" : key;
    root["attributes"].push_back(IntAttr("telic.context." + name, total[key].get<int64_t>()));
  }
}

Result<OtlpEndpoint> ParseOtlpUrl(std::string_view url, bool allow_remote) {
  auto bad = [&](std::string_view why) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("--otlp URL {}: {}", CleanMessage(url, 200), why));
  };
  std::string_view rest;
  std::string scheme;
  if (url.starts_with("http://")) {
    scheme = "http";
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    scheme = "https";
    rest = url.substr(8);
  } else {
    return bad("only http:// and https:// URLs are allowed");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F || c == '\\') return bad("contains a space, control character or backslash");
  }
  size_t slash = rest.find('/');
  std::string authority(rest.substr(0, slash));
  std::string path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string::npos) return bad("credentials in the URL are not allowed");
  if (path.find('?') != std::string::npos || path.find('#') != std::string::npos) return bad("a query or fragment is not allowed");
  std::string host = authority;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad("unterminated IPv6 address");
    host = authority.substr(0, close + 1);
    std::string port = authority.substr(close + 1);
    if (!port.empty() && (port[0] != ':' || port.size() < 2 || port.find_first_not_of("0123456789", 1) != std::string::npos)) {
      return bad("malformed port");
    }
  } else if (size_t colon = authority.find(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return bad("malformed port");
  }
  if (host.empty()) return bad("no host");
  if (!allow_remote && !IsLoopback(host)) {
    return bad("not a loopback host; pass --allow-remote to send the run's trace to another machine");
  }
  if (path.empty() || path == "/") path = "/v1/traces";
  return OtlpEndpoint{scheme + "://" + authority, path};
}

namespace {

// The run's whole trace as one OTLP/JSON export, its context costs attached.
Result<Json> ExportableTrace(controller::RunService& service, const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, service.store().GetRun(run_id));
  std::vector<store::TraceEventRecord> trace;
  int64_t after = 0;
  while (true) {
    auto page = service.store().GetTrace(run_id, after, 500);
    if (!page) return std::unexpected(page.error());
    for (auto& e : page->events) {
      after = e.sequence;
      trace.push_back(std::move(e));
    }
    if (!page->has_more) break;
  }
  TELIC_ASSIGN_OR_RETURN(Json otlp, BuildOtlpTrace(run, trace));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ContextCost> costs, service.store().GetContextCost(run_id));
  AddContextCostAttributes(otlp, costs);
  return otlp;
}

// Posts `body` to the receiver: an unreachable receiver, a non-2xx answer or
// a 2xx that rejects spans (ExportTracePartialSuccess) is kUnavailable.
Status PostToReceiver(const HttpFeatures& http, const OtlpEndpoint& endpoint, const std::string& body) {
  auto response = http.post_json(endpoint.scheme_host_port, endpoint.path, body);
  if (!response) {
    return Fail(ErrorCode::kUnavailable, fmt::format("OTLP export to {}{} failed: {}", endpoint.scheme_host_port,
                                                     endpoint.path, response.error().message()));
  }
  if (response->status < 200 || response->status > 299) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("OTLP receiver answered HTTP {}: {}", response->status, CleanMessage(response->body, 300)));
  }
  Json answer = ParseJsonStrict(response->body).value_or(Json(Json::value_t::discarded));
  if (answer.is_object() && answer.contains("partialSuccess") && answer["partialSuccess"].is_object()) {
    const Json& partial = answer["partialSuccess"];
    std::string rejected = partial.contains("rejectedSpans") ? partial["rejectedSpans"].dump() : "0";
    if (rejected != "0" && rejected != "\"0\"") {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("OTLP receiver rejected {} spans: {}", rejected, partial.value("errorMessage", "")));
    }
  }
  return Ok();
}

}  // namespace

int RunOtlpExport(controller::RunService& service, const std::string& run_id, const std::string& url,
                  bool allow_remote, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Error& e) {
    err << "telic: " << CleanMessage(e.message()) << "\n";
    return 1;
  };
  std::optional<OtlpEndpoint> endpoint;
  if (!url.empty()) {
    auto parsed = ParseOtlpUrl(url, allow_remote);
    if (!parsed) return fail(parsed.error());
    endpoint = *parsed;
  }
  const HttpFeatures* http = nullptr;
  if (endpoint) {
    auto linked = RequireHttp();  // in `telic`: runs telic-http instead, or fails
    if (!linked) return fail(linked.error());
    http = *linked;
  }
  auto otlp = ExportableTrace(service, run_id);
  if (!otlp) return fail(otlp.error());
  std::string body = otlp->dump();
  if (!endpoint) {
    out << body << "\n";
    return 0;
  }
  if (auto posted = PostToReceiver(*http, *endpoint, body); !posted) return fail(posted.error());
  err << fmt::format("telic: exported run {} ({} spans) to {}{}\n", run_id,
                     (*otlp)["resourceSpans"][0]["scopeSpans"][0]["spans"].size(), endpoint->scheme_host_port,
                     endpoint->path);
  return 0;
}

}  // namespace telic::cli
