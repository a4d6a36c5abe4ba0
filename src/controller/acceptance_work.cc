// Acceptance rules of the work family (PROTOCOL §15): WorkResult, and the
// execution progress and permission decisions of a work node. The rules read
// the typed views of artifact_views.h.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "policy/engine.h"
#include "policy/permission_set.h"
#include "policy/shell_command.h"

namespace telic::controller::rules {
namespace {

const std::set<std::string> kAlwaysMutating = {"repository.write", "repository.delete", "runtime.restart",
                                               "browser.mutate", "external.write"};
const std::set<std::string> kAlwaysReadOnly = {"repository.read", "shell.inspect", "runtime.inspect",
                                               "browser.inspect", "network.read",  "subagent.spawn"};

// Where execution stands on the latest WorkPlan (ExecutionProgress, typed).
struct PlanProgress {
  const Json* plan_body = nullptr;
  WorkPlanView plan;
  std::optional<size_t> pending;  // index into plan.nodes
  size_t remaining_after = 0;
};

// The latest WorkPlan's progress; with `candidate` it is checked to complete
// the pending node (ComputeExecutionProgress).
Result<PlanProgress> LoadPlanProgress(RunSnapshot& snapshot, const WorkResultView* candidate) {
  const store::ArtifactMeta* plan_meta = snapshot.Latest("WorkPlan");
  if (!plan_meta) return Fail(ErrorCode::kFailedPrecondition, "Executor phase is missing its WorkPlan");
  PlanProgress progress;
  TELIC_ASSIGN_OR_RETURN(progress.plan_body, snapshot.Body(*plan_meta));
  TELIC_ASSIGN_OR_RETURN(progress.plan, ViewOf(snapshot, *plan_meta, ViewWorkPlan));
  const std::vector<WorkNodeView>& nodes = progress.plan.nodes;
  if (nodes.empty()) return Fail(ErrorCode::kFailedPrecondition, "Latest WorkPlan has no executable nodes");
  std::string plan_ref = snapshot.Uri(plan_meta->id);
  std::set<std::string> completed, unsuccessful;
  TELIC_ASSIGN_OR_RETURN(std::vector<WorkResultView> results, AllViews(snapshot, "WorkResult", ViewWorkResult));
  for (const WorkResultView& result : results) {
    if (result.work_plan_ref != plan_ref) continue;
    (result.status == WorkStatus::kCompleted ? completed : unsuccessful).insert(result.node_id);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const WorkNodeView& node = nodes[i];
    if (!completed.count(node.id) && !unsuccessful.count(node.id) &&
        std::all_of(node.depends_on.begin(), node.depends_on.end(), [&](const std::string& d) { return completed.count(d) > 0; })) {
      progress.pending = i;
      break;
    }
  }
  bool candidate_failed = false;
  if (candidate) {
    if (candidate->work_plan_ref != plan_ref) return Reject("/workPlanRef", "WorkResult must reference the current WorkPlan");
    if (!progress.pending) return Reject("/nodeId", "No dependency-ready WorkPlan node remains");
    const std::string& pending = nodes[*progress.pending].id;
    if (candidate->node_id != pending) return Reject("/nodeId", fmt::format("WorkResult must complete dependency-ready node {}", pending));
    candidate_failed = candidate->status != WorkStatus::kCompleted;
    (candidate_failed ? unsuccessful : completed).insert(pending);
  }
  if (!candidate_failed) {
    progress.remaining_after = static_cast<size_t>(
        std::count_if(nodes.begin(), nodes.end(), [&](const WorkNodeView& n) { return !completed.count(n.id); }));
  }
  return progress;
}

// The actions' capabilities, permissions and mutating flags against the node.
Status CheckWorkResultActions(RunSnapshot& snapshot, const WorkNodeView& node, const WorkResultView& result,
                              const std::vector<std::string>& refs, std::optional<PermissionDenial>& denial) {
  for (size_t i = 0; i < result.actions.size(); ++i) {
    const WorkActionView& action = result.actions[i];
    const std::string& capability = action.capability;
    if (!policy::IsCapability(capability)) {
      return Reject(PointerAt("actions", i, "capability"), fmt::format("WorkResult action uses unknown capability {}", capability));
    }
    bool denied = action.status == ActionStatus::kDenied;
    if (!action.Attempted() && !denied) continue;
    if (capability == "shell.inspect" && !policy::IsShellInspectTarget(action.target)) {
      if (denied) continue;
      return Deny(denial, PointerAt("actions", i, "target"), "WorkResult shell inspection target is not a typed read-only inspection",
                  TraceDecision(capability, action.target, false, refs, "Denied: shell.inspect accepts only typed read-only inspection targets."),
                  refs);
    }
    if (!ContainsString(node.allowed_tools, capability)) {
      if (denied) continue;
      return Deny(denial, PointerAt("actions", i, "capability"), fmt::format("WorkResult action uses a capability outside node {}", node.id),
                  TraceDecision(capability, action.target, false, refs, fmt::format("Denied: capability is outside work node {}.", node.id)),
                  refs);
    }
    policy::Decision decision = AuthorizeForNode(snapshot.run(), node, capability, action.target);
    if (denied) {
      if (decision.allowed) return Reject(PointerAt("actions", i, "status"), "WorkResult cannot claim a permission denial for an authorized action");
      continue;
    }
    if (!decision.allowed) {
      return Deny(denial, PointerAt("actions", i, "target"),
                  fmt::format("WorkResult action target is outside node {} permissions: {}", node.id, decision.summary),
                  TraceDecision(capability, action.target, false, refs, decision.summary), refs);
    }
    if (kAlwaysMutating.count(capability) && !action.mutating) {
      return Reject(PointerAt("actions", i, "mutating"), fmt::format("WorkResult action {} must be marked mutating", capability));
    }
    if (kAlwaysReadOnly.count(capability) && action.mutating) {
      return Reject(PointerAt("actions", i, "mutating"), fmt::format("WorkResult action {} must be marked non-mutating", capability));
    }
  }
  return Ok();
}

std::string ChangeCapability(const FileChangeView& change) {
  return change.change_type == ChangeType::kDeleted ? "repository.delete" : "repository.write";
}

// Every file change is permitted and matches a completed mutating action, and
// every completed write or delete matches a file change.
Status CheckFileChanges(RunSnapshot& snapshot, const WorkNodeView& node, const WorkResultView& result,
                        const std::vector<std::string>& refs, std::optional<PermissionDenial>& denial) {
  const auto& actions = result.actions;
  for (size_t i = 0; i < result.files_changed.size(); ++i) {
    const FileChangeView& change = result.files_changed[i];
    std::string capability = ChangeCapability(change);
    policy::Decision decision = AuthorizeForNode(snapshot.run(), node, capability, change.path);
    if (!decision.allowed) {
      return Deny(denial, PointerAt("filesChanged", i, "path"),
                  fmt::format("WorkResult file change is outside node {} permissions: {}", node.id, change.path),
                  TraceDecision(capability, change.path, false, refs, decision.summary), refs);
    }
    bool matched = std::any_of(actions.begin(), actions.end(), [&](const WorkActionView& a) {
      return a.capability == capability && a.target == change.path && a.Completed() && a.mutating;
    });
    if (!matched) {
      return Reject(PointerAt("filesChanged", i, "path"),
                    fmt::format("WorkResult file change lacks a matching completed {} action: {}", capability, change.path));
    }
  }
  for (size_t i = 0; i < actions.size(); ++i) {
    const WorkActionView& action = actions[i];
    bool deletes = action.capability == "repository.delete";
    if (!action.Completed() || (action.capability != "repository.write" && !deletes)) continue;
    bool matched = std::any_of(result.files_changed.begin(), result.files_changed.end(), [&](const FileChangeView& c) {
      bool deleted = c.change_type == ChangeType::kDeleted;
      return c.path == action.target && (deletes ? deleted : !deleted);
    });
    if (!matched) return Reject(PointerAt("actions", i, "target"), fmt::format("Completed {} action lacks an exact FileChange", action.capability));
  }
  return Ok();
}

// Each required completion verification the node owns runs after the final
// mutating action.
Status CheckVerificationAfterMutation(RunSnapshot& snapshot, const WorkNodeView& node, const WorkResultView& result) {
  int64_t last_mutation = result.LastCompletedMutation();
  if (last_mutation < 0) return Ok();
  TELIC_ASSIGN_OR_RETURN(TaskContractView contract, LatestView(snapshot, "TaskContract", ViewTaskContract));
  std::vector<std::string> completion = contract.CriterionIds(CriterionStage::kCompletion);
  const auto& assigned = node.acceptance_criteria;
  bool owns = std::any_of(assigned.begin(), assigned.end(), [&](const std::string& c) { return ContainsString(completion, c); });
  for (const VerificationRequirementView& requirement : contract.verification_requirements) {
    if (!requirement.required || requirement.stage != CriterionStage::kCompletion || !owns ||
        !ContainsString(node.required_capabilities, requirement.capability)) {
      continue;
    }
    auto after = std::find_if(result.actions.begin() + last_mutation + 1, result.actions.end(), [&](const WorkActionView& a) {
      return a.capability == requirement.capability && a.Completed() && !a.mutating;
    });
    if (after == result.actions.end()) {
      return Reject(PointerAt("actions", static_cast<size_t>(last_mutation)),
                    fmt::format("Completion verification {} must run after the final mutating action", requirement.id));
    }
  }
  return Ok();
}

// The rules of a WorkResult that claims its node completed.
Status CheckCompletedWorkResult(RunSnapshot& snapshot, const WorkNodeView& node, const WorkResultView& result,
                                const std::vector<std::string>& coverage_ids) {
  TELIC_RETURN_IF_ERROR(CheckVerificationAfterMutation(snapshot, node, result));
  for (const auto& capability : node.required_capabilities) {
    bool done = std::any_of(result.actions.begin(), result.actions.end(),
                            [&](const WorkActionView& a) { return a.capability == capability && a.Completed(); });
    if (!done) return Reject("/actions", fmt::format("Completed WorkResult is missing required capability {}", capability));
  }
  std::set<std::string> assigned(node.acceptance_criteria.begin(), node.acceptance_criteria.end());
  if (!EqualStringSets(coverage_ids, std::vector<std::string>(assigned.begin(), assigned.end()))) {
    return Reject("/acceptanceCoverage", "Completed WorkResult must cover every assigned criterion exactly once");
  }
  for (size_t i = 0; i < result.actions.size(); ++i) {
    ActionStatus status = result.actions[i].status;
    if (status == ActionStatus::kFailed || status == ActionStatus::kDenied) {
      return Reject(PointerAt("actions", i, "status"), "Completed WorkResult cannot include failed or denied actions");
    }
  }
  for (size_t i = 0; i < result.test_results.size(); ++i) {
    if (result.test_results[i] == TestStatus::kFailed) return Reject(PointerAt("testResults", i, "status"), "Completed WorkResult cannot include failed tests");
  }
  for (size_t i = 0; i < result.acceptance_coverage.size(); ++i) {
    if (result.acceptance_coverage[i].status != CheckStatus::kPass) {
      return Reject(PointerAt("acceptanceCoverage", i, "status"), "Completed WorkResult requires every assigned acceptance criterion to pass");
    }
  }
  return Ok();
}

// Whether `action` is a completed read-only step that can confirm a known
// correction still applies: a repository read, a typed inspection, or a
// non-mutating command such as the failing test (D57).
bool IsPreflightStep(const WorkActionView& action) {
  static const std::vector<std::string> kPreflight = {"repository.read", "shell.inspect", "runtime.inspect", "shell.execute"};
  return action.Completed() && !action.mutating && ContainsString(kPreflight, action.capability);
}

// The first action that mutates and ran (completed or failed).
std::vector<WorkActionView>::const_iterator FirstAttemptedMutation(const WorkResultView& result) {
  return std::find_if(result.actions.begin(), result.actions.end(),
                      [](const WorkActionView& a) { return a.mutating && a.Attempted(); });
}

// TEL-031: a fix_only execution begins with a minimal preflight. The first
// mutating action the run attempts (completed or failed) must follow a
// completed preflight step, in this WorkResult or in one accepted before it.
Status CheckFixOnlyPreflight(RunSnapshot& snapshot, const WorkResultView& result) {
  auto first_mutation = FirstAttemptedMutation(result);
  if (first_mutation == result.actions.end()) return Ok();
  if (std::any_of(result.actions.begin(), first_mutation, IsPreflightStep)) return Ok();
  TELIC_ASSIGN_OR_RETURN(std::vector<WorkResultView> earlier, AllViews(snapshot, "WorkResult", ViewWorkResult));
  for (const WorkResultView& done : earlier) {
    if (std::any_of(done.actions.begin(), done.actions.end(), IsPreflightStep)) return Ok();
  }
  return Reject(PointerAt("actions", static_cast<size_t>(first_mutation - result.actions.begin())),
                "fix_only execution must begin with a minimal preflight: a completed non-mutating repository.read, "
                "shell.inspect, runtime.inspect or shell.execute action confirming the known correction still applies "
                "must come before the first mutating action");
}

// A result that mutates (a file change or an attempted mutating action) while
// the mode is non-mutating at the current stage is denied.
Status CheckNonMutatingStage(RunSnapshot& snapshot, const WorkResultView& result, bool unlocked,
                             const std::vector<std::string>& refs, std::optional<PermissionDenial>& denial) {
  const std::string mode(domain::Name(snapshot.run().requested_mode));  // named in the refusal
  std::optional<domain::Mode> run_mode = RunMode(snapshot);
  bool non_mutating = IsReportOrPlan(run_mode) || run_mode == domain::Mode::kAnalyzeOnly || IsDiagnosisStage(run_mode, unlocked);
  auto attempted_mutation = FirstAttemptedMutation(result);
  bool action_denied = attempted_mutation != result.actions.end();
  if (!non_mutating || (result.files_changed.empty() && !action_denied)) return Ok();
  std::string capability = action_denied ? attempted_mutation->capability : ChangeCapability(result.files_changed[0]);
  std::string target = action_denied ? attempted_mutation->target : result.files_changed[0].path;
  std::string at = action_denied ? PointerAt("actions", static_cast<size_t>(attempted_mutation - result.actions.begin()))
                                 : PointerAt("filesChanged", 0);
  return Deny(denial, at, fmt::format("{} cannot accept mutating work", mode),
              TraceDecision(capability, target, false, refs,
                            fmt::format("Denied: {} is non-mutating at the current workflow stage.", mode)),
              refs);
}

// The coverage names only the node's criteria, each once; returns their ids.
Result<std::vector<std::string>> CheckCoverageScope(const WorkNodeView& node, const WorkResultView& result) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < result.acceptance_coverage.size(); ++i) {
    const std::string& criterion = result.acceptance_coverage[i].criterion_id;
    if (!ContainsString(node.acceptance_criteria, criterion)) {
      return Reject(PointerAt("acceptanceCoverage", i, "criterionId"), "WorkResult acceptance coverage is outside its WorkPlan node");
    }
    ids.push_back(criterion);
  }
  if (std::set<std::string>(ids.begin(), ids.end()).size() != ids.size()) {
    return Reject("/acceptanceCoverage", "WorkResult acceptance criteria must not be duplicated");
  }
  return ids;
}

