#include "controller/work_plan_rules.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "controller/acceptance.h"
#include "controller/rule_violation.h"
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

int64_t NodeToolCalls(const Json& node) { return IntAt(node.value("budgets", Json::object()), "maximumToolCalls"); }

int64_t PlanToolCalls(const Json& plan) {
  int64_t total = 0;
  for (const Json& node : plan.value("nodes", Json::array())) total += NodeToolCalls(node);
  return total;
}

const Json& Permissions(const Json& node) {
  static const Json kNull;
  return node.is_object() && node.contains("permissions") ? node["permissions"] : kNull;
}

int64_t SubagentLimit(const Json& permissions, const char* key) {
  return IntAt(permissions.value("subagents", Json::object()), key);
}

bool SubagentSpawn(const Json& permissions) {
  const Json sub = permissions.value("subagents", Json::object());
  return sub.value("spawn", false);
}

// The control artifact a scoped plan answers: a remediate decision of the
// latest QualityReview/ReleaseAudit, or a proceed_to_fix QualityReview.
struct Control {
  const store::ArtifactMeta* meta = nullptr;
  const Json* body = nullptr;
  bool remediation = false;
  bool correction = false;
};

Result<Control> LatestControl(RunSnapshot& snapshot) {
  Control control;
  for (auto it = snapshot.artifacts().rbegin(); it != snapshot.artifacts().rend(); ++it) {
    if (it->type == domain::ArtifactType::kQualityReview || it->type == domain::ArtifactType::kReleaseAudit) {
      control.meta = &*it;
      break;
    }
  }
  if (!control.meta) return control;
  TELIC_ASSIGN_OR_RETURN(control.body, snapshot.Body(*control.meta));
  std::string decision = control.body->value("decision", "");
  control.remediation = decision == "remediate";
  control.correction = control.meta->type == domain::ArtifactType::kQualityReview && decision == "proceed_to_fix";
  return control;
}

Status CheckScopedPlan(RunSnapshot& snapshot, const Control& control, const std::vector<Json>& nodes,
                       const Json& global, std::vector<std::string>& scoped_criteria) {
  const Json* order = nullptr;
  if (control.correction) {
    auto gate = control.body->find("diagnosisGate");
    if (gate != control.body->end() && gate->is_object() && gate->contains("correctionWorkOrder")) {
      order = &(*gate)["correctionWorkOrder"];
    }
  } else {
    const char* field = control.meta->type == domain::ArtifactType::kQualityReview ? "remediationWorkOrder" : "remediationDefect";
    if (control.body->contains(field)) order = &(*control.body)[field];
  }
  if (!order || !order->is_object()) return Reject("/nodes", "Scoped replanning is missing its typed work order");
  scoped_criteria = StringArray(*order, control.correction ? "targetCriterionIds" : "failedCriterionIds");
  std::string controlling = snapshot.Uri(control.meta->id);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!ContainsString(StringArray(nodes[i], "inputRefs"), controlling)) {
      return Reject(NodeAt(i, "inputRefs"), "Every scoped node must reference its controlling review or audit");
    }
  }
  if (!order->contains("maximumToolCalls") || !(*order)["maximumToolCalls"].is_number() ||
      IntAt(global, "maximumToolCalls") > (*order)["maximumToolCalls"].get<int64_t>()) {
    return Reject("/globalBudgets/maximumToolCalls", "Scoped WorkPlan exceeds its work-order tool budget");
  }
  std::vector<std::string> allowed = StringArray(*order, "allowedCapabilities");
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& tool : StringArray(nodes[i], "allowedTools")) {
      if (!ContainsString(allowed, tool)) return Reject(NodeAt(i, "allowedTools"), "Scoped WorkPlan uses capabilities outside its work order");
    }
  }
  const Json& scoped_permissions = order->value("permissions", Json());
  if (!scoped_permissions.is_object()) return Reject("/nodes", "Scoped work-order permissions must be a structured permission set");
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!policy::PermissionSetIsSubset(Permissions(nodes[i]), scoped_permissions)) {
      return Reject(NodeAt(i, "permissions"), fmt::format("Work node {} exceeds scoped permissions", nodes[i].value("id", "")));
    }
  }
  (void)snapshot;
  return Ok();
}

