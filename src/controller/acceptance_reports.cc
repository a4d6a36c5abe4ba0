// Acceptance rules of the report family (PROTOCOL §15): UserReport, micro,
// audited and early-blocked.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"

namespace telic::controller::rules {
namespace {

Status CheckMicroReport(RunSnapshot& snapshot, const Submission& s) {
  const Json& body = s.body;
  TELIC_ASSIGN_OR_RETURN(std::string quality_ref, snapshot.RequireLatestRef("QualityReview"));
  std::string status = body.value("terminalStatus", "");
  if (status == "completed") {
    if (Objects(body, "completionClaims").empty()) return Reject("/completionClaims", "Completed micro UserReport requires at least one completion claim");
    TELIC_ASSIGN_OR_RETURN(const Json* receipt, snapshot.LatestBodyOrNull("ReceiptAudit"));
    if (!receipt) return Reject("/terminalStatus", "Completed micro UserReport requires a ReceiptAudit companion");
    if (receipt->value("digestStatus", "") != "verified") return Reject("/terminalStatus", "Completed micro UserReport requires a verified ReceiptAudit");
    if (receipt->value("controllingReviewRef", "") != quality_ref) return Reject("/terminalStatus", "ReceiptAudit must cite the controlling QualityReview");
  } else if (!ContainsString(StringArray(body, "findingRefs"), quality_ref)) {
    return Reject("/findingRefs", "Micro UserReport must cite the controlling QualityReview");
  }
  // Stricter than the reference (docs/DECISIONS.md D44): in a micro run the
  // report answers the spot-check review directly, so the seed's "a blocked
  // QualityReview cannot be downgraded" and the audited path's
  // failed_verification rule apply to it too.
  TELIC_ASSIGN_OR_RETURN(const Json* quality, snapshot.LatestBody("QualityReview"));
  if (quality->value("decision", "") == "block" && status != "blocked") {
    return Reject("/terminalStatus", "A blocked QualityReview cannot be downgraded by the UserReport");
  }
  if (status == "failed_verification") {
    TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
    std::vector<std::string> refs;
    if (RequiredVerificationsPass(*contract, *quality, refs)) {
      return Reject("/terminalStatus", "failed_verification requires an incomplete required verification");
    }
  }
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

Status CheckEarlyBlockedReport(RunSnapshot& snapshot, const Json& body) {
  const auto& run = snapshot.run();
  std::string controlling = snapshot.LatestRef("PromptReview");
  if (controlling.empty()) controlling = snapshot.LatestRef("ClarificationRequest");
  if (run.phase != "agent_5_report" || run.outcome_hint != "blocked" || body.value("terminalStatus", "") != "blocked" ||
      body.value("permissionsHonored", false) != true || controlling.empty() ||
      !ContainsString(StringArray(body, "findingRefs"), controlling) || !Objects(body, "completionClaims").empty()) {
    const char* at = body.value("terminalStatus", "") != "blocked"      ? "/terminalStatus"
                     : body.value("permissionsHonored", false) != true ? "/permissionsHonored"
                     : !Objects(body, "completionClaims").empty()      ? "/completionClaims"
                                                                       : "/findingRefs";
    return Reject(at, "A pre-execution blocked run requires an honest blocked UserReport");
  }
  return Ok();
}

Status CheckAuditedReportClaims(const Json& body, const Json& audit) {
  Items matrix = Objects(audit, "claimEvidenceMatrix");
  Items claims = Objects(body, "completionClaims");
  for (const Json& claim : claims) {
    auto reviewed = std::find_if(matrix.begin(), matrix.end(), [&](const Json& e) {
      std::string basis = e.value("basis", "");
      bool user_claim = claim.value("status", "") == "user_reported";
      return e.value("claimId", "") == claim.value("id", "") && e.value("claim", "") == claim.value("text", "") &&
             e.value("status", "") == "supported" && (basis != "user_reported" || user_claim) && (basis != "direct" || !user_claim);
    });
    if (reviewed == matrix.end() || !EqualStringSets(StringArray(claim, "evidenceRefs"), StringArray(reviewed->get(), "evidenceRefs"))) {
      return Reject(At(body, "completionClaims", claim), "UserReport completion claim was not approved by the ReleaseAudit evidence matrix");
    }
  }
  if (audit.value("decision", "") == "release") {
    std::vector<std::string> supported;
    for (const Json& e : matrix) {
      if (e.value("status", "") == "supported" && e.contains("claimId")) supported.push_back(e["claimId"]);
    }
    if (!EqualStringSets(Field(claims, "id"), supported)) {
      return Reject("/completionClaims", "Released UserReport must include every supported audited claim exactly once");
    }
  }
  return Ok();
}

Status CheckAuditedReport(RunSnapshot& snapshot, const Submission& s, const Json& audit) {
  const Json& body = s.body;
  if (audit.value("userReportRef", "") != snapshot.Uri(s.id)) return Reject("/id", "UserReport does not match the ReleaseAudit forward reference");
  if (body.value("permissionsHonored", !true) != (audit.value("modeCompliance", "") == "pass") || !body.contains("permissionsHonored")) {
    return Reject("/permissionsHonored", "UserReport permissionsHonored must match the ReleaseAudit mode-compliance result");
  }
  std::string status = body.value("terminalStatus", "");
  if (status == "completed" && Objects(body, "completionClaims").empty()) {
    return Reject("/completionClaims", "Completed UserReport requires at least one completion claim");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(const Json* quality, snapshot.LatestBody("QualityReview"));
  std::vector<std::string> findings = StringArray(body, "findingRefs");
  if (status != "completed" && !ContainsString(findings, snapshot.LatestRef("QualityReview")) &&
      !ContainsString(findings, snapshot.LatestRef("ReleaseAudit"))) {
    return Reject("/findingRefs", "Non-completed UserReport must cite its controlling quality review or release audit");
  }
  std::vector<std::string> verification_refs;
  bool all_pass = RequiredVerificationsPass(*contract, *quality, verification_refs);
  if (status == "completed" && (!all_pass || !EqualStringSets(StringArray(body, "verificationRefs"), verification_refs))) {
    return Reject(all_pass ? "/verificationRefs" : "/terminalStatus", "Completed UserReport must retain every passed required verification");
  }
  if (status == "failed_verification" && all_pass) return Reject("/terminalStatus", "failed_verification requires an incomplete required verification");
  std::string decision = audit.value("decision", "");
  std::vector<std::string> allowed = decision == "release"   ? std::vector<std::string>{"completed"}
                                     : decision == "partial" ? std::vector<std::string>{"partial", "failed_verification"}
                                     : decision == "block"   ? std::vector<std::string>{"blocked"}
                                                             : std::vector<std::string>{};
  if (!allowed.empty() && !ContainsString(allowed, status)) {
    return Reject("/terminalStatus", fmt::format("UserReport terminalStatus must be {} after {}", fmt::join(allowed, " or "), decision));
  }
  TELIC_RETURN_IF_ERROR(CheckAuditedReportClaims(body, audit));
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

}  // namespace

Status CheckUserReport(RunSnapshot& snapshot, const Submission& s) {
  const Json& body = s.body;
  if (body.value("traceRef", "") != "trace://" + snapshot.run_id()) {
    return Reject("/traceRef", "UserReport traceRef must reference the aggregate trace for the current run");
  }
  std::vector<std::string> diffs;
  TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> results, AllBodies(snapshot, "WorkResult"));
  for (const Json* result : results) {
    for (const Json& change : Objects(*result, "filesChanged")) {
      if (change.contains("diffRef") && change["diffRef"].is_string() && !ContainsString(diffs, change["diffRef"].get<std::string>())) {
        diffs.push_back(change["diffRef"]);
      }
    }
  }
  if (!EqualStringSets(StringArray(body, "changeRefs"), diffs)) {
    return Reject("/changeRefs", "UserReport changeRefs must retain every accepted WorkResult diff exactly once");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* audit, snapshot.LatestBodyOrNull("ReleaseAudit"));
  if (audit) return CheckAuditedReport(snapshot, s, *audit);
  if (snapshot.run().topology == "micro") return CheckMicroReport(snapshot, s);
  return CheckEarlyBlockedReport(snapshot, body);
}

}  // namespace telic::controller::rules