// The node's tool-call budget.
Status CheckToolCallBudget(const WorkNodeView& node, const WorkResultView& result) {
  int64_t max_calls = node.maximum_tool_calls;
  if (static_cast<int64_t>(result.actions.size()) > max_calls ||
      static_cast<int64_t>(result.tool_event_refs.size()) > max_calls) {
    return Reject(result.actions.size() > static_cast<size_t>(std::max<int64_t>(max_calls, 0)) ? "/actions" : "/toolEventRefs",
                  fmt::format("WorkResult exceeds node {} maximumToolCalls budget", node.id));
  }
  return Ok();
}

// The node's child budget: the lower of its budget and its permission set's.
Status CheckChildBudget(const WorkNodeView& node, const WorkResultView& result) {
  int64_t children = std::count_if(result.actions.begin(), result.actions.end(), [](const WorkActionView& a) {
    return a.capability == "subagent.spawn" && a.Completed();
  });
  int64_t max_children = std::min(node.maximum_children,
                                  node.permissions->value("subagents", Json::object()).value("maximumChildren", int64_t{0}));
  if (children > max_children) return Reject("/actions", fmt::format("WorkResult exceeds node {} child budget", node.id));
  return Ok();
}

}  // namespace

Status CheckWorkResult(RunSnapshot& snapshot, const Submission& s, std::optional<PermissionDenial>& denial) {
  TELIC_ASSIGN_OR_RETURN(WorkResultView result, ViewWorkResult(s.body));
  TELIC_ASSIGN_OR_RETURN(PlanProgress progress, LoadPlanProgress(snapshot, nullptr));
  if (!progress.pending) return Reject("/nodeId", "No dependency-ready work node remains");
  const WorkNodeView& node = progress.plan.nodes[*progress.pending];
  if (!node.permissions->is_object()) {
    return Reject("/nodeId", fmt::format("Work node {} permissions must be a structured permission set", node.id));
  }
  TELIC_RETURN_IF_ERROR(CheckToolCallBudget(node, result));
  TELIC_ASSIGN_OR_RETURN(bool unlocked, AnalysisFixUnlocked(snapshot));
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> refs = {contract_ref, plan_ref};
  TELIC_RETURN_IF_ERROR(CheckNonMutatingStage(snapshot, result, unlocked, refs, denial));
  TELIC_RETURN_IF_ERROR(CheckWorkResultActions(snapshot, node, result, refs, denial));
  TELIC_RETURN_IF_ERROR(CheckChildBudget(node, result));
  TELIC_RETURN_IF_ERROR(CheckFileChanges(snapshot, node, result, refs, denial));
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> coverage_ids, CheckCoverageScope(node, result));
  if (result.status == WorkStatus::kCompleted) {
    TELIC_RETURN_IF_ERROR(CheckCompletedWorkResult(snapshot, node, result, coverage_ids));
  }
  TELIC_RETURN_IF_ERROR(CheckEvidenceSemantics(snapshot, s.type, s.body));
  // Last, so that a result refused for another reason names that reason.
  return RunMode(snapshot) == domain::Mode::kFixOnly ? CheckFixOnlyPreflight(snapshot, result) : Ok();
}

}  // namespace telic::controller::rules

