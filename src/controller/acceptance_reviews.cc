// Acceptance rules of the review family (PROTOCOL §15): QualityReview and
// ReleaseAudit. The rules read the typed views of artifact_views.h.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "controller/work_plan_rules.h"

namespace telic::controller::rules {
namespace {

// What a QualityReview is judged against: the latest plan and contract, the
// WorkResults of that plan, and whether the analyze_and_fix fix is unlocked.
struct ReviewContext {
  std::string plan_ref;
  WorkPlanView plan;
  TaskContractView contract;
  std::vector<std::string> result_refs;  // WorkResults of the latest plan
  std::vector<WorkResultView> results;
  bool unlocked = false;
};

Result<ReviewContext> LoadReviewContext(RunSnapshot& snapshot) {
  ReviewContext c;
  TELIC_ASSIGN_OR_RETURN(c.plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  TELIC_ASSIGN_OR_RETURN(c.plan, LatestView(snapshot, "WorkPlan", ViewWorkPlan));
  TELIC_ASSIGN_OR_RETURN(c.contract, LatestView(snapshot, "TaskContract", ViewTaskContract));
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(WorkResultView result, ViewOf(snapshot, *meta, ViewWorkResult));
    if (result.work_plan_ref == c.plan_ref) {
      c.result_refs.push_back(snapshot.Uri(meta->id));
      c.results.push_back(std::move(result));
    }
  }
  TELIC_ASSIGN_OR_RETURN(c.unlocked, AnalysisFixUnlocked(snapshot));
  return c;
}

// The analyze_and_fix diagnosis stage: before the fix is unlocked.
bool DiagnosisStage(RunSnapshot& snapshot, const ReviewContext& c) {
  return IsDiagnosisStage(RunMode(snapshot), c.unlocked);
}

Status CheckReviewCompletion(RunSnapshot& snapshot, const QualityReviewView& review, const ReviewContext& c) {
  std::optional<domain::Mode> mode = RunMode(snapshot);
  QualityDecision decision = review.decision;
  if (!IsReportOrPlan(mode) && (decision == QualityDecision::kPass || decision == QualityDecision::kProceedToFix)) {
    std::vector<std::string> planned;
    for (const WorkNodeView& node : c.plan.nodes) planned.push_back(node.id);
    std::vector<std::string> completed;
    for (const WorkResultView& result : c.results) {
      if (result.status == WorkStatus::kCompleted) completed.push_back(result.node_id);
    }
    if (!EqualStringSets(completed, planned)) return Reject("/decision", "Passing QualityReview requires every planned node to complete");
  }
  if (decision == QualityDecision::kPass && (mode == domain::Mode::kFixOnly || (mode == domain::Mode::kAnalyzeAndFix && c.unlocked))) {
    TELIC_ASSIGN_OR_RETURN(std::vector<WorkResultView> results, AllViews(snapshot, "WorkResult", ViewWorkResult));
    bool mutated = std::any_of(results.begin(), results.end(), [](const WorkResultView& r) {
      return std::any_of(r.actions.begin(), r.actions.end(), [](const WorkActionView& a) { return a.Completed() && a.mutating; });
    });
    if (!mutated) return Reject("/decision", "A passing fix review requires at least one completed mutating action");
  }
  return Ok();
}

bool SameCoverage(const CoverageView& entry, const std::string& criterion, const std::vector<std::string>& evidence) {
  return entry.criterion_id == criterion && entry.status == CheckStatus::kPass && EqualStringSets(entry.evidence_refs, evidence);
}

// Whether a passed criterion is backed by the current plan's WorkResult
// coverage, or retained from a prior review when the plan does not own it.
Result<bool> AcceptanceBacked(RunSnapshot& snapshot, const CoverageView& result, const std::set<std::string>& planned,
                              const ReviewContext& c) {
  auto same = [&](const CoverageView& entry) { return SameCoverage(entry, result.criterion_id, result.evidence_refs); };
  for (const WorkResultView& work : c.results) {
    if (std::any_of(work.acceptance_coverage.begin(), work.acceptance_coverage.end(), same)) return true;
  }
  if (planned.count(result.criterion_id)) return false;
  TELIC_ASSIGN_OR_RETURN(std::vector<QualityReviewView> prior_reviews, AllViews(snapshot, "QualityReview", ViewQualityReview));
  return std::any_of(prior_reviews.begin(), prior_reviews.end(), [&](const QualityReviewView& r) {
    return std::any_of(r.acceptance_results.begin(), r.acceptance_results.end(), same);
  });
}

Status CheckAcceptanceResults(RunSnapshot& snapshot, const QualityReviewView& review, const ReviewContext& c) {
  bool diagnosis_stage = DiagnosisStage(snapshot, c);
  std::vector<std::string> expected =
      c.contract.CriterionIds(diagnosis_stage ? std::optional(CriterionStage::kDiagnosis) : std::nullopt);
  std::vector<std::string> covered;
  for (const CoverageView& result : review.acceptance_results) covered.push_back(result.criterion_id);
  if (!EqualStringSets(covered, expected)) {
    return Reject("/acceptanceResults", "QualityReview must cover every criterion for the current workflow stage exactly once");
  }
  if (IsReportOrPlan(RunMode(snapshot))) return Ok();
  std::set<std::string> planned;
  for (const WorkNodeView& node : c.plan.nodes) planned.insert(node.acceptance_criteria.begin(), node.acceptance_criteria.end());
  for (size_t i = 0; i < review.acceptance_results.size(); ++i) {
    const CoverageView& result = review.acceptance_results[i];
    if (result.status != CheckStatus::kPass) continue;
    TELIC_ASSIGN_OR_RETURN(bool backed, AcceptanceBacked(snapshot, result, planned, c));
    if (!backed) {
      return Reject(PointerAt("acceptanceResults", i, "evidenceRefs"),
                    fmt::format("Passed acceptance criterion {} lacks matching WorkResult coverage", result.criterion_id));
    }
  }
  return Ok();
}

// Whether a diagnosis verification passed in a prior proceed_to_fix review
// with the same evidence.
Result<bool> PassedAtDiagnosis(RunSnapshot& snapshot, const VerificationRequirementView& requirement,
                               const VerificationResultView& result) {
  TELIC_ASSIGN_OR_RETURN(std::vector<QualityReviewView> reviews, AllViews(snapshot, "QualityReview", ViewQualityReview));
  for (const QualityReviewView& review : reviews) {
    if (review.decision != QualityDecision::kProceedToFix) continue;
    for (const VerificationResultView& prior : review.verification_results) {
      if (prior.requirement_id == requirement.id && prior.capability == requirement.capability &&
          prior.status == VerificationStatus::kPass && EqualStringSets(prior.evidence_refs, result.evidence_refs)) {
        return true;
      }
    }
  }
  return false;
}

// Whether a passing verification result is backed by a completed capability action.
Result<bool> VerificationObserved(RunSnapshot& snapshot, const VerificationRequirementView& requirement,
                                  const VerificationResultView& result, const ReviewContext& c) {
  const std::string& capability = requirement.capability;
  if (requirement.stage == CriterionStage::kDiagnosis && c.unlocked) {
    TELIC_ASSIGN_OR_RETURN(bool passed, PassedAtDiagnosis(snapshot, requirement, result));
    if (passed) return true;
  }
  std::vector<std::string> stage_criteria = c.contract.CriterionIds(requirement.stage);
  std::set<std::string> eligible;
  for (const WorkNodeView& node : c.plan.nodes) {
    const auto& criteria = node.acceptance_criteria;
    if (ContainsString(node.required_capabilities, capability) &&
        std::any_of(criteria.begin(), criteria.end(), [&](const std::string& x) { return ContainsString(stage_criteria, x); })) {
      eligible.insert(node.id);
    }
  }
  for (const WorkResultView& work : c.results) {
    if (!eligible.count(work.node_id)) continue;
    int64_t last = work.LastCompletedMutation();
    for (size_t i = 0; i < work.actions.size(); ++i) {
      const WorkActionView& a = work.actions[i];
      if (a.capability != capability || !a.Completed() || a.mutating) continue;
      if (requirement.stage == CriterionStage::kCompletion && last >= 0 && static_cast<int64_t>(i) <= last) continue;
      if (std::any_of(a.evidence_refs.begin(), a.evidence_refs.end(),
                      [&](const std::string& r) { return ContainsString(result.evidence_refs, r); })) {
        return true;
      }
    }
  }
  return false;
}

Status CheckVerificationResults(RunSnapshot& snapshot, const QualityReviewView& review, const ReviewContext& c) {
  bool diagnosis_stage = DiagnosisStage(snapshot, c);
  std::vector<const VerificationRequirementView*> requirements;
  std::vector<std::string> requirement_ids, result_ids;
  for (const VerificationRequirementView& r : c.contract.verification_requirements) {
    if (diagnosis_stage && r.stage != CriterionStage::kDiagnosis) continue;
    requirements.push_back(&r);
    requirement_ids.push_back(r.id);
  }
  const auto& results = review.verification_results;
  for (const VerificationResultView& r : results) result_ids.push_back(r.requirement_id);
  if (!EqualStringSets(result_ids, requirement_ids)) {
    return Reject("/verificationResults", "QualityReview must cover every verification requirement exactly once");
  }
  bool progressing = review.decision == QualityDecision::kPass || review.decision == QualityDecision::kProceedToFix;
  for (const VerificationRequirementView* requirement : requirements) {
    const std::string& id = requirement->id;
    auto found = std::find_if(results.begin(), results.end(), [&](const VerificationResultView& r) { return r.requirement_id == id; });
    if (found == results.end()) return Reject("/verificationResults", fmt::format("Verification result {} must use its contracted capability", id));
    size_t index = static_cast<size_t>(found - results.begin());
    if (found->capability != requirement->capability) {
      return Reject(PointerAt("verificationResults", index, "capability"), fmt::format("Verification result {} must use its contracted capability", id));
    }
    if (requirement->required && progressing && found->status != VerificationStatus::kPass) {
      return Reject(PointerAt("verificationResults", index, "status"), fmt::format("Required verification {} must pass before progression", id));
    }
    if (found->status == VerificationStatus::kPass && !IsReportOrPlan(RunMode(snapshot))) {
      TELIC_ASSIGN_OR_RETURN(bool observed, VerificationObserved(snapshot, *requirement, *found, c));
      if (!observed) {
        return Reject(PointerAt("verificationResults", index, "evidenceRefs"),
                      fmt::format("Passed verification {} lacks a completed capability action", id));
      }
    }
  }
  return Ok();
}

// The work order a proceed_to_fix or remediate decision carries.
Status CheckReviewWorkOrder(RunSnapshot& snapshot, const QualityReviewView& review, const ReviewContext& c,
                            const Json& envelope) {
  std::optional<domain::Mode> mode = RunMode(snapshot);
  Json authorized = EnvelopeAuthorization(snapshot, envelope);
  const Json& contract_permissions = *c.contract.permissions;
  if (review.decision == QualityDecision::kProceedToFix) {
    ScopedWorkOrderRules rules{"Diagnosis correction work order", "targetCriterionIds",
                               c.contract.CriterionIds(CriterionStage::kCompletion), contract_permissions, authorized, {},
                               true, true, "/diagnosisGate/correctionWorkOrder"};
    rules.eligible_source_refs.insert(review.direct_evidence_refs.begin(), review.direct_evidence_refs.end());
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(review.correction_work_order ? *review.correction_work_order : Json(), rules));
  }
  if (review.decision == QualityDecision::kRemediate) {
    bool diagnosis_stage = DiagnosisStage(snapshot, c);
    ScopedWorkOrderRules rules{"Quality remediation work order", "failedCriterionIds",
                               c.contract.CriterionIds(diagnosis_stage ? std::optional(CriterionStage::kDiagnosis) : std::nullopt),
                               contract_permissions, diagnosis_stage ? RunAuthorization("analyze_only", envelope) : authorized,
                               {}, false, !IsReportOrPlan(mode), "/remediationWorkOrder"};
    rules.eligible_source_refs.insert(c.plan_ref);
    rules.eligible_source_refs.insert(c.result_refs.begin(), c.result_refs.end());
    for (const auto& ref : snapshot.AllRefs("Evidence")) rules.eligible_source_refs.insert(ref);
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(review.remediation_work_order ? *review.remediation_work_order : Json(), rules));
  }
  return Ok();
}

