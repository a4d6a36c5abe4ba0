// Typed views of the artifact bodies the acceptance rules read
// (PROTOCOL §15): each is built once from a body, its closed fields parsed to enums,
// its lists to vectors in body order (so element i of a view list is
// element i of the body's array, and its JSON pointer is PointerAt(key, i)).
//
// Contract: building a view from a schema-valid body cannot fail; from any
// other body it returns kInvalidArgument with one issue at the JSON pointer
// of the first member that is missing or of the wrong type, never an
// exception. A view copies what it reads and does not point into the body,
// except the `const Json*` members named below, which point into the body
// and live as long as it does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "domain/vocabulary.h"

namespace telic::controller {

// ------------------------------------------------------------ closed fields

using ActionStatus = domain::ActionStatus;  // WorkAction.status
using WorkStatus = domain::WorkStatus;      // WorkResult.status
enum class ChangeType : uint8_t { kCreated, kModified, kDeleted };                      // FileChange.changeType
using TestStatus = domain::TestStatus;      // TestResult.status
enum class CheckStatus : uint8_t { kPass, kFail, kUnverified, kNotApplicable };         // CheckStatus
enum class VerificationStatus : uint8_t { kPass, kFail, kUnverified, kUnavailable };    // VerificationResult.status
enum class CriterionStage : uint8_t { kDiagnosis, kCompletion };                        // CriterionStage
enum class QualityDecision : uint8_t { kPass, kProceedToFix, kRemediate, kBlock, kPartial };  // QualityReview
enum class AuditDecision : uint8_t { kRelease, kRemediate, kPartial, kBlock };          // ReleaseAudit
enum class PromptDecision : uint8_t { kPass, kRevise, kBlock };                         // PromptReview
enum class FindingSeverity : uint8_t { kInfo, kWarning, kBlocking };                    // Finding.severity
enum class ClaimBasis : uint8_t { kDirect, kUserReported };                             // ClaimEvidenceEntry.basis
enum class ClaimSupport : uint8_t { kSupported, kUnsupported, kContradicted, kUnverified };  // ClaimEvidenceEntry.status
enum class ClaimStatus : uint8_t { kObserved, kInferred, kUserReported, kUnverified };  // EvidenceClaim.status
enum class TerminalStatus : uint8_t { kCompleted, kPartial, kBlocked, kCancelled, kFailedVerification };
enum class Provenance : uint8_t { kUser, kRepository, kRuntime, kBrowser, kTool };  // GroundedFact.provenance
enum class EvidenceKind : uint8_t {  // Evidence.kind
  kRepository, kRuntime, kBrowser, kTest, kDiff, kToolOutput, kLog, kUserConfirmation
};
enum class PlanValidation : uint8_t { kPending, kValid, kInvalid };  // WorkPlan.planValidation
enum class ExecutionMode : uint8_t { kSerial };                       // WorkPlan.executionMode
enum class Compliance : uint8_t { kPass, kFail };  // ReleaseAudit.modeCompliance
enum class DigestStatus : uint8_t { kVerified, kFailed };  // ReceiptAudit.digestStatus

// The schema word of each value (the one place each is written).
std::string_view Name(ChangeType value);
std::string_view Name(CheckStatus value);
std::string_view Name(VerificationStatus value);
std::string_view Name(CriterionStage value);
std::string_view Name(QualityDecision value);
std::string_view Name(AuditDecision value);
std::string_view Name(PromptDecision value);
std::string_view Name(FindingSeverity value);
std::string_view Name(ClaimBasis value);
std::string_view Name(ClaimSupport value);
std::string_view Name(ClaimStatus value);
std::string_view Name(TerminalStatus value);
std::string_view Name(Provenance value);
std::string_view Name(EvidenceKind value);
std::string_view Name(PlanValidation value);
std::string_view Name(ExecutionMode value);
std::string_view Name(Compliance value);
std::string_view Name(DigestStatus value);

// ------------------------------------------------------------ ProblemFrame, Evidence

struct GroundedFactView {
  Provenance provenance = Provenance::kUser;
  std::string source_ref;
};

struct ProblemFrameView {
  std::string original_request_ref;
  domain::Mode intent_mode = domain::Mode::kReportOnly;
  std::vector<GroundedFactView> known_facts;
  std::vector<std::string> inference_source_refs;  // every inference's sourceRefs, in body order
  std::vector<std::string> applicable_rule_refs;
  size_t draft_criteria = 0;  // how many draft acceptance criteria
  bool clarification_required = false;
  const Json* body = nullptr;  // the frame, for whole-member comparisons
};

struct EvidenceView {
  EvidenceKind kind = EvidenceKind::kRepository;
};

// ------------------------------------------------------------ TaskContract

struct CriterionView {
  std::string id;
  CriterionStage stage = CriterionStage::kCompletion;
};

struct VerificationRequirementView {
  std::string id;
  CriterionStage stage = CriterionStage::kCompletion;
  bool required = false;
  std::string capability;
};

// The members of a TaskContract the execution and review rules read.
struct TaskContractView {
  int64_t version = 0;
  std::string original_request_ref;
  std::string problem_frame_ref;
  domain::Mode intent_mode = domain::Mode::kReportOnly;
  std::vector<std::string> context_refs;
  std::vector<CriterionView> acceptance_criteria;
  std::vector<VerificationRequirementView> verification_requirements;
  std::vector<std::string> rule_refs;
  const Json* permissions = nullptr;  // into the body

