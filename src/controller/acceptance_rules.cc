// Helpers shared by the acceptance rule families (acceptance_rules.h).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "policy/engine.h"
#include "policy/url_host.h"

namespace telic::controller::rules {

std::unexpected<Error> Reject(std::string pointer, std::string message) {
  return RuleViolation(std::move(pointer), std::move(message));
}

bool IsReportOrPlan(const std::string& mode) { return mode == "report_only" || mode == "plan_only"; }

Items Objects(const Json& body, const char* key) {
  Items out;
  if (!body.is_object() || !body.contains(key) || !body[key].is_array()) return out;
  for (const Json& item : body[key]) {
    if (item.is_object()) out.push_back(std::cref(item));
  }
  return out;
}

std::string At(const Json& body, const char* key, const Json& item, std::string_view field) {
  if (body.is_object() && body.contains(key) && body[key].is_array()) {
    const auto& array = body[key].get_ref<const Json::array_t&>();
    if (!array.empty() && &item >= array.data() && &item < array.data() + array.size()) {
      return PointerAt(key, static_cast<size_t>(&item - array.data()), field);
    }
  }
  return "/" + std::string(key);
}

std::vector<std::string> Field(const Items& items, const char* key) {
  std::vector<std::string> out;
  for (const Json& item : items) {
    if (item.contains(key) && item[key].is_string()) out.push_back(item[key].get<std::string>());
  }
  return out;
}

std::vector<std::string> CriterionIds(const Json& contract, const std::string& stage) {
  std::vector<std::string> out;
  for (const Json& criterion : Objects(contract, "acceptanceCriteria")) {
    if (!stage.empty() && criterion.value("stage", "") != stage) continue;
    if (criterion.contains("id") && criterion["id"].is_string()) out.push_back(criterion["id"].get<std::string>());
  }
  return out;
}

std::string Canonical(const Json& value) { return CanonicalJson(value); }

Json EnvelopeAuthorization(RunSnapshot& snapshot, const Json& envelope) {
  return RunAuthorization(snapshot.run().requested_mode, envelope);
}

Json TraceDecision(const Json& action, bool allowed, const std::vector<std::string>& policy_refs,
                   const std::string& summary) {
  std::string capability = action.contains("capability") && action["capability"].is_string()
                               ? action["capability"].get<std::string>()
                               : "unknown";
  std::string scope = action.contains("target") && action["target"].is_string() ? action["target"].get<std::string>()
                                                                                  : "unknown";
  if ((capability == "network.read" || capability == "external.write") && scope != "unknown") {
    auto target = policy::ParseNetworkUrl(scope);
    scope = target ? target->host : "invalid_network_target";
  }
  return {{"decision", allowed ? "allow" : "deny"},
          {"capability", capability},
          {"scope", scope},
          {"policyRefs", policy_refs},
          {"rationaleSummary", summary}};
}

policy::Decision AuthorizeForNode(const store::RunRecord& run, const Json& node, const std::string& capability,
                                  const Json& action) {
  policy::ActionRequest request;
  request.capability = capability;
  if (action.contains("target") && action["target"].is_string()) request.target = action["target"].get<std::string>();
  std::vector<policy::Layer> layers = {policy::ModeCeilingLayer(run.requested_mode),
                                       {"work_node:" + node.value("id", ""), node.value("permissions", Json()), Json()}};
  return policy::Authorize(request, layers, policy::RepoRoot::OnDisk(run.repository_root));
}

Status Deny(std::optional<PermissionDenial>& denial, std::string pointer, std::string message, Json decision,
            std::vector<std::string> refs) {
  denial = PermissionDenial{std::move(decision), std::move(refs)};
  Issue issue{std::move(pointer), "permission_denied", message};
  return Fail(ErrorCode::kPermissionDenied, std::move(message), {std::move(issue)});
}

int64_t LastCompletedMutation(const Items& actions) {
  for (int64_t i = static_cast<int64_t>(actions.size()) - 1; i >= 0; --i) {
    const Json& action = actions[static_cast<size_t>(i)];
    if (action.value("status", "") == "completed" && action.value("mutating", false) == true) return i;
  }
  return -1;
}

Result<std::vector<const Json*>> AllBodies(RunSnapshot& snapshot, std::string_view type) {
  std::vector<const Json*> out;
  for (const auto* meta : snapshot.All(type)) {
    TELIC_ASSIGN_OR_RETURN(const Json* body, snapshot.Body(*meta));
    out.push_back(body);
  }
  return out;
}

bool RequiredVerificationsPass(const Json& contract, const Json& quality, std::vector<std::string>& refs) {
  Items results = Objects(quality, "verificationResults");
  bool all_pass = true;
  for (const Json& requirement : Objects(contract, "verificationRequirements")) {
    if (requirement.value("required", false) != true) continue;
    auto found = std::find_if(results.begin(), results.end(),
                              [&](const Json& r) { return r.value("requirementId", "") == requirement.value("id", ""); });
    if (found == results.end() || found->get().value("status", "") != "pass") all_pass = false;
    if (found == results.end()) continue;
    for (const auto& ref : StringArray(found->get(), "evidenceRefs")) {
      if (!ContainsString(refs, ref)) refs.push_back(ref);
    }
  }
  return all_pass;
}

}  // namespace telic::controller::rules
