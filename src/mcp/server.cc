#include "mcp/server.h"

#include <fmt/format.h>

#include "base/json_writer.h"
#include "base/redact.h"
#include "base/text.h"
#include "mcp/jsonrpc.h"
#include "mcp/prompts.h"
#include "mcp/result_writer.h"
#include "mcp/tasks.h"
#include "mcp/tool_output.h"
#include "mcp/tools.h"
#include "schema/bundle.h"
#include "schema/host_schemas.h"
#include "schema/prebuilt_bundles.h"
#include "schema/registry.h"
#include "schema/validator.h"
#include "store/records.h"
#include "store/trace_context.h"

namespace telic::mcp {
namespace {

Json IssueToJson(const Issue& issue) {
  return {{"path", schema::PointerToDottedPath(issue.pointer)},
          {"pointer", issue.pointer},
          {"code", issue.code},
          {"message", CleanMessage(issue.message, 400)}};
}

// Validates tool arguments; the error lists every violation.
Status ValidateArguments(const ToolSpec& tool, Json& arguments) {
  auto validator = schema::Registry::Default().Find(tool.schema_path);
  if (!validator) return std::unexpected(validator.error());
  std::vector<Issue> issues = (*validator)->Validate(arguments);
  if (issues.empty()) return Ok();
  std::string summary;
  for (const Issue& issue : issues) {
    if (!summary.empty()) summary += "; ";
    summary += fmt::format("{}: {}", issue.pointer.empty() ? "/" : issue.pointer, issue.message);
  }
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("Input validation error: Invalid arguments for tool {}: {}", tool.name, summary), issues);
}

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                                     "2024-10-07"};
  return kVersions;
}

// Error messages may quote caller input (a target, a field value): they are
// redacted like everything else telic returns or stores.
Json ToolErrorPayload(const Error& error) {
  Json payload = {{"ok", false}, {"code", ErrorCodeName(error.code())}, {"error", RedactedText(CleanMessage(error.message()))}};
  if (!error.issues().empty()) {
    Json issues = Json::array();
    for (size_t i = 0; i < error.issues().size() && i < 32; ++i) issues.push_back(store::RedactedJson(IssueToJson(error.issues()[i])));
    payload["issues"] = issues;
  }
  return payload;
}

Json ToolSuccessPayload(Json fields) {
  Json payload = {{"ok", true}};
  for (auto it = fields.begin(); it != fields.end(); ++it) payload[it.key()] = std::move(it.value());
  return payload;
}

namespace {

// The result as a JSON value, for the paths that serialise it with dump():
// the text is written first, then the served-schema references are expanded.
Json ToolResultObject(Json payload, bool is_error) {
  std::string text = ToolResultText(payload, false);
  schema::ExpandServedSchemaRefs(payload);
  Json result = {{"content", Json::array({{{"type", "text"}, {"text", std::move(text)}}})},
                 {"structuredContent", std::move(payload)}};
  if (is_error) result["isError"] = true;
  return result;
}

}  // namespace

Json ToolResultFromPayload(Json payload, bool is_error) { return ToolResultObject(std::move(payload), is_error); }

Json ToolErrorResult(const Error& error) { return ToolResultObject(ToolErrorPayload(error), true); }

Json ToolSuccessResult(const Json& fields) { return ToolResultObject(ToolSuccessPayload(fields), false); }

Server::Server(controller::RunService& service)
    : service_(service),
      tools_(BuildTools(service)),
      meter_(std::make_unique<ContextMeter>(service.store())),
      tasks_(std::make_unique<TaskRegistry>()) {
  // Every payload leaves through the result writer (Dispatch) or
  // ToolResultObject, which expands references: no schema copy per action.
  service_.set_action_schemas(controller::ActionSchemas::kReferences);
}

Server::~Server() = default;

void Server::AddTools(std::vector<ToolSpec> tools) {
  for (auto& tool : tools) tools_.push_back(std::move(tool));
  std::lock_guard lock(tool_list_mutex_);
  tool_list_.reset();
}

