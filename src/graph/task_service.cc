#include "graph/task_service.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "graph/graph.h"

namespace telic::graph {

using store::TaskRecord;

// One graph scope loaded for a single operation, and the change it builds.
class TaskService::Scope {
 public:
  Scope(TaskService& service, std::optional<std::string> run_id, std::string now)
      : service_(service), run_id_(std::move(run_id)), now_(std::move(now)) {}

  // Makes Commit refuse (kConflict) if the scope's task count changed since Load.
  void GuardScope() { guard_scope_ = true; }

  Status Load() {
    TELIC_ASSIGN_OR_RETURN(tasks_, service_.tasks_.ListTasks(run_id_));
    loaded_ = static_cast<int64_t>(tasks_.size());
    for (const TaskRecord& t : tasks_) {
      TELIC_ASSIGN_OR_RETURN(int index, graph_.Add(t.task_id, t.depends_on, t.state));
      (void)index;
    }
    return Ok();
  }

  std::optional<int> Find(std::string_view id) const { return graph_.Find(id); }
  TaskRecord& task(int index) { return tasks_[static_cast<size_t>(index)]; }
  Graph& graph() { return graph_; }
  const std::vector<TaskRecord>& tasks() const { return tasks_; }
  const std::optional<std::string>& run_id() const { return run_id_; }
  const std::string& now() const { return now_; }

  // Adds a new task record (state from the graph: ready when every
  // dependency completed, failed at once when one failed).
  Result<int> Insert(TaskRecord record) {
    TELIC_ASSIGN_OR_RETURN(int index, graph_.Add(record.task_id, record.depends_on, TaskState::kPending));
    record.state = graph_.node(index).state;
    record.version = 1;
    record.created_at = record.updated_at = now_;
    tasks_.push_back(std::move(record));
    inserted_.insert(index);
    for (int dep : graph_.node(index).deps) Read(dep);
    // A dependency that already failed or was cancelled fails the new task
    // at once, naming it (cascade-fail at creation).
    for (int dep : graph_.node(index).deps) {
      TaskState s = graph_.node(dep).state;
      if (s != TaskState::kFailed && s != TaskState::kCancelled) continue;
      TaskRecord& t = task(index);
      graph_.Fail(index);
      t.state = domain::TaskState::kFailed;
      t.failed_dependency = task(dep).task_id;
      t.failure_reason = fmt::format("dependency {} ({}) {}", task(dep).task_id, task(dep).name,
                                     s == TaskState::kCancelled ? "was cancelled" : "failed");
      AddEvent(index, "task_cascade_failed", "system",
               {{"failedDependency", task(dep).task_id}, {"reason", *t.failure_reason}});
      break;
    }
    return index;
  }

  void Read(int index) {
    if (!inserted_.contains(index)) reads_.insert(index);
  }
  void Touch(int index) {
    if (!inserted_.contains(index)) touched_.insert(index);
  }
  void AddEvent(int index, std::string kind, std::string actor, Json payload) {
    events_.push_back(service_.Event(task(index).task_id, run_id_, std::move(kind), std::move(actor), std::move(payload), now_));
  }
  void AddStoryEvent(const store::StoryRecord& story, std::string kind, Json payload) {
    events_.push_back(service_.Event(story.story_id, story.run_id, std::move(kind), "system", std::move(payload), now_));
  }
  void SyncState(int index) {
    task(index).state = graph_.node(index).state;
    Touch(index);
  }

  // Ends a task as failed or cancelled and cascade-fails its dependents.
  std::vector<int> Terminate(int index, TaskState terminal, const std::string& reason, const std::string& actor) {
    std::vector<Graph::CascadeStep> steps = graph_.Fail(index, terminal);
    TaskRecord& root = task(index);
    root.failure_reason = reason;
    root.hold.reset();
    SyncState(index);
    AddEvent(index, terminal == TaskState::kFailed ? "task_failed" : "task_cancelled", actor, {{"reason", reason}});
    std::vector<int> cascaded;
    for (const auto& step : steps) {
      TaskRecord& t = task(step.node);
      const TaskRecord& via = task(step.via);
      std::string how = graph_.node(step.via).state == TaskState::kCancelled ? "was cancelled" : "failed";
      t.failure_reason = step.via == step.root
                             ? fmt::format("dependency {} ({}) {}", via.task_id, via.name, how)
                             : fmt::format("dependency {} ({}) {} (cascade from {})", via.task_id, via.name, how,
                                           task(step.root).task_id);
      t.failed_dependency = via.task_id;
      t.hold.reset();
      SyncState(step.node);
      AddEvent(step.node, "task_cascade_failed", "system",
               {{"failedDependency", via.task_id}, {"rootCause", task(step.root).task_id}, {"reason", *t.failure_reason}});
      cascaded.push_back(step.node);
    }
    return cascaded;
  }

