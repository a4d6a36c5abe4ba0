// Stored runs, artifacts and traces as MCP resources, completion of their
// ids, and the legacy logging/setLevel (docs/API.md "Resources").
//
//   run://RUN           the run with its artifact list and next action (telic_get_run)
//   artifact://RUN/ID   the artifact's canonical body, digest-checked (telic_get_artifact)
//   trace://RUN         the run's trace events, first page (telic_get_trace)
//   schema://TYPE       artifact TYPE's served JSON Schema (telic_get_schema)
#include <algorithm>

#include <fmt/format.h>

#include "base/text.h"
#include "mcp/jsonrpc.h"
#include "mcp/prompts.h"
#include "mcp/server.h"
#include "schema/host_schemas.h"
#include "schema/registry.h"
#include "schema/validator.h"

namespace telic::mcp {
namespace {

constexpr int kRunsPerResourcePage = 20;
constexpr size_t kMaxCompletionValues = 100;
constexpr const char* kCursorPrefix = "runs:";
constexpr CacheHint kTemplatesCache{3600000, true};
// Store contents: change with every run; caller-specific.
constexpr CacheHint kStoreListCache{0, false};
// An artifact never changes once stored (its digest is checked on read).
constexpr CacheHint kArtifactCache{86400000, false};

struct ResourceUri {
  std::string scheme;  // run, artifact, trace
  std::string run_id;
  std::string artifact_id;  // artifact only
};

bool IsIdentifier(std::string_view text) {
  if (text.empty() || text.size() > 128 || !std::isalnum(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '-';
  });
}

std::optional<ResourceUri> ParseResourceUri(std::string_view uri) {
  for (const char* scheme : {"run", "artifact", "trace"}) {
    std::string prefix = std::string(scheme) + "://";
    if (uri.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = uri.substr(prefix.size());
    ResourceUri parsed{scheme, "", ""};
    if (parsed.scheme == "artifact") {
      size_t slash = rest.find('/');
      if (slash == std::string_view::npos) return std::nullopt;
      parsed.run_id = std::string(rest.substr(0, slash));
      parsed.artifact_id = std::string(rest.substr(slash + 1));
      if (!IsIdentifier(parsed.artifact_id)) return std::nullopt;
    } else {
      parsed.run_id = std::string(rest);
    }
    if (!IsIdentifier(parsed.run_id)) return std::nullopt;
    return parsed;
  }
  return std::nullopt;
}

std::string ArtifactResourceUri(const std::string& run_id, const std::string& artifact_id) {
  return fmt::format("artifact://{}/{}", run_id, artifact_id);
}

Json TextContents(const std::string& uri, const std::string& text) {
  return {{"uri", uri}, {"mimeType", "application/json"}, {"text", text}};
}

Json ResourceTemplates() {
  return Json::array({
      {{"uriTemplate", "run://{run_id}"}, {"name", "run"}, {"title", "Telic run"},
       {"description", "A run's record, its artifact list and its next action (as telic_get_run)."},
       {"mimeType", "application/json"}},
      {{"uriTemplate", "artifact://{run_id}/{artifact_id}"}, {"name", "artifact"}, {"title", "Telic artifact"},
       {"description", "A stored artifact's canonical body, after the same digest check as telic_get_artifact."},
       {"mimeType", "application/json"}},
      {{"uriTemplate", "trace://{run_id}"}, {"name", "trace"}, {"title", "Telic trace"},
       {"description", "A run's hash-chained trace events (the first 500; telic_get_trace pages further)."},
       {"mimeType", "application/json"}},
      {{"uriTemplate", "schema://{type}"}, {"name", "schema"}, {"title", "Telic artifact schema"},
       {"description", "An artifact type's full JSON Schema (as telic_get_schema)."},
       {"mimeType", "application/json"}},
  });
}

// The error for an unknown resource: -32002 before 2026-07-28, -32602 since.
std::string ResourceNotFound(const Json& id, bool modern, const std::string& uri) {
  return ErrorResponse(id, modern ? kInvalidParams : kLegacyResourceNotFound, "Resource not found",
                       Json{{"uri", CleanMessage(uri, 256)}});
}

std::vector<std::string> MatchingPrefix(const std::vector<std::string>& candidates, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& value : candidates) {
    if (value.compare(0, prefix.size(), prefix) == 0) out.push_back(value);
  }
  return out;
}

}  // namespace

Result<Json> Server::ReadToolPayload(const std::string& name, Json arguments) {
  auto it = std::find_if(tools_.begin(), tools_.end(), [&](const ToolSpec& t) { return t.name == name; });
  if (it == tools_.end()) return Fail(ErrorCode::kInternal, fmt::format("no tool {}", name));
  auto validator = schema::Registry::Default().Find(it->schema_path);
  if (!validator) return std::unexpected(validator.error());
  std::vector<Issue> issues = (*validator)->Validate(arguments);
  if (!issues.empty()) return Fail(ErrorCode::kInvalidArgument, "invalid resource identifier", issues);
  ProfileScope full(Profile::kDefault);  // a resource is the whole record in every profile
  TELIC_ASSIGN_OR_RETURN(Json payload, it->handler(arguments));
  // A resource is written with dump(): the action's served schemas as JSON,
  // not references (D-P8).
  schema::ExpandServedSchemaRefs(payload);
  return payload;
}

std::optional<std::string> Server::DispatchResources(const Json& id, const std::string& method, const Json& params,
                                                     const RequestContext& context) {
  bool modern = context.modern;
  auto reply = [&](Json result, std::optional<CacheHint> cache) {
    return ResultResponse(id, modern ? ModernResult(std::move(result), cache) : std::move(result));
  };
  if (method == "resources/templates/list") return reply({{"resourceTemplates", ResourceTemplates()}}, kTemplatesCache);
  if (method == "resources/list") return ListResources(id, params, modern);
  if (method == "resources/read") return ReadResource(id, params, modern);
  if (method == "completion/complete") return Complete(id, params, modern);
  if (method == "resources/subscribe" || method == "resources/unsubscribe") {  // legacy only
    if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string()) {
      return ErrorResponse(id, kInvalidParams, fmt::format("Invalid params: {} requires a string uri", method));
    }
    hub_.SubscribeLegacy(params["uri"].get<std::string>(), method == "resources/subscribe");
    return reply(Json::object(), std::nullopt);
  }
  if (method == "logging/setLevel") {  // legacy only: telic sends no log messages, any valid level is accepted
    static const std::vector<std::string> kLevels = {"debug", "info", "notice", "warning", "error", "critical", "alert",
                                                     "emergency"};
    std::string level = params.is_object() && params.contains("level") && params["level"].is_string()
                            ? params["level"].get<std::string>()
                            : std::string();
    if (std::find(kLevels.begin(), kLevels.end(), level) == kLevels.end()) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: level must be one of debug, info, notice, warning, "
                                               "error, critical, alert, emergency");
    }
    return reply(Json::object(), std::nullopt);
  }
  return std::nullopt;
}

