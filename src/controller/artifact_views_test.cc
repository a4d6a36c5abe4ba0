#include "controller/artifact_views.h"

#include <gtest/gtest.h>

#include "cli/demo.h"

namespace telic::controller {
namespace {

// The bodies the analyze_and_fix example submits, of `type`, in order.
std::vector<Json> ExampleBodies(const std::string& type) {
  Result<Json> scenario = cli::LoadScenario("analyze_and_fix");
  EXPECT_TRUE(scenario.has_value());
  std::vector<Json> out;
  if (!scenario) return out;
  for (const Json& step : (*scenario)["steps"]) {
    if (step.value("submit", "") == type) out.push_back(step["body"]);
  }
  EXPECT_FALSE(out.empty()) << type;
  return out;
}

// The single issue's pointer of a failed view, or "<ok>".
template <typename T>
std::string FailurePointer(const Result<T>& view) {
  if (view) return "<ok>";
  EXPECT_EQ(view.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(view.error().issues().size(), 1u);
  return view.error().issues().empty() ? "<none>" : view.error().issues()[0].pointer;
}

TEST(ArtifactViewsTest, ExampleWorkResultsReadInBodyOrder) {
  for (const Json& body : ExampleBodies("WorkResult")) {
    Result<WorkResultView> view = ViewWorkResult(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->status), body["status"].get<std::string>());
    EXPECT_EQ(view->node_id, body["nodeId"].get<std::string>());
    ASSERT_EQ(view->actions.size(), body["actions"].size());
    for (size_t i = 0; i < view->actions.size(); ++i) {
      const Json& action = body["actions"][i];
      EXPECT_EQ(Name(view->actions[i].status), action["status"].get<std::string>());
      EXPECT_EQ(view->actions[i].capability, action["capability"].get<std::string>());
      EXPECT_EQ(view->actions[i].mutating, action["mutating"].get<bool>());
      EXPECT_EQ(view->actions[i].body, &action);
    }
    ASSERT_EQ(view->files_changed.size(), body["filesChanged"].size());
    ASSERT_EQ(view->acceptance_coverage.size(), body["acceptanceCoverage"].size());
  }
}

TEST(ArtifactViewsTest, LastCompletedMutationIsTheLastCompletedMutatingAction) {
  std::vector<Json> results = ExampleBodies("WorkResult");
  Json body = results.back();
  Result<WorkResultView> view = ViewWorkResult(body);
  ASSERT_TRUE(view.has_value());
  int64_t expected = -1;
  for (size_t i = 0; i < body["actions"].size(); ++i) {
    const Json& a = body["actions"][i];
    if (a["mutating"] == true && a["status"] == Name(ActionStatus::kCompleted)) expected = static_cast<int64_t>(i);
  }
  EXPECT_GE(expected, 0) << "the fix result mutates";
  EXPECT_EQ(view->LastCompletedMutation(), expected);
  body["actions"][static_cast<size_t>(expected)]["status"] = "failed";
  Result<WorkResultView> failed = ViewWorkResult(body);
  ASSERT_TRUE(failed.has_value());
  EXPECT_LT(failed->LastCompletedMutation(), expected);
}

TEST(ArtifactViewsTest, ExampleReviewsAuditsAndReportsBuild) {
  for (const Json& body : ExampleBodies("QualityReview")) {
    Result<QualityReviewView> view = ViewQualityReview(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->decision), body["decision"].get<std::string>());
    EXPECT_EQ(view->has_diagnosis_gate, body["diagnosisGate"].is_object());
    EXPECT_EQ(view->verification_results.size(), body["verificationResults"].size());
  }
  for (const Json& body : ExampleBodies("ReleaseAudit")) {
    Result<ReleaseAuditView> view = ViewReleaseAudit(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->decision), body["decision"].get<std::string>());
    EXPECT_EQ(Name(view->mode_compliance), body["modeCompliance"].get<std::string>());
    EXPECT_EQ(view->claim_evidence_matrix.size(), body["claimEvidenceMatrix"].size());
  }
  for (const Json& body : ExampleBodies("UserReport")) {
    Result<UserReportView> view = ViewUserReport(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->terminal_status), body["terminalStatus"].get<std::string>());
    EXPECT_EQ(view->completion_claims.size(), body["completionClaims"].size());
  }
  for (const Json& body : ExampleBodies("PromptReview")) {
    Result<PromptReviewView> view = ViewPromptReview(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->decision), body["decision"].get<std::string>());
  }
  for (const Json& body : ExampleBodies("TaskContract")) {
    Result<TaskContractView> view = ViewTaskContract(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(view->acceptance_criteria.size(), body["acceptanceCriteria"].size());
    size_t diagnosis = 0;
    for (const Json& c : body["acceptanceCriteria"]) diagnosis += c["stage"] == "diagnosis";
    EXPECT_EQ(view->CriterionIds(CriterionStage::kDiagnosis).size(), diagnosis);
    EXPECT_EQ(view->CriterionIds().size(), body["acceptanceCriteria"].size());
  }
}

