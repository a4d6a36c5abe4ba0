#include "graph/task_service.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "graph/graph.h"
#include "graph/task_scope.h"

namespace telic::graph {
namespace {

Status CheckDistinct(const std::vector<std::string>& ids) {
  std::unordered_set<std::string> seen;
  for (const auto& id : ids) {
    if (!seen.insert(id).second) return Invalid(fmt::format("depends_on names {} more than once", id));
  }
  return Ok();
}

Json Brief(const TaskRecord& t) {
  return {{"taskId", t.task_id},
          {"name", t.name},
          {"instructions", t.instructions},
          {"role", t.role},
          {"attempt", t.attempts},
          {"retriesRemaining", std::max(0, t.retries_allowed - t.retries_used)},
          {"keyTasks", t.brief.value("keyTasks", Json::array())},
          {"missingContext", t.brief.value("missingContext", Json::array())}};
}

}  // namespace

store::TaskEventRecord TaskService::Event(const std::string& subject, const std::optional<std::string>& run_id,
                                          std::string kind, std::string actor, Json payload, const std::string& now) {
  store::TaskEventRecord e;
  e.event_id = ids_.NewUuid();
  e.subject_id = subject;
  e.run_id = run_id;
  e.kind = std::move(kind);
  e.actor = std::move(actor);
  e.payload = std::move(payload);
  e.created_at = now;
  return e;
}

Status TaskService::CheckRun(const std::optional<std::string>& run_id) {
  if (!run_id || !runs_) return Ok();
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, runs_->GetRun(*run_id));
  if (run.status != domain::RunStatus::kRunning && run.status != domain::RunStatus::kAwaitingClarification) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run {} is {}; its task graph is closed", run.run_id, run.status));
  }
  return Ok();
}

Status TaskService::CheckVerificationProvenance(const TaskRecord& task, const VerificationRequest& request) {
  if (!request.passed || request.provenance == store::Provenance::kObserved || !task.run_id || !runs_) return Ok();
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, runs_->GetRun(*task.run_id));
  if (!store::RequiresObservedWork(run)) return Ok();
  return Fail(ErrorCode::kFailedPrecondition,
              fmt::format("run {} requires observed work: a passing verification of task {} must come from a check "
                          "telic runs (telic_run_check with task_id), not from the host's word",
                          run.run_id, task.task_id),
              {{"/passed", "custom", "a claimed pass is refused under require_observed"}});
}

