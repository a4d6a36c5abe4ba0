// Acceptance rules of the work family (PROTOCOL §15): WorkResult, and the
// execution progress and permission decisions of a work node.
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

Status CheckWorkResultActions(RunSnapshot& snapshot, const Json& node, const Json& body, const Items& actions,
                              const std::vector<std::string>& refs, std::optional<PermissionDenial>& denial) {
  const auto& run = snapshot.run();
  std::string node_id = node.value("id", "");
  std::vector<std::string> tools = StringArray(node, "allowedTools");
  for (const Json& action : actions) {
    if (!action.contains("capability") || !action["capability"].is_string()) {
      return Reject(At(body, "actions", action, "capability"), "WorkResult action capability is invalid");
    }
    std::string capability = action["capability"];
    if (!policy::IsCapability(capability)) {
      return Reject(At(body, "actions", action, "capability"), fmt::format("WorkResult action uses unknown capability {}", capability));
    }
    std::string status = action.value("status", "");
    bool attempted = status == "completed" || status == "failed";
    bool checked = attempted || status == "denied";
    if (!checked) continue;
    if (capability == "shell.inspect" &&
        !(action.contains("target") && action["target"].is_string() && policy::IsShellInspectTarget(action["target"].get<std::string>()))) {
      if (status == "denied") continue;
      return Deny(denial, At(body, "actions", action, "target"), "WorkResult shell inspection target is not a typed read-only inspection",
                  TraceDecision(action, false, refs, "Denied: shell.inspect accepts only typed read-only inspection targets."),
                  refs);
    }
    if (!ContainsString(tools, capability)) {
      if (status == "denied") continue;
      return Deny(denial, At(body, "actions", action, "capability"), fmt::format("WorkResult action uses a capability outside node {}", node_id),
                  TraceDecision(action, false, refs, fmt::format("Denied: capability is outside work node {}.", node_id)), refs);
    }
    policy::Decision decision = AuthorizeForNode(run, node, capability, action);
    if (status == "denied") {
      if (decision.allowed) return Reject(At(body, "actions", action, "status"), "WorkResult cannot claim a permission denial for an authorized action");
      continue;
    }
    if (!decision.allowed) {
      return Deny(denial, At(body, "actions", action, "target"), fmt::format("WorkResult action target is outside node {} permissions: {}", node_id, decision.summary),
                  TraceDecision(action, false, refs, decision.summary), refs);
    }
    if (kAlwaysMutating.count(capability) && action.value("mutating", false) != true) {
      return Reject(At(body, "actions", action, "mutating"), fmt::format("WorkResult action {} must be marked mutating", capability));
    }
    if (kAlwaysReadOnly.count(capability) && !(action.contains("mutating") && action["mutating"] == false)) {
      return Reject(At(body, "actions", action, "mutating"), fmt::format("WorkResult action {} must be marked non-mutating", capability));
    }
  }
  return Ok();
}

Status CheckFileChanges(RunSnapshot& snapshot, const Json& node, const Json& body, const Items& actions,
                        const Items& changes, const std::vector<std::string>& refs,
                        std::optional<PermissionDenial>& denial) {
  std::string node_id = node.value("id", "");
  for (const Json& change : changes) {
    if (!change.contains("path") || !change["path"].is_string()) return Reject(At(body, "filesChanged", change, "path"), "WorkResult file change path is invalid");
    std::string path = change["path"];
    std::string capability = change.value("changeType", "") == "deleted" ? "repository.delete" : "repository.write";
    Json synthetic = {{"capability", capability}, {"target", path}};
    policy::Decision decision = AuthorizeForNode(snapshot.run(), node, capability, synthetic);
    if (!decision.allowed) {
      return Deny(denial, At(body, "filesChanged", change, "path"), fmt::format("WorkResult file change is outside node {} permissions: {}", node_id, path),
                  TraceDecision(synthetic, false, refs, decision.summary), refs);
    }
    bool matched = std::any_of(actions.begin(), actions.end(), [&](const Json& a) {
      return a.value("capability", "") == capability && a.value("target", "") == path && a.value("status", "") == "completed" &&
             a.value("mutating", false) == true;
    });
    if (!matched) {
      return Reject(At(body, "filesChanged", change, "path"),
                    fmt::format("WorkResult file change lacks a matching completed {} action: {}", capability, path));
    }
  }
  for (const Json& action : actions) {
    std::string capability = action.value("capability", "");
    if (action.value("status", "") != "completed" || (capability != "repository.write" && capability != "repository.delete")) {
      continue;
    }
    bool matched = std::any_of(changes.begin(), changes.end(), [&](const Json& c) {
      bool deleted = c.value("changeType", "") == "deleted";
      return c.value("path", "") == action.value("target", "") && (capability == "repository.delete" ? deleted : !deleted);
    });
    if (!matched) return Reject(At(body, "actions", action, "target"), fmt::format("Completed {} action lacks an exact FileChange", capability));
  }
  return Ok();
}

