// The JSON inputs of the permission engine (policy/engine.h): an action
// request and a policy stack, each member checked with a precise error.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "policy/capabilities.h"
#include "policy/engine.h"

namespace telic::policy {

using capabilities::CapabilitySpec;
using capabilities::FindSpec;
using capabilities::IsLimit;
using capabilities::ScopeKind;

Result<ActionRequest> ActionRequestFromJson(const Json& action) {
  auto bad = [](std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); };
  if (!action.is_object()) return bad("the action must be a JSON object");
  auto cap = action.find("capability");
  if (cap == action.end() || !cap->is_string()) return bad("the action needs a \"capability\" string");
  ActionRequest request;
  request.capability = cap->get<std::string>();
  const CapabilitySpec* spec = FindSpec(request.capability);
  if (spec == nullptr) return bad("unknown capability '" + request.capability + "'");
  std::string argument;
  switch (spec->scope) {
    case ScopeKind::kPath: argument = "path"; break;
    case ScopeKind::kCommand: argument = "command"; break;
    case ScopeKind::kInspect: argument = "target"; break;
    case ScopeKind::kService: argument = "service"; break;
    case ScopeKind::kHost: argument = "url"; break;
    case ScopeKind::kNone:
    case ScopeKind::kSubagent: break;
  }
  for (auto it = action.begin(); it != action.end(); ++it) {
    const std::string& key = it.key();
    if (key == "capability") continue;
    if (key == "depth" || key == "children") {
      if (spec->scope != ScopeKind::kSubagent) return bad("\"" + key + "\" applies only to subagent.spawn");
      if (!IsLimit(*it)) return bad("\"" + key + "\" must be an integer >= 0");
      (key == "depth" ? request.depth : request.children) = it->get<int64_t>();
      continue;
    }
    if (key == "target" || (!argument.empty() && key == argument)) {
      if (!it->is_string()) return bad("\"" + key + "\" must be a string");
      if (request.target) return bad("give the target once (\"" + argument + "\" or \"target\")");
      request.target = it->get<std::string>();
      continue;
    }
    return bad("unknown member \"" + key + "\" for " + request.capability);
  }
  return request;
}

Result<PolicyStack> PolicyStackFromJson(const Json& policy) {
  auto bad = [](std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); };
  if (!policy.is_object()) return bad("the policy must be a JSON object");
  static const std::array<std::string_view, 9> kKeys = {"mode",         "host",           "authorization",
                                                         "repositoryPolicy", "taskContract", "workPlanNode",
                                                         "workPlanNodeId",   "toolCapability", "repositoryRoot"};
  for (auto it = policy.begin(); it != policy.end(); ++it) {
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end()) {
      return bad("unknown member \"" + it.key() + "\" in the policy");
    }
  }
  auto permission_set = [&](const Json& parent, const char* key) -> Result<Json> {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return Json(nullptr);
    if (!it->is_object()) return bad(std::string("\"") + key + "\" must be a permission object");
    return *it;
  };
  auto text = [&](const char* key) -> Result<std::optional<std::string>> {
    auto it = policy.find(key);
    if (it == policy.end()) return std::optional<std::string>();
    if (!it->is_string()) return bad(std::string("\"") + key + "\" must be a string");
    return std::optional<std::string>(it->get<std::string>());
  };

  PolicyStack stack;
  TELIC_ASSIGN_OR_RETURN(auto mode, text("mode"));
  stack.layers.push_back(ModeCeilingLayer(mode.value_or("none")));
  TELIC_ASSIGN_OR_RETURN(Json host, permission_set(policy, "host"));
  stack.layers.push_back({"host_policy", host, nullptr});
  Json granted = nullptr, denied = nullptr;
  if (auto it = policy.find("authorization"); it != policy.end() && !it->is_null()) {
    if (!it->is_object()) return bad("\"authorization\" must be {\"granted\": ..., \"denied\": ...}");
    for (auto member = it->begin(); member != it->end(); ++member) {
      if (member.key() != "granted" && member.key() != "denied") {
        return bad("unknown member \"" + member.key() + "\" in \"authorization\"");
      }
    }
    TELIC_ASSIGN_OR_RETURN(granted, permission_set(*it, "granted"));
    TELIC_ASSIGN_OR_RETURN(denied, permission_set(*it, "denied"));
  }
  stack.layers.push_back({"user_authorization", RemoveDeniedFields(granted, denied), denied});
  TELIC_ASSIGN_OR_RETURN(Json repository, permission_set(policy, "repositoryPolicy"));
  stack.layers.push_back({"repository_policy", repository, nullptr});
  TELIC_ASSIGN_OR_RETURN(Json contract, permission_set(policy, "taskContract"));
  stack.layers.push_back({"task_contract", contract, nullptr});
  TELIC_ASSIGN_OR_RETURN(auto node_id, text("workPlanNodeId"));
  TELIC_ASSIGN_OR_RETURN(Json node, permission_set(policy, "workPlanNode"));
  stack.layers.push_back({node_id ? "work_node:" + *node_id : std::string("work_node"), node, nullptr});
  TELIC_ASSIGN_OR_RETURN(Json tool, permission_set(policy, "toolCapability"));
  stack.layers.push_back({"tool_capability", tool, nullptr});
  TELIC_ASSIGN_OR_RETURN(stack.repository_root, text("repositoryRoot"));
  return stack;
}

}  // namespace telic::policy
