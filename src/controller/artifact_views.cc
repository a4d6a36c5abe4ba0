#include "controller/artifact_views.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace telic::controller {

// ------------------------------------------------------------ reading

namespace {

std::unexpected<Error> Malformed(const std::string& pointer, std::string_view reason) {
  std::string message = fmt::format("{}: {}", pointer.empty() ? "/" : pointer, reason);
  Issue issue{pointer, "artifact_view", std::string(reason)};
  return Fail(ErrorCode::kInvalidArgument, std::move(message), {std::move(issue)});
}

// One JSON object being read, with the pointer of its members.
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string pointer) : object_(object), pointer_(std::move(pointer)) {}

  static Result<ObjectReader> Of(const Json& value, std::string pointer) {
    if (!value.is_object()) return Malformed(pointer, "must be an object");
    return ObjectReader(value, std::move(pointer));
  }

  std::string At(std::string_view key) const { return pointer_ + "/" + std::string(key); }

  Result<const Json*> Member(std::string_view key) const {
    auto it = object_.find(key);
    if (it == object_.end()) return Malformed(At(key), "is required");
    return &*it;
  }

  Result<std::string> String(std::string_view key) const {
    TELIC_ASSIGN_OR_RETURN(const Json* value, Member(key));
    if (!value->is_string()) return Malformed(At(key), "must be a string");
    return value->get<std::string>();
  }

  // A string, or nullopt for null.
  Result<std::optional<std::string>> NullableString(std::string_view key) const {
    TELIC_ASSIGN_OR_RETURN(const Json* value, Member(key));
    if (value->is_null()) return std::optional<std::string>();
    if (!value->is_string()) return Malformed(At(key), "must be a string or null");
    return std::optional<std::string>(value->get<std::string>());
  }

  Result<bool> Bool(std::string_view key) const {
    TELIC_ASSIGN_OR_RETURN(const Json* value, Member(key));
    if (!value->is_boolean()) return Malformed(At(key), "must be a boolean");
    return value->get<bool>();
  }

  // An integer; an integral float (1.0) counts, as in schema validation.
  Result<int64_t> Integer(std::string_view key) const {
    TELIC_ASSIGN_OR_RETURN(const Json* value, Member(key));
    if (value->is_number_integer()) return value->get<int64_t>();
    constexpr double kSafe = 9007199254740991.0;  // 2^53 - 1
    double d = value->is_number_float() ? value->get<double>() : 0.5;
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > kSafe) return Malformed(At(key), "must be an integer");
    return static_cast<int64_t>(d);
  }

  // The mode word at `key` (domain vocabulary).
  Result<domain::Mode> Mode(std::string_view key) const {
    TELIC_ASSIGN_OR_RETURN(std::string text, String(key));
    return domain::ParseMode(text, At(key));
  }

  Result<std::vector<std::string>> Strings(std::string_view key) const {
    TELIC_ASSIGN_OR_RETURN(const Json* value, Member(key));
    if (!value->is_array()) return Malformed(At(key), "must be an array");
    std::vector<std::string> out;
    out.reserve(value->size());
    for (size_t i = 0; i < value->size(); ++i) {
      if (!(*value)[i].is_string()) return Malformed(At(key) + "/" + std::to_string(i), "must be a string");
      out.push_back((*value)[i].get<std::string>());
    }
    return out;
  }

  // The string subjectRefs of an array of ReviewChecks, null ones skipped.
  Result<std::vector<std::string>> SubjectRefs(std::string_view key) const {
    std::vector<std::string> out;
    TELIC_RETURN_IF_ERROR(Each(key, [&](const ObjectReader& check) { return check.AppendSubjectRef(out); }));
    return out;
  }

  // Appends this ReviewCheck's subjectRef to `out` unless it is null.
  Status AppendSubjectRef(std::vector<std::string>& out) const {
    TELIC_ASSIGN_OR_RETURN(std::optional<std::string> subject, NullableString("subjectRef"));
    if (subject) out.push_back(std::move(*subject));
    return Ok();
  }

  // Calls `read` with each element of the array `key`, each an object.
  template <typename Fn>
  Status Each(std::string_view key, Fn&& read) const {
    TELIC_ASSIGN_OR_RETURN(const Json* value, Member(key));
    if (!value->is_array()) return Malformed(At(key), "must be an array");
    for (size_t i = 0; i < value->size(); ++i) {
      TELIC_ASSIGN_OR_RETURN(ObjectReader element, Of((*value)[i], At(key) + "/" + std::to_string(i)));
      TELIC_RETURN_IF_ERROR(read(element));
    }
    return Ok();
  }

  // The enum value whose Name is the string at `key`; `all` lists the values.
  template <typename E, size_t N>
  Result<E> Enum(std::string_view key, const std::array<E, N>& all) const {
    TELIC_ASSIGN_OR_RETURN(std::string text, String(key));
    for (E value : all) {
      if (Name(value) == text) return value;
    }
    std::vector<std::string_view> names;
    for (E value : all) names.push_back(Name(value));
    return Malformed(At(key), fmt::format("must be one of: {}", fmt::join(names, ", ")));
  }

  const Json& object() const { return object_; }

 private:
  const Json& object_;
  std::string pointer_;
};