Status CheckCompletedWorkResult(RunSnapshot& snapshot, const Json& node, const Json& body, const Items& actions,
                                const std::vector<std::string>& coverage_ids) {
  int64_t last_mutation = LastCompletedMutation(actions);
  std::vector<std::string> required = StringArray(node, "requiredCapabilities");
  std::vector<std::string> assigned = StringArray(node, "acceptanceCriteria");
  if (last_mutation >= 0) {
    TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
    std::vector<std::string> completion = CriterionIds(*contract, "completion");
    bool owns = std::any_of(assigned.begin(), assigned.end(), [&](const std::string& c) { return ContainsString(completion, c); });
    for (const Json& requirement : Objects(*contract, "verificationRequirements")) {
      std::string capability = requirement.value("capability", "");
      if (requirement.value("required", false) != true || requirement.value("stage", "") != "completion" || !owns ||
          !ContainsString(required, capability)) {
        continue;
      }
      bool after = false;
      for (size_t i = static_cast<size_t>(last_mutation) + 1; i < actions.size() && !after; ++i) {
        const Json& action = actions[i];
        after = action.value("capability", "") == capability && action.value("status", "") == "completed" &&
                action.contains("mutating") && action["mutating"] == false;
      }
      if (!after) {
        return Reject(PointerAt("actions", static_cast<size_t>(last_mutation)),
                      fmt::format("Completion verification {} must run after the final mutating action", requirement.value("id", "")));
      }
    }
  }
  for (const auto& capability : required) {
    bool done = std::any_of(actions.begin(), actions.end(), [&](const Json& a) {
      return a.value("capability", "") == capability && a.value("status", "") == "completed";
    });
    if (!done) return Reject("/actions", fmt::format("Completed WorkResult is missing required capability {}", capability));
  }
  std::set<std::string> assigned_set(assigned.begin(), assigned.end());
  if (!EqualStringSets(coverage_ids, std::vector<std::string>(assigned_set.begin(), assigned_set.end()))) {
    return Reject("/acceptanceCoverage", "Completed WorkResult must cover every assigned criterion exactly once");
  }
  for (const Json& action : actions) {
    std::string st = action.value("status", "");
    if (st == "failed" || st == "denied") {
      return Reject(At(body, "actions", action, "status"), "Completed WorkResult cannot include failed or denied actions");
    }
  }
  for (const Json& test : Objects(body, "testResults")) {
    if (test.value("status", "") == "failed") return Reject(At(body, "testResults", test, "status"), "Completed WorkResult cannot include failed tests");
  }
  for (const Json& item : Objects(body, "acceptanceCoverage")) {
    if (item.value("status", "") != "pass") {
      return Reject(At(body, "acceptanceCoverage", item, "status"), "Completed WorkResult requires every assigned acceptance criterion to pass");
    }
  }
  return Ok();
}

// Whether `action` is a completed read-only step that can confirm a known
// correction still applies: a repository read, a typed inspection, or a
// non-mutating command such as the failing test (D57).
bool IsPreflightStep(const Json& action) {
  static const std::vector<std::string> kPreflight = {"repository.read", "shell.inspect", "runtime.inspect", "shell.execute"};
  return action.value("status", "") == "completed" && action.contains("mutating") && action["mutating"] == false &&
         ContainsString(kPreflight, action.value("capability", ""));
}

