#include "reports/dispatcher.h"

#include <algorithm>

#include <fmt/format.h>

namespace telic::reports {
namespace {

Decision Escalate(std::string rule, std::string reason) {
  Decision d;
  d.rule = std::move(rule);
  d.action = Action::kEscalateToUser;
  d.steps = {"escalate_to_user"};
  d.reason = std::move(reason);
  return d;
}

Decision Verify(std::string rule, bool ablation, std::string reason) {
  Decision d;
  d.rule = std::move(rule);
  d.action = Action::kRunVerifier;
  d.verifier_required = true;
  d.ablation_required = ablation;
  d.steps = {"run_verifier"};
  if (ablation) d.steps.push_back("run_ablation_check");
  d.steps.push_back("accept_on_pass");
  d.reason = std::move(reason);
  return d;
}

Decision Blocker(std::string rule, std::vector<std::string> blockers) {
  Decision d;
  d.rule = std::move(rule);
  d.action = Action::kSurfaceBlocker;
  d.steps = {"surface_blocker_to_user"};
  d.blockers = std::move(blockers);
  d.reason = "The sub-agent is blocked; the blocker goes to the user and the task is not re-dispatched.";
  return d;
}

Decision NeedsContext(std::string rule, std::vector<std::string> missing, int remaining) {
  if (remaining <= 0) {
    Decision d = Escalate(rule + "_retries_exhausted",
                          "The sub-agent needs context but the retry budget is spent; the user decides.");
    d.missing_context = std::move(missing);
    return d;
  }
  Decision d;
  d.rule = std::move(rule);
  d.action = Action::kSupplyContext;
  d.steps = {"supply_listed_context_only", "redispatch"};
  d.missing_context = missing;
  d.key_tasks = std::move(missing);
  d.consumes_retry = true;
  d.reason = "Supply only the missing context listed, then re-dispatch (one retry is spent).";
  return d;
}

// A failed upward report: the task fails once its retries are spent; a
// failure that names no blocker goes to the user rather than a blind retry.
Decision DecideFailedUpward(const UpwardReport& r, const DispatchContext& context, int remaining) {
  if (remaining <= 0) {
    Decision d = Escalate("upward.failed_retries_exhausted",
                          fmt::format("The task failed and its retry budget ({} allowed) is spent; the task fails "
                                      "and the user is asked. No silent retry.",
                                      context.retries_allowed));
    d.blockers = r.blockers;
    d.task_fails = true;
    return d;
  }
  if (r.blockers.empty()) {
    return Escalate("upward.failed_without_blockers",
                    "The task failed without naming a concrete blocker; a blind retry would repeat it, so the user "
                    "is asked.");
  }
  Decision d;
  d.rule = "upward.failed_retry";
  d.action = Action::kRedispatch;
  d.steps = {"redispatch_with_blockers_in_key_tasks"};
  d.key_tasks = r.blockers;
  d.blockers = r.blockers;
  d.consumes_retry = true;
  d.reason = fmt::format("The task failed with blockers and {} retr{} remain{}; re-dispatch with the blockers in the "
                         "next brief's key tasks.",
                         remaining, remaining == 1 ? "y" : "ies", remaining == 1 ? "s" : "");
  return d;
}

Decision DecideUpward(const UpwardReport& r, const DispatchContext& context, int remaining) {
  bool failed = r.status == UpwardStatus::kFailed;
  if (r.status == UpwardStatus::kDeniedByAuthority) {
    Decision d = Escalate("upward.denied_by_authority",
                          "The action was denied by an authority bound; only the user can widen it, so the parent "
                          "escalates and does not re-plan around it.");
    d.blockers = r.blockers;
    return d;
  }
  if (r.escalation_required) {
    Decision d = Escalate("upward.escalation_required",
                          fmt::format("The sub-agent requires escalation: {}", r.escalation_reason.value_or("")));
    d.blockers = r.blockers;
    d.task_fails = failed && remaining <= 0;
    return d;
  }
  if (failed) return DecideFailedUpward(r, context, remaining);
  if (r.status == UpwardStatus::kBlocked) return Blocker("upward.blocked", r.blockers);
  // completed
  if (!r.planned_actions_pending_approval.empty()) {
    Decision d;
    d.rule = "upward.pending_approval";
    d.action = Action::kGateActions;
    d.steps = {"gate_actions_for_user_approval", "redispatch_to_execute_approved_actions"};
    d.reason = "High-impact actions are queued but not executed; each needs the user's approval before it runs.";
    return d;
  }
  if (r.confidence >= kConfidenceThreshold) {
    return Verify("upward.completed_confident", false,
                  "Completed with confidence >= 0.7: run the deterministic verifier (typecheck and targeted tests); "
                  "accept on pass.");
  }
  bool ablation = context.new_mechanism.value_or(true);
  return Verify("upward.completed_low_confidence", ablation,
                ablation ? "Completed with confidence < 0.7: run the deterministic verifier and an ablation check for "
                           "the new mechanism; never re-prompt the sub-agent for a self-review."
                         : "Completed with confidence < 0.7: run the deterministic verifier; never re-prompt the "
                           "sub-agent for a self-review.");
}

Decision DecideExecution(const ExecutionEnvelope& e, int remaining) {
  switch (e.status) {
    case ExecutionStatus::kDone:
      return Verify("execution.done", false,
                    "DONE: the work is complete only once the deterministic verifier passes.");
    case ExecutionStatus::kDoneWithConcerns: {
      Decision d = Verify("execution.done_with_concerns", false,
                          "DONE_WITH_CONCERNS: weigh every listed concern and run the deterministic verifier before "
                          "treating the work as settled.");
      d.steps.insert(d.steps.begin(), "weigh_every_concern");
      d.concerns_must_be_weighed = true;
      d.concerns = e.concerns;
      return d;
    }
    case ExecutionStatus::kNeedsContext:
      return NeedsContext("execution.needs_context", e.concerns, remaining);
    case ExecutionStatus::kBlocked:
      return Blocker("execution.blocked", e.concerns);
  }
  return Escalate("execution.unknown", "unknown status");
}

Decision DecideReview(const ReviewEnvelope& e, int remaining) {
  switch (e.status) {
    case ReviewStatus::kPass: {
      Decision d;
      d.rule = "review.pass";
      d.action = Action::kAccept;
      d.steps = {"accept"};
      d.reason = "PASS: the reviewed scope needs no fixes.";
      return d;
    }
    case ReviewStatus::kNeedsWork: {
      Decision d;
      d.rule = "review.needs_work";
      d.action = Action::kRouteFindings;
      d.steps = {"route_each_finding_for_fix"};
      d.findings = e.findings;
      d.blockers = e.blockers;
      d.reason = fmt::format("NEEDS_WORK: route each of the {} finding{} for a fix; prose outside FINDINGS is not acted on.",
                             e.findings.size(), e.findings.size() == 1 ? "" : "s");
      return d;
    }
    case ReviewStatus::kNeedsContext:
      return NeedsContext("review.needs_context", e.blockers, remaining);
    case ReviewStatus::kBlocked:
      return Blocker("review.blocked", e.blockers);
  }
  return Escalate("review.unknown", "unknown status");
}

}  // namespace

std::string_view ActionName(Action action) {
  switch (action) {
    case Action::kRunVerifier: return "run_verifier";
    case Action::kRedispatch: return "redispatch";
    case Action::kEscalateToUser: return "escalate_to_user";
    case Action::kSurfaceBlocker: return "surface_blocker";
    case Action::kGateActions: return "gate_actions";
    case Action::kSupplyContext: return "supply_context";
    case Action::kRouteFindings: return "route_findings";
    case Action::kAccept: return "accept";
  }
  return "";
}

const std::vector<std::string>& RefusedPatterns() {
  static const std::vector<std::string> kRefused = {
      "llm_review_of_report", "self_review_reprompt", "retry_past_budget", "authority_widening_without_user",
      "accept_without_verifier"};
  return kRefused;
}

Decision Decide(const Report& report, const DispatchContext& context) {
  int remaining = std::max(0, context.retries_allowed - context.retries_used);
  Decision d;
  if (auto* u = std::get_if<UpwardReport>(&report)) {
    d = DecideUpward(*u, context, remaining);
    d.pending_actions = u->planned_actions_pending_approval;
  } else if (auto* e = std::get_if<ExecutionEnvelope>(&report)) {
    d = DecideExecution(*e, remaining);
    d.next_owner = e->next_owner;
  } else {
    d = DecideReview(std::get<ReviewEnvelope>(report), remaining);
    d.next_owner = std::get<ReviewEnvelope>(report).next_owner;
  }
  d.retries_remaining = remaining - (d.consumes_retry ? 1 : 0);
  return d;
}

Json DecisionToJson(const Decision& d) {
  Json findings = Json::array();
  for (const auto& f : d.findings) findings.push_back({{"path", f.path}, {"line", f.line}, {"fix", f.fix}});
  return {{"rule", d.rule},
          {"action", ActionName(d.action)},
          {"steps", d.steps},
          {"verifierRequired", d.verifier_required},
          {"ablationRequired", d.ablation_required},
          {"concernsMustBeWeighed", d.concerns_must_be_weighed},
          {"taskFails", d.task_fails},
          {"consumesRetry", d.consumes_retry},
          {"retriesRemaining", d.retries_remaining},
          {"keyTasks", d.key_tasks},
          {"missingContext", d.missing_context},
          {"pendingActions", d.pending_actions},
          {"concerns", d.concerns},
          {"blockers", d.blockers},
          {"findings", findings},
          {"reason", d.reason},
          {"nextOwner", d.next_owner},
          {"refused", RefusedPatterns()}};
}

}  // namespace telic::reports