TEST(ArtifactViewsTest, MissingOrMistypedMemberNamesItsPointer) {
  Json body = ExampleBodies("WorkResult").front();
  ASSERT_FALSE(body["actions"].empty());
  Json missing = body;
  missing["actions"][0].erase("status");
  EXPECT_EQ(FailurePointer(ViewWorkResult(missing)), "/actions/0/status");
  Json unknown = body;
  unknown["actions"][0]["status"] = "done";
  Result<WorkResultView> view = ViewWorkResult(unknown);
  EXPECT_EQ(FailurePointer(view), "/actions/0/status");
  EXPECT_NE(view.error().message().find("must be one of: completed, failed, denied, skipped"), std::string::npos);
  Json mistyped = body;
  mistyped["toolEventRefs"] = Json::array({1});
  EXPECT_EQ(FailurePointer(ViewWorkResult(mistyped)), "/toolEventRefs/0");
  Json not_object = body;
  not_object["actions"][0] = "read";
  EXPECT_EQ(FailurePointer(ViewWorkResult(not_object)), "/actions/0");
  EXPECT_EQ(FailurePointer(ViewWorkResult(Json::array())), "");
  EXPECT_EQ(FailurePointer(ViewUserReport(Json::object())), "/terminalStatus");
}

TEST(ArtifactViewsTest, NullableMembersReadAsAbsent) {
  Json audit = ExampleBodies("ReleaseAudit").front();
  audit["userReportRef"] = nullptr;
  audit["remediationDefect"] = nullptr;
  Result<ReleaseAuditView> view = ViewReleaseAudit(audit);
  ASSERT_TRUE(view.has_value()) << view.error().message();
  EXPECT_FALSE(view->user_report_ref.has_value());
  EXPECT_EQ(view->remediation_defect, nullptr);
  audit["userReportRef"] = 7;
  EXPECT_EQ(FailurePointer(ViewReleaseAudit(audit)), "/userReportRef");

  Json review = ExampleBodies("QualityReview").front();
  review["diagnosisGate"] = nullptr;
  review["ruleCompliance"] = Json::array({{{"subjectRef", nullptr}}});
  Result<QualityReviewView> reviewed = ViewQualityReview(review);
  ASSERT_TRUE(reviewed.has_value()) << reviewed.error().message();
  EXPECT_FALSE(reviewed->has_diagnosis_gate);
  EXPECT_EQ(reviewed->correction_work_order, nullptr);
  EXPECT_TRUE(reviewed->rule_compliance_subjects.empty());
}

TEST(ArtifactViewsTest, ProblemFrameAndEvidenceRead) {
  for (const Json& body : ExampleBodies("ProblemFrame")) {
    Result<ProblemFrameView> view = ViewProblemFrame(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(domain::Name(view->intent_mode), body["intentMode"].get<std::string>());
    ASSERT_EQ(view->known_facts.size(), body["knownFacts"].size());
    for (size_t i = 0; i < view->known_facts.size(); ++i) {
      EXPECT_EQ(Name(view->known_facts[i].provenance), body["knownFacts"][i]["provenance"].get<std::string>());
    }
    EXPECT_EQ(view->draft_criteria, body["draftAcceptanceCriteria"].size());
    EXPECT_EQ(view->clarification_required, body["clarification"]["required"].get<bool>());
    EXPECT_EQ(view->body, &body);
    Json unknown_mode = body;
    unknown_mode["intentMode"] = "fix_everything";
    EXPECT_EQ(FailurePointer(ViewProblemFrame(unknown_mode)), "/intentMode");
  }
  for (const Json& body : ExampleBodies("Evidence")) {
    Result<EvidenceView> view = ViewEvidence(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->kind), body["kind"].get<std::string>());
  }
}

TEST(ArtifactViewsTest, ExampleWorkPlansReadTheirNodesAndBudgets) {
  for (const Json& body : ExampleBodies("WorkPlan")) {
    Result<WorkPlanView> view = ViewWorkPlan(body);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    EXPECT_EQ(Name(view->plan_validation), body["planValidation"].get<std::string>());
    EXPECT_EQ(view->maximum_tool_calls, body["globalBudgets"]["maximumToolCalls"].get<int64_t>());
    ASSERT_EQ(view->nodes.size(), body["nodes"].size());
    for (size_t i = 0; i < view->nodes.size(); ++i) {
      const Json& node = body["nodes"][i];
      EXPECT_EQ(view->nodes[i].id, node["id"].get<std::string>());
      EXPECT_EQ(view->nodes[i].maximum_tool_calls, node["budgets"]["maximumToolCalls"].get<int64_t>());
      EXPECT_EQ(view->nodes[i].permissions, &node["permissions"]);
    }
    Json broken = body;
    broken["nodes"][0]["budgets"].erase("maximumChildren");
    EXPECT_EQ(FailurePointer(ViewWorkPlan(broken)), "/nodes/0/budgets/maximumChildren");
  }
}

TEST(ArtifactViewsTest, IntegralFloatsReadAsIntegersAsInSchemaValidation) {
  Json contract = ExampleBodies("TaskContract").front();
  contract["version"] = 1.0;
  Result<TaskContractView> view = ViewTaskContract(contract);
  ASSERT_TRUE(view.has_value()) << view.error().message();
  EXPECT_EQ(view->version, 1);
  contract["version"] = 1.5;
  EXPECT_EQ(FailurePointer(ViewTaskContract(contract)), "/version");
  contract["version"] = "1";
  EXPECT_EQ(FailurePointer(ViewTaskContract(contract)), "/version");
}

}  // namespace
}  // namespace telic::controller
