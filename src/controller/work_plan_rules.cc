// WorkPlan acceptance (PROTOCOL §15.6): the plan, its nodes and, for a
// scoped replan, the work order it answers. The plan, its nodes and the
// contract are read through the typed views of artifact_views.h; work
// orders and permission sets stay JSON (policy reads permission sets, and
// CheckScopedWorkOrder judges an order's shape itself).
#include "controller/work_plan_rules.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "controller/acceptance.h"
#include "controller/acceptance_rules.h"
#include "controller/artifact_views.h"
#include "controller/rule_violation.h"
#include "domain/vocabulary.h"
#include "policy/engine.h"

namespace telic::controller {
namespace {

std::unexpected<Error> Reject(std::string pointer, std::string message) {
  return RuleViolation(std::move(pointer), std::move(message));
}

std::string NodeAt(size_t index, std::string_view field = {}) { return PointerAt("nodes", index, field); }

const std::set<std::string> kPotentiallyMutating = {"repository.write", "repository.delete", "runtime.restart",
                                                    "runtime.mutate",   "browser.mutate",    "external.write",
                                                    "shell.execute",    "subagent.spawn"};

int64_t IntAt(const Json& object, const char* key, int64_t fallback = 0) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return fallback;
  return object[key].get<int64_t>();
}

int64_t PlanToolCalls(const WorkPlanView& plan) {
  int64_t total = 0;
  for (const WorkNodeView& node : plan.nodes) total += node.maximum_tool_calls;
  return total;
}

int64_t SubagentLimit(const Json& permissions, const char* key) {
  return IntAt(permissions.value("subagents", Json::object()), key);
}

bool SubagentSpawn(const Json& permissions) {
  const Json sub = permissions.value("subagents", Json::object());
  return sub.value("spawn", false);
}

// The contract's criterion ids and the stage of each.
struct ContractCriteria {
  std::vector<std::string> ids;
  std::map<std::string, CriterionStage> stages;
};

// The control artifact a scoped plan answers: a remediate decision of the
// latest QualityReview/ReleaseAudit, or a proceed_to_fix QualityReview.
struct Control {
  const store::ArtifactMeta* meta = nullptr;
  const Json* order = nullptr;  // its work order (null when the body has none), into the body
  bool remediation = false;
  bool correction = false;
};

Result<Control> LatestControl(RunSnapshot& snapshot) {
  Control control;
  for (auto it = snapshot.artifacts().rbegin(); it != snapshot.artifacts().rend(); ++it) {
    if (rules::IsType(*it, domain::ArtifactType::kQualityReview) || rules::IsType(*it, domain::ArtifactType::kReleaseAudit)) {
      control.meta = &*it;
      break;
    }
  }
  if (!control.meta) return control;
  if (rules::IsType(*control.meta, domain::ArtifactType::kQualityReview)) {
    TELIC_ASSIGN_OR_RETURN(QualityReviewView review, rules::ViewOf(snapshot, *control.meta, ViewQualityReview));
    control.remediation = review.decision == QualityDecision::kRemediate;
    control.correction = review.decision == QualityDecision::kProceedToFix;
    control.order = control.correction ? review.correction_work_order : review.remediation_work_order;
  } else {
    TELIC_ASSIGN_OR_RETURN(ReleaseAuditView audit, rules::ViewOf(snapshot, *control.meta, ViewReleaseAudit));
    control.remediation = audit.decision == AuditDecision::kRemediate;
    control.order = audit.remediation_defect;
  }
  return control;
}

Status CheckScopedPlan(RunSnapshot& snapshot, const Control& control, const WorkPlanView& plan,
                       std::vector<std::string>& scoped_criteria) {
  const Json* order = control.order;
  if (!order || !order->is_object()) return Reject("/nodes", "Scoped replanning is missing its typed work order");
  scoped_criteria = StringArray(*order, control.correction ? "targetCriterionIds" : "failedCriterionIds");
  std::string controlling = snapshot.Uri(control.meta->id);
  const auto& nodes = plan.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!ContainsString(nodes[i].input_refs, controlling)) {
      return Reject(NodeAt(i, "inputRefs"), "Every scoped node must reference its controlling review or audit");
    }
  }
  if (!order->contains("maximumToolCalls") || !(*order)["maximumToolCalls"].is_number() ||
      plan.maximum_tool_calls > (*order)["maximumToolCalls"].get<int64_t>()) {
    return Reject("/globalBudgets/maximumToolCalls", "Scoped WorkPlan exceeds its work-order tool budget");
  }
  std::vector<std::string> allowed = StringArray(*order, "allowedCapabilities");
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& tool : nodes[i].allowed_tools) {
      if (!ContainsString(allowed, tool)) return Reject(NodeAt(i, "allowedTools"), "Scoped WorkPlan uses capabilities outside its work order");
    }
  }
  const Json& scoped_permissions = order->value("permissions", Json());
  if (!scoped_permissions.is_object()) return Reject("/nodes", "Scoped work-order permissions must be a structured permission set");
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!policy::PermissionSetIsSubset(*nodes[i].permissions, scoped_permissions)) {
      return Reject(NodeAt(i, "permissions"), fmt::format("Work node {} exceeds scoped permissions", nodes[i].id));
    }
  }
  return Ok();
}

