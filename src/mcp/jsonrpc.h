// JSON-RPC 2.0 message classification and response building.
#pragma once

#include <optional>
#include <string>

#include "base/canonical_json.h"

namespace telic::mcp {

// JSON-RPC error codes used by telic.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// One incoming message. `id` is absent for notifications.
struct Message {
  std::optional<Json> id;
  std::string method;
  Json params;  // object, or null when absent
};

struct Classified {
  std::optional<Message> message;  // set when the line is a valid request/notification
  std::optional<std::string> error_response;  // set when the line deserves an error reply
};

// Parses and classifies one line. Invalid JSON → -32700 (id null); a batch
// (array) → -32600 "batch requests are not supported"; a non-object, a wrong
// `jsonrpc`, a missing/non-string method or an id that is not a string or
// integer → -32600. A response object from the client (result/error, no
// method) yields neither message nor error (ignored).
Classified ClassifyLine(std::string_view line, size_t max_bytes);

std::string ResultResponse(const Json& id, const Json& result);
std::string ErrorResponse(const Json& id, int code, std::string_view message, const Json& data = nullptr);

// Compact JSON with raw UTF-8 (JSON.stringify style escaping of controls).
std::string Compact(const Json& value);

}  // namespace telic::mcp