namespace {

// A tool's inputSchema as compact text: prebuilt at build time, else bundled now.
std::string InputSchemaText(const ToolSpec& tool) {
  if (const auto* prebuilt = schema::FindPrebuiltBundle(tool.schema_path)) return std::string(prebuilt->text);
  auto schema = schema::BundleToolInputForListing(schema::Registry::Default(), tool.schema_path);
  return Compact(schema ? *schema : Json::object());
}

// A tool's outputSchema as compact text, or nullopt when it has none.
std::optional<std::string> OutputSchemaText(const ToolSpec& tool) {
  if (const auto* prebuilt = schema::FindPrebuiltBundle(ToolOutputSchemaPath(tool.name))) {
    return std::string(prebuilt->text);
  }
  auto output = schema::BundleToolOutputForListing(schema::Registry::Default(), ToolOutputSchemaPath(tool.name));
  if (!output) return std::nullopt;
  return Compact(*output);
}

// Writes a tools/list entry, or a reply's result, with the schemas' or the
// entries' text given instead of serialised (base/json_writer.h).
class PrecomputedMembers final : public WriteOrder {
 public:
  static constexpr int kTop = 1;  // the object written; nested ones are plain
  void Set(std::string_view key, std::string_view text) { members_.emplace_back(key, text); }
  std::optional<std::string_view> Precomputed(int context, std::string_view key, const Json& /*value*/,
                                              int /*depth*/) const override {
    if (context != kTop) return std::nullopt;
    for (const auto& [name, text] : members_) {
      if (name == key) return text;
    }
    return std::nullopt;
  }

 private:
  std::vector<std::pair<std::string_view, std::string_view>> members_;
};

// A JSON-RPC reply (ResultResponse's object) whose `result` members are
// written as `result` says.
class ResultWithPrecomputedMembers final : public WriteOrder {
 public:
  static constexpr int kRoot = 2;
  explicit ResultWithPrecomputedMembers(const PrecomputedMembers& result) : result_(result) {}
  int ChildContext(int context, std::string_view key) const override {
    return context == kRoot && key == "result" ? PrecomputedMembers::kTop : 0;
  }
  std::optional<std::string_view> Precomputed(int context, std::string_view key, const Json& value,
                                              int depth) const override {
    return result_.Precomputed(context, key, value, depth);
  }

 private:
  const PrecomputedMembers& result_;
};

}  // namespace

std::shared_ptr<const Server::ToolList> Server::BuiltToolList() const {
  std::lock_guard lock(tool_list_mutex_);
  if (tool_list_) return tool_list_;
  std::string text = "[";
  for (const ToolSpec& tool : tools_) {
    if (text.size() > 1) text += ',';
    Json entry = {{"name", tool.name},
                  {"title", tool.title},
                  {"description", tool.description},
                  {"inputSchema", nullptr},
                  {"annotations",
                   {{"readOnlyHint", tool.read_only},
                    {"destructiveHint", false},
                    {"idempotentHint", tool.idempotent},
                    {"openWorldHint", false}}},
                  {"execution", {{"taskSupport", "forbidden"}}}};
    PrecomputedMembers schemas;
    std::string input = InputSchemaText(tool);
    schemas.Set("inputSchema", input);
    // Every tool has one (ToolOutputTest); without it the tool is listed as before.
    std::optional<std::string> output = OutputSchemaText(tool);
    if (output) {
      entry["outputSchema"] = nullptr;
      schemas.Set("outputSchema", *output);
    }
    WriteJson(entry, -1, text, &schemas, PrecomputedMembers::kTop);
  }
  text += ']';
  tool_list_ = std::make_shared<const ToolList>(ToolList{std::move(text)});
  return tool_list_;
}

Json Server::ListTools() const { return Json::parse(BuiltToolList()->text); }

std::string Server::ToolListReply(const Json& id, bool modern) const {
  auto list = BuiltToolList();
  Json result = {{"tools", nullptr}};
  if (modern) result = ModernResult(std::move(result), kStaticList);
  PrecomputedMembers entries;
  entries.Set("tools", list->text);
  ResultWithPrecomputedMembers reply(entries);
  std::string line;
  WriteJson(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}, -1, line, &reply,
            ResultWithPrecomputedMembers::kRoot);
  return line;
}

void Server::KeepRefusal(const ToolSpec& tool, const Json& arguments, const Json& refusal) {
  // Writes and the broker check: a refused read says nothing about the run.
  if (tool.read_only && tool.name != "telic_check_tool_action") return;
  if (!arguments.is_object() || !arguments.contains("run_id") || !arguments["run_id"].is_string()) return;
  (void)service_.RecordRefusedCall(arguments["run_id"].get<std::string>(), tool.name, refusal);
}