  // Completes a task: readies dependents and finalises the arbitration of
  // stories it arbitrates (DAG-020..032).
  Result<std::pair<std::vector<int>, std::vector<store::StoryRecord>>> Complete(int index) {
    std::vector<int> ready = graph_.Complete(index);
    TaskRecord& t = task(index);
    t.hold.reset();
    t.pending = Json::object();
    SyncState(index);
    AddEvent(index, "task_completed", "system", Json::object());
    for (int r : ready) {
      SyncState(r);
      AddEvent(r, "task_ready", "system", {{"completedDependency", t.task_id}});
    }
    TELIC_ASSIGN_OR_RETURN(std::vector<store::StoryRecord> stories, service_.tasks_.StoriesArbitratedBy(t.task_id));
    std::vector<store::StoryRecord> finalised;
    for (store::StoryRecord story : stories) {
      if (story.status != "VALIDATING") continue;  // DAG-020
      std::optional<bool> verdict;
      // DAG-023/024/025/032: only the arbitration task's own events; the last
      // readable verdict wins; unreadable payloads are ignored; an unreadable
      // event list reads as no verdict.
      auto events = service_.tasks_.ListEvents(t.task_id);
      if (events) {
        for (const auto& e : *events) {
          if (e.kind != "verdict_reported") continue;
          if (e.payload.is_object() && e.payload.contains("approved") && e.payload["approved"].is_boolean()) {
            verdict = e.payload["approved"].get<bool>();
          }
        }
      }
      Json payload = {{"task_id", t.task_id}, {"summary", t.summary}};
      if (verdict) payload["approved"] = *verdict;  // DAG-028: omitted, never false, without a verdict
      story.status = verdict && !*verdict ? "NEEDS_FIX" : "REVIEW_READY";  // DAG-021/022/030/031
      story.version += 1;
      story.updated_at = now_;
      AddStoryEvent(story, "arbitration_decided", payload);
      updated_stories_.push_back(story);
      finalised.push_back(story);
    }
    return std::make_pair(ready, finalised);
  }

  void AddApproval(store::ApprovalRecord approval) { approvals_.push_back(std::move(approval)); }
  void UseApproval(std::string id) { used_approvals_.push_back(std::move(id)); }
  void AddStory(store::StoryRecord story) { inserted_stories_.push_back(std::move(story)); }

  Status Commit() {
    store::TaskChange change;
    change.now = now_;
    for (int i : inserted_) change.inserted_tasks.push_back(task(i));
    for (int i : touched_) {
      TaskRecord t = task(i);
      t.version += 1;
      t.updated_at = now_;
      change.updated_tasks.push_back(std::move(t));
    }
    for (int i : reads_) {
      if (!touched_.contains(i)) change.reads.emplace_back(task(i).task_id, task(i).version);
    }
    change.events = std::move(events_);
    change.inserted_stories = std::move(inserted_stories_);
    change.updated_stories = std::move(updated_stories_);
    change.inserted_approvals = std::move(approvals_);
    change.used_approvals = std::move(used_approvals_);
    if (guard_scope_) change.expected_scope = store::TaskChange::ScopeGuard{run_id_, loaded_};
    TELIC_RETURN_IF_ERROR(service_.tasks_.Apply(change));
    for (int i : touched_) {
      task(i).version += 1;
      task(i).updated_at = now_;
    }
    return Ok();
  }

  std::vector<TaskRecord> Records(const std::vector<int>& indexes) {
    std::vector<TaskRecord> out;
    for (int i : indexes) out.push_back(task(i));
    return out;
  }

