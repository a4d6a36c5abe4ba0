// Acceptance rules of the review family (PROTOCOL §15): QualityReview and
// ReleaseAudit.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "controller/work_plan_rules.h"

namespace telic::controller::rules {
namespace {

struct ReviewContext {
  std::string plan_ref;
  const Json* plan = nullptr;
  const Json* contract = nullptr;
  std::vector<std::string> result_refs;  // WorkResults of the latest plan
  std::vector<const Json*> results;
  bool unlocked = false;
};

Result<ReviewContext> LoadReviewContext(RunSnapshot& snapshot) {
  ReviewContext c;
  TELIC_ASSIGN_OR_RETURN(c.plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  TELIC_ASSIGN_OR_RETURN(c.plan, snapshot.LatestBody("WorkPlan"));
  TELIC_ASSIGN_OR_RETURN(c.contract, snapshot.LatestBody("TaskContract"));
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* result, snapshot.Body(*meta));
    if (result->value("workPlanRef", "") == c.plan_ref) {
      c.result_refs.push_back(snapshot.Uri(meta->id));
      c.results.push_back(result);
    }
  }
  TELIC_ASSIGN_OR_RETURN(c.unlocked, AnalysisFixUnlocked(snapshot));
  return c;
}

Status CheckReviewCompletion(RunSnapshot& snapshot, const Json& body, const ReviewContext& c) {
  const std::string& mode = snapshot.run().requested_mode;
  std::string decision = body.value("decision", "");
  if (!IsReportOrPlan(mode) && (decision == "pass" || decision == "proceed_to_fix")) {
    std::vector<std::string> planned = Field(Objects(*c.plan, "nodes"), "id");
    std::vector<std::string> completed;
    for (const Json* result : c.results) {
      if (result->value("status", "") == "completed" && result->contains("nodeId")) completed.push_back((*result)["nodeId"]);
    }
    if (!EqualStringSets(completed, planned)) return Reject("/decision", "Passing QualityReview requires every planned node to complete");
  }
  if (decision == "pass" && (mode == "fix_only" || (mode == "analyze_and_fix" && c.unlocked))) {
    TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> results, AllBodies(snapshot, "WorkResult"));
    bool mutated = std::any_of(results.begin(), results.end(), [](const Json* r) {
      auto actions = Objects(*r, "actions");
      return std::any_of(actions.begin(), actions.end(), [](const Json& a) {
        return a.value("status", "") == "completed" && a.value("mutating", false) == true;
      });
    });
    if (!mutated) return Reject("/decision", "A passing fix review requires at least one completed mutating action");
  }
  return Ok();
}

Status CheckAcceptanceResults(RunSnapshot& snapshot, const Json& body, const ReviewContext& c) {
  const std::string& mode = snapshot.run().requested_mode;
  bool diagnosis_stage = mode == "analyze_and_fix" && !c.unlocked;
  std::vector<std::string> expected = CriterionIds(*c.contract, diagnosis_stage ? "diagnosis" : "");
  Items results = Objects(body, "acceptanceResults");
  if (!EqualStringSets(Field(results, "criterionId"), expected)) {
    return Reject("/acceptanceResults", "QualityReview must cover every criterion for the current workflow stage exactly once");
  }
  if (IsReportOrPlan(mode)) return Ok();
  std::set<std::string> planned;
  for (const Json& node : Objects(*c.plan, "nodes")) {
    for (const auto& criterion : StringArray(node, "acceptanceCriteria")) planned.insert(criterion);
  }
  TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> prior_reviews, AllBodies(snapshot, "QualityReview"));
  for (const Json& result : results) {
    if (result.value("status", "") != "pass") continue;
    std::string criterion = result.value("criterionId", "");
    std::vector<std::string> evidence = StringArray(result, "evidenceRefs");
    auto same = [&](const Json& entry) {
      return entry.value("criterionId", "") == criterion && entry.value("status", "") == "pass" &&
             EqualStringSets(StringArray(entry, "evidenceRefs"), evidence);
    };
    bool current = std::any_of(c.results.begin(), c.results.end(), [&](const Json* r) {
      auto coverage = Objects(*r, "acceptanceCoverage");
      return std::any_of(coverage.begin(), coverage.end(), same);
    });
    bool retained = !planned.count(criterion) && std::any_of(prior_reviews.begin(), prior_reviews.end(), [&](const Json* r) {
      auto prior = Objects(*r, "acceptanceResults");
      return std::any_of(prior.begin(), prior.end(), same);
    });
    if (!current && !retained) {
      return Reject(At(body, "acceptanceResults", result, "evidenceRefs"), fmt::format("Passed acceptance criterion {} lacks matching WorkResult coverage", criterion));
    }
  }
  return Ok();
}

