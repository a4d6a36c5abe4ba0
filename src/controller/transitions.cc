#include "controller/transitions.h"

#include <fmt/format.h>

#include <algorithm>

#include "controller/phases.h"

namespace telic::controller {
namespace {

using domain::ArtifactType;
using domain::Mode;
using domain::Phase;
using domain::RunStatus;
using domain::Topology;
using store::RunRecord;

std::unexpected<Error> Reject(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

RunRecord Move(const RunRecord& run, Phase phase) {
  RunRecord next = run;
  next.phase = phase;
  next.status = RunStatus::kRunning;
  next.resume_phase = std::nullopt;
  return next;
}

Transition To(const RunRecord& run, Phase phase, std::string summary) {
  return {Move(run, phase), std::move(summary), ""};
}

Transition WithHint(Transition t, std::optional<RunStatus> hint) {
  t.run.outcome_hint = std::move(hint);
  return t;
}

// A review's decision: its word (shown when it is refused) and the decision
// it names, if any (a word of no review type is refused by each caller).
struct Decision {
  std::string word;
  std::optional<domain::ReviewDecision> kind;
};

Result<Decision> DecisionOf(const Json& body) {
  if (!body.is_object() || !body.contains("decision")) return Fail(ErrorCode::kInvalidArgument, "Review artifact is missing its decision field");
  if (!body["decision"].is_string()) return Fail(ErrorCode::kInvalidArgument, "Review decision must be a string");
  std::string word = body["decision"].get<std::string>();
  std::optional<domain::ReviewDecision> kind = domain::ReviewDecisionNamed(word);
  return Decision{std::move(word), kind};
}

std::unexpected<Error> Unsupported(std::string_view review, const Decision& decision) {
  return Reject(fmt::format("Unsupported {} decision: {}", review, decision.word));
}

// pass keeps the hint, block → blocked, partial → partial.
std::optional<RunStatus> ReviewHint(const RunRecord& run, domain::ReviewDecision decision) {
  if (decision == domain::ReviewDecision::kPass) return run.outcome_hint;
  return decision == domain::ReviewDecision::kBlock ? RunStatus::kBlocked : RunStatus::kPartial;
}

Result<Transition> AfterPromptReview(const RunRecord& run, const Decision& decision) {
  if (!decision.kind) return Unsupported("PromptReview", decision);
  switch (*decision.kind) {
    case domain::ReviewDecision::kPass:
      return To(run, Phase::kAgent3Plan, "Contract review passed; work planning is next.");
    case domain::ReviewDecision::kRevise: {
      if (run.prompt_revisions_remaining == 0) {
        return WithHint(To(run, Phase::kAgent5Report, "Prompt revision budget exhausted; a final blocked report is required."),
                        RunStatus::kBlocked);
      }
      Transition t = To(run, Phase::kAgent2Revise, "One bounded task-contract revision was authorized.");
      t.run.prompt_revisions_remaining -= 1;
      t.budget_consumed = "prompt_revision";
      return t;
    }
    case domain::ReviewDecision::kBlock:
      return WithHint(To(run, Phase::kAgent5Report,
                         "Contract review found an uncorrectable hard gate; a final blocked report is required."),
                      RunStatus::kBlocked);
    default:
      return Unsupported("PromptReview", decision);
  }
}

Result<Transition> AfterMicroReview(const RunRecord& run, const Decision& decision) {
  if (!decision.kind) return Unsupported("QualityReview", decision);
  switch (*decision.kind) {
    case domain::ReviewDecision::kProceedToFix:
      return Reject("Micro topology does not support proceed_to_fix");
    case domain::ReviewDecision::kPass:
    case domain::ReviewDecision::kBlock:
      return WithHint(
          To(run, Phase::kAgent5Report, fmt::format("Micro spot-check recorded {}; final report is next.", decision.word)),
          *decision.kind == domain::ReviewDecision::kPass ? run.outcome_hint : std::optional<RunStatus>(RunStatus::kBlocked));
    case domain::ReviewDecision::kPartial:
    case domain::ReviewDecision::kRemediate: {
      Transition t = To(run, Phase::kAgent1Review,
                        *decision.kind == domain::ReviewDecision::kRemediate
                            ? "MICRO_SPOT_REMEDIATE: micro spot-check escalated to standard contract review."
                            : "MICRO_SPOT_PARTIAL: micro spot-check escalated to standard contract review.");
      t.run.topology = Topology::kStandard;
      return t;
    }
    default:
      return Unsupported("QualityReview", decision);
  }
}

// remediate after a quality review: the shared remediation, once.
Transition QualityRemediation(const RunRecord& run) {
  if (run.remediations_remaining == 0) {
    return WithHint(To(run, Phase::kAgent5Audit, "Shared remediation budget exhausted; release audit must report the defect."),
                    RunStatus::kBlocked);
  }
  Transition t = To(run, Phase::kAgent3Plan, "The shared post-execution remediation was consumed; scoped replanning is next.");
  t.run.remediations_remaining -= 1;
  t.budget_consumed = "post_execution_remediation";
  return t;
}

Result<Transition> AfterQualityReview(const RunRecord& run, const Decision& decision) {
  if (run.topology == Topology::kMicro) return AfterMicroReview(run, decision);
  if (!decision.kind) return Unsupported("QualityReview", decision);
  switch (*decision.kind) {
    case domain::ReviewDecision::kProceedToFix:
      if (run.requested_mode != Mode::kAnalyzeAndFix) {
        return Reject("Only analyze_and_fix may progress from diagnosis to a fix plan");
      }
      return To(run, Phase::kAgent3Plan, "Diagnosis review passed the mutation gate; a separately bounded fix plan is next.");
    case domain::ReviewDecision::kPass:
    case domain::ReviewDecision::kPartial:
    case domain::ReviewDecision::kBlock: {
      bool forensic = run.topology == Topology::kForensic;
      std::string summary =
          forensic ? fmt::format("Quality review recorded {}; forensic evidence reverify is next.", decision.word)
                   : fmt::format("Quality review recorded {}; independent release audit is next.", decision.word);
      return WithHint(To(run, forensic ? Phase::kAgent3EvidenceReverify : Phase::kAgent5Audit, summary),
                      ReviewHint(run, *decision.kind));
    }
    case domain::ReviewDecision::kRemediate:
      return QualityRemediation(run);
    default:
      return Unsupported("QualityReview", decision);
  }
}

Result<Transition> AfterReverify(const RunRecord& run, const Json& body, const Decision& decision) {
  std::string kind = body.contains("reviewKind") && body["reviewKind"].is_string() ? body["reviewKind"].get<std::string>() : "spot";
  if (kind != "evidence_reverify") return Reject("Forensic evidence reverify requires reviewKind evidence_reverify");
  if (decision.kind == domain::ReviewDecision::kPass || decision.kind == domain::ReviewDecision::kPartial ||
      decision.kind == domain::ReviewDecision::kBlock) {
    return WithHint(
        To(run, Phase::kAgent5Audit, fmt::format("Forensic evidence reverify recorded {}; release audit is next.", decision.word)),
        ReviewHint(run, *decision.kind));
  }
  return Unsupported("forensic evidence reverify", decision);
}

// remediate after a release audit: the shared remediation, once.
Transition AuditRemediation(const RunRecord& run) {
  if (run.remediations_remaining == 0) {
    return WithHint(
        To(run, Phase::kAgent5Report, "Release audit found a defect after the shared remediation budget was exhausted."),
        RunStatus::kBlocked);
  }
  Transition t = To(run, Phase::kAgent3Plan, "Release audit consumed the shared remediation; control returned to Agent 3.");
  t.run.outcome_hint = std::nullopt;
  t.run.remediations_remaining -= 1;
  t.budget_consumed = "post_execution_remediation";
  return t;
}

Result<Transition> AfterReleaseAudit(const RunRecord& run, const Decision& decision) {
  if (!decision.kind) return Unsupported("ReleaseAudit", decision);
  std::optional<RunStatus> hint;
  switch (*decision.kind) {
    case domain::ReviewDecision::kRelease:
      hint = run.outcome_hint.value_or(RunStatus::kCompleted);
      break;
    case domain::ReviewDecision::kPartial:
      hint = RunStatus::kPartial;
      break;
    case domain::ReviewDecision::kBlock:
      hint = RunStatus::kBlocked;
      break;
    case domain::ReviewDecision::kRemediate:
      return AuditRemediation(run);
    default:
      return Unsupported("ReleaseAudit", decision);
  }
  return WithHint(
      To(run, Phase::kAgent5Report, fmt::format("Release audit recorded {}; final evidence report is next.", decision.word)),
      hint);
}

Result<Transition> AfterUserReport(const RunRecord& run, const Json& body) {
  std::string status = body.is_object() ? body.value("terminalStatus", "") : "";
  // A report's terminal status: a run status, or failed_verification (partial).
  std::optional<RunStatus> run_status =
      status == "failed_verification" ? std::optional<RunStatus>(RunStatus::kPartial) : domain::RunStatusNamed(status);
  if (run_status != RunStatus::kCompleted && run_status != RunStatus::kPartial && run_status != RunStatus::kBlocked) {
    return Reject(fmt::format("Unsupported terminal status: {}", status));
  }
  if (run.outcome_hint == RunStatus::kBlocked && run_status == RunStatus::kCompleted) {
    return Reject("A blocked audit cannot be reported as completed");
  }
  if (run.outcome_hint == RunStatus::kPartial && run_status == RunStatus::kCompleted) {
    return Reject("A partial audit cannot be reported as completed");
  }
  Transition t{run, fmt::format("Run reached terminal status {}.", domain::Name(*run_status)), ""};
  t.run.status = *run_status;
  return t;
}

}  // namespace

const std::vector<ArtifactType>& AcceptedArtifactTypes(const RunRecord& run) {
  return FindPhase(run.phase).accepted_types;
}

namespace {

// The transition out of `run`'s phase after its artifact (not a
// clarification request) was accepted.
Result<Transition> AfterPhaseArtifact(const RunRecord& run, const Json& body, std::optional<bool> execution_complete) {
  bool review_only = run.requested_mode == Mode::kReportOnly || run.requested_mode == Mode::kPlanOnly;
  switch (run.phase) {
    case Phase::kContextGrounding:
      return To(run, Phase::kAgent1Frame, "Repository context was grounded; framing is next.");
    case Phase::kAgent1Frame:
      if (run.topology != Topology::kMicro) {
        return To(run, Phase::kAgent2Compile, "Problem frame accepted; task compilation is next.");
      }
      return To(run, review_only ? Phase::kAgent3Review : Phase::kAgent4Execute,
                review_only ? "Problem frame accepted; micro spot-check is next."
                            : "Problem frame accepted; micro execution is next.");
    case Phase::kAgent2Compile:
    case Phase::kAgent2Revise:
      return To(run, Phase::kAgent1Review, "Task contract accepted for frozen-rubric review.");
    case Phase::kAgent3Plan:
      return To(run, review_only ? Phase::kAgent3Review : Phase::kAgent4Execute,
                review_only ? fmt::format("{} skips execution; plan quality review is next.", domain::Name(run.requested_mode))
                            : "Work plan accepted; bounded execution is next.");
    case Phase::kAgent4Execute:
      if (execution_complete == false) {
        return To(run, Phase::kAgent4Execute, "Work result accepted; another dependency-ready work node remains.");
      }
      return To(run, Phase::kAgent3Review, "Work result accepted for evidence-based quality review.");
    case Phase::kAgent5Report:
      return AfterUserReport(run, body);
    case Phase::kAgent1Review:
    case Phase::kAgent3Review:
    case Phase::kAgent3EvidenceReverify:
    case Phase::kAgent5Audit:
      break;
  }
  TELIC_ASSIGN_OR_RETURN(Decision decision, DecisionOf(body));
  if (run.phase == Phase::kAgent1Review) return AfterPromptReview(run, decision);
  if (run.phase == Phase::kAgent3Review) return AfterQualityReview(run, decision);
  if (run.phase == Phase::kAgent3EvidenceReverify) return AfterReverify(run, body, decision);
  return AfterReleaseAudit(run, decision);
}

}  // namespace

Result<Transition> AdvanceRun(const RunRecord& run, const std::string& type, const Json& body,
                              std::optional<bool> execution_complete) {
  if (run.status != RunStatus::kRunning) {
    return Reject(fmt::format("Run {} is {}, not running", run.run_id, domain::Name(run.status)));
  }
  const std::vector<ArtifactType>& accepted = AcceptedArtifactTypes(run);
  std::optional<ArtifactType> kind = domain::ArtifactTypeNamed(type);
  if (!kind || std::find(accepted.begin(), accepted.end(), *kind) == accepted.end()) {
    std::vector<std::string_view> names;
    for (ArtifactType t : accepted) names.push_back(domain::Name(t));
    return Reject(fmt::format("Phase {} requires {}; received {}", domain::Name(run.phase), fmt::join(names, " or "), type));
  }
  if (kind == ArtifactType::kClarificationRequest) {
    Transition t{run, fmt::format("Paused {} for a materially divergent user decision.", domain::Name(run.phase)), ""};
    t.run.status = RunStatus::kAwaitingClarification;
    t.run.resume_phase = run.phase;
    return t;
  }
  return AfterPhaseArtifact(run, body, execution_complete);
}

Transition ClarificationBudgetExhausted(const RunRecord& run) {
  Transition t = WithHint(To(run, Phase::kAgent5Report,
                             "Clarification budget was exhausted; an honest blocked report is required without asking the "
                             "user again."),
                          RunStatus::kBlocked);
  return t;
}

Result<RunRecord> ResumeAfterClarification(const RunRecord& run) {
  if (run.status != RunStatus::kAwaitingClarification || !run.resume_phase) {
    return Fail(ErrorCode::kFailedPrecondition, "Run is not awaiting clarification");
  }
  RunRecord next = run;
  next.status = RunStatus::kRunning;
  next.phase = *run.resume_phase;
  next.resume_phase = std::nullopt;
  return next;
}

}  // namespace telic::controller
