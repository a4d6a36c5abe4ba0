// The dispatcher table: every row of upward-report.md's FSM and every
// status of both envelopes, with the anti-patterns refused.
#include "reports/dispatcher.h"

#include <gtest/gtest.h>

namespace telic::reports {
namespace {

UpwardReport Up(UpwardStatus status, double confidence, std::vector<std::string> blockers = {}) {
  UpwardReport r;
  r.status = status;
  r.confidence = confidence;
  r.blockers = std::move(blockers);
  return r;
}

DispatchContext Ctx(int allowed, int used) { return {allowed, used, std::nullopt}; }

bool Refuses(const Decision& d) {
  auto refused = DecisionToJson(d)["refused"];
  for (const char* p : {"llm_review_of_report", "self_review_reprompt", "retry_past_budget",
                        "authority_widening_without_user", "accept_without_verifier"}) {
    if (std::find(refused.begin(), refused.end(), p) == refused.end()) return false;
  }
  return true;
}

// covers RPT-021, RPT-031
TEST(Dispatcher, Row1CompletedConfidentRunsVerifierThenAccepts) {
  for (double c : {0.7, 0.85, 1.0}) {
    Decision d = Decide(Up(UpwardStatus::kCompleted, c), {});
    EXPECT_EQ(d.rule, "upward.completed_confident") << c;
    EXPECT_EQ(d.action, Action::kRunVerifier);
    EXPECT_TRUE(d.verifier_required);
    EXPECT_FALSE(d.ablation_required);
    EXPECT_EQ(d.steps, (std::vector<std::string>{"run_verifier", "accept_on_pass"}));
    EXPECT_TRUE(Refuses(d));
  }
}

// covers RPT-011, RPT-012, RPT-022, RPT-028, RPT-031
TEST(Dispatcher, Row2LowConfidenceRunsVerifierAndAblationNeverSelfReview) {
  Decision d = Decide(Up(UpwardStatus::kCompleted, 0.69), {});
  EXPECT_EQ(d.rule, "upward.completed_low_confidence");
  EXPECT_EQ(d.action, Action::kRunVerifier);
  EXPECT_TRUE(d.verifier_required);
  EXPECT_TRUE(d.ablation_required);  // unknown mechanism: the ablation check runs (D17)
  EXPECT_EQ(d.steps, (std::vector<std::string>{"run_verifier", "run_ablation_check", "accept_on_pass"}));
  for (const auto& step : d.steps) EXPECT_EQ(step.find("review"), std::string::npos);
  Decision known = Decide(Up(UpwardStatus::kCompleted, 0.2), {0, 0, false});
  EXPECT_FALSE(known.ablation_required);
  EXPECT_TRUE(known.verifier_required);
  EXPECT_TRUE(Decide(Up(UpwardStatus::kCompleted, 0.2), {0, 0, true}).ablation_required);
  EXPECT_TRUE(Refuses(d));
}

// covers RPT-013, RPT-023
TEST(Dispatcher, Row3FailedWithBlockersAndRetriesRedispatches) {
  Decision d = Decide(Up(UpwardStatus::kFailed, 0.3, {"src/a.cc:3 type error", "missing dep libfoo"}), Ctx(2, 1));
  EXPECT_EQ(d.rule, "upward.failed_retry");
  EXPECT_EQ(d.action, Action::kRedispatch);
  EXPECT_EQ(d.key_tasks, (std::vector<std::string>{"src/a.cc:3 type error", "missing dep libfoo"}));
  EXPECT_TRUE(d.consumes_retry);
  EXPECT_FALSE(d.task_fails);
  EXPECT_EQ(d.retries_remaining, 0);
}

// covers RPT-014, RPT-016, RPT-024, RPT-029
TEST(Dispatcher, Row4FailedRetriesExhaustedEscalatesAndFails) {
  for (auto ctx : {Ctx(0, 0), Ctx(2, 2), Ctx(1, 5)}) {
    Decision d = Decide(Up(UpwardStatus::kFailed, 0.3, {"x.cc:1 error"}), ctx);
    EXPECT_EQ(d.rule, "upward.failed_retries_exhausted");
    EXPECT_EQ(d.action, Action::kEscalateToUser);
    EXPECT_TRUE(d.task_fails);
    EXPECT_FALSE(d.consumes_retry);
  }
}

// covers RPT-015, RPT-024 (Open: escalation-required escalates any status, D16)
TEST(Dispatcher, Row4EscalationRequiredEscalatesForAnyStatus) {
  for (auto status : {UpwardStatus::kCompleted, UpwardStatus::kFailed, UpwardStatus::kBlocked}) {
    UpwardReport r = Up(status, 0.95, {"x"});
    r.escalation_required = true;
    r.escalation_reason = "needs a product decision";
    Decision d = Decide(r, Ctx(3, 0));
    EXPECT_EQ(d.rule, "upward.escalation_required");
    EXPECT_EQ(d.action, Action::kEscalateToUser);
    EXPECT_FALSE(d.consumes_retry);
    EXPECT_NE(d.reason.find("needs a product decision"), std::string::npos);
  }
}

// covers RPT-017, RPT-018, RPT-025, RPT-030
TEST(Dispatcher, Row5DeniedByAuthorityEscalatesNeverReplans) {
  UpwardReport r = Up(UpwardStatus::kDeniedByAuthority, 0.9, {"shell.execute denied for rm -rf build"});
  Decision d = Decide(r, Ctx(3, 0));
  EXPECT_EQ(d.rule, "upward.denied_by_authority");
  EXPECT_EQ(d.action, Action::kEscalateToUser);
  EXPECT_FALSE(d.consumes_retry);
  EXPECT_TRUE(d.key_tasks.empty());
  EXPECT_NE(d.reason.find("only the user can widen"), std::string::npos);
}

// covers RPT-026
TEST(Dispatcher, Row6BlockedSurfacesBlockerNoRedispatch) {
  Decision d = Decide(Up(UpwardStatus::kBlocked, 0.5, {"CI is down"}), Ctx(3, 0));
  EXPECT_EQ(d.rule, "upward.blocked");
  EXPECT_EQ(d.action, Action::kSurfaceBlocker);
  EXPECT_EQ(d.blockers, std::vector<std::string>{"CI is down"});
  EXPECT_FALSE(d.consumes_retry);
}

// covers RPT-013 (Open: failed without blockers, D15)
TEST(Dispatcher, FailedWithoutBlockersEscalatesInsteadOfBlindRetry) {
  Decision d = Decide(Up(UpwardStatus::kFailed, 0.3), Ctx(3, 0));
  EXPECT_EQ(d.rule, "upward.failed_without_blockers");
  EXPECT_EQ(d.action, Action::kEscalateToUser);
  EXPECT_FALSE(d.task_fails);
}

// covers RPT-013, RPT-023 (D54: "- none" is no blocker, so nothing to re-dispatch with)
TEST(Dispatcher, FailedWithBlockersNoneIsFailedWithoutBlockers) {
  auto report = ParseReportText(
      "upward-report:\n  status: failed\n  confidence: 0.3\n  blockers:\n    - None.\n  escalation-required: false\n"
      "  evidence-anchors: []\n  planned-actions-pending-approval: []\n");
  ASSERT_TRUE(report) << report.error().message();
  Decision d = Decide(*report, Ctx(3, 0));
  EXPECT_EQ(d.rule, "upward.failed_without_blockers");  // not a re-dispatch with key task "None."
  EXPECT_EQ(d.action, Action::kEscalateToUser);
  EXPECT_TRUE(d.key_tasks.empty());
  EXPECT_FALSE(d.consumes_retry);
}

// covers RPT-019, RPT-020
TEST(Dispatcher, PendingActionsAreGatedBeforeExecution) {
  UpwardReport r = Up(UpwardStatus::kCompleted, 0.9);
  r.planned_actions_pending_approval = {"delete file src/old.cc", "rename API Foo across 12 callers"};
  Decision d = Decide(r, {});
  EXPECT_EQ(d.rule, "upward.pending_approval");
  EXPECT_EQ(d.action, Action::kGateActions);
  EXPECT_EQ(d.pending_actions, r.planned_actions_pending_approval);
  EXPECT_EQ(d.steps.front(), "gate_actions_for_user_approval");
  // With a failure the failure row decides; the actions are still listed.
  r.status = UpwardStatus::kFailed;
  r.blockers = {"x"};
  Decision f = Decide(r, Ctx(1, 0));
  EXPECT_EQ(f.action, Action::kRedispatch);
  EXPECT_EQ(f.pending_actions.size(), 2u);
}

// covers RPT-056
TEST(Dispatcher, ExecutionDoneRunsVerifier) {
  ExecutionEnvelope e;
  e.status = ExecutionStatus::kDone;
  Decision d = Decide(e, {});
  EXPECT_EQ(d.rule, "execution.done");
  EXPECT_EQ(d.action, Action::kRunVerifier);
  EXPECT_TRUE(d.verifier_required);
}

// covers RPT-057
TEST(Dispatcher, ExecutionDoneWithConcernsWeighsEveryConcern) {
  ExecutionEnvelope e;
  e.status = ExecutionStatus::kDoneWithConcerns;
  e.concerns = {"slow", "untested on Windows"};
  Decision d = Decide(e, {});
  EXPECT_EQ(d.rule, "execution.done_with_concerns");
  EXPECT_TRUE(d.concerns_must_be_weighed);
  EXPECT_EQ(d.concerns, e.concerns);
  EXPECT_EQ(d.steps.front(), "weigh_every_concern");
}

// covers RPT-035, RPT-060
TEST(Dispatcher, NeedsContextSuppliesOnlyListedContext) {
  ExecutionEnvelope e;
  e.status = ExecutionStatus::kNeedsContext;
  e.concerns = {"path: docs/schema.md"};
  Decision d = Decide(e, Ctx(1, 0));
  EXPECT_EQ(d.rule, "execution.needs_context");
  EXPECT_EQ(d.action, Action::kSupplyContext);
  EXPECT_EQ(d.missing_context, e.concerns);
  EXPECT_TRUE(d.consumes_retry);
  Decision spent = Decide(e, Ctx(1, 1));
  EXPECT_EQ(spent.rule, "execution.needs_context_retries_exhausted");
  EXPECT_EQ(spent.action, Action::kEscalateToUser);
  ReviewEnvelope r;
  r.status = ReviewStatus::kNeedsContext;
  r.blockers = {"the acceptance criteria"};
  EXPECT_EQ(Decide(r, Ctx(1, 0)).missing_context, r.blockers);
}

// covers RPT-061, RPT-063
TEST(Dispatcher, BlockedEnvelopesSurfaceTheBlocker) {
  ExecutionEnvelope e;
  e.status = ExecutionStatus::kBlocked;
  e.concerns = {"no network"};
  EXPECT_EQ(Decide(e, Ctx(3, 0)).action, Action::kSurfaceBlocker);
  ReviewEnvelope r;
  r.status = ReviewStatus::kBlocked;
  r.blockers = {"cannot build"};
  Decision d = Decide(r, Ctx(3, 0));
  EXPECT_EQ(d.rule, "review.blocked");
  EXPECT_EQ(d.action, Action::kSurfaceBlocker);
  EXPECT_FALSE(d.consumes_retry);
}

// covers RPT-058, RPT-059, RPT-062
TEST(Dispatcher, ReviewPassAcceptsAndNeedsWorkRoutesFindings) {
  ReviewEnvelope pass;
  pass.status = ReviewStatus::kPass;
  EXPECT_EQ(Decide(pass, {}).action, Action::kAccept);
  ReviewEnvelope work;
  work.status = ReviewStatus::kNeedsWork;
  work.findings = {*ParseFinding("a.cc:1 - fix one"), *ParseFinding("b.cc:2 - fix two")};
  Decision d = Decide(work, {});
  EXPECT_EQ(d.rule, "review.needs_work");
  EXPECT_EQ(d.action, Action::kRouteFindings);
  ASSERT_EQ(d.findings.size(), 2u);
  Json json = DecisionToJson(d);
  EXPECT_EQ(json["findings"][1], (Json{{"path", "b.cc"}, {"line", 2}, {"fix", "fix two"}}));
}

// covers RPT-036, RPT-037, RPT-065
TEST(Dispatcher, NextOwnerRoutesButNeverChangesTheDecision) {
  for (const char* owner : {"invoking agent", "coordinator"}) {
    ExecutionEnvelope e;
    e.status = ExecutionStatus::kDone;
    e.next_owner = owner;
    Decision d = Decide(e, {});
    EXPECT_EQ(d.next_owner, owner);
    EXPECT_EQ(d.rule, "execution.done");
    EXPECT_EQ(DecisionToJson(d)["nextOwner"], owner);
  }
  for (const char* owner : {"invoking agent", "developer", "coordinator"}) {
    ReviewEnvelope r;
    r.status = ReviewStatus::kBlocked;
    r.blockers = {"unknown: which API version"};  // RPT-063: unknowns go in BLOCKERS
    r.next_owner = owner;
    Decision d = Decide(r, Ctx(3, 0));
    EXPECT_EQ(d.action, Action::kSurfaceBlocker);
    EXPECT_EQ(d.blockers, r.blockers);
    EXPECT_EQ(d.next_owner, owner);
  }
}

}  // namespace
}  // namespace telic::reports