Status CheckNode(const Json& node, size_t index, const Json& contract_permissions, const Json& ceiling, const Json& global,
                 const std::string& mode) {
  std::string id = node.value("id", "");
  const Json& permissions = Permissions(node);
  if (!permissions.is_object()) return Reject(NodeAt(index, "permissions"), fmt::format("Work node {} permissions must be a structured permission set", id));
  if (!policy::PermissionSetIsSubset(permissions, contract_permissions)) {
    return Reject(NodeAt(index, "permissions"), fmt::format("Work node {} permissions exceed the TaskContract", id));
  }
  if (!policy::PermissionSetIsSubset(permissions, ceiling)) {
    return Reject(NodeAt(index, "permissions"), fmt::format("Work node {} attempts mutation before the diagnosis review gate", id));
  }
  const Json budgets = node.value("budgets", Json::object());
  if (IntAt(budgets, "maximumChildren") > SubagentLimit(permissions, "maximumChildren")) {
    return Reject(NodeAt(index, "budgets/maximumChildren"), fmt::format("Work node {} child budget exceeds its subagent permission", id));
  }
  int64_t global_depth = IntAt(global, "maximumSubagentDepth");
  if (SubagentLimit(permissions, "maximumDepth") > global_depth || (SubagentSpawn(permissions) && global_depth == 0)) {
    return Reject(NodeAt(index, "permissions/subagents"), fmt::format("Work node {} subagent depth exceeds the WorkPlan or host budget", id));
  }
  std::vector<std::string> tools = StringArray(node, "allowedTools");
  for (const auto& tool : tools) {
    if (!PermissionAllowsCapability(permissions, tool)) {
      return Reject(NodeAt(index, "allowedTools"), fmt::format("Work node {} tool {} is not permission-backed", id, tool));
    }
  }
  std::vector<std::string> required = StringArray(node, "requiredCapabilities");
  std::set<std::string> unique(required.begin(), required.end());
  if (unique.size() != required.size()) return Reject(NodeAt(index, "requiredCapabilities"), fmt::format("Work node {} required capabilities must be unique", id));
  if (mode != "report_only" && mode != "plan_only" && required.empty()) {
    return Reject(NodeAt(index, "requiredCapabilities"), fmt::format("Executable work node {} requires at least one completion capability", id));
  }
  for (const auto& capability : required) {
    if (!ContainsString(tools, capability)) {
      return Reject(NodeAt(index, "requiredCapabilities"), fmt::format("Work node {} requires a capability outside its allowed tools", id));
    }
  }
  if (IntAt(budgets, "maximumToolCalls") < static_cast<int64_t>(unique.size())) {
    return Reject(NodeAt(index, "budgets/maximumToolCalls"), fmt::format("Work node {} tool budget cannot satisfy its required capabilities", id));
  }
  if (unique.count("subagent.spawn") && IntAt(budgets, "maximumChildren") < 1) {
    return Reject(NodeAt(index, "budgets/maximumChildren"), fmt::format("Work node {} requires a child budget for subagent.spawn", id));
  }
  return Ok();
}

// Every transitive dependency of each node.
std::map<std::string, std::set<std::string>> Ancestors(const std::vector<Json>& nodes) {
  std::map<std::string, const Json*> by_id;
  for (const Json& node : nodes) by_id[node.value("id", "")] = &node;
  std::map<std::string, std::set<std::string>> out;
  for (const Json& node : nodes) {
    std::vector<std::string> pending = StringArray(node, "dependsOn");
    std::set<std::string>& ancestors = out[node.value("id", "")];
    while (!pending.empty()) {
      std::string current = pending.back();
      pending.pop_back();
      if (!ancestors.insert(current).second) continue;
      auto found = by_id.find(current);
      if (found != by_id.end()) {
        for (auto& dep : StringArray(*found->second, "dependsOn")) pending.push_back(dep);
      }
    }
  }
  return out;
}