std::string Server::ListResources(const Json& id, const Json& params, bool modern) {
  store::RunQuery query;
  query.limit = kRunsPerResourcePage;
  if (params.is_object() && params.contains("cursor")) {
    const Json& cursor = params["cursor"];
    std::string text = cursor.is_string() ? cursor.get<std::string>() : std::string();
    if (text.rfind(kCursorPrefix, 0) != 0 || !IsIdentifier(text.substr(std::string_view(kCursorPrefix).size()))) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: unknown cursor");
    }
    query.before = text.substr(std::string_view(kCursorPrefix).size());
  }
  auto page = service_.QueryRuns(query);
  if (!page) return ErrorResponse(id, kInternalError, CleanMessage(page.error().message(), 300));
  Json resources = Json::array();
  for (const auto& run : page->runs) {
    resources.push_back({{"uri", "run://" + run.run_id}, {"name", "run " + run.run_id}, {"mimeType", "application/json"},
                         {"description", CleanMessage(fmt::format("{} run ({})", run.requested_mode, run.status), 200)}});
    resources.push_back({{"uri", "trace://" + run.run_id}, {"name", "trace " + run.run_id}, {"mimeType", "application/json"}});
    auto detail = service_.GetRun(run.run_id);
    if (!detail) continue;
    for (const auto& artifact : detail->artifacts) {
      resources.push_back({{"uri", ArtifactResourceUri(run.run_id, artifact.id)},
                           {"name", fmt::format("{} {}", artifact.type, artifact.id)},
                           {"mimeType", "application/json"}});
    }
  }
  Json result = {{"resources", resources}};
  if (page->next) result["nextCursor"] = kCursorPrefix + *page->next;
  return ResultResponse(id, modern ? ModernResult(std::move(result), kStoreListCache) : result);
}