  // The criterion ids, of `stage` when given, in body order.
  std::vector<std::string> CriterionIds(std::optional<CriterionStage> stage = std::nullopt) const;
};

// ------------------------------------------------------------ PromptReview

struct ContractCoverageView {
  std::string source_ref;
  std::vector<std::string> contract_fields;
};

struct FindingView {
  FindingSeverity severity = FindingSeverity::kInfo;
  bool has_required_correction = false;  // requiredCorrection is text, not null
  std::vector<std::string> preserve_fields;
  std::vector<std::string> correction_fields;
};

struct PromptReviewView {
  std::string target_ref;
  int64_t revision_number = 0;
  std::vector<ContractCoverageView> coverage;
  std::vector<FindingView> findings;
  PromptDecision decision = PromptDecision::kPass;
};

// ------------------------------------------------------------ WorkPlan

struct WorkNodeView {
  std::string id;
  std::vector<std::string> depends_on;
  std::vector<std::string> input_refs;
  std::vector<std::string> allowed_tools;
  std::vector<std::string> required_capabilities;
  std::vector<std::string> acceptance_criteria;
  int64_t maximum_tool_calls = 0;  // budgets
  int64_t maximum_children = 0;    // budgets
  const Json* permissions = nullptr;  // the node's permission set, into the node
};

struct WorkPlanView {
  std::string task_contract_ref;
  ExecutionMode execution_mode = ExecutionMode::kSerial;
  PlanValidation plan_validation = PlanValidation::kPending;
  int64_t maximum_tool_calls = 0;        // globalBudgets
  int64_t maximum_parallel_workers = 0;  // globalBudgets
  int64_t maximum_subagent_depth = 0;    // globalBudgets
  std::vector<WorkNodeView> nodes;
};

// ------------------------------------------------------------ WorkResult

struct WorkActionView {
  std::string capability;
  std::string target;
  bool mutating = false;
  ActionStatus status = ActionStatus::kSkipped;
  std::vector<std::string> evidence_refs;
  const Json* body = nullptr;  // the action object, into the body

  bool Completed() const { return status == ActionStatus::kCompleted; }
  // Completed or failed: the action ran.
  bool Attempted() const { return status == ActionStatus::kCompleted || status == ActionStatus::kFailed; }
};

struct FileChangeView {
  std::string path;
  ChangeType change_type = ChangeType::kModified;
  std::string diff_ref;
};

struct CoverageView {  // AcceptanceCoverage: a WorkResult's coverage, a QualityReview's results
  std::string criterion_id;
  CheckStatus status = CheckStatus::kUnverified;
  std::vector<std::string> evidence_refs;
};

struct WorkResultView {
  std::string work_plan_ref;
  std::string node_id;
  WorkStatus status = WorkStatus::kFailed;
  std::vector<WorkActionView> actions;
  std::vector<FileChangeView> files_changed;
  std::vector<std::string> tool_event_refs;
  std::vector<TestStatus> test_results;  // the status of each test result
  std::vector<CoverageView> acceptance_coverage;

