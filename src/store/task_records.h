// Records of the task graph: tasks, their append-only events, stories
// (arbitrated units of work) and single-use action approvals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "domain/vocabulary.h"

namespace telic::store {

// A node's subagent permission (the PermissionSet `subagents` family).
struct SubagentLimits {
  bool spawn = false;
  int maximum_children = 0;
  int maximum_depth = 0;
};

struct TaskRecord {
  std::string task_id;
  std::optional<std::string> run_id;          // nullopt: a standalone graph
  std::optional<std::string> parent_task_id;  // nullopt: a top-level task
  std::string name;
  std::string instructions;
  std::string role;  // "" when none
  std::vector<std::string> depends_on;  // in the given order
  // pending: waiting for dependencies or dispatch; ready: every dependency
  // completed; running: handed out; the other three are terminal.
  domain::TaskState state = domain::TaskState::kPending;
  std::string priority = "normal";
  int attempts = 0;         // dispatches so far
  int retries_allowed = 0;  // from the MissionBrief
  int retries_used = 0;     // re-dispatches spent
  int depth = 0;            // 0 for top-level tasks
  SubagentLimits subagents;
  int children = 0;  // subtasks spawned under this task
  // Why a running task waits: awaiting_verification | awaiting_approval |
  // awaiting_user; nullopt when it does not wait.
  std::optional<std::string> hold;
  std::optional<std::string> failure_reason;
  std::optional<std::string> failed_dependency;  // set by cascade-fail
  Json brief = Json::object();    // what the next dispatch carries: keyTasks, missingContext
  Json pending = Json::object();  // the open decision: pendingActions, concerns, ablationRequired, ...
  std::string summary;
  int64_t version = 1;  // bumped by every update; compare-and-set
  int64_t seq = 0;      // insertion order, assigned by the store
  std::string created_at;
  std::string updated_at;
};

// An append-only event on a task or story id.
struct TaskEventRecord {
  int64_t seq = 0;  // assigned by the store; global order
  std::string event_id;
  std::string subject_id;  // task id or story id
  std::optional<std::string> run_id;
  std::string kind;   // e.g. task_created, verdict_reported, arbitration_decided
  std::string actor;  // agent | system | user
  Json payload = Json::object();
  std::string created_at;
};

// A reviewed unit of work: evaluator tasks and one arbitration task.
struct StoryRecord {
  std::string story_id;
  std::optional<std::string> run_id;
  std::string name;
  std::string status = "VALIDATING";  // VALIDATING | REVIEW_READY | NEEDS_FIX
  std::string arbitration_task_id;
  std::vector<std::string> evaluator_task_ids;
  int64_t version = 1;
  std::string created_at;
  std::string updated_at;
};

// A user approval of one exact pending action, usable once.
struct ApprovalRecord {
  std::string approval_id;
  std::string task_id;
  std::string action;
  std::string action_sha256;
  std::string policy_version;
  std::string binding_sha256;
  std::string user_decision;
  std::string created_at;
  std::optional<std::string> used_at;
};

// One atomic change to the task graph. Updated records carry their new
// version; the store applies an update only if the stored version is one
// less (compare-and-set). `reads` are records the change was computed from:
// their versions must still match.
struct TaskChange {
  std::vector<TaskRecord> inserted_tasks;
  std::vector<TaskRecord> updated_tasks;
  std::vector<std::pair<std::string, int64_t>> reads;
  std::vector<StoryRecord> inserted_stories;
  std::vector<StoryRecord> updated_stories;
  std::vector<TaskEventRecord> events;
  std::vector<ApprovalRecord> inserted_approvals;
  std::vector<std::string> used_approvals;  // approval ids to mark used now
  std::string now;
  // When set, the change applies only if the scope (a run's graph, or the
  // standalone graph for nullopt) still holds exactly `tasks` tasks;
  // otherwise kConflict. It guards decisions that depend on what is absent
  // (a WorkPlan not imported yet).
  struct ScopeGuard {
    std::optional<std::string> run_id;
    int64_t tasks = 0;
  };
  std::optional<ScopeGuard> expected_scope;
};

// The kConflict message when TaskChange::expected_scope no longer holds.
inline constexpr const char* kConcurrentScopeChange =
    "Concurrent task graph change detected; reload and retry";

Json TaskToJson(const TaskRecord& task);
Result<TaskRecord> TaskFromJson(const Json& json);
Json TaskEventToJson(const TaskEventRecord& event);
Json StoryToJson(const StoryRecord& story);
Json ApprovalToJson(const ApprovalRecord& approval);

// How a task store keeps records (shared by the SQLite and PostgreSQL task
// stores): a task body omits nothing but seq; an approval body omits
// used_at, which lives in its own mutable column. The readers answer
// kDataLoss for unreadable stored text (a task whose state is not a task
// state: "graph_tasks row <id>: state is not readable (...)").
std::string StoredTaskBody(const TaskRecord& task);
Result<TaskRecord> TaskFromStored(const std::string& body, int64_t seq);
Result<StoryRecord> StoryFromStored(const std::string& body);
std::string StoredApprovalBody(ApprovalRecord approval);
// An event's payload as stored: canonical and redacted.
std::string StoredEventPayload(const TaskEventRecord& event);
Result<ApprovalRecord> ApprovalFromStored(const std::string& body, std::optional<std::string> used_at);

}  // namespace telic::store