// A node's permissions against the contract and the stage ceiling, and its
// subagent budgets against its permissions and the plan's depth.
Status CheckNodePermissions(const WorkNodeView& node, size_t index, const Json& contract_permissions, const Json& ceiling,
                            const WorkPlanView& plan) {
  const std::string& id = node.id;
  const Json& permissions = *node.permissions;
  if (!permissions.is_object()) return Reject(NodeAt(index, "permissions"), fmt::format("Work node {} permissions must be a structured permission set", id));
  if (!policy::PermissionSetIsSubset(permissions, contract_permissions)) {
    return Reject(NodeAt(index, "permissions"), fmt::format("Work node {} permissions exceed the TaskContract", id));
  }
  if (!policy::PermissionSetIsSubset(permissions, ceiling)) {
    return Reject(NodeAt(index, "permissions"), fmt::format("Work node {} attempts mutation before the diagnosis review gate", id));
  }
  if (node.maximum_children > SubagentLimit(permissions, "maximumChildren")) {
    return Reject(NodeAt(index, "budgets/maximumChildren"), fmt::format("Work node {} child budget exceeds its subagent permission", id));
  }
  int64_t global_depth = plan.maximum_subagent_depth;
  if (SubagentLimit(permissions, "maximumDepth") > global_depth || (SubagentSpawn(permissions) && global_depth == 0)) {
    return Reject(NodeAt(index, "permissions/subagents"), fmt::format("Work node {} subagent depth exceeds the WorkPlan or host budget", id));
  }
  return Ok();
}

// A node's tools are permission-backed and its required capabilities are
// unique, allowed and within its budgets.
Status CheckNodeCapabilities(const WorkNodeView& node, size_t index, std::optional<domain::Mode> mode) {
  const std::string& id = node.id;
  for (const auto& tool : node.allowed_tools) {
    if (!PermissionAllowsCapability(*node.permissions, tool)) {
      return Reject(NodeAt(index, "allowedTools"), fmt::format("Work node {} tool {} is not permission-backed", id, tool));
    }
  }
  const std::vector<std::string>& required = node.required_capabilities;
  std::set<std::string> unique(required.begin(), required.end());
  if (unique.size() != required.size()) return Reject(NodeAt(index, "requiredCapabilities"), fmt::format("Work node {} required capabilities must be unique", id));
  if (!rules::IsReportOrPlan(mode) && required.empty()) {
    return Reject(NodeAt(index, "requiredCapabilities"), fmt::format("Executable work node {} requires at least one completion capability", id));
  }
  for (const auto& capability : required) {
    if (!ContainsString(node.allowed_tools, capability)) {
      return Reject(NodeAt(index, "requiredCapabilities"), fmt::format("Work node {} requires a capability outside its allowed tools", id));
    }
  }
  if (node.maximum_tool_calls < static_cast<int64_t>(unique.size())) {
    return Reject(NodeAt(index, "budgets/maximumToolCalls"), fmt::format("Work node {} tool budget cannot satisfy its required capabilities", id));
  }
  if (unique.count("subagent.spawn") && node.maximum_children < 1) {
    return Reject(NodeAt(index, "budgets/maximumChildren"), fmt::format("Work node {} requires a child budget for subagent.spawn", id));
  }
  return Ok();
}

