// The schema word of each closed field of the artifact views
// (artifact_views.h): the one place each is written.
#include "controller/artifact_views.h"

namespace telic::controller {

std::string_view Name(ChangeType value) {
  switch (value) {
    case ChangeType::kCreated: return "created";
    case ChangeType::kModified: return "modified";
    case ChangeType::kDeleted: return "deleted";
  }
  return "";
}

std::string_view Name(CheckStatus value) {
  switch (value) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kUnverified: return "unverified";
    case CheckStatus::kNotApplicable: return "not_applicable";
  }
  return "";
}

std::string_view Name(VerificationStatus value) {
  switch (value) {
    case VerificationStatus::kPass: return "pass";
    case VerificationStatus::kFail: return "fail";
    case VerificationStatus::kUnverified: return "unverified";
    case VerificationStatus::kUnavailable: return "unavailable";
  }
  return "";
}

std::string_view Name(CriterionStage value) {
  switch (value) {
    case CriterionStage::kDiagnosis: return "diagnosis";
    case CriterionStage::kCompletion: return "completion";
  }
  return "";
}

std::string_view Name(QualityDecision value) {
  switch (value) {
    case QualityDecision::kPass: return "pass";
    case QualityDecision::kProceedToFix: return "proceed_to_fix";
    case QualityDecision::kRemediate: return "remediate";
    case QualityDecision::kBlock: return "block";
    case QualityDecision::kPartial: return "partial";
  }
  return "";
}

std::string_view Name(AuditDecision value) {
  switch (value) {
    case AuditDecision::kRelease: return "release";
    case AuditDecision::kRemediate: return "remediate";
    case AuditDecision::kPartial: return "partial";
    case AuditDecision::kBlock: return "block";
  }
  return "";
}

std::string_view Name(PromptDecision value) {
  switch (value) {
    case PromptDecision::kPass: return "pass";
    case PromptDecision::kRevise: return "revise";
    case PromptDecision::kBlock: return "block";
  }
  return "";
}

std::string_view Name(FindingSeverity value) {
  switch (value) {
    case FindingSeverity::kInfo: return "info";
    case FindingSeverity::kWarning: return "warning";
    case FindingSeverity::kBlocking: return "blocking";
  }
  return "";
}

std::string_view Name(ClaimBasis value) {
  switch (value) {
    case ClaimBasis::kDirect: return "direct";
    case ClaimBasis::kUserReported: return "user_reported";
  }
  return "";
}

std::string_view Name(ClaimSupport value) {
  switch (value) {
    case ClaimSupport::kSupported: return "supported";
    case ClaimSupport::kUnsupported: return "unsupported";
    case ClaimSupport::kContradicted: return "contradicted";
    case ClaimSupport::kUnverified: return "unverified";
  }
  return "";
}

std::string_view Name(ClaimStatus value) {
  switch (value) {
    case ClaimStatus::kObserved: return "observed";
    case ClaimStatus::kInferred: return "inferred";
    case ClaimStatus::kUserReported: return "user_reported";
    case ClaimStatus::kUnverified: return "unverified";
  }
  return "";
}

std::string_view Name(TerminalStatus value) {
  switch (value) {
    case TerminalStatus::kCompleted: return "completed";
    case TerminalStatus::kPartial: return "partial";
    case TerminalStatus::kBlocked: return "blocked";
    case TerminalStatus::kCancelled: return "cancelled";
    case TerminalStatus::kFailedVerification: return "failed_verification";
  }
  return "";
}

std::string_view Name(Provenance value) {
  switch (value) {
    case Provenance::kUser: return "user";
    case Provenance::kRepository: return "repository";
    case Provenance::kRuntime: return "runtime";
    case Provenance::kBrowser: return "browser";
    case Provenance::kTool: return "tool";
  }
  return "";
}

std::string_view Name(EvidenceKind value) {
  switch (value) {
    case EvidenceKind::kRepository: return "repository";
    case EvidenceKind::kRuntime: return "runtime";
    case EvidenceKind::kBrowser: return "browser";
    case EvidenceKind::kTest: return "test";
    case EvidenceKind::kDiff: return "diff";
    case EvidenceKind::kToolOutput: return "tool_output";
    case EvidenceKind::kLog: return "log";
    case EvidenceKind::kUserConfirmation: return "user_confirmation";
  }
  return "";
}

std::string_view Name(PlanValidation value) {
  switch (value) {
    case PlanValidation::kPending: return "pending";
    case PlanValidation::kValid: return "valid";
    case PlanValidation::kInvalid: return "invalid";
  }
  return "";
}

std::string_view Name(ExecutionMode value) {
  switch (value) {
    case ExecutionMode::kSerial: return "serial";
  }
  return "";
}

std::string_view Name(Compliance value) {
  switch (value) {
    case Compliance::kPass: return "pass";
    case Compliance::kFail: return "fail";
  }
  return "";
}

std::string_view Name(DigestStatus value) {
  switch (value) {
    case DigestStatus::kVerified: return "verified";
    case DigestStatus::kFailed: return "failed";
  }
  return "";
}

}  // namespace telic::controller
