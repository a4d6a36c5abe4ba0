#include "mcp/tools.h"

#include <utility>

#include "controller/views.h"
#include "mcp/broker_tools.h"

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

Result<Json> GetRun(RunService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(controller::RunDetail detail, service.GetRun(args["run_id"].get<std::string>()));
  Json artifacts = Json::array();
  for (const auto& meta : detail.artifacts) artifacts.push_back(controller::ArtifactMetaToJson(meta));
  return Json{{"run", controller::RunToJson(detail.run)},
              {"artifacts", std::move(artifacts)},
              {"nextAction", std::move(detail.next_action)}};
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
           "Store the immutable request and create a permission-bounded Telic run. This does not call a model.", false,
           StartRun, service),
      Tool("telic_ground_context", "Ground repository context",
           "Select bounded, secret-aware repository sources the run may read, store each exact text once, and submit "
           "the trace-safe ContextManifest for the context_discovery action.",
           false, GroundContext, service),
      Tool("telic_get_next_action", "Get next Telic action",
           "Return the single legal next phase, bounded inputs, output schema, permissions, and budgets.", true,
           GetNextAction, service),
      Tool("telic_cancel_run", "Cancel Telic run",
           "Cancel the current non-terminal run with its latest action and version tokens. This records a terminal "
           "cancellation without changing the repository.",
           false, CancelRun, service),
      Tool("telic_submit_artifact", "Submit Telic artifact",
           "Submit the typed artifact answering the current action (with its action_id and expected_run_version), or "
           "answer a pending clarification with clarification_response. Invalid, stale or out-of-permission "
           "submissions are rejected and change nothing.",
           false, SubmitArtifact, service),
      Tool("telic_list_runs", "List Telic runs",
           "List runs stored for this repository, newest first, so the user can choose one to resume or inspect.", true,
           ListRuns, service),
      Tool("telic_get_run", "Inspect Telic run",
           "Return a run's record, its artifact metadata in insertion order, and its current next action.", true,
           GetRun, service),
      Tool("telic_get_artifact", "Read Telic artifact",
           "Return one stored artifact with its canonical body after re-verifying its sha256 digest.", true,
           GetArtifact, service),
      Tool("telic_get_trace", "Inspect Telic trace",
           "Page through a run's append-only trace events by sequence. Permission decisions appear only when recorded; "
           "chain-of-thought is never stored or returned.",
           true, GetTrace, service),
      CheckToolActionTool(service),
      Tool("telic_replay_run", "Replay Telic run",
           "Rebuild a run's transitions from its stored artifacts and events, re-verify every artifact digest, and "
           "report any difference from the stored run state. Read-only.",
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