// Every transitive dependency of each node.
std::map<std::string, std::set<std::string>> Ancestors(const std::vector<WorkNodeView>& nodes) {
  std::map<std::string, const WorkNodeView*> by_id;
  for (const WorkNodeView& node : nodes) by_id[node.id] = &node;
  std::map<std::string, std::set<std::string>> out;
  for (const WorkNodeView& node : nodes) {
    std::vector<std::string> pending = node.depends_on;
    std::set<std::string>& ancestors = out[node.id];
    while (!pending.empty()) {
      std::string current = pending.back();
      pending.pop_back();
      if (!ancestors.insert(current).second) continue;
      auto found = by_id.find(current);
      if (found != by_id.end()) {
        for (const auto& dep : found->second->depends_on) pending.push_back(dep);
      }
    }
  }
  return out;
}

// The nodes that can carry out `requirement`: they require its capability
// and own a criterion of its stage.
std::vector<const WorkNodeView*> VerifyingNodes(const std::vector<WorkNodeView>& nodes,
                                                const VerificationRequirementView& requirement,
                                                const std::map<std::string, CriterionStage>& stages) {
  std::vector<const WorkNodeView*> verifying;
  for (const WorkNodeView& node : nodes) {
    if (!ContainsString(node.required_capabilities, requirement.capability)) continue;
    const auto& criteria = node.acceptance_criteria;
    if (std::any_of(criteria.begin(), criteria.end(), [&](const std::string& c) {
          auto found = stages.find(c);
          return found != stages.end() && found->second == requirement.stage;
        })) {
      verifying.push_back(&node);
    }
  }
  return verifying;
}

// Each required verification (of `required_stage` when set) is scheduled on a
// same-stage node, and a completion verification after every mutating node.
Status CheckVerificationScheduling(const TaskContractView& contract, const std::vector<WorkNodeView>& nodes,
                                   const std::map<std::string, CriterionStage>& stages,
                                   std::optional<CriterionStage> required_stage) {
  auto ancestors = Ancestors(nodes);
  std::vector<const WorkNodeView*> mutating;
  for (const WorkNodeView& node : nodes) {
    const auto& tools = node.allowed_tools;
    if (std::any_of(tools.begin(), tools.end(), [](const std::string& t) { return kPotentiallyMutating.count(t) > 0; })) {
      mutating.push_back(&node);
    }
  }
  for (const VerificationRequirementView& requirement : contract.verification_requirements) {
    if (!requirement.required) continue;
    if (required_stage && requirement.stage != *required_stage) continue;
    std::vector<const WorkNodeView*> verifying = VerifyingNodes(nodes, requirement, stages);
    if (verifying.empty()) {
      return Reject("/nodes", fmt::format("Required verification {} using {} is not scheduled by a same-stage WorkPlan node",
                                          requirement.id, requirement.capability));
    }
    if (requirement.stage != CriterionStage::kCompletion) continue;
    for (const WorkNodeView* verifier : verifying) {
      for (const WorkNodeView* mutator : mutating) {
        if (verifier->id != mutator->id && !ancestors[verifier->id].count(mutator->id)) {
          return Reject(NodeAt(static_cast<size_t>(verifier - nodes.data()), "dependsOn"),
                        fmt::format("Completion verification {} must run after mutating node {}", requirement.id, mutator->id));
        }
      }
    }
  }
  return Ok();
}

