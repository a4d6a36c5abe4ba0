#include "mcp/graph_tools.h"

#include "base/json_parse.h"
#include "store/records.h"

namespace telic::mcp {
namespace {

using graph::TaskService;

std::optional<std::string> OptionalString(const Json& args, const char* key) {
  if (!args.contains(key)) return std::nullopt;
  return args[key].get<std::string>();
}

std::vector<std::string> Strings(const Json& args, const char* key) {
  return args.contains(key) ? args[key].get<std::vector<std::string>>() : std::vector<std::string>{};
}

Json Tasks(const std::vector<store::TaskRecord>& tasks) {
  Json list = Json::array();
  for (const auto& t : tasks) list.push_back(store::TaskToJson(t));
  return list;
}

Json Stories(const std::vector<store::StoryRecord>& stories) {
  Json list = Json::array();
  for (const auto& s : stories) list.push_back(store::StoryToJson(s));
  return list;
}

Result<Json> CreateTask(TaskService& service, const Json& args) {
  graph::CreateTaskRequest request;
  request.run_id = OptionalString(args, "run_id");
  request.name = args["name"].get<std::string>();
  request.instructions = args["instructions"].get<std::string>();
  request.role = args.value("role", "");
  request.depends_on = Strings(args, "depends_on");
  request.retries_allowed = args.value("retries_allowed", 0);
  if (args.contains("subagents")) {
    const Json& s = args["subagents"];
    request.subagents = {s["spawn"].get<bool>(), s["maximum_children"].get<int>(), s["maximum_depth"].get<int>()};
  }
  TELIC_ASSIGN_OR_RETURN(store::TaskRecord task, service.CreateTask(request));
  return Json{{"taskId", task.task_id}, {"task", store::TaskToJson(task)}};
}

Result<Json> SpawnSubtask(TaskService& service, const Json& args) {
  graph::SpawnRequest request;
  request.run_id = OptionalString(args, "run_id");
  request.parent_task_id = args["parent_task_id"].get<std::string>();
  request.name = args["name"].get<std::string>();
  request.instructions = args["instructions"].get<std::string>();
  request.role = args.value("role", "");
  request.depends_on = Strings(args, "depends_on");
  TELIC_ASSIGN_OR_RETURN(store::TaskRecord task, service.SpawnSubtask(request));
  return Json{{"taskId", task.task_id}, {"task", store::TaskToJson(task)}};
}

Result<Json> DispatchTasks(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(graph::DispatchResult result,
                         service.Dispatch(OptionalString(args, "run_id"), args.value("max_parallel_workers", 1)));
  Json briefs = Json::array();
  for (const auto& t : result.dispatched) {
    briefs.push_back({{"taskId", t.task_id},
                      {"name", t.name},
                      {"instructions", t.instructions},
                      {"role", t.role},
                      {"attempt", t.attempts},
                      {"retriesRemaining", std::max(0, t.retries_allowed - t.retries_used)},
                      {"keyTasks", t.brief.value("keyTasks", Json::array())},
                      {"missingContext", t.brief.value("missingContext", Json::array())},
                      {"approvedActions", t.brief.value("approvedActions", Json::array())}});
  }
  return Json{{"dispatched", briefs}, {"running", result.running}, {"ready", result.ready}};
}

Result<Json> ListTasks(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(graph::TaskList list, service.ListTasks(OptionalString(args, "run_id")));
  return Json{{"tasks", Tasks(list.tasks)}, {"stories", Stories(list.stories)}};
}

Result<Json> GetTask(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(graph::TaskDetail detail, service.GetTask(args["task_id"].get<std::string>()));
  Json events = Json::array();
  for (const auto& e : detail.events) events.push_back(store::TaskEventToJson(e));
  Json approvals = Json::array();
  for (const auto& a : detail.approvals) approvals.push_back(store::ApprovalToJson(a));
  return Json{{"task", store::TaskToJson(detail.task)}, {"events", events}, {"approvals", approvals}};
}

Result<Json> ReportVerdict(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(store::TaskEventRecord event,
                         service.ReportVerdict(args["task_id"].get<std::string>(), args["approved"].get<bool>(),
                                               args["reasoning"].get<std::string>()));
  return Json{{"message", "Verdict recorded."}, {"event", store::TaskEventToJson(event)}};
}

Result<Json> SubmitReport(TaskService& service, const Json& args) {
  const Json& raw = args["report"];
  Result<reports::Report> report =
      raw.is_string() ? reports::ParseReportText(raw.get<std::string>()) : reports::ReportFromJson(raw);
  if (!report) return Fail(ErrorCode::kInvalidArgument, "Report rejected: " + report.error().message());
  std::optional<bool> new_mechanism;
  if (args.contains("new_mechanism")) new_mechanism = args["new_mechanism"].get<bool>();
  TELIC_ASSIGN_OR_RETURN(graph::ReportOutcome outcome,
                         service.SubmitReport(args["task_id"].get<std::string>(), *report, new_mechanism));
  Json payload = TransitionToJson(outcome.transition);
  // Report text is caller-supplied: returned redacted, as it is stored.
  payload["report"] = store::RedactedJson(reports::ReportToJson(outcome.report));
  payload["decision"] = store::RedactedJson(reports::DecisionToJson(outcome.decision));
  return payload;
}

Result<Json> RecordVerification(TaskService& service, const Json& args) {
  graph::VerificationRequest request;
  request.task_id = args["task_id"].get<std::string>();
  request.passed = args["passed"].get<bool>();
  request.evidence = Strings(args, "evidence");
  request.concerns_addressed = args.value("concerns_addressed", false);
  if (args.contains("ablation_passed")) request.ablation_passed = args["ablation_passed"].get<bool>();
  TELIC_ASSIGN_OR_RETURN(graph::Transition transition, service.RecordVerification(request));
  return TransitionToJson(transition);
}

Result<Json> ResolveTask(TaskService& service, const Json& args) {
  graph::ResolveRequest request;
  request.task_id = args["task_id"].get<std::string>();
  request.resolution = args["resolution"].get<std::string>();
  request.user_decision = args["user_decision"].get<std::string>();
  request.additional_retries = args.value("additional_retries", 0);
  request.key_tasks = Strings(args, "key_tasks");
  TELIC_ASSIGN_OR_RETURN(graph::Transition transition, service.ResolveTask(request));
  return TransitionToJson(transition);
}

Result<Json> ApproveAction(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(auto result,
                         service.ApproveAction(args["task_id"].get<std::string>(), args["action"].get<std::string>(),
                                               args["user_decision"].get<std::string>()));
  return Json{{"approval", store::ApprovalToJson(result.first)}, {"task", store::TaskToJson(result.second)}};
}

Result<Json> UseApproval(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(store::ApprovalRecord approval,
                         service.UseApproval(args["task_id"].get<std::string>(), args["action"].get<std::string>()));
  return Json{{"approval", store::ApprovalToJson(approval)}};
}

Result<Json> CreateStory(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(store::StoryRecord story,
                         service.CreateStory(OptionalString(args, "run_id"), args["name"].get<std::string>(),
                                             args["arbitration_task_id"].get<std::string>(),
                                             Strings(args, "evaluator_task_ids")));
  return Json{{"story", store::StoryToJson(story)}};
}

Result<Json> SetStoryStatus(TaskService& service, const Json& args) {
  TELIC_ASSIGN_OR_RETURN(store::StoryRecord story,
                         service.SetStoryStatus(args["story_id"].get<std::string>(), args["status"].get<std::string>()));
  return Json{{"story", store::StoryToJson(story)}};
}

ToolSpec Tool(std::string name, std::string title, std::string description, bool read_only,
              Result<Json> (*fn)(TaskService&, const Json&), TaskService& service) {
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

Json TransitionToJson(const graph::Transition& t) {
  return {{"action", t.action},
          {"task", store::TaskToJson(t.task)},
          {"nowReady", Tasks(t.now_ready)},
          {"cascaded", Tasks(t.cascaded)},
          {"stories", Stories(t.stories)}};
}

std::vector<ToolSpec> BuildGraphTools(TaskService& service) {
  return {
      Tool("telic_create_task", "Create task",
           "Create a top-level task in a run's task graph (standalone without run_id); depends_on orders it.",
           false, CreateTask, service),
      Tool("telic_spawn_subtask", "Spawn subtask",
           "Spawn a subtask of a running task within its subagent permission; returns the new id.",
           false, SpawnSubtask, service),
      Tool("telic_dispatch_tasks", "Dispatch ready tasks",
           "Hand out the ready tasks, each with its brief, up to max_parallel_workers at once.",
           false, DispatchTasks, service),
      Tool("telic_list_tasks", "List tasks", "List a graph's tasks and stories.",
           true, ListTasks, service),
      Tool("telic_get_task", "Inspect task", "Return one task with its events and approvals.", true, GetTask,
           service),
      Tool("telic_report_verdict", "Report verdict",
           "Report your approve/reject decision on another task's work (arbitration); call it before "
           "telic_submit_report: it decides the outcome.",
           false, ReportVerdict, service),
      Tool("telic_submit_report", "Submit sub-agent report",
           "Submit a running task's report and receive the dispatcher's decision.",
           false, SubmitReport, service),
      Tool("telic_record_verification", "Record verifier result",
           "Record the verifier's result for a task awaiting verification.",
           false, RecordVerification, service),
      Tool("telic_resolve_task", "Resolve task by user decision",
           "Apply the user's decision on an escalated or blocked task: redispatch, fail or cancel it.",
           false, ResolveTask, service),
      Tool("telic_approve_action", "Approve pending action",
           "Record the user's one-time approval of an exact pending action of a task.",
           false, ApproveAction, service),
      Tool("telic_use_approval", "Use approval",
           "Consume the approval of an exact action before executing it (once).",
           false, UseApproval, service),
      Tool("telic_create_story", "Create story",
           "Create a story whose arbitration task's verdict decides REVIEW_READY or NEEDS_FIX.",
           false, CreateStory, service),
      Tool("telic_set_story_status", "Set story status",
           "Set a story's status by hand.", false,
           SetStoryStatus, service),
  };
}

}  // namespace telic::mcp