// Whether a passing verification result is backed by a completed capability action.
Result<bool> VerificationObserved(RunSnapshot& snapshot, const Json& requirement, const Json& result, const ReviewContext& c) {
  std::string stage = requirement.value("stage", "");
  std::string capability = requirement.value("capability", "");
  std::vector<std::string> evidence = StringArray(result, "evidenceRefs");
  if (stage == "diagnosis" && c.unlocked) {
    TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> reviews, AllBodies(snapshot, "QualityReview"));
    for (const Json* review : reviews) {
      if (review->value("decision", "") != "proceed_to_fix") continue;
      for (const Json& prior : Objects(*review, "verificationResults")) {
        if (prior.value("requirementId", "") == requirement.value("id", "") && prior.value("capability", "") == capability &&
            prior.value("status", "") == "pass" && EqualStringSets(StringArray(prior, "evidenceRefs"), evidence)) {
          return true;
        }
      }
    }
  }
  std::vector<std::string> stage_criteria = CriterionIds(*c.contract, stage);
  std::set<std::string> eligible;
  for (const Json& node : Objects(*c.plan, "nodes")) {
    auto criteria = StringArray(node, "acceptanceCriteria");
    if (ContainsString(StringArray(node, "requiredCapabilities"), capability) &&
        std::any_of(criteria.begin(), criteria.end(), [&](const std::string& x) { return ContainsString(stage_criteria, x); })) {
      eligible.insert(node.value("id", ""));
    }
  }
  for (const Json* work : c.results) {
    if (!eligible.count(work->value("nodeId", ""))) continue;
    Items actions = Objects(*work, "actions");
    int64_t last = LastCompletedMutation(actions);
    for (size_t i = 0; i < actions.size(); ++i) {
      const Json& a = actions[i];
      if (a.value("capability", "") != capability || a.value("status", "") != "completed" ||
          !(a.contains("mutating") && a["mutating"] == false)) {
        continue;
      }
      if (stage == "completion" && last >= 0 && static_cast<int64_t>(i) <= last) continue;
      auto refs = StringArray(a, "evidenceRefs");
      if (std::any_of(refs.begin(), refs.end(), [&](const std::string& r) { return ContainsString(evidence, r); })) return true;
    }
  }
  return false;
}

Status CheckVerificationResults(RunSnapshot& snapshot, const Json& body, const ReviewContext& c) {
  const std::string& mode = snapshot.run().requested_mode;
  std::string decision = body.value("decision", "");
  bool diagnosis_stage = mode == "analyze_and_fix" && !c.unlocked;
  Items requirements;
  for (const Json& r : Objects(*c.contract, "verificationRequirements")) {
    if (!diagnosis_stage || r.value("stage", "") == "diagnosis") requirements.push_back(std::cref(r));
  }
  Items results = Objects(body, "verificationResults");
  if (!EqualStringSets(Field(results, "requirementId"), Field(requirements, "id"))) {
    return Reject("/verificationResults", "QualityReview must cover every verification requirement exactly once");
  }
  for (const Json& requirement : requirements) {
    std::string id = requirement.value("id", "");
    auto found = std::find_if(results.begin(), results.end(), [&](const Json& r) { return r.value("requirementId", "") == id; });
    if (found == results.end()) return Reject("/verificationResults", fmt::format("Verification result {} must use its contracted capability", id));
    const Json& result = found->get();
    if (result.value("capability", "") != requirement.value("capability", "")) {
      return Reject(At(body, "verificationResults", result, "capability"),
                    fmt::format("Verification result {} must use its contracted capability", id));
    }
    if (requirement.value("required", false) == true && (decision == "pass" || decision == "proceed_to_fix") &&
        result.value("status", "") != "pass") {
      return Reject(At(body, "verificationResults", result, "status"), fmt::format("Required verification {} must pass before progression", id));
    }
    if (result.value("status", "") == "pass" && !IsReportOrPlan(mode)) {
      TELIC_ASSIGN_OR_RETURN(bool observed, VerificationObserved(snapshot, requirement, result, c));
      if (!observed) {
        return Reject(At(body, "verificationResults", result, "evidenceRefs"),
                      fmt::format("Passed verification {} lacks a completed capability action", id));
      }
    }
  }
  return Ok();
}

}  // namespace

