// TaskService's approvals: a user's approval of one exact pending action of
// a task, and its single use (task_service.h).
#include <fmt/format.h>

#include "graph/task_scope.h"
#include "graph/task_service.h"

namespace telic::graph {

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


}  // namespace telic::graph
