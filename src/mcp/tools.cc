#include "mcp/tools.h"

#include <algorithm>
#include <utility>

#include "controller/views.h"
#include "mcp/broker_tools.h"
#include "mcp/lean_profile.h"
#include "schema/compact_shape.h"
#include "schema/host_schemas.h"

namespace telic::mcp {
namespace {

using controller::RunService;

std::vector<std::string> Strings(const Json& args, const char* key) {
  return args.contains(key) ? args[key].get<std::vector<std::string>>() : std::vector<std::string>{};
}

std::optional<std::string> OptionalString(const Json& args, const char* key) {
  if (!args.contains(key)) return std::nullopt;
  return args[key].get<std::string>();
}

// Moves the NextAction (a ~25 KB tree) into the payload rather than copying it.
Json RunAndActionPayload(controller::RunAndAction&& result) {
  return {{"run", controller::RunToJson(result.run)}, {"nextAction", std::move(result.next_action)}};
}

Result<Json> StartRun(RunService& service, const Json& args) {
  controller::StartRunRequest request;
  request.original_request = args["original_request"].get<std::string>();
  request.mode = args["mode"].get<std::string>();
  request.host_name = args["host_name"].get<std::string>();
  request.native_subagents = args["native_subagents"].get<std::string>();
  request.host_capabilities = Strings(args, "host_capabilities");
  if (args.contains("authorization_granted")) request.authorization_granted = Strings(args, "authorization_granted");
  request.authorization_denied = Strings(args, "authorization_denied");
  request.shell_execute_allowlist = Strings(args, "shell_execute_allowlist");
  request.network_read_domains = Strings(args, "network_read_domains");
  request.topology_override = OptionalString(args, "topology_override");
  request.prior_run_id = OptionalString(args, "prior_run_id");
  request.observation = OptionalString(args, "observation");
  TELIC_ASSIGN_OR_RETURN(controller::RunAndAction result, service.StartRun(request));
  return RunAndActionPayload(std::move(result));
}

// Index entries per telic_get_run page in the lean profile when the caller names no limit.
constexpr size_t kLeanArtifactsPage = 50;

// The run, its artifact index and its NextAction. The index is paged when
// the caller pages it or the profile is lean (artifactsPage says where the
// page lies); a lean entry is {id, type}, a default one the metadata; with
// include_bodies each entry carries its verified body.
Result<Json> GetRun(RunService& service, const Json& args) {
  const std::string run_id = args["run_id"].get<std::string>();
  TELIC_ASSIGN_OR_RETURN(controller::RunDetail detail, service.GetRun(run_id));
  const bool lean = CurrentProfile() == Profile::kLean;
  const bool paged = lean || args.contains("artifacts_offset") || args.contains("artifacts_limit");
  const size_t total = detail.artifacts.size();
  const size_t offset = std::min<size_t>(args.value("artifacts_offset", 0), total);
  const size_t limit = args.contains("artifacts_limit") ? args["artifacts_limit"].get<size_t>()
                       : lean                           ? kLeanArtifactsPage
                                                        : total;
  const size_t end = paged ? std::min(total, offset + limit) : total;
  Json artifacts = Json::array();
  for (size_t i = paged ? offset : 0; i < end; ++i) {
    const store::ArtifactMeta& meta = detail.artifacts[i];
    Json entry = lean ? Json{{"id", meta.id}, {"type", meta.type}} : controller::ArtifactMetaToJson(meta);
    if (args.value("include_bodies", false)) {
      TELIC_ASSIGN_OR_RETURN(store::StoredArtifact stored, service.GetArtifact(run_id, meta.id));
      entry["body"] = controller::HydratedArtifactToJson(stored)["body"];
    }
    artifacts.push_back(std::move(entry));
  }
  Json payload = {{"run", controller::RunToJson(detail.run)},
                  {"artifacts", std::move(artifacts)},
                  {"nextAction", std::move(detail.next_action)}};
  if (paged) {
    payload["artifactsPage"] = {{"offset", offset}, {"limit", limit}, {"total", total},
                                {"nextOffset", end < total ? Json(end) : Json(nullptr)}};
  }
  return payload;
}

// An artifact type's schema reference with its full schema or compact shape.
Result<Json> GetSchema(RunService& /*service*/, const Json& args) {
  const std::string type = args["type"].get<std::string>();
  TELIC_ASSIGN_OR_RETURN(Json payload, SchemaReference(type));
  payload["type"] = type;
  if (args.value("form", "full") == "compact") {
    TELIC_ASSIGN_OR_RETURN(const std::string* shape, schema::ArtifactCompactShape(type));
    payload["shape"] = *shape;
  } else {
    TELIC_ASSIGN_OR_RETURN(const schema::HostSchema* schema, schema::ArtifactHostSchema(type));
    payload["schema"] = schema->json();
  }
  return payload;
}

Result<Json> ListRuns(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs, service.ListRuns(args["limit"].get<int>()));
  Json list = Json::array();
  for (const auto& run : runs) list.push_back(controller::RunSummaryToJson(run));
  return Json{{"runs", std::move(list)}};
}

Result<Json> GetArtifact(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(store::StoredArtifact artifact,
                         service.GetArtifact(args["run_id"].get<std::string>(), args["artifact_id"].get<std::string>()));
  return Json{{"artifact", controller::HydratedArtifactToJson(artifact)}};
}

Result<Json> GetTrace(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(store::TracePage page,
                         service.GetTrace(args["run_id"].get<std::string>(), args["after_sequence"].get<int64_t>(),
                                          args["limit"].get<int>()));
  Json events = Json::array();
  for (const auto& event : page.events) events.push_back(controller::TraceEventToCanonical(event));
  return Json{{"events", std::move(events)}, {"hasMore", page.has_more}};
}

// `control` (a task's grounding) may stop the grounding and hears its progress.
Result<Json> GroundContextControlled(RunService& service, const Json& args, const TaskControl* control) {
  controller::GroundContextRequest request;
  controller::GroundingControl grounding;
  if (control) grounding = {control->cancelled, control->progress};
  request.run_id = args["run_id"].get<std::string>();
  request.action_id = args["action_id"].get<std::string>();
  request.expected_version = args["expected_run_version"].get<int64_t>();
  request.active_paths = Strings(args, "active_paths");
  if (args.contains("budget")) request.budget = args["budget"];
  TELIC_ASSIGN_OR_RETURN(controller::GroundResult result, service.GroundContext(request, grounding));
  return Json{{"run", controller::RunToJson(result.run)},
              {"nextAction", std::move(result.next_action)},
              {"manifest", std::move(result.manifest)}};
}

Result<Json> GroundContext(RunService& service, const Json& args) { return GroundContextControlled(service, args, nullptr); }

Result<Json> GetNextAction(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> action, service.GetNextAction(args["run_id"].get<std::string>()));
  return Json{{"nextAction", *action}};
}

