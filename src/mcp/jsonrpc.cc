#include "mcp/jsonrpc.h"

#include <fmt/format.h>

#include "base/json_parse.h"

namespace telic::mcp {
namespace {

Classified Invalid(const Json& id, std::string_view reason) {
  return Classified{std::nullopt, ErrorResponse(id, kInvalidRequest, fmt::format("Invalid Request: {}", reason))};
}

bool IsValidId(const Json& id) { return id.is_string() || id.is_number_integer() || id.is_number_unsigned(); }

}  // namespace

std::string Compact(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string ResultResponse(const Json& id, const Json& result) {
  return Compact(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string ErrorResponse(const Json& id, int code, std::string_view message, const Json& data) {
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = data;
  return Compact(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", error}});
}

Classified ClassifyLine(std::string_view line, size_t max_bytes) {
  auto parsed = ParseJsonStrict(line, ParseLimits{max_bytes, kMaxJsonDepth});
  if (!parsed) return Classified{std::nullopt, ErrorResponse(nullptr, kParseError, "Parse error: " + parsed.error().message())};
  Json& value = *parsed;
  if (value.is_array()) return Invalid(nullptr, "batch requests are not supported; send one message per line");
  if (!value.is_object()) return Invalid(nullptr, "a message must be a JSON object");
  Json id = value.contains("id") ? value["id"] : Json(nullptr);
  bool has_id = value.contains("id");
  if (has_id && !IsValidId(id)) return Invalid(nullptr, "id must be a string or an integer");
  if (value.value("jsonrpc", Json()) != "2.0") return Invalid(id, "jsonrpc must be \"2.0\"");
  if (!value.contains("method")) {
    if (value.contains("result") || value.contains("error")) return {};  // a client response: nothing to answer
    return Invalid(id, "method is required");
  }
  if (!value["method"].is_string()) return Invalid(id, "method must be a string");
  Json params = value.contains("params") ? value["params"] : Json(nullptr);
  if (value.contains("params") && !params.is_object()) {
    return Classified{std::nullopt, ErrorResponse(id, kInvalidParams, "Invalid params: params must be an object")};
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() != "jsonrpc" && it.key() != "id" && it.key() != "method" && it.key() != "params") {
      return Invalid(id, fmt::format("unknown member \"{}\"", it.key()));
    }
  }
  Message message;
  if (has_id) message.id = id;
  message.method = value["method"].get<std::string>();
  message.params = std::move(params);
  return Classified{std::move(message), std::nullopt};
}

}  // namespace telic::mcp