constexpr std::array kActionStatuses = {ActionStatus::kCompleted, ActionStatus::kFailed, ActionStatus::kDenied,
                                        ActionStatus::kSkipped};
constexpr std::array kWorkStatuses = {WorkStatus::kCompleted, WorkStatus::kPartial, WorkStatus::kBlocked,
                                      WorkStatus::kFailed};
constexpr std::array kChangeTypes = {ChangeType::kCreated, ChangeType::kModified, ChangeType::kDeleted};
constexpr std::array kTestStatuses = {TestStatus::kPassed, TestStatus::kFailed, TestStatus::kSkipped,
                                      TestStatus::kUnavailable};
constexpr std::array kCheckStatuses = {CheckStatus::kPass, CheckStatus::kFail, CheckStatus::kUnverified,
                                       CheckStatus::kNotApplicable};
constexpr std::array kVerificationStatuses = {VerificationStatus::kPass, VerificationStatus::kFail,
                                              VerificationStatus::kUnverified, VerificationStatus::kUnavailable};
constexpr std::array kCriterionStages = {CriterionStage::kDiagnosis, CriterionStage::kCompletion};
constexpr std::array kQualityDecisions = {QualityDecision::kPass, QualityDecision::kProceedToFix,
                                          QualityDecision::kRemediate, QualityDecision::kBlock, QualityDecision::kPartial};
constexpr std::array kAuditDecisions = {AuditDecision::kRelease, AuditDecision::kRemediate, AuditDecision::kPartial,
                                        AuditDecision::kBlock};
constexpr std::array kPromptDecisions = {PromptDecision::kPass, PromptDecision::kRevise, PromptDecision::kBlock};
constexpr std::array kSeverities = {FindingSeverity::kInfo, FindingSeverity::kWarning, FindingSeverity::kBlocking};
constexpr std::array kClaimBases = {ClaimBasis::kDirect, ClaimBasis::kUserReported};
constexpr std::array kClaimSupports = {ClaimSupport::kSupported, ClaimSupport::kUnsupported,
                                       ClaimSupport::kContradicted, ClaimSupport::kUnverified};
constexpr std::array kClaimStatuses = {ClaimStatus::kObserved, ClaimStatus::kInferred, ClaimStatus::kUserReported,
                                       ClaimStatus::kUnverified};
constexpr std::array kTerminalStatuses = {TerminalStatus::kCompleted, TerminalStatus::kPartial,
                                          TerminalStatus::kBlocked, TerminalStatus::kCancelled,
                                          TerminalStatus::kFailedVerification};
