#include "mcp/revision.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/redact.h"
#include "base/text.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "store/trace_context.h"

namespace telic::mcp {
namespace {

bool IsHeaderSafe(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u <= 0x7e);
  });
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '=') {
      if (i + 2 < text.size() || ++padding > 2) return std::nullopt;
      continue;
    }
    if (padding > 0) return std::nullopt;
    int v = Base64Value(text[i]);
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

std::string HeaderMismatchReply(const Json& id, std::string_view message) {
  return ErrorResponse(id, kHeaderMismatch, fmt::format("Header mismatch: {}", message));
}

// The value a request's Mcp-Name mirrors: params.name, or params.uri for resources/read.
// W3C trace context (docs/DECISIONS.md D-MCPA2): an invalid traceparent is
// ignored with its tracestate, as W3C Trace Context tells a receiver to; an
// invalid tracestate, or one redaction would change (it would carry a
// secret), is dropped alone.
void ReadTraceContext(const Json& meta, RequestContext& context) {
  auto traceparent = meta.find("traceparent");
  if (traceparent == meta.end() || !traceparent->is_string()) return;
  const std::string& parent = traceparent->get_ref<const std::string&>();
  if (!store::IsValidTraceparent(parent)) return;
  context.traceparent = parent;
  auto tracestate = meta.find("tracestate");
  if (tracestate == meta.end() || !tracestate->is_string()) return;
  const std::string& state = tracestate->get_ref<const std::string&>();
  if (store::IsValidTracestate(state) && RedactedText(state) == state) context.tracestate = state;
}

std::optional<std::string> NameSource(std::string_view method, const Json& params) {
  // The tasks extension routes tasks/get, tasks/update and tasks/cancel by taskId.
  bool task_method = method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel";
  const char* key = method == "resources/read" ? "uri" : task_method ? "taskId" : "name";
  if (method != "tools/call" && method != "prompts/get" && method != "resources/read" && !task_method) return std::nullopt;
  if (!params.is_object() || !params.contains(key) || !params[key].is_string()) return std::string();
  return params[key].get<std::string>();
}

}  // namespace

const std::vector<std::string>& ModernProtocolVersions() {
  static const std::vector<std::string> kVersions = {kModernRevision};
  return kVersions;
}

std::vector<std::string> AllProtocolVersions() {
  std::vector<std::string> all = ModernProtocolVersions();
  for (const auto& legacy : SupportedProtocolVersions()) all.push_back(legacy);
  return all;
}

bool IsModernVersion(std::string_view version) {
  const auto& modern = ModernProtocolVersions();
  return std::find(modern.begin(), modern.end(), version) != modern.end();
}

bool RequestContext::SupportsFormElicitation() const {
  if (!client_capabilities.is_object() || !client_capabilities.contains("elicitation")) return false;
  const Json& elicitation = client_capabilities["elicitation"];
  if (!elicitation.is_object()) return false;
  return elicitation.empty() || elicitation.contains("form");
}

bool IsModernMessage(const Json& params) {
  if (!params.is_object() || !params.contains("_meta") || !params["_meta"].is_object()) return false;
  const Json& meta = params["_meta"];
  if (!meta.contains(kMetaProtocolVersion)) return false;
  if (!meta[kMetaProtocolVersion].is_string()) return true;
  const auto& legacy = SupportedProtocolVersions();
  return std::find(legacy.begin(), legacy.end(), meta[kMetaProtocolVersion].get<std::string>()) == legacy.end();
}

std::string UnsupportedVersionReply(const Json& id, std::string_view requested) {
  return ErrorResponse(id, kUnsupportedProtocolVersion, "Unsupported protocol version",
                       Json{{"supported", AllProtocolVersions()}, {"requested", CleanMessage(std::string(requested), 64)}});
}

std::variant<RequestContext, std::string> ReadRequestContext(const Json& id, const Json& params) {
  RequestContext context;
  if (!params.is_object() || !params.contains("_meta")) return context;
  const Json& meta = params["_meta"];
  if (!meta.is_object()) return context;  // not a modern request: legacy revisions ignore _meta
  ReadTraceContext(meta, context);
  if (!meta.contains(kMetaProtocolVersion)) return context;  // a legacy request
  if (!meta[kMetaProtocolVersion].is_string()) {
    return ErrorResponse(id, kInvalidParams, fmt::format("Invalid params: _meta[\"{}\"] must be a string", kMetaProtocolVersion));
  }
  std::string version = meta[kMetaProtocolVersion].get<std::string>();
  if (!IsModernVersion(version)) {
    const auto& legacy = SupportedProtocolVersions();
    // A legacy revision named in _meta: those revisions define no such key;
    // the request is served as that era serves it (docs/DECISIONS.md D-MCP2).
    if (std::find(legacy.begin(), legacy.end(), version) != legacy.end()) return context;
    return UnsupportedVersionReply(id, version);
  }
  context.modern = true;
  context.protocol_version = version;
  if (meta.contains(kMetaClientCapabilities)) {
    if (!meta[kMetaClientCapabilities].is_object()) {
      return ErrorResponse(id, kInvalidParams,
                           fmt::format("Invalid params: _meta[\"{}\"] must be an object", kMetaClientCapabilities));
    }
    context.client_capabilities = meta[kMetaClientCapabilities];
  }
  if (meta.contains(kMetaClientInfo) && meta[kMetaClientInfo].is_object()) context.client_info = meta[kMetaClientInfo];
  if (meta.contains(kMetaLogLevel) && meta[kMetaLogLevel].is_string()) context.log_level = meta[kMetaLogLevel].get<std::string>();
  return context;
}

