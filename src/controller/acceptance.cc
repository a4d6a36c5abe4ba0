#include "controller/acceptance.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/work_plan_rules.h"
#include "domain/vocabulary.h"
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
    TELIC_ASSIGN_OR_RETURN(QualityReviewView review, rules::ViewOf(snapshot, *meta, ViewQualityReview));
    if (review.decision == QualityDecision::kProceedToFix && review.correction_work_order) {
      authorizing.insert(snapshot.Uri(meta->id));
    }
  }
  if (authorizing.empty()) return false;
  auto cites = [&](const WorkNodeView& node) {
    return std::any_of(node.input_refs.begin(), node.input_refs.end(), [&](const std::string& r) { return authorizing.count(r) > 0; });
  };
  for (const auto* meta : snapshot.All("WorkPlan")) {
    TELIC_ASSIGN_OR_RETURN(WorkPlanView plan, rules::ViewOf(snapshot, *meta, ViewWorkPlan));
    if (!plan.nodes.empty() && std::all_of(plan.nodes.begin(), plan.nodes.end(), cites)) return true;
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
  std::optional<domain::ArtifactType> type = domain::ArtifactTypeNamed(s.type);
  if (!type) return Ok();
  switch (*type) {
    case domain::ArtifactType::kProblemFrame: return rules::CheckProblemFrame(snapshot, s.body, original);
    case domain::ArtifactType::kTaskContract: return rules::CheckTaskContract(snapshot, s, *envelope, original);
    case domain::ArtifactType::kPromptReview: return rules::CheckPromptReview(snapshot, s.body, original);
    case domain::ArtifactType::kWorkPlan: return CheckWorkPlan(snapshot, s.id, s.body, *envelope);
    case domain::ArtifactType::kWorkResult: return rules::CheckWorkResult(snapshot, s, denial);
    case domain::ArtifactType::kQualityReview: return rules::CheckQualityReview(snapshot, s, *envelope);
    case domain::ArtifactType::kReleaseAudit: return rules::CheckReleaseAudit(snapshot, s, *envelope, original);
    case domain::ArtifactType::kUserReport: return rules::CheckUserReport(snapshot, s);
    default: return Ok();  // ClarificationRequest and the companions have no cross-artifact rules
  }
}

}  // namespace telic::controller