constexpr std::array kProvenances = {Provenance::kUser, Provenance::kRepository, Provenance::kRuntime,
                                     Provenance::kBrowser, Provenance::kTool};
constexpr std::array kEvidenceKinds = {EvidenceKind::kRepository, EvidenceKind::kRuntime,    EvidenceKind::kBrowser,
                                       EvidenceKind::kTest,       EvidenceKind::kDiff,       EvidenceKind::kToolOutput,
                                       EvidenceKind::kLog,        EvidenceKind::kUserConfirmation};
constexpr std::array kPlanValidations = {PlanValidation::kPending, PlanValidation::kValid, PlanValidation::kInvalid};
constexpr std::array kExecutionModes = {ExecutionMode::kSerial};
constexpr std::array kCompliances = {Compliance::kPass, Compliance::kFail};
constexpr std::array kDigestStatuses = {DigestStatus::kVerified, DigestStatus::kFailed};

Result<GroundedFactView> ReadFact(const ObjectReader& r) {
  GroundedFactView view;
  TELIC_ASSIGN_OR_RETURN(view.provenance, r.Enum("provenance", kProvenances));
  TELIC_ASSIGN_OR_RETURN(view.source_ref, r.String("sourceRef"));
  return view;
}

Result<std::vector<std::string>> ReadSourceRefs(const ObjectReader& r) { return r.Strings("sourceRefs"); }

// The frame's clarification.required.
Result<bool> ClarificationRequired(const ObjectReader& frame) {
  TELIC_ASSIGN_OR_RETURN(const Json* clarification, frame.Member("clarification"));
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(*clarification, frame.At("clarification")));
  return r.Bool("required");
}

Result<CriterionView> ReadCriterion(const ObjectReader& r) {
  CriterionView view;
  TELIC_ASSIGN_OR_RETURN(view.id, r.String("id"));
  TELIC_ASSIGN_OR_RETURN(view.stage, r.Enum("stage", kCriterionStages));
  return view;
}

Result<VerificationRequirementView> ReadRequirement(const ObjectReader& r) {
  VerificationRequirementView view;
  TELIC_ASSIGN_OR_RETURN(view.id, r.String("id"));
  TELIC_ASSIGN_OR_RETURN(view.stage, r.Enum("stage", kCriterionStages));
  TELIC_ASSIGN_OR_RETURN(view.required, r.Bool("required"));
  TELIC_ASSIGN_OR_RETURN(view.capability, r.String("capability"));
  return view;
}

Result<ContractCoverageView> ReadContractCoverage(const ObjectReader& r) {
  ContractCoverageView view;
  TELIC_ASSIGN_OR_RETURN(view.source_ref, r.String("sourceRef"));
  TELIC_ASSIGN_OR_RETURN(view.contract_fields, r.Strings("contractFields"));
  return view;
}

Result<EvidenceClaimView> ReadEvidenceClaim(const ObjectReader& r) {
  EvidenceClaimView view;
  TELIC_ASSIGN_OR_RETURN(view.id, r.String("id"));
  TELIC_ASSIGN_OR_RETURN(view.text, r.String("text"));
  TELIC_ASSIGN_OR_RETURN(view.status, r.Enum("status", kClaimStatuses));
  TELIC_ASSIGN_OR_RETURN(view.evidence_refs, r.Strings("evidenceRefs"));
  return view;
}

Result<TestStatus> ReadTestStatus(const ObjectReader& r) { return r.Enum("status", kTestStatuses); }

Result<CoverageView> ReadCoverage(const ObjectReader& r) {
  CoverageView view;
  TELIC_ASSIGN_OR_RETURN(view.criterion_id, r.String("criterionId"));
  TELIC_ASSIGN_OR_RETURN(view.status, r.Enum("status", kCheckStatuses));
  TELIC_ASSIGN_OR_RETURN(view.evidence_refs, r.Strings("evidenceRefs"));
  return view;
}