// TEL-031: a fix_only execution begins with a minimal preflight. The first
// mutating action the run attempts (completed or failed) must follow a
// completed preflight step, in this WorkResult or in one accepted before it.
Status CheckFixOnlyPreflight(RunSnapshot& snapshot, const Json& body, const Items& actions) {
  auto first_mutation = std::find_if(actions.begin(), actions.end(), [](const Json& a) {
    std::string st = a.value("status", "");
    return a.value("mutating", false) == true && (st == "completed" || st == "failed");
  });
  if (first_mutation == actions.end()) return Ok();
  if (std::any_of(actions.begin(), first_mutation, [](const Json& a) { return IsPreflightStep(a); })) return Ok();
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* earlier, snapshot.Body(*meta));
    Items done = Objects(*earlier, "actions");
    if (std::any_of(done.begin(), done.end(), [](const Json& a) { return IsPreflightStep(a); })) return Ok();
  }
  return Reject(At(body, "actions", first_mutation->get()),
                "fix_only execution must begin with a minimal preflight: a completed non-mutating repository.read, "
                "shell.inspect, runtime.inspect or shell.execute action confirming the known correction still applies "
                "must come before the first mutating action");
}

}  // namespace

Status CheckWorkResult(RunSnapshot& snapshot, const Submission& s, std::optional<PermissionDenial>& denial) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(snapshot));
  if (!progress.pending_node) return Reject("/nodeId", "No dependency-ready work node remains");
  const Json& node = *progress.pending_node;
  std::string node_id = node.value("id", "");
  if (!node.value("permissions", Json()).is_object()) {
    return Reject("/nodeId", fmt::format("Work node {} permissions must be a structured permission set", node_id));
  }
  Items actions = Objects(body, "actions");
  Items changes = Objects(body, "filesChanged");
  int64_t max_calls = node.value("budgets", Json::object()).value("maximumToolCalls", int64_t{0});
  if (static_cast<int64_t>(actions.size()) > max_calls ||
      static_cast<int64_t>(StringArray(body, "toolEventRefs").size()) > max_calls) {
    return Reject(actions.size() > static_cast<size_t>(std::max<int64_t>(max_calls, 0)) ? "/actions" : "/toolEventRefs",
                  fmt::format("WorkResult exceeds node {} maximumToolCalls budget", node_id));
  }
  TELIC_ASSIGN_OR_RETURN(bool unlocked, AnalysisFixUnlocked(snapshot));
  const std::string& mode = run.requested_mode;
  bool non_mutating = mode == "report_only" || mode == "plan_only" || mode == "analyze_only" ||
                      (mode == "analyze_and_fix" && !unlocked);
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> refs = {contract_ref, plan_ref};
  auto attempted_mutation = std::find_if(actions.begin(), actions.end(), [](const Json& a) {
    std::string st = a.value("status", "");
    return a.value("mutating", false) == true && (st == "completed" || st == "failed");
  });
  if (non_mutating && (!changes.empty() || attempted_mutation != actions.end())) {
    const bool action_denied = attempted_mutation != actions.end();
    const Json& first_change = changes.empty() ? Json::object() : changes[0].get();
    Json denied = action_denied ? attempted_mutation->get()
                  : !changes.empty()
                      ? Json{{"capability", first_change.value("changeType", "") == "deleted" ? "repository.delete" : "repository.write"},
                             {"target", first_change.value("path", "unspecified")}}
                      : Json{{"capability", "repository.write"}, {"target", "unspecified"}};
    std::string at = action_denied ? At(body, "actions", attempted_mutation->get()) : PointerAt("filesChanged", 0);
    return Deny(denial, at, fmt::format("{} cannot accept mutating work", mode),
                TraceDecision(denied, false, refs, fmt::format("Denied: {} is non-mutating at the current workflow stage.", mode)),
                refs);
  }
  TELIC_RETURN_IF_ERROR(CheckWorkResultActions(snapshot, node, body, actions, refs, denial));
  int64_t children = std::count_if(actions.begin(), actions.end(), [](const Json& a) {
    return a.value("capability", "") == "subagent.spawn" && a.value("status", "") == "completed";
  });
  int64_t max_children = std::min(node.value("budgets", Json::object()).value("maximumChildren", int64_t{0}),
                                  node["permissions"].value("subagents", Json::object()).value("maximumChildren", int64_t{0}));
  if (children > max_children) return Reject("/actions", fmt::format("WorkResult exceeds node {} child budget", node_id));
  TELIC_RETURN_IF_ERROR(CheckFileChanges(snapshot, node, body, actions, changes, refs, denial));
  std::vector<std::string> assigned = StringArray(node, "acceptanceCriteria");
  Items coverage = Objects(body, "acceptanceCoverage");
  for (const Json& item : coverage) {
    if (!item.contains("criterionId") || !item["criterionId"].is_string() ||
        !ContainsString(assigned, item["criterionId"].get<std::string>())) {
      return Reject(At(body, "acceptanceCoverage", item, "criterionId"), "WorkResult acceptance coverage is outside its WorkPlan node");
    }
  }
  std::vector<std::string> coverage_ids = Field(coverage, "criterionId");
  if (std::set<std::string>(coverage_ids.begin(), coverage_ids.end()).size() != coverage_ids.size()) {
    return Reject("/acceptanceCoverage", "WorkResult acceptance criteria must not be duplicated");
  }
  if (body.value("status", "") == "completed") {
    TELIC_RETURN_IF_ERROR(CheckCompletedWorkResult(snapshot, node, body, actions, coverage_ids));
  }
  TELIC_RETURN_IF_ERROR(CheckEvidenceSemantics(snapshot, s.type, body));
  // Last, so that a result refused for another reason names that reason.
  return mode == "fix_only" ? CheckFixOnlyPreflight(snapshot, body, actions) : Ok();
}

}  // namespace telic::controller::rules