// ReleaseAudit: the lineage it cites is the current one.
Status CheckAuditLineage(RunSnapshot& snapshot, const ReleaseAuditView& audit, const std::string& original_request_ref,
                         const std::string& contract_ref, const std::string& quality_ref) {
  const char* stale = audit.original_request_ref != original_request_ref ? "/originalRequestRef"
                      : audit.task_contract_ref != contract_ref           ? "/taskContractRef"
                      : audit.quality_review_ref != quality_ref           ? "/qualityReviewRef"
                      : !EqualStringSets(audit.work_plan_refs, snapshot.AllRefs("WorkPlan")) ? "/workPlanRefs"
                      : !EqualStringSets(audit.work_result_refs, snapshot.AllRefs("WorkResult")) ? "/workResultRefs"
                                                                                                  : nullptr;
  if (stale) return Reject(stale, "ReleaseAudit lineage is incomplete or stale");
  if (!EqualStringSets(audit.user_fidelity_subjects, {original_request_ref})) {
    return Reject("/userFidelity", "ReleaseAudit user fidelity must cover the immutable original request exactly once");
  }
  return Ok();
}

// ReleaseAudit: a failed mode compliance only partials or blocks.
Status CheckAuditCompliance(const ReleaseAuditView& audit) {
  AuditDecision decision = audit.decision;
  if (audit.mode_compliance == Compliance::kFail && decision != AuditDecision::kPartial && decision != AuditDecision::kBlock) {
    return Reject("/decision", "Failed mode compliance requires a partial or blocked release audit");
  }
  return Ok();
}