Status CheckVerificationScheduling(const Json& contract, const std::vector<Json>& nodes,
                                   const std::map<std::string, std::string>& stages, const std::string& required_stage) {
  auto ancestors = Ancestors(nodes);
  std::vector<const Json*> mutating;
  for (const Json& node : nodes) {
    auto tools = StringArray(node, "allowedTools");
    if (std::any_of(tools.begin(), tools.end(), [](const std::string& t) { return kPotentiallyMutating.count(t) > 0; })) {
      mutating.push_back(&node);
    }
  }
  for (const Json& requirement : contract.value("verificationRequirements", Json::array())) {
    if (!requirement.is_object() || requirement.value("required", false) != true) continue;
    std::string stage = requirement.value("stage", "");
    if (!required_stage.empty() && stage != required_stage) continue;
    std::string capability = requirement.value("capability", "");
    std::vector<const Json*> verifying;
    for (const Json& node : nodes) {
      if (!ContainsString(StringArray(node, "requiredCapabilities"), capability)) continue;
      auto criteria = StringArray(node, "acceptanceCriteria");
      if (std::any_of(criteria.begin(), criteria.end(), [&](const std::string& c) {
            auto found = stages.find(c);
            return found != stages.end() && found->second == stage;
          })) {
        verifying.push_back(&node);
      }
    }
    std::string requirement_id = requirement.value("id", "");
    if (verifying.empty()) {
      return Reject("/nodes", fmt::format("Required verification {} using {} is not scheduled by a same-stage WorkPlan node",
                                requirement_id, capability));
    }
    if (stage != "completion") continue;
    for (const Json* verifier : verifying) {
      for (const Json* mutator : mutating) {
        std::string vid = verifier->value("id", "");
        std::string mid = mutator->value("id", "");
        if (vid != mid && !ancestors[vid].count(mid)) {
          return Reject(NodeAt(static_cast<size_t>(verifier - nodes.data()), "dependsOn"),
                        fmt::format("Completion verification {} must run after mutating node {}", requirement_id, mid));
        }
      }
    }
  }
  return Ok();
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
  const auto& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  if (body.value("taskContractRef", "") != contract_ref) return Reject("/taskContractRef", "WorkPlan must target the current TaskContract");
  if (body.value("planValidation", "") != "valid") return Reject("/planValidation", "Only a validated WorkPlan may enter execution or review");
  if (body.value("executionMode", "") != "serial") {
    return Reject("/executionMode", "The current controller supports deterministic serial WorkPlans only");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
  const Json& contract_permissions = contract->value("permissions", Json());
  std::vector<std::string> criteria;
  std::map<std::string, std::string> stages;
  for (const Json& criterion : contract->value("acceptanceCriteria", Json::array())) {
    if (!criterion.is_object() || !criterion.contains("id")) continue;
    criteria.push_back(criterion.value("id", ""));
    stages[criterion.value("id", "")] = criterion.value("stage", "");
  }
  std::vector<Json> nodes = body.value("nodes", std::vector<Json>{});
  const Json global = body.value("globalBudgets", Json::object());
  int64_t requested = PlanToolCalls(body);
  if (!global.contains("maximumToolCalls") || requested > IntAt(global, "maximumToolCalls")) {
    return Reject("/globalBudgets/maximumToolCalls", "WorkPlan node tool budgets exceed the global budget");
  }
  int64_t prior = 0;
  for (const store::ArtifactMeta* meta : snapshot.All("WorkPlan")) {
    if (meta->id == plan_id) continue;
    TELIC_ASSIGN_OR_RETURN(const Json* plan, snapshot.Body(*meta));
    prior += PlanToolCalls(*plan);
  }
  if (prior + requested > kMaxToolCallsPerRun) {
    return Reject("/globalBudgets/maximumToolCalls", fmt::format("WorkPlan exceeds the cumulative run tool-call budget of {}", kMaxToolCallsPerRun));
  }
  const Json host = envelope.value("budgets", Json::object());
  if (!global.contains("maximumParallelWorkers") || !global.contains("maximumSubagentDepth") ||
      IntAt(global, "maximumParallelWorkers") > IntAt(host, "maximumParallelWorkers", 1) ||
      IntAt(global, "maximumSubagentDepth") > IntAt(host, "maximumSubagentDepth", 0)) {
    return Reject("/globalBudgets", "WorkPlan concurrency exceeds immutable host budgets");
  }
  TELIC_ASSIGN_OR_RETURN(Control control, LatestControl(snapshot));
  TELIC_ASSIGN_OR_RETURN(bool unlocked, AnalysisFixUnlocked(snapshot));
  bool diagnosis_only = run.requested_mode == domain::Mode::kAnalyzeAndFix && !unlocked && !control.correction;
  Json ceiling = diagnosis_only ? RunAuthorization("analyze_only", envelope) : contract_permissions;
  std::vector<std::string> scoped;
  bool is_scoped = control.meta && (control.remediation || control.correction);
  if (is_scoped) TELIC_RETURN_IF_ERROR(CheckScopedPlan(snapshot, control, nodes, global, scoped));

  std::set<std::string> covered;
  for (size_t index = 0; index < nodes.size(); ++index) {
    const Json& node = nodes[index];
    TELIC_RETURN_IF_ERROR(CheckNode(node, index, contract_permissions, ceiling, global, std::string(domain::Name(run.requested_mode))));
    std::string id = node.value("id", "");
    for (const auto& criterion : StringArray(node, "acceptanceCriteria")) {
      if (!ContainsString(criteria, criterion)) return Reject(NodeAt(index, "acceptanceCriteria"), fmt::format("Work node {} invents acceptance criterion {}", id, criterion));
      if (is_scoped && !ContainsString(scoped, criterion)) {
        return Reject(NodeAt(index, "acceptanceCriteria"), fmt::format("Scoped node {} exceeds its authorized criteria", id));
      }
      if (diagnosis_only && stages[criterion] != "diagnosis") {
        return Reject(NodeAt(index, "acceptanceCriteria"), fmt::format("Initial diagnosis node {} cannot claim completion criterion {}", id, criterion));
      }
      covered.insert(criterion);
    }
  }
  std::vector<std::string> required_criteria;
  if (is_scoped) {
    required_criteria = scoped;
  } else if (run.requested_mode == domain::Mode::kAnalyzeAndFix && !unlocked) {
    for (const auto& [id, stage] : stages) {
      if (stage == "diagnosis") required_criteria.push_back(id);
    }
  } else {
    required_criteria = criteria;
  }
  for (const auto& criterion : required_criteria) {
    if (!covered.count(criterion)) {
      return Reject("/nodes", is_scoped ? "Scoped WorkPlan must cover every authorized criterion"
                              : "WorkPlan must cover every TaskContract acceptance criterion");
    }
  }
  std::string stage;
  if (run.requested_mode == domain::Mode::kAnalyzeAndFix) stage = (control.correction || unlocked) ? "completion" : "diagnosis";
  return CheckVerificationScheduling(*contract, nodes, stages, stage);
}

}  // namespace telic::controller