std::optional<Server::ToolPayload> Server::CallToolPayload(const std::string& name, const Json* arguments,
                                                           const TaskControl* control) {
  auto it = std::find_if(tools_.begin(), tools_.end(), [&](const ToolSpec& t) { return t.name == name; });
  if (it == tools_.end()) return std::nullopt;
  Json args = arguments ? *arguments : Json();
  if (!arguments) {
    return ToolPayload{ToolErrorPayload(Error(ErrorCode::kInvalidArgument,
                                              fmt::format("Input validation error: Invalid arguments for tool {}: "
                                                          "arguments is required (expected object, received undefined)",
                                                          name),
                                              {Issue{"", "invalid_type", "expected object, received undefined"}})),
                       true};
  }
  if (auto valid = ValidateArguments(*it, args); !valid) {
    Json refusal = ToolErrorPayload(valid.error());
    KeepRefusal(*it, args, refusal);
    return ToolPayload{std::move(refusal), true};
  }
  const bool lean = CurrentProfile() == Profile::kLean;
  std::optional<LeanBefore> before = lean ? LeanStateBefore(service_, name, args) : std::nullopt;
  Result<Json> result = [&]() -> Result<Json> {
    try {
      Result<Json> fields = control && it->task_handler ? it->task_handler(args, *control) : it->handler(args);
      if (fields && lean) return LeanPayload(name, std::move(*fields), before);
      return fields;
    } catch (const std::exception& ex) {
      return Fail(ErrorCode::kInternal, fmt::format("internal error: {}", ex.what()));
    }
  }();
  if (!result) {
    Json refusal = ToolErrorPayload(result.error());
    KeepRefusal(*it, args, refusal);
    return ToolPayload{std::move(refusal), true};
  }
  if (observer_) {
    schema::ExpandServedSchemaRefs(*result);  // an observer sees plain JSON
    observer_(*it, *result);
  }
  if (!it->read_only && result->contains("run") && (*result)["run"].is_object()) {
    hub_.PublishRunChanged((*result)["run"].value("runId", ""));
  }
  return ToolPayload{ToolSuccessPayload(std::move(*result)), false};
}

std::optional<Json> Server::CallTool(const std::string& name, const Json* arguments) {
  auto payload = CallToolPayload(name, arguments);
  if (!payload) return std::nullopt;
  Json result = ToolResultObject(std::move(payload->payload), payload->is_error);
  CountContextCost(name, arguments, &result["structuredContent"], result["content"][0]["text"].get_ref<const std::string&>().size());
  return result;
}

void Server::CountContextCost(const std::string& name, const Json* arguments, const Json* payload, size_t bytes) {
  std::string run_id;
  if (arguments && arguments->is_object() && arguments->contains("run_id") && (*arguments)["run_id"].is_string()) {
    run_id = (*arguments)["run_id"].get<std::string>();
  } else if (payload && payload->is_object() && payload->contains("run") && (*payload)["run"].is_object()) {
    run_id = (*payload)["run"].value("runId", "");
  }
  if (run_id.empty()) return;
  auto it = std::find_if(tools_.begin(), tools_.end(), [&](const ToolSpec& t) { return t.name == name; });
  meter_->Count(run_id, name, bytes, it != tools_.end() && !it->read_only);
}

Profile Server::EffectiveProfile() const {
  if (SessionProfileScope::Active()) return SessionProfileScope::Requested().value_or(profile_);
  int requested = session_profile_.load(std::memory_order_relaxed);
  return requested < 0 ? profile_ : static_cast<Profile>(requested);
}

// A session that asks for a profile (ProfileRequestedAt) is told the one it
// got under capabilities.experimental["telic/profile"]; one that does not
// ask is answered as before.
Json Server::Initialize(const Json& params) const {
  std::string requested = params.is_object() ? params.value("protocolVersion", "") : "";
  const auto& versions = SupportedProtocolVersions();
  bool known = std::find(versions.begin(), versions.end(), requested) != versions.end();
  Json capabilities = Capabilities(false);
  std::optional<Profile> asked = ProfileRequestedAt(params);
  if (asked) {
    if (!SessionProfileScope::Active()) session_profile_.store(static_cast<int>(*asked), std::memory_order_relaxed);
    capabilities["experimental"][kProfileCapability] = {{"name", ProfileName(*asked)}};
  }
  return {{"protocolVersion", known ? requested : versions.front()},
          {"capabilities", std::move(capabilities)},
          {"serverInfo", {{"name", kServerName}, {"version", kServerVersion}}}};
}

