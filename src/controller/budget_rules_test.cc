// Budget rules (REQUIREMENTS TEL-187, TEL.18): trace budget snapshots, what a
// clarification, a native subagent and a transport retry may do to the
// run's counters. Driven through RunService with examples/analyze_and_fix.
#include <gtest/gtest.h>

#include <set>

#include "controller/scenario_run_for_test.h"
#include "controller/views.h"

namespace telic::controller {
namespace {

using testing_support::ContractReviseReview;
using testing_support::RevisedContract;
using testing_support::ScenarioRun;

// The clarification of tests/e2e/test_run_rules.py (choices resume / cancel / new run).
Json Clarification(const ScenarioRun& s) {
  Json body = Json::parse(R"({
    "schemaVersion": "1.0", "id": "clarification-01", "runId": "${run}",
    "question": "Should the fix also change the farewell message?",
    "reason": "permission_expanding", "divergence": "A wider change needs authority this run does not have.",
    "evidenceInspected": ["${request}"], "blockedBoundary": "scope of the fix",
    "responseConstraints": "Pick one choice id.",
    "responseChoices": [
      {"id": "greeting-only", "label": "Greeting only", "consequence": "Fix only the greeting.",
       "authorityEffect": "within_current_authority", "runEffect": "resume"},
      {"id": "stop", "label": "Stop", "consequence": "Stop the run.",
       "authorityEffect": "within_current_authority", "runEffect": "cancel"},
      {"id": "bigger", "label": "Bigger change", "consequence": "Start a new, wider run.",
       "authorityEffect": "requires_new_run", "runEffect": "new_run"}],
    "permissionExpansionRequired": true, "rationaleSummary": "Scope is a user decision."})");
  return cli::SubstituteNames(body, s.names());
}

// The re-review of contract-02 with `decision`.
Json ReReview(const ScenarioRun& s, const std::string& decision) {
  Json review = decision == "revise" ? ContractReviseReview(s) : s.Body(s.Step("reviews the contract"));
  review["id"] = "prompt-review-02";
  review["targetRef"] = s.Uri("contract-02");
  review["revisionNumber"] = 1;
  review["coverage"][2]["sourceRef"] = s.Uri("contract-02");
  if (decision == "revise") review["findings"][0]["sourceRefs"] = Json::array({s.Uri("contract-02")});
  review["decision"] = decision;
  return review;
}

// The user's answer to the latest clarification (a UserMessage citing it).
std::string AnswerId(const ScenarioRun& s) {
  std::string id;
  for (const auto& meta : s.Artifacts()) {
    if (meta.type == domain::ArtifactType::kUserMessage && !meta.source_refs.empty()) id = meta.id;
  }
  return id;
}

struct Counters {
  int prompt_revisions;
  int remediations;
  bool operator==(const Counters&) const = default;
};

Counters Of(const store::RunRecord& run) { return {run.prompt_revisions_remaining, run.remediations_remaining}; }

// ------------------------------------------------------------------ TEL-187

// Checks every trace event from `from` on against the counters of the run
// record stored with it (`now`), internally and as telic_get_trace shows it.
void ExpectSnapshotsFrom(ScenarioRun& s, size_t from, const std::string& what) {
  store::RunRecord now = *s.store().GetRun(s.run().run_id);
  auto trace = s.Trace();
  ASSERT_GT(trace.size(), from) << what << " appended no event";
  for (size_t i = from; i < trace.size(); ++i) {
    SCOPED_TRACE(what + ": event " + trace[i].event_type);
    EXPECT_EQ(trace[i].budget_snapshot,
              (Json{{"promptRevisionsRemaining", now.prompt_revisions_remaining},
                    {"postExecutionRemediationsRemaining", now.remediations_remaining}}));
    EXPECT_EQ(TraceEventToCanonical(trace[i])["budgetSnapshot"],
              (Json{{"promptRevisions", now.prompt_revisions_remaining},
                    {"postExecutionRemediations", now.remediations_remaining},
                    {"transportRetries", 0}}));
  }
}

// covers TEL-187: through a prompt revision every event carries the counters
// the controller holds when the event is written: 1 before, 0 from the
// revise decision that spends the revision on (not the value before it).
TEST(BudgetRulesTest, SnapshotsFollowThePromptRevisionCounter) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ExpectSnapshotsFrom(s, 0, "start");
  for (const Json& step : s.Steps()) {
    if (step.value("say", "").find("reviews the contract") != std::string::npos) break;
    size_t from = s.Trace().size();
    ASSERT_TRUE(s.Do(step)) << step["say"];
    ExpectSnapshotsFrom(s, from, step["say"]);
  }
  size_t from = s.Trace().size();
  ASSERT_TRUE(s.Submit("PromptReview", ContractReviseReview(s)));
  ASSERT_EQ(s.run().prompt_revisions_remaining, 0);
  ExpectSnapshotsFrom(s, from, "revise");
  from = s.Trace().size();
  ASSERT_TRUE(s.Submit("TaskContract", RevisedContract(s), {s.Uri("contract-01"), s.Uri("prompt-review-01")}));
  ExpectSnapshotsFrom(s, from, "revised contract");
  from = s.Trace().size();
  auto passed = s.Submit("PromptReview", ReReview(s, "pass"));
  ASSERT_TRUE(passed) << passed.error().message();
  EXPECT_EQ(s.action()["phase"], "agent_3_plan");
  ExpectSnapshotsFrom(s, from, "re-review");
}