 private:
  TaskService& service_;
  std::optional<std::string> run_id_;
  std::string now_;
  std::vector<TaskRecord> tasks_;
  Graph graph_;
  std::set<int> inserted_, touched_, reads_;
  std::vector<store::TaskEventRecord> events_;
  std::vector<store::StoryRecord> inserted_stories_, updated_stories_;
  std::vector<store::ApprovalRecord> approvals_;
  std::vector<std::string> used_approvals_;
  bool guard_scope_ = false;
  int64_t loaded_ = 0;
};

namespace {

std::unexpected<Error> Invalid(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

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

std::string SummaryOf(const reports::Report& report) {
  if (auto* u = std::get_if<reports::UpwardReport>(&report)) return u->notes.value_or("");
  if (auto* e = std::get_if<reports::ExecutionEnvelope>(&report)) return e->task;
  return fmt::format("review {}", reports::ReviewStatusName(std::get<reports::ReviewEnvelope>(report).status));
}

Status RequireRunning(const TaskRecord& t, bool allow_hold = false) {
  if (t.state != domain::TaskState::kRunning) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Task {} is {}, not running; only a dispatched task can do this", t.task_id, t.state));
  }
  if (!allow_hold && t.hold) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Task {} is waiting ({}); resolve that first", t.task_id, *t.hold));
  }
  return Ok();
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

namespace {

// The id in "artifact://<run>/<id>", or "".
std::string ArtifactIdOf(std::string_view uri) {
  constexpr std::string_view kPrefix = "artifact://";
  if (uri.substr(0, kPrefix.size()) != kPrefix) return "";
  size_t slash = uri.rfind('/');
  return slash < kPrefix.size() ? "" : std::string(uri.substr(slash + 1));
}

}  // namespace

Result<SyncSummary> TaskService::SyncRun(const std::string& run_id) {
  // Another writer (instance, CLI) may sync the same run at once: a commit
  // whose scope changed since it was read is retried on the new state.
  constexpr int kMaxAttempts = 8;
  for (int attempt = 1;; ++attempt) {
    auto synced = SyncRunOnce(run_id);
    if (synced || attempt == kMaxAttempts || synced.error().code() != ErrorCode::kConflict) return synced;
  }
}

Result<SyncSummary> TaskService::SyncRunOnce(const std::string& run_id) {
  if (!runs_) return Fail(ErrorCode::kFailedPrecondition, "the task graph has no run store to mirror");
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, runs_->GetRun(run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts,
                         runs_->ListArtifactsAfter(run_id, SyncedThrough(run_id)));
  Scope scope(*this, run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  scope.GuardScope();  // an import decided on "not there yet" must still hold at commit
  std::unordered_map<std::string, int> by_name;
  for (size_t i = 0; i < scope.tasks().size(); ++i) by_name[scope.tasks()[i].name] = static_cast<int>(i);
  auto body = [&](const store::ArtifactMeta& meta) -> Result<Json> {
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact stored, runs_->GetArtifact(run_id, meta.id));
    TELIC_ASSIGN_OR_RETURN(Json parsed, ParseStoredJson(stored.canonical_body));
    if (!parsed.is_object()) return Fail(ErrorCode::kDataLoss, fmt::format("stored {} {} is not an object", meta.type, meta.id));
    return parsed;
  };
  SyncSummary summary;
  for (const store::ArtifactMeta& meta : artifacts) {
    if (meta.type == domain::ArtifactType::kWorkPlan) {
      TELIC_ASSIGN_OR_RETURN(Json plan, body(meta));
      const Json nodes = plan.value("nodes", Json::array());
      if (!nodes.is_array() || nodes.empty() || !nodes[0].is_object() ||
          by_name.contains(meta.id + "/" + nodes[0].value("id", ""))) {
        continue;
      }
      // A plan the graph cannot hold (the controller accepted it, so this
      // is a rule mismatch) is skipped and counted, never blocking the rest.
      auto created = ImportInto(scope, plan, 0);
      if (!created) {
        summary.skipped_plans.push_back(fmt::format("{}: {}", meta.id, created.error().message()));
        continue;
      }
      for (int index : *created) by_name[scope.task(index).name] = index;
      summary.imported += static_cast<int>(created->size());
    } else if (meta.type == domain::ArtifactType::kWorkResult) {
      TELIC_ASSIGN_OR_RETURN(Json result, body(meta));
      auto found = by_name.find(ArtifactIdOf(result.value("workPlanRef", "")) + "/" + result.value("nodeId", ""));
      if (found == by_name.end() || domain::IsTerminal(scope.task(found->second).state)) continue;
      int index = found->second;
      std::string status = result.value("status", "");
      scope.AddEvent(index, "work_result_accepted", "controller", {{"workResult", meta.id}, {"status", status}});
      // A WorkResult's status "completed" completes its task; every other status fails it.
      if (domain::TaskStateNamed(status) == TaskState::kCompleted) {
        TELIC_RETURN_IF_ERROR(scope.Complete(index));
        summary.completed += 1;
      } else {
        scope.Terminate(index, TaskState::kFailed, fmt::format("WorkResult {} reported {}", meta.id, status), "controller");
        summary.failed += 1;
      }
    }
  }
  if (run.IsTerminal()) {
    // Dependents come after their dependencies, so walking backwards cancels
    // each open task itself rather than cascade-failing it.
    for (int i = static_cast<int>(scope.tasks().size()) - 1; i >= 0; --i) {
      if (domain::IsTerminal(scope.task(i).state)) continue;
      scope.Terminate(i, TaskState::kCancelled, fmt::format("run ended {}", run.status), "controller");
      summary.cancelled += 1;
    }
  }
  if (summary.imported + summary.completed + summary.failed + summary.cancelled > 0) TELIC_RETURN_IF_ERROR(scope.Commit());
  if (!artifacts.empty()) MarkSynced(run_id, artifacts.back().seq);
  return summary;
}

int64_t TaskService::SyncedThrough(const std::string& run_id) {
  std::lock_guard lock(synced_mutex_);
  auto found = synced_through_.find(run_id);
  return found == synced_through_.end() ? 0 : found->second;
}

void TaskService::MarkSynced(const std::string& run_id, int64_t seq) {
  std::lock_guard lock(synced_mutex_);
  int64_t& through = synced_through_[run_id];
  through = std::max(through, seq);
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

Result<ReportOutcome> TaskService::SubmitReport(const std::string& task_id, const reports::Report& report,
                                                std::optional<bool> new_mechanism) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord record, tasks_.GetTask(task_id));
  Scope scope(*this, record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  auto found = scope.Find(task_id);
  if (!found) return Fail(ErrorCode::kConflict, "the task changed while reporting; retry");
  int index = *found;
  TaskRecord& t = scope.task(index);
  TELIC_RETURN_IF_ERROR(RequireRunning(t));
  reports::DispatchContext context{t.retries_allowed, t.retries_used, new_mechanism};
  reports::Decision decision = reports::Decide(report, context);
  t.summary = SummaryOf(report);
  scope.Touch(index);
  scope.AddEvent(index, "report_submitted", "agent",
                 {{"report", reports::ReportToJson(report)}, {"decision", reports::DecisionToJson(decision)}});
  ReportOutcome outcome{{}, report, decision};
  Transition& tr = outcome.transition;
  tr.action = std::string(reports::ActionName(decision.action));
  using reports::Action;
  switch (decision.action) {
    case Action::kRunVerifier:
      t.hold = "awaiting_verification";
      t.pending = {{"rule", decision.rule},
                   {"ablationRequired", decision.ablation_required},
                   {"concernsMustBeWeighed", decision.concerns_must_be_weighed},
                   {"concerns", decision.concerns}};
      break;
    case Action::kRedispatch:
    case Action::kSupplyContext:
      t.retries_used += 1;
      t.hold.reset();
      t.pending = Json::object();
      t.brief = {{"keyTasks", decision.key_tasks}, {"missingContext", decision.missing_context}};
      scope.graph().Requeue(index);
      scope.SyncState(index);
      break;
    case Action::kEscalateToUser:
      if (decision.task_fails) {
        for (int c : scope.Terminate(index, TaskState::kFailed, decision.reason, "system")) tr.cascaded.push_back(scope.task(c));
      } else {
        t.hold = "awaiting_user";
        t.pending = {{"rule", decision.rule}, {"reason", decision.reason}, {"blockers", decision.blockers}};
      }
      break;
    case Action::kSurfaceBlocker:
      t.hold = "awaiting_user";
      t.pending = {{"rule", decision.rule}, {"reason", decision.reason}, {"blockers", decision.blockers}};
      break;
    case Action::kGateActions: {
      t.hold = "awaiting_approval";
      Json actions = Json::array();
      for (const auto& a : decision.pending_actions) actions.push_back({{"action", a}, {"actionSha256", reports::ActionDigest(a)}});
      t.pending = {{"rule", decision.rule}, {"pendingActions", actions}};
      break;
    }
    case Action::kRouteFindings:
    case Action::kAccept: {
      TELIC_ASSIGN_OR_RETURN(auto completed, scope.Complete(index));
      tr.now_ready = scope.Records(completed.first);
      tr.stories = completed.second;
      break;
    }
  }
  TELIC_RETURN_IF_ERROR(scope.Commit());
  tr.task = scope.task(index);
  for (auto& c : tr.cascaded) c = scope.task(*scope.Find(c.task_id));
  for (auto& r : tr.now_ready) r = scope.task(*scope.Find(r.task_id));
  return outcome;
}

Result<Transition> TaskService::RecordVerification(const VerificationRequest& request) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord record, tasks_.GetTask(request.task_id));
  Scope scope(*this, record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  int index = *scope.Find(request.task_id);
  TaskRecord& t = scope.task(index);
  TELIC_RETURN_IF_ERROR(RequireRunning(t, true));
  if (t.hold != "awaiting_verification") {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Task {} is not awaiting verification; submit its report first", t.task_id));
  }
  TELIC_RETURN_IF_ERROR(CheckVerificationProvenance(t, request));
  Transition tr;
  Json payload = {{"passed", request.passed},
                  {"evidence", request.evidence},
                  {"provenance", std::string(store::ProvenanceName(request.provenance))}};
  if (request.evidence_ref) payload["evidenceRef"] = *request.evidence_ref;
  if (request.passed) {
    if (t.pending.value("ablationRequired", false) && request.ablation_passed != true) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the ablation check is required for this completion (confidence < 0.7, new mechanism); report "
                  "ablation_passed: true once it passed");
    }
    if (t.pending.value("concernsMustBeWeighed", false) && !request.concerns_addressed) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "every listed concern must be weighed before the work is settled; pass concerns_addressed: true");
    }
    scope.AddEvent(index, "verification_recorded", "system", payload);
    TELIC_ASSIGN_OR_RETURN(auto completed, scope.Complete(index));
    tr.now_ready = scope.Records(completed.first);
    tr.stories = completed.second;
    tr.action = "accept";
  } else {
    scope.AddEvent(index, "verification_recorded", "system", payload);
    if (t.retries_used < t.retries_allowed) {
      t.retries_used += 1;
      t.hold.reset();
      t.pending = Json::object();
      Json key_tasks = Json::array({"the deterministic verifier failed; fix what it reports"});
      for (const auto& e : request.evidence) key_tasks.push_back(e);
      t.brief = {{"keyTasks", key_tasks}, {"missingContext", Json::array()}};
      scope.graph().Requeue(index);
      scope.SyncState(index);
      tr.action = "redispatch";
    } else {
      for (int c : scope.Terminate(index, TaskState::kFailed,
                                   "the deterministic verifier failed and the retry budget is spent", "system")) {
        tr.cascaded.push_back(scope.task(c));
      }
      tr.action = "escalate_to_user";
    }
  }
  TELIC_RETURN_IF_ERROR(scope.Commit());
  tr.task = scope.task(index);
  for (auto& c : tr.cascaded) c = scope.task(*scope.Find(c.task_id));
  for (auto& r : tr.now_ready) r = scope.task(*scope.Find(r.task_id));
  return tr;
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

