#include "mcp/check_tool.h"

#include <fmt/format.h>

#include "controller/views.h"
#include "mcp/graph_tools.h"

namespace telic::mcp {
namespace {

controller::CheckRunRequest RequestFromArguments(const Json& args) {
  controller::CheckRunRequest request;
  request.run_id = args["run_id"].get<std::string>();
  if (args.contains("expected_run_version")) request.expected_version = args["expected_run_version"].get<int64_t>();
  request.command = args["command"];
  request.cwd = args.value("cwd", "");
  if (args.contains("node_id")) request.node_id = args["node_id"].get<std::string>();
  if (args.contains("task_id")) request.task_id = args["task_id"].get<std::string>();
  request.limits.wall_time_ms = args.value("wall_time_seconds", int64_t{120}) * 1000;
  request.limits.max_processes = args.value("max_processes", int64_t{256});
  request.limits.output_tail_bytes = args.value("output_tail_bytes", size_t{16384});
  return request;
}

// A task of `run_id`'s graph that is running and awaits its verification.
Status CheckVerifiableTask(graph::TaskService& tasks, const std::string& run_id, const std::string& task_id) {
  TELIC_ASSIGN_OR_RETURN(graph::TaskDetail detail, tasks.GetTask(task_id));
  const store::TaskRecord& task = detail.task;
  if (task.run_id != run_id) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("task {} does not belong to run {}", task_id, run_id),
                {{"/task_id", "custom", "a task of another graph"}});
  }
  if (task.state != domain::TaskState::kRunning || task.hold != "awaiting_verification") {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("task {} is not awaiting verification (state {}{})", task_id, task.state,
                            task.hold ? ", " + *task.hold : ""),
                {{"/task_id", "custom", "not awaiting verification"}});
  }
  return Ok();
}

observation::RunControl ControlOf(const TaskControl* control, const std::string& command) {
  observation::RunControl run;
  if (!control) return run;
  run.cancelled = control->cancelled;
  if (control->progress) {
    run.progress = [progress = control->progress, command](const observation::RunProgress& p) {
      progress(fmt::format("running `{}`: {} s, {} bytes of output", command, p.elapsed_ms / 1000, p.output_bytes));
    };
  }
  return run;
}

Result<Json> RunCheck(controller::RunService& runs, graph::TaskService& tasks, const controller::CheckSettings& settings,
                      const Json& args, const TaskControl* control) {
  controller::CheckRunRequest request = RequestFromArguments(args);
  if (request.task_id && !request.node_id) {
    TELIC_RETURN_IF_ERROR(CheckVerifiableTask(tasks, request.run_id, *request.task_id));
  }
  std::string shown = request.command.is_string() ? request.command.get<std::string>() : request.command.dump();
  TELIC_ASSIGN_OR_RETURN(controller::CheckRunResult result,
                         controller::RunVerificationCheck(runs, request, settings, ControlOf(control, shown)));
  Json check = controller::CheckResultToJson(result, request);
  Json payload = {{"run", controller::RunToJson(result.run)},
                  {"check", check},
                  {"evidence", controller::ArtifactMetaToJson(result.evidence)}};
  if (request.task_id && !result.record.outcome.cancelled) {
    graph::VerificationRequest verification;
    verification.task_id = *request.task_id;
    verification.passed = result.record.passed();
    verification.evidence = {check["evidenceRef"].get<std::string>()};
    verification.provenance = store::Provenance::kObserved;
    verification.evidence_ref = check["evidenceRef"].get<std::string>();
    auto transition = tasks.RecordVerification(verification);
    if (!transition) {
      return Fail(transition.error().code(),
                  fmt::format("the check ran and its Evidence {} is stored, but the task's verification was not "
                              "recorded: {}",
                              check["evidenceRef"].get<std::string>(), transition.error().message()));
    }
    payload["verification"] = TransitionToJson(*transition);
  }
  return payload;
}

}  // namespace

ToolSpec RunCheckTool(controller::RunService& runs, graph::TaskService& tasks, controller::CheckSettings settings) {
  ToolSpec spec;
  spec.name = "telic_run_check";
  spec.title = "Run verification check";
  spec.description =
      "Run an exact allowed shell.execute command of the run in telic's sandbox for a plan node or a task awaiting "
      "verification; stored as Evidence observed by telic (for a task, also its verification). Prefer this to "
      "reporting test results yourself.";
  spec.schema_path = "tools/telic_run_check.json";
  spec.read_only = false;
  spec.idempotent = false;
  auto shared = std::make_shared<const controller::CheckSettings>(std::move(settings));
  spec.handler = [&runs, &tasks, shared](const Json& args) { return RunCheck(runs, tasks, *shared, args, nullptr); };
  spec.task_handler = [&runs, &tasks, shared](const Json& args, const TaskControl& control) {
    return RunCheck(runs, tasks, *shared, args, &control);
  };
  return spec;
}

}  // namespace telic::mcp
