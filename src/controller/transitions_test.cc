#include "controller/transitions.h"

#include <gtest/gtest.h>

namespace telic::controller {
namespace {

store::RunRecord MakeRun(std::string phase, std::string topology = "standard", std::string mode = "fix_only") {
  store::RunRecord r;
  r.run_id = "run-1";
  r.status = domain::RunStatus::kRunning;
  r.phase = *domain::PhaseNamed(phase);
  r.topology = *domain::TopologyNamed(topology);
  r.requested_mode = *domain::ModeNamed(mode);
  return r;
}

Json Decision(const std::string& d) { return {{"decision", d}}; }

std::string Next(const store::RunRecord& run, const std::string& type, const Json& body,
                 std::optional<bool> complete = std::nullopt) {
  auto t = AdvanceRun(run, type, body, complete);
  if (!t) return "error: " + t.error().message();
  return std::string(t->run.status == domain::RunStatus::kRunning ? domain::Name(t->run.phase) : domain::Name(t->run.status));
}

// covers TEL-039: a report_only plan goes straight to review (no executor phase, so no investigation action).
// covers TEL-211 TEL-215 TEL-216 TEL-218 TEL-219 TEL-221 TEL-222 TEL-223 TEL-225 TEL-227 TEL-228: the linear edges of the standard diagram.
TEST(TransitionsTest, StandardPathEdges) {
  EXPECT_EQ(Next(MakeRun("context_grounding"), "ContextManifest", Json::object()), "agent_1_frame");
  EXPECT_EQ(Next(MakeRun("agent_1_frame"), "ProblemFrame", Json::object()), "agent_2_compile");
  EXPECT_EQ(Next(MakeRun("agent_2_compile"), "TaskContract", Json::object()), "agent_1_review");
  EXPECT_EQ(Next(MakeRun("agent_2_revise"), "TaskContract", Json::object()), "agent_1_review");
  EXPECT_EQ(Next(MakeRun("agent_1_review"), "PromptReview", Decision("pass")), "agent_3_plan");
  EXPECT_EQ(Next(MakeRun("agent_3_plan"), "WorkPlan", Json::object()), "agent_4_execute");
  EXPECT_EQ(Next(MakeRun("agent_3_plan", "standard", "plan_only"), "WorkPlan", Json::object()), "agent_3_review");
  EXPECT_EQ(Next(MakeRun("agent_3_plan", "standard", "report_only"), "WorkPlan", Json::object()), "agent_3_review");
  EXPECT_EQ(Next(MakeRun("agent_4_execute"), "WorkResult", Json::object(), false), "agent_4_execute");
  EXPECT_EQ(Next(MakeRun("agent_4_execute"), "WorkResult", Json::object(), true), "agent_3_review");
  EXPECT_EQ(Next(MakeRun("agent_3_review"), "QualityReview", Decision("pass")), "agent_5_audit");
  EXPECT_EQ(Next(MakeRun("agent_5_audit"), "ReleaseAudit", Decision("release")), "agent_5_report");
  EXPECT_EQ(Next(MakeRun("agent_5_report"), "UserReport", Json{{"terminalStatus", "completed"}}), "completed");
}

// covers TEL-225: forensic topology adds the evidence reverify phase, which needs reviewKind evidence_reverify.
TEST(TransitionsTest, ForensicReverify) {
  EXPECT_EQ(Next(MakeRun("agent_3_review", "forensic"), "QualityReview", Decision("pass")), "agent_3_evidence_reverify");
  EXPECT_EQ(Next(MakeRun("agent_3_evidence_reverify", "forensic"), "QualityReview", Decision("pass")),
            "error: Forensic evidence reverify requires reviewKind evidence_reverify");
  Json reverify = {{"decision", "partial"}, {"reviewKind", "evidence_reverify"}};
  auto t = AdvanceRun(MakeRun("agent_3_evidence_reverify", "forensic"), "QualityReview", reverify);
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_5_audit");
  EXPECT_EQ(store::OptionalName(t->run.outcome_hint), "partial");
  reverify["decision"] = "remediate";
  EXPECT_EQ(Next(MakeRun("agent_3_evidence_reverify", "forensic"), "QualityReview", reverify),
            "error: Unsupported forensic evidence reverify decision: remediate");
}

// covers TEL-217 TEL-220 TEL-237 TEL-238: one prompt revision, block goes to a blocked report.
// covers TEL-112: Agent 1 may send the contract back once per run; a second revise ends blocked.
TEST(TransitionsTest, PromptReviewBudget) {
  auto t = AdvanceRun(MakeRun("agent_1_review"), "PromptReview", Decision("revise"));
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_2_revise");
  EXPECT_EQ(t->run.prompt_revisions_remaining, 0);
  EXPECT_EQ(t->budget_consumed, "prompt_revision");
  store::RunRecord spent = MakeRun("agent_1_review");
  spent.prompt_revisions_remaining = 0;
  t = AdvanceRun(spent, "PromptReview", Decision("revise"));
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_5_report");
  EXPECT_EQ(store::OptionalName(t->run.outcome_hint), "blocked");
  t = AdvanceRun(MakeRun("agent_1_review"), "PromptReview", Decision("block"));
  ASSERT_TRUE(t);
  EXPECT_EQ(store::OptionalName(t->run.outcome_hint), "blocked");
  EXPECT_EQ(domain::Name(t->run.phase), "agent_5_report");
}

// covers TEL-224 TEL-226 TEL-239: one post-execution remediation shared by Agent 3 and Agent 5.
// covers TEL-166: an audit remediate returns to the controller, whose next phase is Agent 3 planning.
TEST(TransitionsTest, RemediationIsSharedAndBounded) {
  auto t = AdvanceRun(MakeRun("agent_3_review"), "QualityReview", Decision("remediate"));
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_3_plan");
  EXPECT_EQ(t->run.remediations_remaining, 0);
  store::RunRecord audit = MakeRun("agent_5_audit");
  audit.remediations_remaining = 0;
  t = AdvanceRun(audit, "ReleaseAudit", Decision("remediate"));
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_5_report");
  EXPECT_EQ(store::OptionalName(t->run.outcome_hint), "blocked");
  audit.remediations_remaining = 1;
  audit.outcome_hint = domain::RunStatus::kPartial;
  t = AdvanceRun(audit, "ReleaseAudit", Decision("remediate"));
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_3_plan");
  EXPECT_FALSE(t->run.outcome_hint.has_value());
}

// covers TEL-040 TEL-224: proceed_to_fix only in analyze_and_fix, never in micro.
// covers TEL-033: fix_only has no diagnosis-to-fix step (an unknown cause needs analyze_and_fix).
TEST(TransitionsTest, ProceedToFix) {
  EXPECT_EQ(Next(MakeRun("agent_3_review", "forensic", "analyze_and_fix"), "QualityReview", Decision("proceed_to_fix")),
            "agent_3_plan");
  EXPECT_EQ(Next(MakeRun("agent_3_review", "standard", "fix_only"), "QualityReview", Decision("proceed_to_fix")),
            "error: Only analyze_and_fix may progress from diagnosis to a fix plan");
  EXPECT_EQ(Next(MakeRun("agent_3_review", "micro", "report_only"), "QualityReview", Decision("proceed_to_fix")),
            "error: Micro topology does not support proceed_to_fix");
}

// covers TEL-225: micro spot-check escalates partial/remediate to standard contract review.
TEST(TransitionsTest, MicroEscalation) {
  auto t = AdvanceRun(MakeRun("agent_3_review", "micro", "report_only"), "QualityReview", Decision("partial"));
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.topology), "standard");
  EXPECT_EQ(domain::Name(t->run.phase), "agent_1_review");
  EXPECT_EQ(Next(MakeRun("agent_1_frame", "micro", "report_only"), "ProblemFrame", Json::object()), "agent_3_review");
  EXPECT_EQ(Next(MakeRun("agent_1_frame", "micro", "fix_only"), "ProblemFrame", Json::object()), "agent_4_execute");
  EXPECT_EQ(Next(MakeRun("agent_3_review", "micro", "report_only"), "QualityReview", Decision("pass")), "agent_5_report");
}