Result<store::TaskEventRecord> TaskService::ReportVerdict(const std::string& task_id, bool approved,
                                                          const std::string& reasoning) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord t, tasks_.GetTask(task_id));
  TELIC_RETURN_IF_ERROR(RequireRunning(t));
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::TaskChange change;
  change.now = now;
  // The verdict bumps the task's version so a concurrent completion cannot
  // finalise arbitration without seeing it.
  TaskRecord updated = t;
  updated.version += 1;
  updated.updated_at = now;
  change.updated_tasks.push_back(updated);
  change.events.push_back(
      Event(task_id, t.run_id, "verdict_reported", "agent", {{"approved", approved}, {"reasoning", reasoning}}, now));
  TELIC_RETURN_IF_ERROR(tasks_.Apply(change));
  return change.events.front();
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

Result<std::pair<store::ApprovalRecord, TaskRecord>> TaskService::ApproveAction(const std::string& task_id,
                                                                                 const std::string& action,
                                                                                 const std::string& user_decision) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord record, tasks_.GetTask(task_id));
  Scope scope(*this, record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  int index = *scope.Find(task_id);
  TaskRecord& t = scope.task(index);
  if (t.hold != "awaiting_approval") {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("Task {} has no actions awaiting approval", task_id));
  }
  std::string digest = reports::ActionDigest(action);
  Json& actions = t.pending["pendingActions"];
  bool pending = false;
  for (const Json& a : actions) pending = pending || a.value("actionSha256", "") == digest;
  if (!pending) {
    return Invalid(fmt::format("the action is not one of task {}'s pending actions (sha256 {}); the exact text is "
                               "approved, byte for byte",
                               task_id, digest));
  }
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ApprovalRecord> existing, tasks_.ListApprovals(task_id));
  std::string binding = reports::ApprovalBinding(task_id, digest, policy_version_);
  std::set<std::string> approved;
  for (const auto& a : existing) {
    if (a.used_at || a.policy_version != policy_version_) continue;
    if (a.binding_sha256 == binding) return Fail(ErrorCode::kAlreadyExists, "this exact action is already approved");
    approved.insert(a.action_sha256);
  }
  store::ApprovalRecord approval;
  approval.approval_id = ids_.NewUuid();
  approval.task_id = task_id;
  approval.action = action;
  approval.action_sha256 = digest;
  approval.policy_version = policy_version_;
  approval.binding_sha256 = binding;
  approval.user_decision = user_decision;
  approval.created_at = scope.now();
  approved.insert(digest);
  scope.AddApproval(approval);
  scope.AddEvent(index, "action_approved", "user",
                 {{"approvalId", approval.approval_id}, {"actionSha256", digest}, {"policyVersion", policy_version_}});
  bool all = true;
  for (const Json& a : actions) all = all && approved.contains(a.value("actionSha256", ""));
  if (all) {
    // Every queued action is approved: the task is dispatched again to
    // execute them (a continuation, not a retry).
    t.hold.reset();
    t.brief = {{"keyTasks", Json::array({"execute the approved actions exactly as approved"})},
               {"missingContext", Json::array()},
               {"approvedActions", actions}};
    t.pending = Json::object();
    scope.graph().Requeue(index);
  }
  scope.SyncState(index);
  TELIC_RETURN_IF_ERROR(scope.Commit());
  return std::make_pair(approval, scope.task(index));
}

