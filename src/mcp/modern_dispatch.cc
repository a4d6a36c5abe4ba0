// Server methods for revision 2026-07-28 (stateless, `_meta` per request).
// Legacy requests never reach this file: Server::Dispatch answers them as
// before.
#include <fmt/format.h>

#include "mcp/jsonrpc.h"
#include "mcp/prompts.h"
#include "mcp/server.h"
#include "mcp/tasks.h"

namespace telic::mcp {

Json Server::Capabilities(bool modern) const {
  Json capabilities = {{"tools", {{"listChanged", true}}},
                       {"prompts", {{"listChanged", true}}},
                       {"resources", {{"subscribe", true}, {"listChanged", modern}}},
                       {"completions", Json::object()}};
  if (!modern) capabilities["logging"] = Json::object();  // 2026-07-28 removed logging/setLevel
  if (modern) capabilities["extensions"] = {{kTasksExtension, Json::object()}};
  return capabilities;
}

void Server::set_output(NotificationHub::Sink output) {
  output_ = output;
  hub_.set_legacy_sink(std::move(output));
}

std::variant<int64_t, std::string> Server::OpenListen(const Json& id, const Json& params, NotificationHub::Sink sink) {
  auto filter = ParseSubscriptionFilter(params);
  if (!filter) return ErrorResponse(id, kInvalidParams, filter.error().message());
  sink(SubscriptionAcknowledgement(id, *filter));
  return hub_.Listen(id, std::move(*filter), std::move(sink));
}

std::optional<std::string> Server::DispatchModern(const Json& id, const std::string& method, const Json& params,
                                                  const RequestContext& context) {
  if (!MethodExistsIn(true, method)) return ErrorResponse(id, kMethodNotFound, "Method not found");
  if (method == "server/discover") {
    return ResultResponse(id, ModernResult({{"supportedVersions", AllProtocolVersions()},
                                            {"capabilities", Capabilities(true)}},
                                           kStaticList));
  }
  if (method == "subscriptions/listen") {
    if (!output_) return ErrorResponse(id, kMethodNotFound, "Method not found");
    auto opened = OpenListen(id, params, output_);
    if (const auto* refusal = std::get_if<std::string>(&opened)) return *refusal;
    return std::nullopt;  // the stream stays open; its result comes only when it is closed
  }
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") {
    return DispatchTasks(id, method, params, context);
  }
  if (auto handled = DispatchResources(id, method, params, context)) return handled;
  if (method == "tools/list") return ToolListReply(id, true);
  if (method == "prompts/list") return ResultResponse(id, ModernResult({{"prompts", ListPrompts()}}, kStaticList));
  if (method == "prompts/get") {
    auto prompt = GetPrompt(params);
    if (!prompt) return ErrorResponse(id, kInvalidParams, prompt.error().message());
    return ResultResponse(id, ModernResult(*prompt));
  }
  if (method == "tools/call") {
    if (!params.contains("name") || !params["name"].is_string()) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: tools/call requires a string name");
    }
    const Json* arguments = params.contains("arguments") ? &params["arguments"] : nullptr;
    if (arguments && !arguments->is_object()) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: arguments must be an object");
    }
    std::string name = params["name"].get<std::string>();
    if (auto round_trip = ClarificationRoundTrip(id, name, arguments, params, context)) return round_trip;
    if (auto task = StartToolTask(id, name, arguments, context)) return task;
    auto result = CallTool(name, arguments);
    if (!result) return ErrorResponse(id, kInvalidParams, fmt::format("Tool {} not found", name));
    return ResultResponse(id, ModernResult(std::move(*result)));
  }
  return ErrorResponse(id, kMethodNotFound, "Method not found");
}

}  // namespace telic::mcp