Result<WorkActionView> ReadAction(const ObjectReader& r) {
  WorkActionView view;
  TELIC_ASSIGN_OR_RETURN(view.capability, r.String("capability"));
  TELIC_ASSIGN_OR_RETURN(view.target, r.String("target"));
  TELIC_ASSIGN_OR_RETURN(view.mutating, r.Bool("mutating"));
  TELIC_ASSIGN_OR_RETURN(view.status, r.Enum("status", kActionStatuses));
  TELIC_ASSIGN_OR_RETURN(view.evidence_refs, r.Strings("evidenceRefs"));
  view.body = &r.object();
  return view;
}

Result<FileChangeView> ReadFileChange(const ObjectReader& r) {
  FileChangeView view;
  TELIC_ASSIGN_OR_RETURN(view.path, r.String("path"));
  TELIC_ASSIGN_OR_RETURN(view.change_type, r.Enum("changeType", kChangeTypes));
  TELIC_ASSIGN_OR_RETURN(view.diff_ref, r.String("diffRef"));
  return view;
}

Result<VerificationResultView> ReadVerificationResult(const ObjectReader& r) {
  VerificationResultView view;
  TELIC_ASSIGN_OR_RETURN(view.requirement_id, r.String("requirementId"));
  TELIC_ASSIGN_OR_RETURN(view.capability, r.String("capability"));
  TELIC_ASSIGN_OR_RETURN(view.status, r.Enum("status", kVerificationStatuses));
  TELIC_ASSIGN_OR_RETURN(view.evidence_refs, r.Strings("evidenceRefs"));
  return view;
}

Result<ClaimEvidenceView> ReadClaimEvidence(const ObjectReader& r) {
  ClaimEvidenceView view;
  TELIC_ASSIGN_OR_RETURN(view.claim_id, r.String("claimId"));
  TELIC_ASSIGN_OR_RETURN(view.claim, r.String("claim"));
  TELIC_ASSIGN_OR_RETURN(view.criterion_ids, r.Strings("criterionIds"));
  TELIC_ASSIGN_OR_RETURN(view.basis, r.Enum("basis", kClaimBases));
  TELIC_ASSIGN_OR_RETURN(view.status, r.Enum("status", kClaimSupports));
  TELIC_ASSIGN_OR_RETURN(view.evidence_refs, r.Strings("evidenceRefs"));
  return view;
}

Result<FindingView> ReadFinding(const ObjectReader& r) {
  FindingView view;
  TELIC_ASSIGN_OR_RETURN(view.severity, r.Enum("severity", kSeverities));
  TELIC_ASSIGN_OR_RETURN(std::optional<std::string> correction, r.NullableString("requiredCorrection"));
  view.has_required_correction = correction.has_value();
  TELIC_ASSIGN_OR_RETURN(view.preserve_fields, r.Strings("preserveFields"));
  TELIC_ASSIGN_OR_RETURN(view.correction_fields, r.Strings("correctionFields"));
  return view;
}

// Appends each element of the array `key`, read by `read`, to `out`.
template <typename T, typename Fn>
Status ReadList(const ObjectReader& r, std::string_view key, std::vector<T>& out, Fn&& read) {
  return r.Each(key, [&](const ObjectReader& element) -> Status {
    auto item = read(element);
    if (!item) return std::unexpected(item.error());
    out.push_back(std::move(*item));
    return Ok();
  });
}

// An object or null member, as a pointer into the body (nullptr for null).
Result<const Json*> NullableObject(const ObjectReader& r, std::string_view key) {
  TELIC_ASSIGN_OR_RETURN(const Json* value, r.Member(key));
  if (value->is_null()) return static_cast<const Json*>(nullptr);
  if (!value->is_object()) return Malformed(r.At(key), "must be an object or null");
  return value;
}