std::optional<std::string> Server::Dispatch(const Json& id, const std::string& method, const Json& params) {
  if (method == "initialize") {
    if (!params.is_object()) return ErrorResponse(id, kInvalidParams, "Invalid params: initialize requires params");
    return ResultResponse(id, Initialize(params));
  }
  if (method == "ping") return ResultResponse(id, Json::object());
  if (auto handled = DispatchResources(id, method, params, RequestContext{})) return handled;
  if (method == "tools/list") return ToolListReply(id, false);
  if (method == "prompts/list") return ResultResponse(id, Json{{"prompts", ListPrompts()}});
  if (method == "prompts/get") {
    auto prompt = GetPrompt(params);
    if (!prompt) return ErrorResponse(id, kInvalidParams, prompt.error().message());
    return ResultResponse(id, *prompt);
  }
  if (method == "tools/call") {
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: tools/call requires a string name");
    }
    const Json* arguments = params.contains("arguments") ? &params["arguments"] : nullptr;
    if (arguments && !arguments->is_object()) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: arguments must be an object");
    }
    std::string name = params["name"].get<std::string>();
    // The read tools' written results are kept per run stamp (read_cache.h);
    // not while an observer watches every payload.
    const std::string* run_id = observer_ ? nullptr : ReadResultCache::CacheableRun(name, arguments);
    const std::string cache_key = CurrentProfile() == Profile::kLean ? name + " lean" : name;
    std::optional<controller::RunStamp> stamp;
    if (run_id != nullptr) {
      if (auto read = service_.ReadStamp(*run_id)) {
        if (auto body = read_results_.Find(cache_key, *run_id, *read)) {
          CountContextCost(name, arguments, nullptr, ToolResultTextBytes(*body));
          return ToolResultLineFromBody(id, *body);
        }
        stamp = std::move(*read);
      }  // no such run: the call below answers with the tool's own error
    }
    auto result = CallToolPayload(name, arguments);
    if (!result) return ErrorResponse(id, kInvalidParams, fmt::format("Tool {} not found", name));
    std::string body = ToolResultBody(result->payload, result->is_error);
    CountContextCost(name, arguments, &result->payload, ToolResultTextBytes(body));
    std::string line = ToolResultLineFromBody(id, body);
    if (stamp && !result->is_error) read_results_.Keep(cache_key, *run_id, std::move(*stamp), std::move(body));
    return line;
  }
  return ErrorResponse(id, kMethodNotFound, "Method not found");
}

std::optional<std::string> Server::HandleLine(std::string_view line) {
  if (TrimJs(line).empty()) return std::nullopt;
  Classified classified = ClassifyLine(line, kMaxMessageBytes);
  if (classified.error_response) return classified.error_response;
  if (!classified.message) return std::nullopt;
  const Message& message = *classified.message;
  if (!message.id) {  // notifications: initialized, cancelled, others — nothing to answer
    if (message.method == "notifications/cancelled" && message.params.is_object() && message.params.contains("requestId")) {
      hub_.CancelBySubscriptionId(message.params["requestId"]);  // stdio: ends a subscriptions/listen stream
    }
    return std::nullopt;
  }
  auto context = ReadRequestContext(*message.id, message.params);
  if (const auto* refusal = std::get_if<std::string>(&context)) return *refusal;
  const RequestContext& request = std::get<RequestContext>(context);
  std::optional<store::TraceContext> trace;
  if (request.traceparent) trace = store::TraceContext{*request.traceparent, request.tracestate};
  store::TraceContextScope trace_scope(std::move(trace));  // the events this request causes record it
  ProfileScope profile(EffectiveProfile());
  if (request.modern) return DispatchModern(*message.id, message.method, message.params, request);
  return Dispatch(*message.id, message.method, message.params);
}

}  // namespace telic::mcp