// covers TEL-187: with the shared remediation spent (0), the executor's
// ALLOW checks, a refused write's DENY record, the reviews and the report
// all carry 0 remediations.
TEST(BudgetRulesTest, SnapshotsFollowTheRemediationCounterIncludingDenials) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("plans the bounded fix"));
  ASSERT_TRUE(s.Rewrite([](store::RunRecord& run) { run.remediations_remaining = 0; }));
  bool started = false;
  for (const Json& step : s.Steps()) {
    started = started || step.value("say", "").find("plans the bounded fix") != std::string::npos;
    if (!started || step.contains("write_file")) {
      if (started) {
        ASSERT_TRUE(s.Do(step));
      }
      continue;
    }
    Json body = s.Body(step);
    if (body.contains("remainingRemediations")) body["remainingRemediations"] = 0;
    if (step.value("say", "").find("reports the fix") != std::string::npos) {
      Json denied = body;
      denied["actions"][0]["target"] = "README.md";
      denied["filesChanged"][0]["path"] = "README.md";
      size_t from = s.Trace().size();
      auto refused = s.Submit("WorkResult", denied);
      ASSERT_FALSE(refused);
      EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
      ExpectSnapshotsFrom(s, from, "deny");
      EXPECT_EQ(s.Trace().back().event_type, "permission_checked");
    }
    size_t from = s.Trace().size();
    auto done = s.Submit(step["submit"], body);
    ASSERT_TRUE(done) << step["say"] << ": " << done.error().message();
    ExpectSnapshotsFrom(s, from, step["say"]);
  }
  EXPECT_EQ(domain::Name(s.run().status), "completed");
  EXPECT_EQ(s.run().remediations_remaining, 0);
}

// ------------------------------------------------------------------ TEL-240

// covers TEL-240: a clarification after the prompt revision was spent gives
// it back neither while the user is asked nor after the resume; the resumed
// re-review still cannot obtain a second revision.
TEST(BudgetRulesTest, ClarificationDoesNotRestoreThePromptRevision) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("reviews the contract"));
  ASSERT_TRUE(s.Submit("PromptReview", ContractReviseReview(s)));
  ASSERT_EQ(domain::Name(s.run().phase), "agent_2_revise");
  ASSERT_EQ(Of(s.run()), (Counters{0, 1}));
  auto asked = s.Submit("ClarificationRequest", Clarification(s));
  ASSERT_TRUE(asked) << asked.error().message();
  ASSERT_EQ(domain::Name(s.run().status), "awaiting_clarification");
  EXPECT_EQ(Of(s.run()), (Counters{0, 1}));
  EXPECT_EQ(s.action()["remainingBudgets"]["promptRevisions"], 0);
  ASSERT_TRUE(s.Answer("greeting-only"));
  EXPECT_EQ(domain::Name(s.run().phase), "agent_2_revise");
  EXPECT_EQ(Of(s.run()), (Counters{0, 1}));
  EXPECT_EQ(s.action()["remainingBudgets"]["promptRevisions"], 0);
  EXPECT_EQ(s.action()["remainingBudgets"]["postExecutionRemediations"], 1);
  auto revised = s.Submit("TaskContract", RevisedContract(s),
                          {s.Uri("contract-01"), s.Uri("prompt-review-01"), s.Uri("clarification-01"), s.Uri(AnswerId(s))});
  ASSERT_TRUE(revised) << revised.error().message();
  ASSERT_EQ(domain::Name(s.run().phase), "agent_1_review");
  auto again = s.Submit("PromptReview", ReReview(s, "revise"));
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message().find("revise is allowed only at revision 0"), std::string::npos)
      << again.error().message();
  store::RunRecord now = *s.store().GetRun(s.run().run_id);
  EXPECT_EQ(domain::Name(now.phase), "agent_1_review");
  EXPECT_EQ(Of(now), (Counters{0, 1}));
}