// ReleaseAudit: the decision against the controlling review.
Status CheckAuditDecision(const ReleaseAuditView& audit, const QualityReviewView& quality) {
  AuditDecision decision = audit.decision;
  if (quality.decision == QualityDecision::kBlock && decision != AuditDecision::kBlock) {
    return Reject("/decision", "A blocked QualityReview cannot be downgraded by the ReleaseAudit");
  }
  if (decision == AuditDecision::kRelease && quality.decision != QualityDecision::kPass) {
    return Reject("/decision", "Release requires a passing current QualityReview");
  }
  if (decision == AuditDecision::kRelease && audit.claim_evidence_matrix.empty()) {
    return Reject("/claimEvidenceMatrix", "Release requires at least one audited claim");
  }
  return Ok();
}

// ReleaseAudit: unique claims over real criteria; on release every criterion supported.
Status CheckClaimMatrix(RunSnapshot& snapshot, const ReleaseAuditView& audit, const std::vector<std::string>& criteria) {
  const auto& matrix = audit.claim_evidence_matrix;
  std::set<std::string> claim_ids;
  for (const ClaimEvidenceView& entry : matrix) claim_ids.insert(entry.claim_id);
  if (claim_ids.size() != matrix.size()) return Reject("/claimEvidenceMatrix", "ReleaseAudit claim identifiers must be unique");
  for (size_t i = 0; i < matrix.size(); ++i) {
    for (const auto& criterion : matrix[i].criterion_ids) {
      if (!ContainsString(criteria, criterion)) return Reject(PointerAt("claimEvidenceMatrix", i, "criterionIds"), "ReleaseAudit claim matrix invents contract criteria");
    }
  }
  if (audit.decision != AuditDecision::kRelease) return Ok();
  bool report_only = RunMode(snapshot) == domain::Mode::kReportOnly;
  for (const auto& criterion : criteria) {
    bool supported = std::any_of(matrix.begin(), matrix.end(), [&](const ClaimEvidenceView& e) {
      return e.status == ClaimSupport::kSupported && (report_only || e.basis == ClaimBasis::kDirect) &&
             ContainsString(e.criterion_ids, criterion);
    });
    if (!supported) return Reject("/claimEvidenceMatrix", "Released claim matrix must support every TaskContract criterion");
  }
  return Ok();
}

}  // namespace