Result<TaskRecord> TaskService::CreateTask(const CreateTaskRequest& request) {
  TELIC_RETURN_IF_ERROR(CheckRun(request.run_id));
  TELIC_RETURN_IF_ERROR(CheckDistinct(request.depends_on));
  Scope scope(*this, request.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  for (const std::string& dep : request.depends_on) {
    auto index = scope.Find(dep);
    if (!index) return Invalid(fmt::format("depends_on names unknown task {} (not in this graph)", dep));
    if (scope.task(*index).parent_task_id) {
      return Invalid(fmt::format("depends_on of a top-level task may name only top-level tasks; {} is a subtask", dep));
    }
  }
  TaskRecord t;
  t.task_id = ids_.NewUuid();
  t.run_id = request.run_id;
  t.name = request.name;
  t.instructions = request.instructions;
  t.role = request.role;
  t.depends_on = request.depends_on;
  t.retries_allowed = request.retries_allowed;
  t.subagents = request.subagents;
  TELIC_ASSIGN_OR_RETURN(int index, scope.Insert(std::move(t)));
  scope.AddEvent(index, "task_created", "system", {{"dependsOn", request.depends_on}, {"state", scope.task(index).state}});
  TELIC_RETURN_IF_ERROR(scope.Commit());
  return scope.task(index);
}

Result<std::vector<TaskRecord>> TaskService::ImportWorkPlan(const std::string& run_id, const Json& plan,
                                                            int retries_allowed) {
  TELIC_RETURN_IF_ERROR(CheckRun(run_id));
  Scope scope(*this, run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  TELIC_ASSIGN_OR_RETURN(std::vector<int> created, ImportInto(scope, plan, retries_allowed));
  TELIC_RETURN_IF_ERROR(scope.Commit());
  return scope.Records(created);
}

Result<std::vector<int>> TaskService::ImportInto(Scope& scope, const Json& plan, int retries_allowed) {
  const std::string& run_id = *scope.run_id();
  if (!plan.is_object() || !plan.contains("nodes") || !plan["nodes"].is_array()) {
    return Invalid("a WorkPlan needs a nodes array");
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> batch;
  std::unordered_map<std::string, const Json*> nodes;
  try {
    for (const Json& node : plan["nodes"]) {
      std::string id = node.at("id").get<std::string>();
      batch.emplace_back(id, node.at("dependsOn").get<std::vector<std::string>>());
      nodes[id] = &node;
    }
  } catch (const std::exception& ex) {
    return Invalid(fmt::format("WorkPlan node is malformed: {}", ex.what()));
  }
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> order, Graph::TopologicalOrder(batch));
  const std::string plan_id = plan.value("id", "");
  std::unordered_map<std::string, std::string> task_ids;
  std::vector<int> created;
  for (const std::string& node_id : order) {
    const Json& node = *nodes[node_id];
    TaskRecord t;
    t.task_id = ids_.NewUuid();
    t.run_id = run_id;
    t.name = plan_id.empty() ? node_id : plan_id + "/" + node_id;
    t.instructions = node.value("objective", "");
    t.role = node.value("logicalRole", "");
    for (const auto& dep : node["dependsOn"]) t.depends_on.push_back(task_ids.at(dep.get<std::string>()));
    t.retries_allowed = retries_allowed;
    const Json subagents = node.value("/permissions/subagents"_json_pointer, Json::object());
    t.subagents = {subagents.value("spawn", false), subagents.value("maximumChildren", 0), subagents.value("maximumDepth", 0)};
    task_ids[node_id] = t.task_id;
    TELIC_ASSIGN_OR_RETURN(int index, scope.Insert(std::move(t)));
    scope.AddEvent(index, "task_created", "system",
                   {{"workPlan", plan_id}, {"workNode", node_id}, {"state", scope.task(index).state}});
    created.push_back(index);
  }
  return created;
}

Result<TaskRecord> TaskService::SpawnSubtask(const SpawnRequest& request) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord parent_record, tasks_.GetTask(request.parent_task_id));
  if (request.run_id && parent_record.run_id != request.run_id) {
    return Invalid(fmt::format("parent task {} belongs to {}, not run {}", parent_record.task_id,
                               parent_record.run_id ? "run " + *parent_record.run_id : "the standalone graph",
                               *request.run_id));
  }
  TELIC_RETURN_IF_ERROR(CheckRun(parent_record.run_id));
  TELIC_RETURN_IF_ERROR(CheckDistinct(request.depends_on));
  Scope scope(*this, parent_record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  auto parent_index = scope.Find(request.parent_task_id);
  if (!parent_index) return Fail(ErrorCode::kConflict, "the parent task changed while spawning; retry");
  TaskRecord& parent = scope.task(*parent_index);
  if (parent.state != domain::TaskState::kRunning) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Parent task {} is {}; only a running task can spawn subtasks", parent.task_id, parent.state));
  }
  const store::SubagentLimits& limits = parent.subagents;
  if (!limits.spawn) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("Task {} may not spawn subtasks (its subagent permission has spawn: false)", parent.task_id));
  }
  if (limits.maximum_depth < 1) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("Task {} is at its maximumDepth; a subtask would exceed it", parent.task_id));
  }
  if (parent.children >= limits.maximum_children) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("Task {} already has {} subtasks; maximumChildren is {}", parent.task_id, parent.children,
                            limits.maximum_children));
  }
  for (const std::string& dep : request.depends_on) {
    auto index = scope.Find(dep);
    if (!index) return Invalid(fmt::format("depends_on names unknown task {}", dep));
    if (scope.task(*index).parent_task_id != parent.task_id) {
      return Invalid(fmt::format("depends_on may name only siblings already spawned under {}; {} is not one",
                                 parent.task_id, dep));
    }
  }
  TaskRecord child;
  child.task_id = ids_.NewUuid();
  child.run_id = parent.run_id;
  child.parent_task_id = parent.task_id;
  child.name = request.name;
  child.instructions = request.instructions;
  child.role = request.role;
  child.depends_on = request.depends_on;
  child.retries_allowed = parent.retries_allowed;
  child.depth = parent.depth + 1;
  child.subagents = {limits.spawn, limits.maximum_children, limits.maximum_depth - 1};  // one level less
  parent.children += 1;
  scope.Touch(*parent_index);
  TELIC_ASSIGN_OR_RETURN(int index, scope.Insert(std::move(child)));
  scope.AddEvent(index, "subtask_spawned", "agent",
                 {{"parentTaskId", request.parent_task_id}, {"dependsOn", request.depends_on}, {"state", scope.task(index).state}});
  TELIC_RETURN_IF_ERROR(scope.Commit());
  return scope.task(index);
}

