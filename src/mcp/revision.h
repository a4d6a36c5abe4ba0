// MCP revision selection per request (docs/API.md "Protocol revisions").
//
// telic speaks the stateless revision 2026-07-28 ("modern": protocol version,
// client capabilities and client info in every request's `_meta`, no
// initialize) beside 2025-11-25 and older ("legacy": an initialize handshake,
// and on HTTP a session). The era is chosen per request: a request whose
// params._meta carries "io.modelcontextprotocol/protocolVersion" is modern,
// any other is legacy and is answered exactly as before.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/canonical_json.h"

namespace telic::mcp {

inline constexpr const char* kModernRevision = "2026-07-28";

// Error codes of 2026-07-28 (schema.ts: the -32020..-32099 MCP sub-range).
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
// "Resource not found": -32002 up to 2025-11-25; 2026-07-28 uses -32602.
inline constexpr int kLegacyResourceNotFound = -32002;

// The `_meta` keys of 2026-07-28.
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";

// Revisions served statelessly from `_meta` (newest first).
const std::vector<std::string>& ModernProtocolVersions();
// Every revision telic speaks, modern then legacy, newest first (the
// `supported` list of UnsupportedProtocolVersionError, server/discover's
// supportedVersions).
std::vector<std::string> AllProtocolVersions();
bool IsModernVersion(std::string_view version);

// What one request says about its client.
struct RequestContext {
  bool modern = false;
  std::string protocol_version;               // modern: the requested revision
  Json client_capabilities = Json::object();  // modern: this request's capabilities
  Json client_info;                           // null when absent
  std::optional<std::string> log_level;       // modern: opt-in to notifications/message
  // W3C trace context from _meta (any era), validated (store/trace_context.h);
  // the trace events the request causes record it.
  std::optional<std::string> traceparent;
  std::optional<std::string> tracestate;

  // The client declared form-mode elicitation (an empty `elicitation` object
  // means form, per 2026-07-28 client/elicitation).
  bool SupportsFormElicitation() const;
};

// Reads a request's params._meta. Returns the context, or the complete
// JSON-RPC error reply for `id`: -32022 for a modern request naming a revision
// telic does not speak; -32602 for a malformed modern `_meta`.
std::variant<RequestContext, std::string> ReadRequestContext(const Json& id, const Json& params);

// True when a request's params carry a 2026-07-28-style `_meta` protocol
// version (any value but a legacy revision's name).
bool IsModernMessage(const Json& params);

// The UnsupportedProtocolVersionError reply (data: supported, requested).
std::string UnsupportedVersionReply(const Json& id, std::string_view requested);

// How long a client may cache a result (CacheableResult), or none.
struct CacheHint {
  int64_t ttl_ms = 0;
  bool is_public = false;
};

// Lists that change only with a new telic binary: cacheable by anyone for an hour.
inline constexpr CacheHint kStaticList{3600000, true};

// A modern result: adds resultType "complete" (unless set), the serverInfo
// `_meta`, and ttlMs/cacheScope when `cache` is given.
Json ModernResult(Json result, std::optional<CacheHint> cache = std::nullopt);

// Methods each era lacks: 2026-07-28 removed ping, logging/setLevel,
// resources/(un)subscribe and initialize; it added server/discover and
// subscriptions/listen.
bool MethodExistsIn(bool modern, std::string_view method);

// The HTTP status a reply to a modern request travels with: 400 for
// HeaderMismatch, MissingRequiredClientCapability and
// UnsupportedProtocolVersion, 404 for Method not found, else 200.
int ModernHttpStatus(const std::string& reply);

// The Streamable HTTP request headers of 2026-07-28 that mirror the body.
struct MirroredHeaders {
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> method;            // Mcp-Method
  std::optional<std::string> name;              // Mcp-Name
  bool duplicated = false;                      // any of them sent more than once
};

// Checks a modern HTTP request's headers against its body (`method`,
// `params`): the three headers are required (Mcp-Name for tools/call,
// resources/read, prompts/get and, by taskId, tasks/get, tasks/update and tasks/cancel), an Mcp-Name in the =?base64?...?= form is
// decoded before comparing, and values must be header-safe. Returns the
// HeaderMismatch reply for `id` on the first failure.
std::optional<std::string> CheckMirroredHeaders(const MirroredHeaders& headers, const Json& id, std::string_view method,
                                                const Json& params);

// Decodes a `=?base64?...?=` header value; nullopt for a malformed one.
// Plain values are returned unchanged.
std::optional<std::string> DecodeHeaderValue(std::string_view value);

}  // namespace telic::mcp