// The plan's global tool budget against its nodes', the run's cumulative
// tool-call budget, and the host's concurrency budgets.
Status CheckPlanBudgets(RunSnapshot& snapshot, const std::string& plan_id, const WorkPlanView& plan, const Json& envelope) {
  int64_t requested = PlanToolCalls(plan);
  if (requested > plan.maximum_tool_calls) {
    return Reject("/globalBudgets/maximumToolCalls", "WorkPlan node tool budgets exceed the global budget");
  }
  int64_t prior = 0;
  for (const store::ArtifactMeta* meta : snapshot.All("WorkPlan")) {
    if (meta->id == plan_id) continue;
    TELIC_ASSIGN_OR_RETURN(WorkPlanView earlier, rules::ViewOf(snapshot, *meta, ViewWorkPlan));
    prior += PlanToolCalls(earlier);
  }
  if (prior + requested > kMaxToolCallsPerRun) {
    return Reject("/globalBudgets/maximumToolCalls", fmt::format("WorkPlan exceeds the cumulative run tool-call budget of {}", kMaxToolCallsPerRun));
  }
  const Json host = envelope.value("budgets", Json::object());
  if (plan.maximum_parallel_workers > IntAt(host, "maximumParallelWorkers", 1) ||
      plan.maximum_subagent_depth > IntAt(host, "maximumSubagentDepth", 0)) {
    return Reject("/globalBudgets", "WorkPlan concurrency exceeds immutable host budgets");
  }
  return Ok();
}

// A node claims only contract criteria, within the scoped ones when `scoped`
// is set and diagnosis ones when `diagnosis_only`; adds them to `covered`.
Status CheckNodeCriteria(const WorkNodeView& node, size_t index, const ContractCriteria& contract,
                         const std::vector<std::string>* scoped, bool diagnosis_only, std::set<std::string>& covered) {
  const std::string& id = node.id;
  for (const auto& criterion : node.acceptance_criteria) {
    if (!ContainsString(contract.ids, criterion)) return Reject(NodeAt(index, "acceptanceCriteria"), fmt::format("Work node {} invents acceptance criterion {}", id, criterion));
    if (scoped && !ContainsString(*scoped, criterion)) {
      return Reject(NodeAt(index, "acceptanceCriteria"), fmt::format("Scoped node {} exceeds its authorized criteria", id));
    }
    auto stage = contract.stages.find(criterion);
    if (diagnosis_only && (stage == contract.stages.end() || stage->second != CriterionStage::kDiagnosis)) {
      return Reject(NodeAt(index, "acceptanceCriteria"), fmt::format("Initial diagnosis node {} cannot claim completion criterion {}", id, criterion));
    }
    covered.insert(criterion);
  }
  return Ok();
}

// The criteria the plan must cover: the scoped ones, the diagnosis ones at
// the diagnosis stage, otherwise every contract criterion.
std::vector<std::string> RequiredCriteria(const ContractCriteria& contract, const std::vector<std::string>* scoped,
                                          bool diagnosis_stage) {
  if (scoped) return *scoped;
  if (!diagnosis_stage) return contract.ids;
  std::vector<std::string> out;
  for (const auto& [id, stage] : contract.stages) {
    if (stage == CriterionStage::kDiagnosis) out.push_back(id);
  }
  return out;
}

}  // namespace

Status CheckScopedWorkOrder(const Json& order, const ScopedWorkOrderRules& rules) {
  if (!order.is_object()) return Reject(rules.pointer, fmt::format("{} must be a typed scoped work order", rules.label));
  std::vector<std::string> criteria = StringArray(order, rules.criterion_field);
  std::set<std::string> unique(criteria.begin(), criteria.end());
  if (criteria.empty() || unique.size() != criteria.size() ||
      std::any_of(criteria.begin(), criteria.end(),
                  [&](const std::string& c) { return !ContainsString(rules.allowed_criteria, c); })) {
    return Reject(rules.pointer + "/" + rules.criterion_field, fmt::format("{} contains invalid contract criteria", rules.label));
  }
  if (rules.require_all_criteria && !EqualStringSets(criteria, rules.allowed_criteria)) {
    return Reject(rules.pointer + "/" + rules.criterion_field, fmt::format("{} must cover every authorized criterion exactly once", rules.label));
  }
  const Json& permissions = order.value("permissions", Json());
  if (!permissions.is_object()) return Reject(rules.pointer + "/permissions", fmt::format("{} permissions must be a structured permission set", rules.label));
  if (!policy::PermissionSetIsSubset(permissions, rules.contract_permissions) ||
      !policy::PermissionSetIsSubset(permissions, rules.authorized_permissions)) {
    return Reject(rules.pointer + "/permissions", fmt::format("{} permissions exceed authorization", rules.label));
  }
  std::vector<std::string> capabilities = StringArray(order, "allowedCapabilities");
  if (rules.require_executable_capability && capabilities.empty()) {
    return Reject(rules.pointer + "/allowedCapabilities", fmt::format("{} requires at least one executable capability", rules.label));
  }
  for (const auto& capability : capabilities) {
    if (!PermissionAllowsCapability(permissions, capability)) {
      return Reject(rules.pointer + "/allowedCapabilities", fmt::format("{} capabilities are not permission-backed", rules.label));
    }
  }
  auto sources = StringArray(order, "sourceRefs");
  if (std::none_of(sources.begin(), sources.end(), [&](const std::string& s) { return rules.eligible_source_refs.count(s) > 0; })) {
    return Reject(rules.pointer + "/sourceRefs", fmt::format("{} lacks current supporting evidence", rules.label));
  }
  return Ok();
}