  // The index of the last completed mutating action, or -1.
  int64_t LastCompletedMutation() const;
};

// ------------------------------------------------------------ QualityReview

struct VerificationResultView {
  std::string requirement_id;
  std::string capability;
  VerificationStatus status = VerificationStatus::kUnverified;
  std::vector<std::string> evidence_refs;
};

struct QualityReviewView {
  std::string task_contract_ref;
  std::vector<std::string> work_plan_refs;
  std::vector<std::string> work_result_refs;
  std::vector<CoverageView> acceptance_results;
  std::vector<std::string> rule_compliance_subjects;  // the string subjectRefs (null ones skipped)
  std::vector<VerificationResultView> verification_results;
  int64_t remaining_remediations = 0;
  QualityDecision decision = QualityDecision::kBlock;
  bool has_diagnosis_gate = false;                 // diagnosisGate is an object
  std::vector<std::string> direct_evidence_refs;   // of the diagnosis gate
  const Json* correction_work_order = nullptr;     // the gate's, when an object; into the body
  const Json* remediation_work_order = nullptr;    // into the body (null, or an object)
};

// ------------------------------------------------------------ ReleaseAudit

struct ClaimEvidenceView {
  std::string claim_id;
  std::string claim;
  std::vector<std::string> criterion_ids;
  ClaimBasis basis = ClaimBasis::kDirect;
  ClaimSupport status = ClaimSupport::kUnverified;
  std::vector<std::string> evidence_refs;
};

struct ReleaseAuditView {
  std::string original_request_ref;
  std::string task_contract_ref;
  std::string quality_review_ref;
  std::vector<std::string> work_plan_refs;
  std::vector<std::string> work_result_refs;
  std::vector<std::string> user_fidelity_subjects;  // the string subjectRefs (null ones skipped)
  Compliance mode_compliance = Compliance::kFail;
  std::vector<ClaimEvidenceView> claim_evidence_matrix;
  int64_t remaining_remediations = 0;
  AuditDecision decision = AuditDecision::kBlock;
  const Json* remediation_defect = nullptr;    // into the body (null, or an object)
  std::optional<std::string> user_report_ref;  // absent when null
};

struct ReceiptAuditView {
  std::string controlling_review_ref;
  DigestStatus digest_status = DigestStatus::kFailed;
};

// ------------------------------------------------------------ UserReport

struct EvidenceClaimView {
  std::string id;
  std::string text;
  ClaimStatus status = ClaimStatus::kUnverified;
  std::vector<std::string> evidence_refs;
};

struct UserReportView {
  TerminalStatus terminal_status = TerminalStatus::kBlocked;
  std::vector<EvidenceClaimView> completion_claims;
  std::vector<std::string> finding_refs;
  std::vector<std::string> change_refs;
  std::vector<std::string> verification_refs;
  bool permissions_honored = false;
  std::string trace_ref;
};

// ------------------------------------------------------------ builders

[[nodiscard]] Result<ProblemFrameView> ViewProblemFrame(const Json& body);
[[nodiscard]] Result<EvidenceView> ViewEvidence(const Json& body);
[[nodiscard]] Result<TaskContractView> ViewTaskContract(const Json& body);
[[nodiscard]] Result<PromptReviewView> ViewPromptReview(const Json& body);
// A WorkPlan node; `pointer` is where it sits (issues are under it).
[[nodiscard]] Result<WorkNodeView> ViewWorkNode(const Json& node, const std::string& pointer = "");
[[nodiscard]] Result<WorkPlanView> ViewWorkPlan(const Json& body);
[[nodiscard]] Result<WorkResultView> ViewWorkResult(const Json& body);
[[nodiscard]] Result<QualityReviewView> ViewQualityReview(const Json& body);
[[nodiscard]] Result<ReleaseAuditView> ViewReleaseAudit(const Json& body);
[[nodiscard]] Result<ReceiptAuditView> ViewReceiptAudit(const Json& body);
[[nodiscard]] Result<UserReportView> ViewUserReport(const Json& body);

}  // namespace telic::controller