namespace telic::controller {

Result<ExecutionProgress> ComputeExecutionProgress(RunSnapshot& snapshot, const Json* candidate) {
  std::optional<WorkResultView> candidate_view;
  if (candidate) {
    TELIC_ASSIGN_OR_RETURN(candidate_view, ViewWorkResult(*candidate));
  }
  TELIC_ASSIGN_OR_RETURN(rules::PlanProgress plan, rules::LoadPlanProgress(snapshot, candidate_view ? &*candidate_view : nullptr));
  ExecutionProgress progress;
  if (plan.pending) progress.pending_node = (*plan.plan_body)["nodes"][*plan.pending];
  progress.remaining_after = plan.remaining_after;
  return progress;
}

Result<std::vector<Json>> WorkResultPermissionDecisions(RunSnapshot& snapshot, const Json& body) {
  TELIC_ASSIGN_OR_RETURN(WorkResultView result, ViewWorkResult(body));
  TELIC_ASSIGN_OR_RETURN(rules::PlanProgress plan, rules::LoadPlanProgress(snapshot, nullptr));
  std::vector<Json> decisions;
  if (!plan.pending) return decisions;
  const WorkNodeView& node = plan.plan.nodes[*plan.pending];
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> refs = {contract_ref, plan_ref};
  for (const WorkActionView& action : result.actions) {
    if (!action.Attempted() && action.status != ActionStatus::kDenied) continue;
    bool allowed_tool = policy::IsCapability(action.capability) && ContainsString(node.allowed_tools, action.capability);
    if (allowed_tool) {
      policy::Decision decision = rules::AuthorizeForNode(snapshot.run(), node, action.capability, action.target);
      decisions.push_back(rules::TraceDecision(action.capability, action.target, decision.allowed, refs, decision.summary));
    } else {
      decisions.push_back(rules::TraceDecision(action.capability, action.target, false, refs,
                                               fmt::format("Denied: capability is outside work node {}.", node.id)));
    }
  }
  return decisions;
}

}  // namespace telic::controller