Result<WorkNodeView> ReadWorkNode(const ObjectReader& r) {
  WorkNodeView view;
  TELIC_ASSIGN_OR_RETURN(view.id, r.String("id"));
  TELIC_ASSIGN_OR_RETURN(view.depends_on, r.Strings("dependsOn"));
  TELIC_ASSIGN_OR_RETURN(view.input_refs, r.Strings("inputRefs"));
  TELIC_ASSIGN_OR_RETURN(view.allowed_tools, r.Strings("allowedTools"));
  TELIC_ASSIGN_OR_RETURN(view.required_capabilities, r.Strings("requiredCapabilities"));
  TELIC_ASSIGN_OR_RETURN(view.acceptance_criteria, r.Strings("acceptanceCriteria"));
  TELIC_ASSIGN_OR_RETURN(view.permissions, r.Member("permissions"));
  TELIC_ASSIGN_OR_RETURN(const Json* budgets, r.Member("budgets"));
  TELIC_ASSIGN_OR_RETURN(ObjectReader b, ObjectReader::Of(*budgets, r.At("budgets")));
  TELIC_ASSIGN_OR_RETURN(view.maximum_tool_calls, b.Integer("maximumToolCalls"));
  TELIC_ASSIGN_OR_RETURN(view.maximum_children, b.Integer("maximumChildren"));
  return view;
}

Status ReadDiagnosisGate(const ObjectReader& review, QualityReviewView& view) {
  TELIC_ASSIGN_OR_RETURN(const Json* gate, NullableObject(review, "diagnosisGate"));
  if (!gate) return Ok();
  ObjectReader r(*gate, review.At("diagnosisGate"));
  view.has_diagnosis_gate = true;
  TELIC_ASSIGN_OR_RETURN(view.direct_evidence_refs, r.Strings("directEvidenceRefs"));
  TELIC_ASSIGN_OR_RETURN(view.correction_work_order, NullableObject(r, "correctionWorkOrder"));
  return Ok();
}

}  // namespace

// ------------------------------------------------------------ views

std::vector<std::string> TaskContractView::CriterionIds(std::optional<CriterionStage> stage) const {
  std::vector<std::string> out;
  for (const auto& criterion : acceptance_criteria) {
    if (!stage || criterion.stage == *stage) out.push_back(criterion.id);
  }
  return out;
}

int64_t WorkResultView::LastCompletedMutation() const {
  for (int64_t i = static_cast<int64_t>(actions.size()) - 1; i >= 0; --i) {
    const WorkActionView& action = actions[static_cast<size_t>(i)];
    if (action.Completed() && action.mutating) return i;
  }
  return -1;
}

Result<ProblemFrameView> ViewProblemFrame(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  ProblemFrameView view;
  TELIC_ASSIGN_OR_RETURN(view.original_request_ref, r.String("originalRequestRef"));
  TELIC_ASSIGN_OR_RETURN(view.intent_mode, r.Mode("intentMode"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "knownFacts", view.known_facts, ReadFact));
  std::vector<std::vector<std::string>> inference_refs;
  TELIC_RETURN_IF_ERROR(ReadList(r, "inferences", inference_refs, ReadSourceRefs));
  for (auto& refs : inference_refs) view.inference_source_refs.insert(view.inference_source_refs.end(), refs.begin(), refs.end());
  TELIC_ASSIGN_OR_RETURN(view.applicable_rule_refs, r.Strings("applicableRuleRefs"));
  TELIC_ASSIGN_OR_RETURN(const Json* drafts, r.Member("draftAcceptanceCriteria"));
  if (!drafts->is_array()) return Malformed(r.At("draftAcceptanceCriteria"), "must be an array");
  view.draft_criteria = drafts->size();
  TELIC_ASSIGN_OR_RETURN(view.clarification_required, ClarificationRequired(r));
  view.body = &body;
  return view;
}

Result<EvidenceView> ViewEvidence(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  EvidenceView view;
  TELIC_ASSIGN_OR_RETURN(view.kind, r.Enum("kind", kEvidenceKinds));
  return view;
}