// covers TEL-240: a clarification while the shared remediation is spent (and
// the prompt revision too) restores neither counter, through the question,
// the resume and the resumed phase's action.
TEST(BudgetRulesTest, ClarificationDoesNotRestoreTheRemediation) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("plans the bounded fix"));
  ASSERT_EQ(domain::Name(s.run().phase), "agent_3_plan");
  ASSERT_TRUE(s.Rewrite([](store::RunRecord& run) {
    run.remediations_remaining = 0;
    run.prompt_revisions_remaining = 0;
  }));
  ASSERT_TRUE(s.Submit("ClarificationRequest", Clarification(s)));
  EXPECT_EQ(Of(s.run()), (Counters{0, 0}));
  EXPECT_EQ(s.action()["remainingBudgets"]["postExecutionRemediations"], 0);
  ASSERT_TRUE(s.Answer("greeting-only"));
  EXPECT_EQ(domain::Name(s.run().phase), "agent_3_plan");
  EXPECT_EQ(Of(*s.store().GetRun(s.run().run_id)), (Counters{0, 0}));
  EXPECT_EQ(s.action()["remainingBudgets"]["promptRevisions"], 0);
  EXPECT_EQ(s.action()["remainingBudgets"]["postExecutionRemediations"], 0);
}

// ------------------------------------------------------------------ TEL-242

// covers TEL-242: a host with native subagents gets the same two shared
// quality budgets as one without, no retry allowance appears in the
// envelope or the action, and a plan cannot reserve retries for a node.
TEST(BudgetRulesTest, NativeSubagentsGetNoRetryAllowanceOfTheirOwn) {
  Json budgets[2];
  for (int native = 0; native < 2; ++native) {
    ScenarioRun s;
    ASSERT_TRUE(s.Start([&](StartRunRequest& r) { r.native_subagents = native ? "available" : "unavailable"; }));
    budgets[native] = s.Artifact(s.run().run_id)["budgets"];
    EXPECT_EQ(Of(s.run()), (Counters{1, 1}));
    std::set<std::string> keys;
    for (auto it = s.action()["remainingBudgets"].begin(); it != s.action()["remainingBudgets"].end(); ++it) {
      keys.insert(it.key());
    }
    EXPECT_EQ(keys, (std::set<std::string>{"maximumParallelWorkers", "maximumSubagentDepth", "postExecutionRemediations",
                                           "promptRevisions", "remainingPlanToolCalls"}));
    if (!native) continue;
    ASSERT_TRUE(s.RunUntil("plans the read-only diagnosis"));
    Json plan = s.Body(s.Step("plans the read-only diagnosis"));
    Json retries = plan;
    retries["nodes"][0]["budgets"]["maximumRetries"] = 3;
    auto refused = s.Submit("WorkPlan", retries);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.error().message().find("WorkPlan failed schema validation"), std::string::npos);
    ASSERT_TRUE(s.Submit("WorkPlan", plan));
  }
  EXPECT_EQ(budgets[1]["promptRevisions"], budgets[0]["promptRevisions"]);
  EXPECT_EQ(budgets[1]["postExecutionRemediations"], budgets[0]["postExecutionRemediations"]);
  EXPECT_EQ(budgets[1]["maximumSubagentDepth"], 1);
  EXPECT_EQ(budgets[1].size(), 4u);
}

// ------------------------------------------------------------------ TEL-243

