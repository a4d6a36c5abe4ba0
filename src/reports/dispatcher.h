// The dispatcher: turns a parsed report into the parent's next step,
// deterministically, per the table of upward-report.md (RPT-011..031) and
// the status meanings of subagent-return-protocol.md (RPT-056..063).
//
// The decision never asks for an LLM review of the report, never retries
// past the budget, never widens authority, and never accepts a completion
// without the deterministic verifier (the anti-patterns, RPT-028..031).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "reports/report.h"

namespace telic::reports {

// The confidence at or above which a completion is "confident" (RPT-021).
inline constexpr double kConfidenceThreshold = 0.7;

// What the dispatcher knows about the task besides the report.
struct DispatchContext {
  int retries_allowed = 0;  // from the task's MissionBrief
  int retries_used = 0;     // re-dispatches already spent
  // Whether the change introduces a new mechanism (RPT-022). Unknown is
  // treated as "yes": the ablation check runs unless the caller says no.
  std::optional<bool> new_mechanism;
};

// The parent's primary action.
enum class Action {
  kRunVerifier,     // run the deterministic verifier; accept only on pass
  kRedispatch,      // dispatch the task again with the listed key tasks
  kEscalateToUser,  // ask the user (AskUserQuestion); nothing is retried
  kSurfaceBlocker,  // show the blocker to the user; no re-dispatch
  kGateActions,     // obtain user approval before the listed actions run
  kSupplyContext,   // give only the listed missing context, then re-dispatch
  kRouteFindings,   // route each file:line finding for a fix; review done
  kAccept,          // the review passed; the task is complete
};

std::string_view ActionName(Action action);

struct Decision {
  std::string rule;   // the table row, e.g. "upward.completed_confident"
  Action action = Action::kEscalateToUser;
  std::vector<std::string> steps;  // ordered steps for the parent
  bool verifier_required = false;
  bool ablation_required = false;
  bool concerns_must_be_weighed = false;
  bool task_fails = false;        // the task fails for good (cascade-fail)
  bool consumes_retry = false;    // a re-dispatch that spends one retry
  std::vector<std::string> key_tasks;        // injected into the next brief
  std::vector<std::string> missing_context;  // NEEDS_CONTEXT items
  std::vector<std::string> pending_actions;  // to gate (kGateActions) or report
  std::vector<std::string> concerns;
  std::vector<std::string> blockers;
  std::vector<Finding> findings;
  std::string reason;  // one sentence a user can read
  // The envelope's NEXT_OWNER: who reconciles or routes next. Routing only;
  // it never changes the action (RPT-036, RPT-037, RPT-065). "" for an
  // UpwardReport, whose parent is always the caller.
  std::string next_owner;
  int retries_remaining = 0;
};

// The decision for `report` in `context`. Pure and total.
Decision Decide(const Report& report, const DispatchContext& context);

// The anti-patterns the dispatcher refuses (listed in every decision).
const std::vector<std::string>& RefusedPatterns();

Json DecisionToJson(const Decision& decision);

}  // namespace telic::reports