Result<DispatchResult> TaskService::Dispatch(const std::optional<std::string>& run_id, int max_parallel_workers) {
  if (max_parallel_workers < 1) return Invalid("max_parallel_workers must be at least 1");
  Scope scope(*this, run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  std::vector<int> handed = scope.graph().Dispatch(max_parallel_workers);
  for (int index : handed) {
    TaskRecord& t = scope.task(index);
    t.attempts += 1;
    t.hold.reset();
    scope.SyncState(index);
    scope.AddEvent(index, "task_dispatched", "system", {{"attempt", t.attempts}, {"brief", Brief(t)}});
  }
  if (!handed.empty()) TELIC_RETURN_IF_ERROR(scope.Commit());
  DispatchResult result;
  result.dispatched = scope.Records(handed);
  result.running = scope.graph().running();
  for (const auto& t : scope.tasks()) result.ready += t.state == domain::TaskState::kReady ? 1 : 0;
  return result;
}

Result<Transition> TaskService::ResolveTask(const ResolveRequest& request) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord record, tasks_.GetTask(request.task_id));
  Scope scope(*this, record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  int index = *scope.Find(request.task_id);
  TaskRecord& t = scope.task(index);
  if (domain::IsTerminal(t.state)) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("Task {} is already {}", t.task_id, t.state));
  }
  Transition tr;
  tr.action = request.resolution;
  Json payload = {{"resolution", request.resolution}, {"userDecision", request.user_decision}};
  if (request.resolution == "fail" || request.resolution == "cancel") {
    TaskState terminal = request.resolution == "fail" ? TaskState::kFailed : TaskState::kCancelled;
    scope.AddEvent(index, "user_resolution", "user", payload);
    for (int c : scope.Terminate(index, terminal, "user decision: " + request.user_decision, "user")) {
      tr.cascaded.push_back(scope.task(c));
    }
  } else if (request.resolution == "redispatch") {
    if (t.state != domain::TaskState::kRunning || t.hold != "awaiting_user") {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("Task {} is not waiting for a user decision; only an escalated or blocked task is "
                              "re-dispatched by the user",
                              t.task_id));
    }
    if (t.retries_used >= t.retries_allowed + request.additional_retries) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("Task {} has spent its retry budget ({} allowed); a re-dispatch needs additional_retries "
                              "granted by the user",
                              t.task_id, t.retries_allowed));
    }
    t.retries_allowed += request.additional_retries;
    t.retries_used += 1;
    t.hold.reset();
    t.pending = Json::object();
    t.brief = {{"keyTasks", request.key_tasks}, {"missingContext", Json::array()}};
    payload["additionalRetries"] = request.additional_retries;
    scope.AddEvent(index, "user_resolution", "user", payload);
    scope.graph().Requeue(index);
    scope.SyncState(index);
  } else {
    return Invalid(fmt::format("unknown resolution {}", request.resolution));
  }
  TELIC_RETURN_IF_ERROR(scope.Commit());
  tr.task = scope.task(index);
  for (auto& c : tr.cascaded) c = scope.task(*scope.Find(c.task_id));
  return tr;
}