Status CheckQualityReview(RunSnapshot& snapshot, const Submission& s, const Json& envelope) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  if (body.value("remainingRemediations", -1) != run.remediations_remaining) {
    return Reject("/remainingRemediations", "QualityReview remainingRemediations must match the controller budget");
  }
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(ReviewContext c, LoadReviewContext(snapshot));
  if (body.value("taskContractRef", "") != contract_ref) return Reject("/taskContractRef", "QualityReview must use the current TaskContract");
  if (!ContainsString(StringArray(body, "workPlanRefs"), c.plan_ref)) return Reject("/workPlanRefs", "QualityReview must include the current WorkPlan");
  if (!EqualStringSets(StringArray(body, "workResultRefs"), c.result_refs)) {
    return Reject("/workResultRefs", "QualityReview WorkResult lineage is incomplete or stale");
  }
  TELIC_RETURN_IF_ERROR(CheckReviewCompletion(snapshot, body, c));
  TELIC_RETURN_IF_ERROR(CheckAcceptanceResults(snapshot, body, c));
  if (!EqualStringSets(Field(Objects(body, "ruleCompliance"), "subjectRef"), StringArray(*c.contract, "ruleRefs"))) {
    return Reject("/ruleCompliance", "QualityReview must cover every TaskContract rule exactly once");
  }
  TELIC_RETURN_IF_ERROR(CheckVerificationResults(snapshot, body, c));
  const std::string& mode = run.requested_mode;
  std::string decision = body.value("decision", "");
  Json authorized = EnvelopeAuthorization(snapshot, envelope);
  const Json& contract_permissions = c.contract->value("permissions", Json());
  if (decision == "proceed_to_fix") {
    const Json& gate = body.value("diagnosisGate", Json());
    ScopedWorkOrderRules rules{"Diagnosis correction work order", "targetCriterionIds", CriterionIds(*c.contract, "completion"),
                               contract_permissions, authorized, {}, true, true, "/diagnosisGate/correctionWorkOrder"};
    std::vector<std::string> direct = gate.is_object() ? StringArray(gate, "directEvidenceRefs") : std::vector<std::string>{};
    rules.eligible_source_refs.insert(direct.begin(), direct.end());
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(gate.is_object() ? gate.value("correctionWorkOrder", Json()) : Json(), rules));
  }
  if (decision == "remediate") {
    bool diagnosis_stage = mode == "analyze_and_fix" && !c.unlocked;
    ScopedWorkOrderRules rules{"Quality remediation work order", "failedCriterionIds",
                               diagnosis_stage ? CriterionIds(*c.contract, "diagnosis") : CriterionIds(*c.contract),
                               contract_permissions, diagnosis_stage ? RunAuthorization("analyze_only", envelope) : authorized,
                               {}, false, !IsReportOrPlan(mode), "/remediationWorkOrder"};
    rules.eligible_source_refs.insert(c.plan_ref);
    rules.eligible_source_refs.insert(c.result_refs.begin(), c.result_refs.end());
    for (const auto& ref : snapshot.AllRefs("Evidence")) rules.eligible_source_refs.insert(ref);
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(body.value("remediationWorkOrder", Json()), rules));
  }
  if (decision == "proceed_to_fix" && (mode != "analyze_and_fix" || c.unlocked)) {
    return Reject("/decision", "proceed_to_fix is legal only after the first analyze_and_fix diagnosis");
  }
  if (mode == "analyze_and_fix" && !c.unlocked && decision == "pass") {
    return Reject("/decision", "Analyze-and-fix diagnosis must pass through proceed_to_fix before release");
  }
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