namespace telic::controller {

Result<ExecutionProgress> ComputeExecutionProgress(RunSnapshot& snapshot, const Json* candidate) {
  const store::ArtifactMeta* plan_meta = snapshot.Latest("WorkPlan");
  if (!plan_meta) return Fail(ErrorCode::kFailedPrecondition, "Executor phase is missing its WorkPlan");
  TELIC_ASSIGN_OR_RETURN(const Json* plan, snapshot.Body(*plan_meta));
  std::vector<Json> nodes = plan->value("nodes", std::vector<Json>{});
  if (nodes.empty()) return Fail(ErrorCode::kFailedPrecondition, "Latest WorkPlan has no executable nodes");
  std::string plan_ref = snapshot.Uri(plan_meta->id);
  std::set<std::string> completed, unsuccessful;
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* result, snapshot.Body(*meta));
    if (result->value("workPlanRef", "") != plan_ref || !result->contains("nodeId")) continue;
    (result->value("status", "") == "completed" ? completed : unsuccessful).insert(result->value("nodeId", ""));
  }
  ExecutionProgress progress;
  for (const Json& node : nodes) {
    std::string id = node.value("id", "");
    auto deps = StringArray(node, "dependsOn");
    if (!completed.count(id) && !unsuccessful.count(id) &&
        std::all_of(deps.begin(), deps.end(), [&](const std::string& d) { return completed.count(d) > 0; })) {
      progress.pending_node = node;
      break;
    }
  }
  bool candidate_failed = false;
  if (candidate) {
    if (candidate->value("workPlanRef", "") != plan_ref) return rules::Reject("/workPlanRef", "WorkResult must reference the current WorkPlan");
    if (!progress.pending_node) return rules::Reject("/nodeId", "No dependency-ready WorkPlan node remains");
    std::string pending = progress.pending_node->value("id", "");
    if (candidate->value("nodeId", "") != pending) return rules::Reject("/nodeId", fmt::format("WorkResult must complete dependency-ready node {}", pending));
    candidate_failed = candidate->value("status", "") != "completed";
    (candidate_failed ? unsuccessful : completed).insert(pending);
  }
  if (candidate_failed) {
    progress.remaining_after = 0;
  } else {
    progress.remaining_after = static_cast<size_t>(
        std::count_if(nodes.begin(), nodes.end(), [&](const Json& n) { return !completed.count(n.value("id", "")); }));
  }
  return progress;
}

Result<std::vector<Json>> WorkResultPermissionDecisions(RunSnapshot& snapshot, const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(snapshot));
  std::vector<Json> decisions;
  if (!progress.pending_node) return decisions;
  const Json& node = *progress.pending_node;
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> refs = {contract_ref, plan_ref};
  for (const Json& action : rules::Objects(body, "actions")) {
    std::string status = action.value("status", "");
    if (status != "completed" && status != "failed" && status != "denied") continue;
    std::string capability = action.value("capability", "");
    bool allowed_tool = policy::IsCapability(capability) && ContainsString(StringArray(node, "allowedTools"), capability);
    if (allowed_tool) {
      policy::Decision decision = rules::AuthorizeForNode(snapshot.run(), node, capability, action);
      decisions.push_back(rules::TraceDecision(action, decision.allowed, refs, decision.summary));
    } else {
      decisions.push_back(rules::TraceDecision(action, false, refs,
                                        fmt::format("Denied: capability is outside work node {}.", node.value("id", ""))));
    }
  }
  return decisions;
}

}  // namespace telic::controller