Result<store::ApprovalRecord> TaskService::UseApproval(const std::string& task_id, const std::string& action) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord t, tasks_.GetTask(task_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ApprovalRecord> approvals, tasks_.ListApprovals(task_id));
  std::string digest = reports::ActionDigest(action);
  std::string binding = reports::ApprovalBinding(task_id, digest, policy_version_);
  const store::ApprovalRecord* found = nullptr;
  const store::ApprovalRecord* used = nullptr;
  const store::ApprovalRecord* other_policy = nullptr;
  for (const auto& a : approvals) {
    if (a.binding_sha256 == binding) {
      if (!a.used_at) found = &a;
      else used = &a;
    } else if (a.action_sha256 == digest) {
      other_policy = &a;
    }
  }
  if (!found && used) return Fail(ErrorCode::kFailedPrecondition, "Approval already used; a new approval is required");
  if (!found && other_policy) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("the approval was granted under policy version {} but the policy is now {}; a new "
                            "approval is required",
                            other_policy->policy_version, policy_version_));
  }
  if (!found) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("no approval for this exact action (sha256 {}); any change to an action needs a new approval",
                            digest));
  }
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::TaskChange change;
  change.now = now;
  change.used_approvals.push_back(found->approval_id);
  change.events.push_back(Event(task_id, t.run_id, "approval_used", "agent",
                                {{"approvalId", found->approval_id}, {"actionSha256", digest}}, now));
  TELIC_RETURN_IF_ERROR(tasks_.Apply(change));
  store::ApprovalRecord result = *found;
  result.used_at = now;
  return result;
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