Result<TaskContractView> ViewTaskContract(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  TaskContractView view;
  TELIC_ASSIGN_OR_RETURN(view.version, r.Integer("version"));
  TELIC_ASSIGN_OR_RETURN(view.original_request_ref, r.String("originalRequestRef"));
  TELIC_ASSIGN_OR_RETURN(view.problem_frame_ref, r.String("problemFrameRef"));
  TELIC_ASSIGN_OR_RETURN(view.intent_mode, r.Mode("intentMode"));
  TELIC_ASSIGN_OR_RETURN(view.context_refs, r.Strings("contextRefs"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "acceptanceCriteria", view.acceptance_criteria, ReadCriterion));
  TELIC_RETURN_IF_ERROR(ReadList(r, "verificationRequirements", view.verification_requirements, ReadRequirement));
  TELIC_ASSIGN_OR_RETURN(view.rule_refs, r.Strings("ruleRefs"));
  TELIC_ASSIGN_OR_RETURN(view.permissions, r.Member("permissions"));
  return view;
}

Result<PromptReviewView> ViewPromptReview(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  PromptReviewView view;
  TELIC_ASSIGN_OR_RETURN(view.target_ref, r.String("targetRef"));
  TELIC_ASSIGN_OR_RETURN(view.revision_number, r.Integer("revisionNumber"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "coverage", view.coverage, ReadContractCoverage));
  TELIC_RETURN_IF_ERROR(ReadList(r, "findings", view.findings, ReadFinding));
  TELIC_ASSIGN_OR_RETURN(view.decision, r.Enum("decision", kPromptDecisions));
  return view;
}

Result<WorkNodeView> ViewWorkNode(const Json& node, const std::string& pointer) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(node, pointer));
  return ReadWorkNode(r);
}

Result<WorkPlanView> ViewWorkPlan(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  WorkPlanView view;
  TELIC_ASSIGN_OR_RETURN(view.task_contract_ref, r.String("taskContractRef"));
  TELIC_ASSIGN_OR_RETURN(view.execution_mode, r.Enum("executionMode", kExecutionModes));
  TELIC_ASSIGN_OR_RETURN(view.plan_validation, r.Enum("planValidation", kPlanValidations));
  TELIC_ASSIGN_OR_RETURN(const Json* global, r.Member("globalBudgets"));
  TELIC_ASSIGN_OR_RETURN(ObjectReader budgets, ObjectReader::Of(*global, r.At("globalBudgets")));
  TELIC_ASSIGN_OR_RETURN(view.maximum_tool_calls, budgets.Integer("maximumToolCalls"));
  TELIC_ASSIGN_OR_RETURN(view.maximum_parallel_workers, budgets.Integer("maximumParallelWorkers"));
  TELIC_ASSIGN_OR_RETURN(view.maximum_subagent_depth, budgets.Integer("maximumSubagentDepth"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "nodes", view.nodes, ReadWorkNode));
  return view;
}

Result<WorkResultView> ViewWorkResult(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  WorkResultView view;
  TELIC_ASSIGN_OR_RETURN(view.work_plan_ref, r.String("workPlanRef"));
  TELIC_ASSIGN_OR_RETURN(view.node_id, r.String("nodeId"));
  TELIC_ASSIGN_OR_RETURN(view.status, r.Enum("status", kWorkStatuses));
  TELIC_RETURN_IF_ERROR(ReadList(r, "actions", view.actions, ReadAction));
  TELIC_RETURN_IF_ERROR(ReadList(r, "filesChanged", view.files_changed, ReadFileChange));
  TELIC_ASSIGN_OR_RETURN(view.tool_event_refs, r.Strings("toolEventRefs"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "testResults", view.test_results, ReadTestStatus));
  TELIC_RETURN_IF_ERROR(ReadList(r, "acceptanceCoverage", view.acceptance_coverage, ReadCoverage));
  return view;
}

