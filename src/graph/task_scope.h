// TaskService::Scope: one graph scope loaded for a single operation and the
// change it builds, shared by the files that implement TaskService
// (task_service.cc, task_run_sync.cc, task_reports.cc, task_approvals.cc).
// Internal to the graph layer.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "graph/graph.h"
#include "graph/task_service.h"

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

  // Cancels every open task of the scope, each with `reason`; returns how many.
  int CancelOpenTasks(const std::string& reason) {
    int cancelled = 0;
    // Dependents come after their dependencies, so walking backwards cancels
    // each open task itself rather than cascade-failing it.
    for (int i = static_cast<int>(tasks_.size()) - 1; i >= 0; --i) {
      if (domain::IsTerminal(task(i).state)) continue;
      Terminate(i, TaskState::kCancelled, reason, "controller");
      cancelled += 1;
    }
    return cancelled;
  }

  // Applies the dispatcher's decision on a report to task `index` (holds,
  // requeues, fails or completes it), noting the effects in `tr`
  // (task_reports.cc).
  Status ApplyReportDecision(int index, const reports::Decision& decision, Transition& tr);

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

inline std::unexpected<Error> Invalid(std::string message) {
  return Fail(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace telic::graph