// covers TEL-182 TEL-228 TEL-229 TEL-230: terminal statuses and honest hints.
// covers TEL-174: a submitted report cannot end cancelled (only the four report statuses).
TEST(TransitionsTest, TerminalReports) {
  store::RunRecord report = MakeRun("agent_5_report");
  EXPECT_EQ(Next(report, "UserReport", Json{{"terminalStatus", "failed_verification"}}), "partial");
  EXPECT_EQ(Next(report, "UserReport", Json{{"terminalStatus", "blocked"}}), "blocked");
  EXPECT_EQ(Next(report, "UserReport", Json{{"terminalStatus", "cancelled"}}), "error: Unsupported terminal status: cancelled");
  report.outcome_hint = domain::RunStatus::kBlocked;
  EXPECT_EQ(Next(report, "UserReport", Json{{"terminalStatus", "completed"}}),
            "error: A blocked audit cannot be reported as completed");
  report.outcome_hint = domain::RunStatus::kPartial;
  EXPECT_EQ(Next(report, "UserReport", Json{{"terminalStatus", "completed"}}),
            "error: A partial audit cannot be reported as completed");
}

// covers TEL-081 TEL-197 TEL-236: a clarification pauses the phase; wrong types are refused with the accepted list.
TEST(TransitionsTest, ClarificationAndWrongTypes) {
  auto t = AdvanceRun(MakeRun("agent_3_plan"), "ClarificationRequest", Json::object());
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.status), "awaiting_clarification");
  EXPECT_EQ(store::OptionalName(t->run.resume_phase), "agent_3_plan");
  auto resumed = ResumeAfterClarification(t->run);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(domain::Name(resumed->phase), "agent_3_plan");
  EXPECT_EQ(domain::Name(resumed->status), "running");
  EXPECT_EQ(Next(MakeRun("agent_1_frame"), "WorkPlan", Json::object()),
            "error: Phase agent_1_frame requires ProblemFrame or ClarificationRequest; received WorkPlan");
  EXPECT_EQ(Next(MakeRun("agent_5_audit"), "ClarificationRequest", Json::object()),
            "error: Phase agent_5_audit requires ReleaseAudit; received ClarificationRequest");
  store::RunRecord done = MakeRun("agent_5_report");
  done.status = domain::RunStatus::kCompleted;
  EXPECT_EQ(Next(done, "UserReport", Json::object()), "error: Run run-1 is completed, not running");
}

// covers TEL-080: the second boundary routes to a blocked report.
TEST(TransitionsTest, ClarificationBudgetExhausted) {
  Transition t = ClarificationBudgetExhausted(MakeRun("agent_2_compile"));
  EXPECT_EQ(domain::Name(t.run.phase), "agent_5_report");
  EXPECT_EQ(store::OptionalName(t.run.outcome_hint), "blocked");
  EXPECT_EQ(domain::Name(t.run.status), "running");
}

}  // namespace
}  // namespace telic::controller
