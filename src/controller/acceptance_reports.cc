// Acceptance rules of the report family (PROTOCOL §15): the UserReport of a
// micro run, of an audited run and of a run blocked before execution. The
// rules read the typed views of artifact_views.h.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "domain/vocabulary.h"

namespace telic::controller::rules {
namespace {

// Whether every required verification of `contract` passed in `quality`;
// `refs` receives their evidence refs (first occurrence order).
bool RequiredVerificationsPass(const TaskContractView& contract, const QualityReviewView& quality,
                               std::vector<std::string>& refs) {
  const auto& results = quality.verification_results;
  bool all_pass = true;
  for (const VerificationRequirementView& requirement : contract.verification_requirements) {
    if (!requirement.required) continue;
    auto found = std::find_if(results.begin(), results.end(),
                              [&](const VerificationResultView& r) { return r.requirement_id == requirement.id; });
    if (found == results.end() || found->status != VerificationStatus::kPass) all_pass = false;
    if (found == results.end()) continue;
    for (const auto& ref : found->evidence_refs) {
      if (!ContainsString(refs, ref)) refs.push_back(ref);
    }
  }
  return all_pass;
}

// A completed micro report needs a verified ReceiptAudit of the controlling review.
Status CheckMicroReceipt(RunSnapshot& snapshot, const UserReportView& report, const std::string& quality_ref) {
  if (report.completion_claims.empty()) return Reject("/completionClaims", "Completed micro UserReport requires at least one completion claim");
  TELIC_ASSIGN_OR_RETURN(std::optional<ReceiptAuditView> receipt, LatestViewOrNull(snapshot, "ReceiptAudit", ViewReceiptAudit));
  if (!receipt) return Reject("/terminalStatus", "Completed micro UserReport requires a ReceiptAudit companion");
  if (receipt->digest_status != DigestStatus::kVerified) return Reject("/terminalStatus", "Completed micro UserReport requires a verified ReceiptAudit");
  if (receipt->controlling_review_ref != quality_ref) return Reject("/terminalStatus", "ReceiptAudit must cite the controlling QualityReview");
  return Ok();
}

Status CheckMicroReport(RunSnapshot& snapshot, const Submission& s, const UserReportView& report) {
  TELIC_ASSIGN_OR_RETURN(std::string quality_ref, snapshot.RequireLatestRef("QualityReview"));
  TerminalStatus status = report.terminal_status;
  if (status == TerminalStatus::kCompleted) {
    TELIC_RETURN_IF_ERROR(CheckMicroReceipt(snapshot, report, quality_ref));
  } else if (!ContainsString(report.finding_refs, quality_ref)) {
    return Reject("/findingRefs", "Micro UserReport must cite the controlling QualityReview");
  }
  // Stricter than the reference (docs/DECISIONS.md D44): in a micro run the
  // report answers the spot-check review directly, so the seed's "a blocked
  // QualityReview cannot be downgraded" and the audited path's
  // failed_verification rule apply to it too.
  TELIC_ASSIGN_OR_RETURN(QualityReviewView quality, LatestView(snapshot, "QualityReview", ViewQualityReview));
  if (quality.decision == QualityDecision::kBlock && status != TerminalStatus::kBlocked) {
    return Reject("/terminalStatus", "A blocked QualityReview cannot be downgraded by the UserReport");
  }
  if (status == TerminalStatus::kFailedVerification) {
    TELIC_ASSIGN_OR_RETURN(TaskContractView contract, LatestView(snapshot, "TaskContract", ViewTaskContract));
    std::vector<std::string> refs;
    if (RequiredVerificationsPass(contract, quality, refs)) {
      return Reject("/terminalStatus", "failed_verification requires an incomplete required verification");
    }
  }
  return CheckEvidenceSemantics(snapshot, s.type, s.body);
}

Status CheckEarlyBlockedReport(RunSnapshot& snapshot, const UserReportView& report) {
  const auto& run = snapshot.run();
  std::string controlling = snapshot.LatestRef("PromptReview");
  if (controlling.empty()) controlling = snapshot.LatestRef("ClarificationRequest");
  bool blocked = report.terminal_status == TerminalStatus::kBlocked;
  if (RunPhase(snapshot) != domain::Phase::kAgent5Report || run.outcome_hint != domain::RunStatus::kBlocked || !blocked ||
      !report.permissions_honored || controlling.empty() || !ContainsString(report.finding_refs, controlling) ||
      !report.completion_claims.empty()) {
    const char* at = !blocked                             ? "/terminalStatus"
                     : !report.permissions_honored        ? "/permissionsHonored"
                     : !report.completion_claims.empty()  ? "/completionClaims"
                                                          : "/findingRefs";
    return Reject(at, "A pre-execution blocked run requires an honest blocked UserReport");
  }
  return Ok();
}

// Whether matrix entry `e` approves `claim`: same id and text, supported, on
// a basis that matches whether the claim is user-reported.
bool Approves(const ClaimEvidenceView& e, const EvidenceClaimView& claim) {
  bool user_claim = claim.status == ClaimStatus::kUserReported;
  return e.claim_id == claim.id && e.claim == claim.text && e.status == ClaimSupport::kSupported &&
         (e.basis != ClaimBasis::kUserReported || user_claim) && (e.basis != ClaimBasis::kDirect || !user_claim);
}

Status CheckAuditedReportClaims(const UserReportView& report, const ReleaseAuditView& audit) {
  const auto& matrix = audit.claim_evidence_matrix;
  const auto& claims = report.completion_claims;
  for (size_t i = 0; i < claims.size(); ++i) {
    auto reviewed = std::find_if(matrix.begin(), matrix.end(), [&](const ClaimEvidenceView& e) { return Approves(e, claims[i]); });
    if (reviewed == matrix.end() || !EqualStringSets(claims[i].evidence_refs, reviewed->evidence_refs)) {
      return Reject(PointerAt("completionClaims", i), "UserReport completion claim was not approved by the ReleaseAudit evidence matrix");
    }
  }
  if (audit.decision == AuditDecision::kRelease) {
    std::vector<std::string> supported, claimed;
    for (const ClaimEvidenceView& e : matrix) {
      if (e.status == ClaimSupport::kSupported) supported.push_back(e.claim_id);
    }
    for (const EvidenceClaimView& claim : claims) claimed.push_back(claim.id);
    if (!EqualStringSets(claimed, supported)) {
      return Reject("/completionClaims", "Released UserReport must include every supported audited claim exactly once");
    }
  }
  return Ok();
}

// The terminal statuses an audit decision allows (none listed: any).
std::vector<TerminalStatus> AllowedAfter(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kRelease: return {TerminalStatus::kCompleted};
    case AuditDecision::kPartial: return {TerminalStatus::kPartial, TerminalStatus::kFailedVerification};
    case AuditDecision::kBlock: return {TerminalStatus::kBlocked};
    case AuditDecision::kRemediate: return {};
  }
  return {};
}

// The report's status against its verifications and the audit's decision.
Status CheckAuditedStatus(RunSnapshot& snapshot, const UserReportView& report, const ReleaseAuditView& audit) {
  TerminalStatus status = report.terminal_status;
  bool completed = status == TerminalStatus::kCompleted;
  TELIC_ASSIGN_OR_RETURN(TaskContractView contract, LatestView(snapshot, "TaskContract", ViewTaskContract));
  TELIC_ASSIGN_OR_RETURN(QualityReviewView quality, LatestView(snapshot, "QualityReview", ViewQualityReview));
  if (!completed && !ContainsString(report.finding_refs, snapshot.LatestRef("QualityReview")) &&
      !ContainsString(report.finding_refs, snapshot.LatestRef("ReleaseAudit"))) {
    return Reject("/findingRefs", "Non-completed UserReport must cite its controlling quality review or release audit");
  }
  std::vector<std::string> verification_refs;
  bool all_pass = RequiredVerificationsPass(contract, quality, verification_refs);
  if (completed && (!all_pass || !EqualStringSets(report.verification_refs, verification_refs))) {
    return Reject(all_pass ? "/verificationRefs" : "/terminalStatus", "Completed UserReport must retain every passed required verification");
  }
  if (status == TerminalStatus::kFailedVerification && all_pass) {
    return Reject("/terminalStatus", "failed_verification requires an incomplete required verification");
  }
  std::vector<TerminalStatus> allowed = AllowedAfter(audit.decision);
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), status) == allowed.end()) {
    std::vector<std::string_view> names;
    for (TerminalStatus s : allowed) names.push_back(Name(s));
    return Reject("/terminalStatus", fmt::format("UserReport terminalStatus must be {} after {}", fmt::join(names, " or "),
                                                 Name(audit.decision)));
  }
  return Ok();
}