Result<QualityReviewView> ViewQualityReview(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  QualityReviewView view;
  TELIC_ASSIGN_OR_RETURN(view.task_contract_ref, r.String("taskContractRef"));
  TELIC_ASSIGN_OR_RETURN(view.work_plan_refs, r.Strings("workPlanRefs"));
  TELIC_ASSIGN_OR_RETURN(view.work_result_refs, r.Strings("workResultRefs"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "acceptanceResults", view.acceptance_results, ReadCoverage));
  TELIC_ASSIGN_OR_RETURN(view.rule_compliance_subjects, r.SubjectRefs("ruleCompliance"));
  TELIC_RETURN_IF_ERROR(ReadList(r, "verificationResults", view.verification_results, ReadVerificationResult));
  TELIC_ASSIGN_OR_RETURN(view.remaining_remediations, r.Integer("remainingRemediations"));
  TELIC_ASSIGN_OR_RETURN(view.decision, r.Enum("decision", kQualityDecisions));
  TELIC_RETURN_IF_ERROR(ReadDiagnosisGate(r, view));
  TELIC_ASSIGN_OR_RETURN(view.remediation_work_order, NullableObject(r, "remediationWorkOrder"));
  return view;
}

Result<ReleaseAuditView> ViewReleaseAudit(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  ReleaseAuditView view;
  TELIC_ASSIGN_OR_RETURN(view.original_request_ref, r.String("originalRequestRef"));
  TELIC_ASSIGN_OR_RETURN(view.task_contract_ref, r.String("taskContractRef"));
  TELIC_ASSIGN_OR_RETURN(view.quality_review_ref, r.String("qualityReviewRef"));
  TELIC_ASSIGN_OR_RETURN(view.work_plan_refs, r.Strings("workPlanRefs"));
  TELIC_ASSIGN_OR_RETURN(view.work_result_refs, r.Strings("workResultRefs"));
  TELIC_ASSIGN_OR_RETURN(view.user_fidelity_subjects, r.SubjectRefs("userFidelity"));
  TELIC_ASSIGN_OR_RETURN(view.mode_compliance, r.Enum("modeCompliance", kCompliances));
  TELIC_RETURN_IF_ERROR(ReadList(r, "claimEvidenceMatrix", view.claim_evidence_matrix, ReadClaimEvidence));
  TELIC_ASSIGN_OR_RETURN(view.remaining_remediations, r.Integer("remainingRemediations"));
  TELIC_ASSIGN_OR_RETURN(view.decision, r.Enum("decision", kAuditDecisions));
  TELIC_ASSIGN_OR_RETURN(view.remediation_defect, NullableObject(r, "remediationDefect"));
  TELIC_ASSIGN_OR_RETURN(view.user_report_ref, r.NullableString("userReportRef"));
  return view;
}

Result<ReceiptAuditView> ViewReceiptAudit(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  ReceiptAuditView view;
  TELIC_ASSIGN_OR_RETURN(view.controlling_review_ref, r.String("controllingReviewRef"));
  TELIC_ASSIGN_OR_RETURN(view.digest_status, r.Enum("digestStatus", kDigestStatuses));
  return view;
}

Result<UserReportView> ViewUserReport(const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Of(body, ""));
  UserReportView view;
  TELIC_ASSIGN_OR_RETURN(view.terminal_status, r.Enum("terminalStatus", kTerminalStatuses));
  TELIC_RETURN_IF_ERROR(ReadList(r, "completionClaims", view.completion_claims, ReadEvidenceClaim));
  TELIC_ASSIGN_OR_RETURN(view.finding_refs, r.Strings("findingRefs"));
  TELIC_ASSIGN_OR_RETURN(view.change_refs, r.Strings("changeRefs"));
  TELIC_ASSIGN_OR_RETURN(view.verification_refs, r.Strings("verificationRefs"));
  TELIC_ASSIGN_OR_RETURN(view.permissions_honored, r.Bool("permissionsHonored"));
  TELIC_ASSIGN_OR_RETURN(view.trace_ref, r.String("traceRef"));
  return view;
}

}  // namespace telic::controller