Json ModernResult(Json result, std::optional<CacheHint> cache) {
  if (!result.is_object()) result = Json::object();
  if (!result.contains("resultType")) result["resultType"] = "complete";
  if (!result.contains("_meta") || !result["_meta"].is_object()) result["_meta"] = Json::object();
  result["_meta"][kMetaServerInfo] = {{"name", kServerName}, {"version", kServerVersion}};
  if (cache) {
    result["ttlMs"] = cache->ttl_ms;
    result["cacheScope"] = cache->is_public ? "public" : "private";
  }
  return result;
}

bool MethodExistsIn(bool modern, std::string_view method) {
  static const std::vector<std::string_view> kLegacyOnly = {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                                                            "resources/unsubscribe"};
  static const std::vector<std::string_view> kModernOnly = {"server/discover", "subscriptions/listen", "tasks/get",
                                                            "tasks/update", "tasks/cancel"};
  const auto& absent = modern ? kLegacyOnly : kModernOnly;
  return std::find(absent.begin(), absent.end(), method) == absent.end();
}

int ModernHttpStatus(const std::string& reply) {
  Json parsed = ParseJsonStrict(reply, ParseLimits{reply.size(), kMaxJsonDepth}).value_or(Json(Json::value_t::discarded));
  if (!parsed.is_object() || !parsed.contains("error") || !parsed["error"].is_object()) return 200;
  Json code = parsed["error"].value("code", Json());
  if (!code.is_number_integer()) return 200;
  int value = code.get<int>();
  if (value == kHeaderMismatch || value == kMissingRequiredClientCapability || value == kUnsupportedProtocolVersion) return 400;
  if (value == kMethodNotFound) return 404;
  return 200;
}

std::optional<std::string> DecodeHeaderValue(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?", kSuffix = "?=";
  if (value.size() < kPrefix.size() + kSuffix.size() || value.substr(0, kPrefix.size()) != kPrefix ||
      value.substr(value.size() - kSuffix.size()) != kSuffix) {
    return std::string(value);
  }
  return DecodeBase64(value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size()));
}

std::optional<std::string> CheckMirroredHeaders(const MirroredHeaders& headers, const Json& id, std::string_view method,
                                                const Json& params) {
  if (headers.duplicated) return HeaderMismatchReply(id, "MCP-Protocol-Version, Mcp-Method and Mcp-Name may each appear once");
  const Json& meta = params.is_object() && params.contains("_meta") ? params["_meta"] : Json();
  std::string body_version = meta.is_object() && meta.contains(kMetaProtocolVersion) && meta[kMetaProtocolVersion].is_string()
                                 ? meta[kMetaProtocolVersion].get<std::string>()
                                 : std::string();
  if (!headers.protocol_version) return HeaderMismatchReply(id, "the MCP-Protocol-Version header is required");
  if (*headers.protocol_version != body_version) {
    return HeaderMismatchReply(id, fmt::format("MCP-Protocol-Version header value '{}' does not match body value '{}'",
                                               CleanMessage(*headers.protocol_version, 64), CleanMessage(body_version, 64)));
  }
  if (!headers.method) return HeaderMismatchReply(id, "the Mcp-Method header is required");
  if (!IsHeaderSafe(*headers.method) || *headers.method != method) {
    return HeaderMismatchReply(id, fmt::format("Mcp-Method header value '{}' does not match body value '{}'",
                                               CleanMessage(*headers.method, 64), CleanMessage(std::string(method), 64)));
  }
  std::optional<std::string> source = NameSource(method, params);
  if (!source) return std::nullopt;
  if (!headers.name) return HeaderMismatchReply(id, fmt::format("the Mcp-Name header is required for {}", method));
  std::optional<std::string> decoded = IsHeaderSafe(*headers.name) ? DecodeHeaderValue(*headers.name) : std::nullopt;
  if (!decoded) return HeaderMismatchReply(id, "the Mcp-Name header value is malformed");
  if (*decoded != *source) {
    return HeaderMismatchReply(id, fmt::format("Mcp-Name header value '{}' does not match body value '{}'",
                                               CleanMessage(*decoded, 128), CleanMessage(*source, 128)));
  }
  return std::nullopt;
}

}  // namespace telic::mcp