Result<store::StoryRecord> TaskService::CreateStory(const std::optional<std::string>& run_id, const std::string& name,
                                                    const std::string& arbitration_task_id,
                                                    const std::vector<std::string>& evaluator_task_ids) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord arbitration, tasks_.GetTask(arbitration_task_id));
  if (arbitration.run_id != run_id) return Invalid("the arbitration task belongs to another graph");
  if (domain::IsTerminal(arbitration.state)) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Arbitration task {} is already {}", arbitration_task_id, arbitration.state));
  }
  for (const auto& id : evaluator_task_ids) {
    TELIC_ASSIGN_OR_RETURN(TaskRecord evaluator, tasks_.GetTask(id));
    if (evaluator.run_id != run_id) return Invalid(fmt::format("evaluator task {} belongs to another graph", id));
  }
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::StoryRecord story;
  story.story_id = ids_.NewUuid();
  story.run_id = run_id;
  story.name = name;
  story.arbitration_task_id = arbitration_task_id;
  story.evaluator_task_ids = evaluator_task_ids;
  story.created_at = story.updated_at = now;
  store::TaskChange change;
  change.now = now;
  change.inserted_stories.push_back(story);
  change.reads.emplace_back(arbitration.task_id, arbitration.version);
  change.events.push_back(Event(story.story_id, run_id, "story_created", "system",
                                {{"arbitrationTaskId", arbitration_task_id}, {"evaluatorTaskIds", evaluator_task_ids}}, now));
  TELIC_RETURN_IF_ERROR(tasks_.Apply(change));
  return story;
}

Result<store::StoryRecord> TaskService::SetStoryStatus(const std::string& story_id, const std::string& status) {
  if (status != "VALIDATING" && status != "REVIEW_READY" && status != "NEEDS_FIX") {
    return Invalid(fmt::format("unknown story status {}", status));
  }
  TELIC_ASSIGN_OR_RETURN(store::StoryRecord story, tasks_.GetStory(story_id));
  std::string now = FormatIsoMillis(clock_.NowMillis());
  std::string before = story.status;
  story.status = status;
  story.version += 1;
  story.updated_at = now;
  store::TaskChange change;
  change.now = now;
  change.updated_stories.push_back(story);
  change.events.push_back(Event(story_id, story.run_id, "story_status_set", "user", {{"from", before}, {"to", status}}, now));
  TELIC_RETURN_IF_ERROR(tasks_.Apply(change));
  return story;
}

Result<TaskList> TaskService::ListTasks(const std::optional<std::string>& run_id) {
  TaskList list;
  TELIC_ASSIGN_OR_RETURN(list.tasks, tasks_.ListTasks(run_id));
  TELIC_ASSIGN_OR_RETURN(list.stories, tasks_.ListStories(run_id));
  return list;
}

Result<TaskDetail> TaskService::GetTask(const std::string& task_id) {
  TaskDetail detail;
  TELIC_ASSIGN_OR_RETURN(detail.task, tasks_.GetTask(task_id));
  TELIC_ASSIGN_OR_RETURN(detail.events, tasks_.ListEvents(task_id));
  TELIC_ASSIGN_OR_RETURN(detail.approvals, tasks_.ListApprovals(task_id));
  return detail;
}

}  // namespace telic::graph
