// TaskService: the task graph's operations over a TaskStore. Each call loads
// the graph scope (a run, or the standalone scope), computes the change with
// Graph, and applies it as ONE TaskStore transaction guarded by the version
// of every task it touched or read — a cascade-fail, a completion that
// readies dependents and finalises a story's arbitration, or a report and
// its decision are never half-stored.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"
#include "reports/approval.h"
#include "reports/dispatcher.h"
#include "reports/report.h"
#include "store/store.h"
#include "store/task_store.h"

namespace telic::graph {

struct CreateTaskRequest {
  std::optional<std::string> run_id;
  std::string name;
  std::string instructions;
  std::string role;
  std::vector<std::string> depends_on;  // other top-level tasks of the scope
  int retries_allowed = 0;               // the MissionBrief's retry budget
  store::SubagentLimits subagents;       // the node's subagent permission
};

struct SpawnRequest {
  std::optional<std::string> run_id;  // when given, must be the parent's run
  std::string parent_task_id;
  std::string name;
  std::string instructions;
  std::string role;
  std::vector<std::string> depends_on;  // siblings already spawned under the parent
};

struct DispatchResult {
  std::vector<store::TaskRecord> dispatched;
  int running = 0;  // running tasks in the scope after dispatch
  int ready = 0;    // ready tasks still waiting for a worker
};

// What a state-changing call did to the graph besides the task itself.
struct Transition {
  store::TaskRecord task;
  std::vector<store::TaskRecord> now_ready;   // dependents that became ready
  std::vector<store::TaskRecord> cascaded;    // dependents failed by cascade
  std::vector<store::StoryRecord> stories;    // stories whose arbitration was finalised
  std::string action;                          // what the caller does next
};

struct ReportOutcome {
  Transition transition;
  reports::Report report;
  reports::Decision decision;
};

struct VerificationRequest {
  std::string task_id;
  bool passed = false;
  std::vector<std::string> evidence;
  bool concerns_addressed = false;
  std::optional<bool> ablation_passed;
  // Who established the result (issue 38): kClaimed when a host reports it
  // (telic_record_verification), kObserved when telic ran the check itself;
  // recorded in the verification_recorded event's payload as "provenance".
  store::Provenance provenance = store::Provenance::kClaimed;
  // The observed check's Evidence artifact (artifact://...), recorded as
  // "evidenceRef" when set.
  std::optional<std::string> evidence_ref;
};

struct ResolveRequest {
  std::string task_id;
  std::string resolution;  // redispatch | fail | cancel
  std::string user_decision;
  int additional_retries = 0;
  std::vector<std::string> key_tasks;
};

struct TaskList {
  std::vector<store::TaskRecord> tasks;
  std::vector<store::StoryRecord> stories;
};

struct TaskDetail {
  store::TaskRecord task;
  std::vector<store::TaskEventRecord> events;
  std::vector<store::ApprovalRecord> approvals;
};

struct SyncSummary {
  int imported = 0;   // tasks created from WorkPlan nodes
  int completed = 0;  // tasks completed by a WorkResult
  int failed = 0;     // tasks failed by a WorkResult (not counting cascades)
  int cancelled = 0;  // open tasks cancelled because the run ended
  std::vector<std::string> skipped_plans;  // "<plan id>: <why>" for plans the graph cannot hold
};

class TaskService {
 public:
  // `runs` (optional) checks that a run named by a task exists and is open.
  TaskService(store::TaskStore& tasks, Clock& clock, IdSource& ids, store::Store* runs = nullptr,
              std::string policy_version = std::string(reports::kApprovalPolicyVersion))
      : tasks_(tasks), clock_(clock), ids_(ids), runs_(runs), policy_version_(std::move(policy_version)) {}

  // A top-level task; dependsOn names top-level tasks of the same scope.
  Result<store::TaskRecord> CreateTask(const CreateTaskRequest& request);

  // Accepted WorkPlan nodes become top-level tasks (one per node, dependsOn
  // mapped, the node's subagent permission kept), in one transaction;
  // cycles and unknown ids are rejected.
  Result<std::vector<store::TaskRecord>> ImportWorkPlan(const std::string& run_id, const Json& plan,
                                                        int retries_allowed);