Status CheckWorkPlan(RunSnapshot& snapshot, const std::string& plan_id, const Json& body, const Json& envelope) {
  TELIC_ASSIGN_OR_RETURN(WorkPlanView plan, ViewWorkPlan(body));
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  if (plan.task_contract_ref != contract_ref) return Reject("/taskContractRef", "WorkPlan must target the current TaskContract");
  if (plan.plan_validation != PlanValidation::kValid) return Reject("/planValidation", "Only a validated WorkPlan may enter execution or review");
  if (plan.execution_mode != ExecutionMode::kSerial) {
    return Reject("/executionMode", "The current controller supports deterministic serial WorkPlans only");
  }
  TELIC_ASSIGN_OR_RETURN(TaskContractView contract, rules::LatestView(snapshot, "TaskContract", ViewTaskContract));
  const Json& contract_permissions = *contract.permissions;
  ContractCriteria criteria;
  for (const CriterionView& criterion : contract.acceptance_criteria) {
    criteria.ids.push_back(criterion.id);
    criteria.stages[criterion.id] = criterion.stage;
  }
  TELIC_RETURN_IF_ERROR(CheckPlanBudgets(snapshot, plan_id, plan, envelope));
  TELIC_ASSIGN_OR_RETURN(Control control, LatestControl(snapshot));
  TELIC_ASSIGN_OR_RETURN(bool unlocked, AnalysisFixUnlocked(snapshot));
  std::optional<domain::Mode> mode = rules::RunMode(snapshot);
  bool diagnosis_only = rules::IsDiagnosisStage(mode, unlocked) && !control.correction;
  Json ceiling = diagnosis_only ? RunAuthorization("analyze_only", envelope) : contract_permissions;
  std::vector<std::string> scoped;
  bool is_scoped = control.meta && (control.remediation || control.correction);
  if (is_scoped) TELIC_RETURN_IF_ERROR(CheckScopedPlan(snapshot, control, plan, scoped));
  std::set<std::string> covered;
  for (size_t index = 0; index < plan.nodes.size(); ++index) {
    const WorkNodeView& node = plan.nodes[index];
    TELIC_RETURN_IF_ERROR(CheckNodePermissions(node, index, contract_permissions, ceiling, plan));
    TELIC_RETURN_IF_ERROR(CheckNodeCapabilities(node, index, mode));
    TELIC_RETURN_IF_ERROR(CheckNodeCriteria(node, index, criteria, is_scoped ? &scoped : nullptr, diagnosis_only, covered));
  }
  for (const auto& criterion : RequiredCriteria(criteria, is_scoped ? &scoped : nullptr, rules::IsDiagnosisStage(mode, unlocked))) {
    if (!covered.count(criterion)) {
      return Reject("/nodes", is_scoped ? "Scoped WorkPlan must cover every authorized criterion"
                              : "WorkPlan must cover every TaskContract acceptance criterion");
    }
  }
  std::optional<CriterionStage> stage;
  if (mode == domain::Mode::kAnalyzeAndFix) stage = (control.correction || unlocked) ? CriterionStage::kCompletion : CriterionStage::kDiagnosis;
  return CheckVerificationScheduling(contract, plan.nodes, criteria.stages, stage);
}

}  // namespace telic::controller