Status CheckReleaseAudit(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                         const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  if (body.value("remainingRemediations", -1) != run.remediations_remaining) {
    return Reject("/remainingRemediations", "ReleaseAudit remainingRemediations must match the controller budget");
  }
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string quality_ref, snapshot.RequireLatestRef("QualityReview"));
  TELIC_RETURN_IF_ERROR(snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> results = snapshot.AllRefs("WorkResult");
  const char* stale = body.value("originalRequestRef", "") != original_request_ref ? "/originalRequestRef"
                      : body.value("taskContractRef", "") != contract_ref           ? "/taskContractRef"
                      : body.value("qualityReviewRef", "") != quality_ref           ? "/qualityReviewRef"
                      : !EqualStringSets(StringArray(body, "workPlanRefs"), snapshot.AllRefs("WorkPlan")) ? "/workPlanRefs"
                      : !EqualStringSets(StringArray(body, "workResultRefs"), results)                    ? "/workResultRefs"
                                                                                                          : nullptr;
  if (stale) return Reject(stale, "ReleaseAudit lineage is incomplete or stale");
  if (!EqualStringSets(Field(Objects(body, "userFidelity"), "subjectRef"), {original_request_ref})) {
    return Reject("/userFidelity", "ReleaseAudit user fidelity must cover the immutable original request exactly once");
  }
  std::string decision = body.value("decision", "");
  if (body.value("modeCompliance", "") == "fail" && decision != "partial" && decision != "block") {
    return Reject("/decision", "Failed mode compliance requires a partial or blocked release audit");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* quality, snapshot.LatestBody("QualityReview"));
  if (quality->value("decision", "") == "block" && decision != "block") {
    return Reject("/decision", "A blocked QualityReview cannot be downgraded by the ReleaseAudit");
  }
  if (decision == "release" && quality->value("decision", "") != "pass") return Reject("/decision", "Release requires a passing current QualityReview");
  Items matrix = Objects(body, "claimEvidenceMatrix");
  if (decision == "release" && matrix.empty()) return Reject("/claimEvidenceMatrix", "Release requires at least one audited claim");
  TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
  std::vector<std::string> criteria = CriterionIds(*contract);
  std::vector<std::string> claim_ids = Field(matrix, "claimId");
  if (std::set<std::string>(claim_ids.begin(), claim_ids.end()).size() != claim_ids.size()) {
    return Reject("/claimEvidenceMatrix", "ReleaseAudit claim identifiers must be unique");
  }
  for (const Json& entry : matrix) {
    for (const auto& criterion : StringArray(entry, "criterionIds")) {
      if (!ContainsString(criteria, criterion)) return Reject(At(body, "claimEvidenceMatrix", entry, "criterionIds"), "ReleaseAudit claim matrix invents contract criteria");
    }
  }
  if (decision == "remediate") {
    ScopedWorkOrderRules rules{"Release remediation defect", "failedCriterionIds", criteria, contract->value("permissions", Json()),
                               EnvelopeAuthorization(snapshot, envelope), {}, false, !IsReportOrPlan(run.requested_mode),
                               "/remediationDefect"};
    rules.eligible_source_refs.insert(quality_ref);
    rules.eligible_source_refs.insert(results.begin(), results.end());
    for (const auto& ref : snapshot.AllRefs("Evidence")) rules.eligible_source_refs.insert(ref);
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(body.value("remediationDefect", Json()), rules));
  }
  if (decision == "release") {
    for (const auto& criterion : criteria) {
      bool supported = std::any_of(matrix.begin(), matrix.end(), [&](const Json& e) {
        return e.value("status", "") == "supported" &&
               (run.requested_mode == "report_only" || e.value("basis", "") == "direct") &&
               ContainsString(StringArray(e, "criterionIds"), criterion);
      });
      if (!supported) return Reject("/claimEvidenceMatrix", "Released claim matrix must support every TaskContract criterion");
    }
  }
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

}  // namespace telic::controller::rules