  // Mirrors run `run_id` into its task graph, idempotently, in one
  // transaction: every accepted WorkPlan's nodes become tasks named
  // "<plan id>/<node id>" (imported once); every accepted WorkResult
  // completes its node's task (status completed) or fails it, cascading to
  // its dependents; when the run has ended, its open tasks are cancelled.
  // The run's artifacts are the source of truth: this is re-run after each
  // committed change and before the graph of a run is read, so a crash
  // between the run's commit and this one is repaired. Needs the run store.
  // Artifacts a previous sync of this service has already mirrored (their
  // effect committed, or none to have) are not read again: a sync reads the
  // bodies of the WorkPlans and WorkResults appended since.
  Result<SyncSummary> SyncRun(const std::string& run_id);

  // spawn_subtask: a child of a running parent, within the parent's
  // subagent permission (spawn, maximumChildren, maximumDepth).
  Result<store::TaskRecord> SpawnSubtask(const SpawnRequest& request);

  // Hands out ready tasks until `max_parallel_workers` run in the scope.
  Result<DispatchResult> Dispatch(const std::optional<std::string>& run_id, int max_parallel_workers);

  // Records a report from a running task and applies the dispatcher's decision.
  Result<ReportOutcome> SubmitReport(const std::string& task_id, const reports::Report& report,
                                     std::optional<bool> new_mechanism);

  // The deterministic verifier's result for a task awaiting verification.
  Result<Transition> RecordVerification(const VerificationRequest& request);

  // A user decision on a task: redispatch (held tasks), fail or cancel.
  Result<Transition> ResolveTask(const ResolveRequest& request);

  // report_verdict: one verdict_reported event on the task's own id.
  Result<store::TaskEventRecord> ReportVerdict(const std::string& task_id, bool approved, const std::string& reasoning);

  // A story in VALIDATING whose arbitration task decides its outcome.
  Result<store::StoryRecord> CreateStory(const std::optional<std::string>& run_id, const std::string& name,
                                         const std::string& arbitration_task_id,
                                         const std::vector<std::string>& evaluator_task_ids);
  // Manual status change (e.g. NEEDS_FIX after a verdict-less REVIEW_READY).
  Result<store::StoryRecord> SetStoryStatus(const std::string& story_id, const std::string& status);

  // Approves one exact pending action of a task awaiting approval.
  Result<std::pair<store::ApprovalRecord, store::TaskRecord>> ApproveAction(const std::string& task_id,
                                                                             const std::string& action,
                                                                             const std::string& user_decision);
  // Consumes the approval of this exact action (once).
  Result<store::ApprovalRecord> UseApproval(const std::string& task_id, const std::string& action);

  Result<TaskList> ListTasks(const std::optional<std::string>& run_id);
  Result<TaskDetail> GetTask(const std::string& task_id);

  const std::string& policy_version() const { return policy_version_; }

 private:
  class Scope;
  // Inserts the plan's nodes as tasks of the scope's run; returns their indexes.
  Result<std::vector<int>> ImportInto(Scope& scope, const Json& plan, int retries_allowed);
  Result<SyncSummary> SyncRunOnce(const std::string& run_id);
  int64_t SyncedThrough(const std::string& run_id);
  void MarkSynced(const std::string& run_id, int64_t seq);
  Status CheckRun(const std::optional<std::string>& run_id);
  // A host's (claimed) passing verification is refused for a task of a run
  // under require_observed; failures and telic's own checks pass through.
  Status CheckVerificationProvenance(const store::TaskRecord& task, const VerificationRequest& request);
  store::TaskEventRecord Event(const std::string& subject, const std::optional<std::string>& run_id, std::string kind,
                               std::string actor, Json payload, const std::string& now);

  store::TaskStore& tasks_;
  Clock& clock_;
  IdSource& ids_;
  store::Store* runs_;
  std::string policy_version_;
  // Per run: the seq of the last artifact whose effect on the graph is
  // committed (SyncRun). Appends to a run commit in seq order, so nothing
  // at or below it can appear later.
  std::mutex synced_mutex_;
  std::map<std::string, int64_t, std::less<>> synced_through_;
};

}  // namespace telic::graph