std::string Server::ReadResource(const Json& id, const Json& params, bool modern) {
  if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string()) {
    return ErrorResponse(id, kInvalidParams, "Invalid params: resources/read requires a string uri");
  }
  std::string uri = params["uri"].get<std::string>();
  if (std::optional<std::string> type = SchemaUriType(uri)) {  // an artifact schema a lean NextAction refers to
    auto schema = schema::ArtifactHostSchema(*type);
    if (!schema) return ResourceNotFound(id, modern, uri);
    Json result = {{"contents", Json::array({TextContents(uri, (*schema)->compact())})}};
    return ResultResponse(id, modern ? ModernResult(std::move(result), kArtifactCache) : result);
  }
  std::optional<ResourceUri> parsed = ParseResourceUri(uri);
  if (!parsed) return ResourceNotFound(id, modern, uri);
  Result<Json> payload = Fail(ErrorCode::kInternal, "unreachable");
  std::string text;
  CacheHint cache = kStoreListCache;
  if (parsed->scheme == "artifact") {
    auto artifact = service_.GetArtifact(parsed->run_id, parsed->artifact_id);  // checks the digest
    if (!artifact) {
      if (artifact.error().code() == ErrorCode::kNotFound) return ResourceNotFound(id, modern, uri);
      return ErrorResponse(id, kInternalError, CleanMessage(artifact.error().message(), 300));
    }
    text = artifact->canonical_body;
    cache = kArtifactCache;
  } else {
    Json args = {{"run_id", parsed->run_id}};
    if (parsed->scheme == "trace") args["limit"] = 500;
    payload = ReadToolPayload(parsed->scheme == "run" ? "telic_get_run" : "telic_get_trace", args);
    if (!payload) {
      if (payload.error().code() == ErrorCode::kNotFound) return ResourceNotFound(id, modern, uri);
      return ErrorResponse(id, kInternalError, CleanMessage(payload.error().message(), 300));
    }
    text = Compact(*payload);
  }
  Json result = {{"contents", Json::array({TextContents(uri, text)})}};
  return ResultResponse(id, modern ? ModernResult(std::move(result), cache) : result);
}

std::string Server::Complete(const Json& id, const Json& params, bool modern) {
  if (!params.is_object() || !params.contains("ref") || !params["ref"].is_object() || !params.contains("argument") ||
      !params["argument"].is_object() || !params["argument"].contains("name") || !params["argument"]["name"].is_string()) {
    return ErrorResponse(id, kInvalidParams, "Invalid params: completion/complete requires ref and argument.name");
  }
  const Json& ref = params["ref"];
  std::string argument = params["argument"]["name"].get<std::string>();
  std::string prefix = params["argument"].contains("value") && params["argument"]["value"].is_string()
                           ? params["argument"]["value"].get<std::string>()
                           : std::string();
  std::vector<std::string> candidates;
  // Only resource templates have completable arguments; an unknown ref or
  // argument completes to nothing (completion is a hint, D-MCP4).
  if (ref.value("type", "") == "ref/resource") {
    if (argument == "run_id") {
      auto runs = service_.ListRuns(store::kMaxRunPageSize);
      if (runs) for (const auto& run : *runs) candidates.push_back(run.run_id);
    } else if (argument == "artifact_id") {
      const Json& context = params.value("context", Json::object());
      std::string run_id = context.is_object() && context.contains("arguments") && context["arguments"].is_object()
                               ? context["arguments"].value("run_id", "")
                               : std::string();
      if (IsIdentifier(run_id)) {
        auto detail = service_.GetRun(run_id);
        if (detail) for (const auto& artifact : detail->artifacts) candidates.push_back(artifact.id);
      }
    }
  }
  std::vector<std::string> matches = MatchingPrefix(candidates, prefix);
  size_t total = matches.size();
  if (matches.size() > kMaxCompletionValues) matches.resize(kMaxCompletionValues);
  Json result = {{"completion", {{"values", matches}, {"total", total}, {"hasMore", total > matches.size()}}}};
  return ResultResponse(id, modern ? ModernResult(std::move(result)) : result);
}

}  // namespace telic::mcp