Result<Json> CancelRun(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(controller::RunAndAction result,
                         service.CancelRun(args["run_id"].get<std::string>(), args["action_id"].get<std::string>(),
                                           args["expected_run_version"].get<int64_t>()));
  return RunAndActionPayload(std::move(result));
}

Result<Json> SubmitArtifact(RunService& service, const Json& args) {
  controller::SubmitRequest request;
  request.run_id = args["run_id"].get<std::string>();
  request.action_id = args["action_id"].get<std::string>();
  request.expected_version = args["expected_run_version"].get<int64_t>();
  request.artifact_type = OptionalString(args, "artifact_type");
  if (args.contains("body")) request.body = args["body"];
  request.body_json = OptionalString(args, "body_json");
  request.source_refs = Strings(args, "source_refs");
  request.clarification_response = OptionalString(args, "clarification_response");
  TELIC_ASSIGN_OR_RETURN(controller::SubmitResult result, service.SubmitArtifact(request));
  Json payload = {{"run", controller::RunToJson(result.run)}};
  if (result.artifact) payload["artifact"] = controller::ArtifactMetaToJson(*result.artifact);
  payload["nextAction"] = std::move(result.next_action);
  if (result.observation) payload["observation"] = std::move(*result.observation);
  return payload;
}

Result<Json> ReplayRun(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(Json report, service.ReplayRun(args["run_id"].get<std::string>()));
  return Json{{"report", report}};
}

ToolSpec Tool(std::string name, std::string title, std::string description, bool read_only,
              Result<Json> (*fn)(RunService&, const Json&), RunService& service) {
  ToolSpec spec;
  spec.schema_path = "tools/" + name + ".json";
  spec.name = std::move(name);
  spec.title = std::move(title);
  spec.description = std::move(description);
  spec.read_only = read_only;
  spec.idempotent = read_only;
  spec.handler = [fn, &service](const Json& args) { return fn(service, args); };
  return spec;
}

}  // namespace

std::vector<ToolSpec> BuildTools(RunService& service) {
  std::vector<ToolSpec> tools = {
      Tool("telic_start_run", "Start Telic run",
           "Store the user's request and start a permission-bounded run; returns the run and its first action.", false,
           StartRun, service),
      Tool("telic_ground_context", "Ground repository context",
           "Answer the context_discovery action: select bounded, secret-free repository sources and store the "
           "ContextManifest.",
           false, GroundContext, service),
      Tool("telic_get_next_action", "Get next Telic action",
           "Return the run's one legal next action: phase, inputs, output type, permissions, budgets.", true,
           GetNextAction, service),
      Tool("telic_cancel_run", "Cancel Telic run",
           "Cancel a running run (with its action and version tokens); the repository is untouched.",
           false, CancelRun, service),
      Tool("telic_submit_artifact", "Submit Telic artifact",
           "Submit the artifact answering the current action (action_id, expected_run_version), or answer a "
           "clarification with clarification_response. A refused submission changes nothing.",
           false, SubmitArtifact, service),
      Tool("telic_list_runs", "List Telic runs",
           "List this repository's runs, newest first.", true,
           ListRuns, service),
      Tool("telic_get_run", "Inspect Telic run",
           "Return a run's record, its artifact index (paged; bodies on request) and its next action.", true,
           GetRun, service),
      Tool("telic_get_artifact", "Read Telic artifact",
           "Return one stored artifact with its body, its sha256 re-verified.", true,
           GetArtifact, service),
      Tool("telic_get_schema", "Get artifact schema",
           "Return an artifact type's full JSON Schema (or compact shape), e.g. after a context compaction.", true,
           GetSchema, service),
      Tool("telic_get_trace", "Inspect Telic trace",
           "Page through a run's append-only trace events by sequence.",
           true, GetTrace, service),
      CheckToolActionTool(service),
      Tool("telic_replay_run", "Replay Telic run",
           "Rebuild a run from its stored artifacts, re-verify every digest and report any difference. Read-only.",
           true, ReplayRun, service),
  };
  // The one long call may run as a task (mcp/tasks.h).
  for (ToolSpec& tool : tools) {
    if (tool.name != "telic_ground_context") continue;
    tool.task_handler = [&service](const Json& args, const TaskControl& control) {
      return GroundContextControlled(service, args, &control);
    };
  }
  return tools;
}

}  // namespace telic::mcp
