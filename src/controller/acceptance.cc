#include "controller/acceptance.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/work_plan_rules.h"
#include "policy/permission_set.h"

namespace telic::controller {

bool PermissionAllowsCapability(const Json& p, std::string_view capability) {
  if (!p.is_object()) return false;
  auto list_nonempty = [&](const char* family, const char* field) {
    const Json f = p.value(family, Json::object());
    return f.is_object() && f.contains(field) && f[field].is_array() && !f[field].empty();
  };
  auto flag = [&](const char* family, const char* field) {
    const Json f = p.value(family, Json::object());
    return f.is_object() && f.value(field, false) == true;
  };
  if (capability == "repository.read") return list_nonempty("repository", "read");
  if (capability == "repository.write") return list_nonempty("repository", "write");
  if (capability == "repository.delete") return list_nonempty("repository", "delete");
  if (capability == "shell.inspect") return flag("shell", "inspect");
  if (capability == "shell.execute") return list_nonempty("shell", "executeAllowlist");
  if (capability == "runtime.inspect") return list_nonempty("runtime", "inspect");
  if (capability == "runtime.restart") return list_nonempty("runtime", "restart");
  if (capability == "browser.inspect") return flag("browser", "inspect");
  if (capability == "browser.mutate") return flag("browser", "mutateState");
  if (capability == "network.read") return list_nonempty("network", "readDomains");
  if (capability == "external.write") return flag("network", "externalWrite");
  if (capability == "subagent.spawn") {
    const Json sub = p.value("subagents", Json::object());
    return sub.value("spawn", false) == true && sub.value("maximumChildren", int64_t{0}) > 0;
  }
  return false;
}

Json RunAuthorization(const std::string& mode, const Json& envelope) {
  const Json& authorization = envelope.value("authorization", Json());
  if (!authorization.is_object() || !authorization.contains("granted") || !authorization.contains("denied")) {
    return policy::EmptyPermissionSet();
  }
  return policy::EffectiveRunPermissions(mode, authorization["granted"], authorization["denied"]);
}

Result<bool> AnalysisFixUnlocked(RunSnapshot& snapshot) {
  std::set<std::string> authorizing;
  for (const auto* meta : snapshot.All("QualityReview")) {
    TELIC_ASSIGN_OR_RETURN(const Json* review, snapshot.Body(*meta));
    const Json& gate = review->value("diagnosisGate", Json());
    if (review->value("decision", "") == "proceed_to_fix" && gate.is_object() && gate.contains("correctionWorkOrder") &&
        gate["correctionWorkOrder"].is_object()) {
      authorizing.insert(snapshot.Uri(meta->id));
    }
  }
  if (authorizing.empty()) return false;
  for (const auto* meta : snapshot.All("WorkPlan")) {
    TELIC_ASSIGN_OR_RETURN(const Json* plan, snapshot.Body(*meta));
    std::vector<Json> nodes = plan->value("nodes", std::vector<Json>{});
    if (nodes.empty()) continue;
    bool all_cite = std::all_of(nodes.begin(), nodes.end(), [&](const Json& node) {
      auto refs = StringArray(node, "inputRefs");
      return std::any_of(refs.begin(), refs.end(), [&](const std::string& r) { return authorizing.count(r) > 0; });
    });
    if (all_cite) return true;
  }
  return false;
}

std::string PermissionEventSummary(const Json& decision) {
  return fmt::format("{} {} for {}.", decision.value("decision", "") == "allow" ? "Allowed" : "Denied",
                     decision.value("capability", ""), decision.value("scope", ""));
}

Status CheckCrossArtifactRules(RunSnapshot& snapshot, const Submission& s, std::optional<PermissionDenial>& denial) {
  TELIC_ASSIGN_OR_RETURN(const Json* envelope, snapshot.LatestBody("RunEnvelope"));
  if (!envelope->contains("originalRequestRef") || !(*envelope)["originalRequestRef"].is_string()) {
    return Fail(ErrorCode::kDataLoss, "RunEnvelope is missing its original request reference");
  }
  std::string original = (*envelope)["originalRequestRef"];
  const std::string& type = s.type;
  if (type == "ClarificationRequest") return Ok();
  if (type == "ProblemFrame") return rules::CheckProblemFrame(snapshot, s.body, original);
  if (type == "TaskContract") return rules::CheckTaskContract(snapshot, s, *envelope, original);
  if (type == "PromptReview") return rules::CheckPromptReview(snapshot, s.body, original);
  if (type == "WorkPlan") return CheckWorkPlan(snapshot, s.id, s.body, *envelope);
  if (type == "WorkResult") return rules::CheckWorkResult(snapshot, s, denial);
  if (type == "QualityReview") return rules::CheckQualityReview(snapshot, s, *envelope);
  if (type == "ReleaseAudit") return rules::CheckReleaseAudit(snapshot, s, *envelope, original);
  if (type == "UserReport") return rules::CheckUserReport(snapshot, s);
  return Ok();
}

}  // namespace telic::controller