Status CheckQualityReview(RunSnapshot& snapshot, const Submission& s, const Json& envelope) {
  const auto& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(QualityReviewView review, ViewQualityReview(s.body));
  if (review.remaining_remediations != run.remediations_remaining) {
    return Reject("/remainingRemediations", "QualityReview remainingRemediations must match the controller budget");
  }
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(ReviewContext c, LoadReviewContext(snapshot));
  if (review.task_contract_ref != contract_ref) return Reject("/taskContractRef", "QualityReview must use the current TaskContract");
  if (!ContainsString(review.work_plan_refs, c.plan_ref)) return Reject("/workPlanRefs", "QualityReview must include the current WorkPlan");
  if (!EqualStringSets(review.work_result_refs, c.result_refs)) {
    return Reject("/workResultRefs", "QualityReview WorkResult lineage is incomplete or stale");
  }
  TELIC_RETURN_IF_ERROR(CheckReviewCompletion(snapshot, review, c));
  TELIC_RETURN_IF_ERROR(CheckAcceptanceResults(snapshot, review, c));
  if (!EqualStringSets(review.rule_compliance_subjects, c.contract.rule_refs)) {
    return Reject("/ruleCompliance", "QualityReview must cover every TaskContract rule exactly once");
  }
  TELIC_RETURN_IF_ERROR(CheckVerificationResults(snapshot, review, c));
  TELIC_RETURN_IF_ERROR(CheckReviewWorkOrder(snapshot, review, c, envelope));
  if (review.decision == QualityDecision::kProceedToFix && !DiagnosisStage(snapshot, c)) {
    return Reject("/decision", "proceed_to_fix is legal only after the first analyze_and_fix diagnosis");
  }
  if (DiagnosisStage(snapshot, c) && review.decision == QualityDecision::kPass) {
    return Reject("/decision", "Analyze-and-fix diagnosis must pass through proceed_to_fix before release");
  }
  return CheckEvidenceSemantics(snapshot, s.type, s.body);
}

