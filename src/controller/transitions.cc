#include "controller/transitions.h"

#include <fmt/format.h>

#include "controller/phases.h"

namespace telic::controller {
namespace {

using store::RunRecord;

std::unexpected<Error> Reject(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

RunRecord Move(const RunRecord& run, const std::string& phase) {
  RunRecord next = run;
  next.phase = phase;
  next.status = "running";
  next.resume_phase = std::nullopt;
  return next;
}

Transition To(const RunRecord& run, const std::string& phase, std::string summary) {
  return {Move(run, phase), std::move(summary), ""};
}

Transition WithHint(Transition t, std::optional<std::string> hint) {
  t.run.outcome_hint = std::move(hint);
  return t;
}

// pass keeps the hint, block → blocked, partial → partial.
std::optional<std::string> ReviewHint(const RunRecord& run, const std::string& decision) {
  if (decision == "pass") return run.outcome_hint;
  return decision == "block" ? "blocked" : "partial";
}

Result<std::string> DecisionOf(const Json& body) {
  if (!body.is_object() || !body.contains("decision")) return Fail(ErrorCode::kInvalidArgument, "Review artifact is missing its decision field");
  if (!body["decision"].is_string()) return Fail(ErrorCode::kInvalidArgument, "Review decision must be a string");
  return body["decision"].get<std::string>();
}

Result<Transition> AfterPromptReview(const RunRecord& run, const std::string& decision) {
  if (decision == "pass") return To(run, "agent_3_plan", "Contract review passed; work planning is next.");
  if (decision == "revise") {
    if (run.prompt_revisions_remaining == 0) {
      return WithHint(To(run, "agent_5_report", "Prompt revision budget exhausted; a final blocked report is required."),
                      "blocked");
    }
    Transition t = To(run, "agent_2_revise", "One bounded task-contract revision was authorized.");
    t.run.prompt_revisions_remaining -= 1;
    t.budget_consumed = "prompt_revision";
    return t;
  }
  if (decision == "block") {
    return WithHint(To(run, "agent_5_report",
                       "Contract review found an uncorrectable hard gate; a final blocked report is required."),
                    "blocked");
  }
  return Reject(fmt::format("Unsupported PromptReview decision: {}", decision));
}

Result<Transition> AfterMicroReview(const RunRecord& run, const std::string& decision) {
  if (decision == "proceed_to_fix") return Reject("Micro topology does not support proceed_to_fix");
  if (decision == "pass" || decision == "block") {
    return WithHint(To(run, "agent_5_report", fmt::format("Micro spot-check recorded {}; final report is next.", decision)),
                    decision == "pass" ? run.outcome_hint : std::optional<std::string>("blocked"));
  }
  if (decision == "partial" || decision == "remediate") {
    Transition t = To(run, "agent_1_review",
                      decision == "remediate"
                          ? "MICRO_SPOT_REMEDIATE: micro spot-check escalated to standard contract review."
                          : "MICRO_SPOT_PARTIAL: micro spot-check escalated to standard contract review.");
    t.run.topology = "standard";
    return t;
  }
  return Reject(fmt::format("Unsupported QualityReview decision: {}", decision));
}

Result<Transition> AfterQualityReview(const RunRecord& run, const std::string& decision) {
  if (run.topology == "micro") return AfterMicroReview(run, decision);
  if (decision == "proceed_to_fix") {
    if (run.requested_mode != "analyze_and_fix") {
      return Reject("Only analyze_and_fix may progress from diagnosis to a fix plan");
    }
    return To(run, "agent_3_plan", "Diagnosis review passed the mutation gate; a separately bounded fix plan is next.");
  }
  if (decision == "pass" || decision == "partial" || decision == "block") {
    bool forensic = run.topology == "forensic";
    std::string summary = forensic
                              ? fmt::format("Quality review recorded {}; forensic evidence reverify is next.", decision)
                              : fmt::format("Quality review recorded {}; independent release audit is next.", decision);
    return WithHint(To(run, forensic ? "agent_3_evidence_reverify" : "agent_5_audit", summary), ReviewHint(run, decision));
  }
  if (decision == "remediate") {
    if (run.remediations_remaining == 0) {
      return WithHint(To(run, "agent_5_audit", "Shared remediation budget exhausted; release audit must report the defect."),
                      "blocked");
    }
    Transition t = To(run, "agent_3_plan", "The shared post-execution remediation was consumed; scoped replanning is next.");
    t.run.remediations_remaining -= 1;
    t.budget_consumed = "post_execution_remediation";
    return t;
  }
  return Reject(fmt::format("Unsupported QualityReview decision: {}", decision));
}

Result<Transition> AfterReverify(const RunRecord& run, const Json& body, const std::string& decision) {
  std::string kind = body.contains("reviewKind") && body["reviewKind"].is_string() ? body["reviewKind"].get<std::string>() : "spot";
  if (kind != "evidence_reverify") return Reject("Forensic evidence reverify requires reviewKind evidence_reverify");
  if (decision == "pass" || decision == "partial" || decision == "block") {
    return WithHint(To(run, "agent_5_audit", fmt::format("Forensic evidence reverify recorded {}; release audit is next.", decision)),
                    ReviewHint(run, decision));
  }
  return Reject(fmt::format("Unsupported forensic evidence reverify decision: {}", decision));
}

Result<Transition> AfterReleaseAudit(const RunRecord& run, const std::string& decision) {
  if (decision == "release" || decision == "partial" || decision == "block") {
    std::optional<std::string> hint = decision == "release" ? std::optional<std::string>(run.outcome_hint.value_or("completed"))
                                      : decision == "partial" ? std::optional<std::string>("partial")
                                                              : std::optional<std::string>("blocked");
    return WithHint(To(run, "agent_5_report", fmt::format("Release audit recorded {}; final evidence report is next.", decision)),
                    hint);
  }
  if (decision == "remediate") {
    if (run.remediations_remaining == 0) {
      return WithHint(
          To(run, "agent_5_report", "Release audit found a defect after the shared remediation budget was exhausted."),
          "blocked");
    }
    Transition t = To(run, "agent_3_plan", "Release audit consumed the shared remediation; control returned to Agent 3.");
    t.run.outcome_hint = std::nullopt;
    t.run.remediations_remaining -= 1;
    t.budget_consumed = "post_execution_remediation";
    return t;
  }
  return Reject(fmt::format("Unsupported ReleaseAudit decision: {}", decision));
}

Result<Transition> AfterUserReport(const RunRecord& run, const Json& body) {
  std::string status = body.is_object() ? body.value("terminalStatus", "") : "";
  std::string run_status;
  if (status == "completed") run_status = "completed";
  else if (status == "partial" || status == "failed_verification") run_status = "partial";
  else if (status == "blocked") run_status = "blocked";
  else return Reject(fmt::format("Unsupported terminal status: {}", status));
  if (run.outcome_hint == "blocked" && run_status == "completed") return Reject("A blocked audit cannot be reported as completed");
  if (run.outcome_hint == "partial" && run_status == "completed") return Reject("A partial audit cannot be reported as completed");
  Transition t{run, fmt::format("Run reached terminal status {}.", run_status), ""};
  t.run.status = run_status;
  return t;
}

}  // namespace

std::vector<std::string> AcceptedArtifactTypes(const RunRecord& run) {
  const PhaseInfo* phase = FindPhase(run.phase);
  return phase ? phase->accepted_types : std::vector<std::string>{};
}

Result<Transition> AdvanceRun(const RunRecord& run, const std::string& type, const Json& body,
                              std::optional<bool> execution_complete) {
  if (run.status != "running") return Reject(fmt::format("Run {} is {}, not running", run.run_id, run.status));
  std::vector<std::string> accepted = AcceptedArtifactTypes(run);
  if (std::find(accepted.begin(), accepted.end(), type) == accepted.end()) {
    return Reject(fmt::format("Phase {} requires {}; received {}", run.phase, fmt::join(accepted, " or "), type));
  }
  if (type == "ClarificationRequest") {
    Transition t{run, fmt::format("Paused {} for a materially divergent user decision.", run.phase), ""};
    t.run.status = "awaiting_clarification";
    t.run.resume_phase = run.phase;
    return t;
  }
  const std::string& phase = run.phase;
  if (phase == "context_grounding") return To(run, "agent_1_frame", "Repository context was grounded; framing is next.");
  if (phase == "agent_1_frame") {
    if (run.topology != "micro") return To(run, "agent_2_compile", "Problem frame accepted; task compilation is next.");
    bool review = run.requested_mode == "report_only" || run.requested_mode == "plan_only";
    return To(run, review ? "agent_3_review" : "agent_4_execute",
              review ? "Problem frame accepted; micro spot-check is next." : "Problem frame accepted; micro execution is next.");
  }
  if (phase == "agent_2_compile" || phase == "agent_2_revise") {
    return To(run, "agent_1_review", "Task contract accepted for frozen-rubric review.");
  }
  if (phase == "agent_3_plan") {
    bool review = run.requested_mode == "plan_only" || run.requested_mode == "report_only";
    return To(run, review ? "agent_3_review" : "agent_4_execute",
              review ? fmt::format("{} skips execution; plan quality review is next.", run.requested_mode)
                     : "Work plan accepted; bounded execution is next.");
  }
  if (phase == "agent_4_execute") {
    if (execution_complete == false) {
      return To(run, "agent_4_execute", "Work result accepted; another dependency-ready work node remains.");
    }
    return To(run, "agent_3_review", "Work result accepted for evidence-based quality review.");
  }
  if (phase == "agent_5_report") return AfterUserReport(run, body);
  TELIC_ASSIGN_OR_RETURN(std::string decision, DecisionOf(body));
  if (phase == "agent_1_review") return AfterPromptReview(run, decision);
  if (phase == "agent_3_review") return AfterQualityReview(run, decision);
  if (phase == "agent_3_evidence_reverify") return AfterReverify(run, body, decision);
  if (phase == "agent_5_audit") return AfterReleaseAudit(run, decision);
  return Fail(ErrorCode::kInternal, fmt::format("run {} is in unknown phase {}", run.run_id, phase));
}

Transition ClarificationBudgetExhausted(const RunRecord& run) {
  Transition t = WithHint(To(run, "agent_5_report",
                             "Clarification budget was exhausted; an honest blocked report is required without asking the "
                             "user again."),
                          "blocked");
  return t;
}

Result<RunRecord> ResumeAfterClarification(const RunRecord& run) {
  if (run.status != "awaiting_clarification" || !run.resume_phase) {
    return Fail(ErrorCode::kFailedPrecondition, "Run is not awaiting clarification");
  }
  RunRecord next = run;
  next.status = "running";
  next.phase = *run.resume_phase;
  next.resume_phase = std::nullopt;
  return next;
}

}  // namespace telic::controller