// covers TEL-243: an idempotent call the host retries after a transport
// failure (the same Evidence submission) is answered with the artifact
// already stored, adding no artifact, event or version; the trace reports
// transportRetries 0 because telic performs none itself.
TEST(BudgetRulesTest, RetriedIdempotentSubmissionReplaysTheStoredArtifact) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("captures the source"));
  Json evidence = s.Body(s.Step("captures the source"));
  SubmitRequest request{s.run().run_id, ActionId(s.run()), s.run().version, "Evidence", evidence, {}, {}, {}};
  auto first = s.service().SubmitArtifact(request);
  ASSERT_TRUE(first && first->artifact);
  size_t artifacts = s.Artifacts().size();
  size_t events = s.Trace().size();
  auto retry = s.service().SubmitArtifact(request);
  ASSERT_TRUE(retry) << retry.error().message();
  ASSERT_TRUE(retry->artifact);
  EXPECT_EQ(retry->artifact->sha256, first->artifact->sha256);
  EXPECT_EQ(retry->artifact->created_at, first->artifact->created_at);
  EXPECT_EQ(retry->run.version, first->run.version);
  EXPECT_EQ(retry->next_action, first->next_action);
  EXPECT_EQ(s.Artifacts().size(), artifacts);
  EXPECT_EQ(s.Trace().size(), events);
  for (const auto& event : s.Trace()) EXPECT_EQ(TraceEventToCanonical(event)["budgetSnapshot"]["transportRetries"], 0);
}

// ------------------------------------------------------------------ TEL-244

// covers TEL-244: the host retrying an accepted phase submission with the
// same tokens does not run the phase again: it is refused as stale, stores
// nothing, and the spent revision is neither spent twice nor given back;
// fresh tokens do not let the same review re-run the phase either.
TEST(BudgetRulesTest, RetriedPhaseSubmissionNeitherRerunsThePhaseNorResetsBudgets) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("reviews the contract"));
  SubmitRequest review{s.run().run_id, ActionId(s.run()), s.run().version, "PromptReview", ContractReviseReview(s), {}, {}, {}};
  auto accepted = s.Send(review);
  ASSERT_TRUE(accepted);
  ASSERT_EQ(Of(s.run()), (Counters{0, 1}));
  size_t artifacts = s.Artifacts().size();
  size_t events = s.Trace().size();
  store::RunRecord after = *s.store().GetRun(s.run().run_id);
  auto stale = s.service().SubmitArtifact(review);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), ErrorCode::kStaleVersion);
  SubmitRequest fresh = review;
  fresh.action_id = ActionId(after);
  fresh.expected_version = after.version;
  auto rerun = s.service().SubmitArtifact(fresh);
  ASSERT_FALSE(rerun);
  EXPECT_EQ(rerun.error().code(), ErrorCode::kInvalidArgument);
  store::RunRecord now = *s.store().GetRun(s.run().run_id);
  EXPECT_EQ(now.version, after.version);
  EXPECT_EQ(domain::Name(now.phase), "agent_2_revise");
  EXPECT_EQ(Of(now), (Counters{0, 1}));
  EXPECT_EQ(s.Artifacts().size(), artifacts);
  EXPECT_EQ(s.Trace().size(), events);
}

// covers TEL-244: retried grounding and a retried accepted WorkResult are
// refused as stale: no second manifest, no second result, no version bump.
TEST(BudgetRulesTest, RetriedGroundingAndResultAreRefusedAsStale) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  store::RunRecord before = s.run();
  ASSERT_TRUE(s.Ground());
  GroundContextRequest again{before.run_id, ActionId(before), before.version, {}, Json::object()};
  auto regrounded = s.service().GroundContext(again);
  ASSERT_FALSE(regrounded);
  EXPECT_EQ(regrounded.error().code(), ErrorCode::kStaleVersion);
  for (const Json& step : s.Steps()) {
    if (step.contains("ground")) continue;
    if (step.value("say", "").find("reports the diagnosis") != std::string::npos) break;
    ASSERT_TRUE(s.Do(step)) << step["say"];
  }
  SubmitRequest result{s.run().run_id, ActionId(s.run()), s.run().version, "WorkResult",
                       s.Body(s.Step("reports the diagnosis")), {}, {}, {}};
  ASSERT_TRUE(s.Send(result));
  store::RunRecord after = *s.store().GetRun(s.run().run_id);
  size_t artifacts = s.Artifacts().size();
  auto retried = s.service().SubmitArtifact(result);
  ASSERT_FALSE(retried);
  EXPECT_EQ(retried.error().code(), ErrorCode::kStaleVersion);
  EXPECT_EQ(s.store().GetRun(s.run().run_id)->version, after.version);
  EXPECT_EQ(s.Artifacts().size(), artifacts);
  int manifests = 0, results = 0;
  for (const auto& meta : s.Artifacts()) {
    manifests += meta.type == domain::ArtifactType::kContextManifest;
    results += meta.type == domain::ArtifactType::kWorkResult;
  }
  EXPECT_EQ(manifests, 1);
  EXPECT_EQ(results, 1);
}

}  // namespace
}  // namespace telic::controller