Status CheckReleaseAudit(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                         const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(ReleaseAuditView audit, ViewReleaseAudit(s.body));
  if (audit.remaining_remediations != run.remediations_remaining) {
    return Reject("/remainingRemediations", "ReleaseAudit remainingRemediations must match the controller budget");
  }
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string quality_ref, snapshot.RequireLatestRef("QualityReview"));
  TELIC_RETURN_IF_ERROR(snapshot.RequireLatestRef("WorkPlan"));
  TELIC_RETURN_IF_ERROR(CheckAuditLineage(snapshot, audit, original_request_ref, contract_ref, quality_ref));
  TELIC_RETURN_IF_ERROR(CheckAuditCompliance(audit));
  TELIC_ASSIGN_OR_RETURN(QualityReviewView quality, LatestView(snapshot, "QualityReview", ViewQualityReview));
  TELIC_RETURN_IF_ERROR(CheckAuditDecision(audit, quality));
  TELIC_ASSIGN_OR_RETURN(TaskContractView contract, LatestView(snapshot, "TaskContract", ViewTaskContract));
  std::vector<std::string> criteria = contract.CriterionIds();
  TELIC_RETURN_IF_ERROR(CheckClaimMatrix(snapshot, audit, criteria));
  if (audit.decision == AuditDecision::kRemediate) {
    ScopedWorkOrderRules rules{"Release remediation defect", "failedCriterionIds", criteria, *contract.permissions,
                               EnvelopeAuthorization(snapshot, envelope), {}, false, !IsReportOrPlan(RunMode(snapshot)),
                               "/remediationDefect"};
    rules.eligible_source_refs.insert(quality_ref);
    for (const auto& ref : snapshot.AllRefs("WorkResult")) rules.eligible_source_refs.insert(ref);
    for (const auto& ref : snapshot.AllRefs("Evidence")) rules.eligible_source_refs.insert(ref);
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(audit.remediation_defect ? *audit.remediation_defect : Json(), rules));
  }
  return CheckEvidenceSemantics(snapshot, s.type, s.body);
}

}  // namespace telic::controller::rules