Status CheckAuditedReport(RunSnapshot& snapshot, const Submission& s, const UserReportView& report,
                          const ReleaseAuditView& audit) {
  if (audit.user_report_ref != snapshot.Uri(s.id)) return Reject("/id", "UserReport does not match the ReleaseAudit forward reference");
  if (report.permissions_honored != (audit.mode_compliance == Compliance::kPass)) {
    return Reject("/permissionsHonored", "UserReport permissionsHonored must match the ReleaseAudit mode-compliance result");
  }
  if (report.terminal_status == TerminalStatus::kCompleted && report.completion_claims.empty()) {
    return Reject("/completionClaims", "Completed UserReport requires at least one completion claim");
  }
  TELIC_RETURN_IF_ERROR(CheckAuditedStatus(snapshot, report, audit));
  TELIC_RETURN_IF_ERROR(CheckAuditedReportClaims(report, audit));
  return CheckEvidenceSemantics(snapshot, s.type, s.body);
}

}  // namespace

Status CheckUserReport(RunSnapshot& snapshot, const Submission& s) {
  TELIC_ASSIGN_OR_RETURN(UserReportView report, ViewUserReport(s.body));
  if (report.trace_ref != "trace://" + snapshot.run_id()) {
    return Reject("/traceRef", "UserReport traceRef must reference the aggregate trace for the current run");
  }
  std::vector<std::string> diffs;
  TELIC_ASSIGN_OR_RETURN(std::vector<WorkResultView> results, AllViews(snapshot, "WorkResult", ViewWorkResult));
  for (const WorkResultView& result : results) {
    for (const FileChangeView& change : result.files_changed) {
      if (!ContainsString(diffs, change.diff_ref)) diffs.push_back(change.diff_ref);
    }
  }
  if (!EqualStringSets(report.change_refs, diffs)) {
    return Reject("/changeRefs", "UserReport changeRefs must retain every accepted WorkResult diff exactly once");
  }
  TELIC_ASSIGN_OR_RETURN(std::optional<ReleaseAuditView> audit, LatestViewOrNull(snapshot, "ReleaseAudit", ViewReleaseAudit));
  if (audit) return CheckAuditedReport(snapshot, s, report, *audit);
  if (RunTopology(snapshot) == domain::Topology::kMicro) return CheckMicroReport(snapshot, s, report);
  return CheckEarlyBlockedReport(snapshot, report);
}

}  // namespace telic::controller::rules
