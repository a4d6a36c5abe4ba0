// Body refinements beyond JSON Schema (PROTOCOL §13 rules).
#include "protocol/refinements.h"

#include <gtest/gtest.h>

namespace telic::protocol {
namespace {

std::vector<std::string> Pointers(std::string_view type, const Json& body) {
  std::vector<std::string> out;
  for (const Issue& issue : CheckRefinements(type, body)) {
    EXPECT_EQ(issue.code, "custom");
    out.push_back(issue.pointer);
  }
  return out;
}

using P = std::vector<std::string>;

Json Choice(std::string id, std::string authority, std::string effect) {
  return {{"id", id}, {"label", id}, {"consequence", "consequence of " + id}, {"authorityEffect", authority}, {"runEffect", effect}};
}

// covers TEL-074: duplicate choice ids are refused (/responseChoices/1/id).
TEST(RefinementsTest, ClarificationChoicesFollowTheirReason) {
  Json ok = {{"reason", "permission_expanding"}, {"permissionExpansionRequired", true},
             {"responseChoices", {Choice("keep", "within_current_authority", "resume"), Choice("new", "requires_new_run", "new_run")}}};
  EXPECT_EQ(Pointers("ClarificationRequest", ok), P{});
  Json bad = ok;
  bad["permissionExpansionRequired"] = false;
  bad["responseChoices"][1]["runEffect"] = "cancel";
  EXPECT_EQ(Pointers("ClarificationRequest", bad),
            (P{"/permissionExpansionRequired", "/responseChoices/1/runEffect"}));
  bad["responseChoices"][0]["runEffect"] = "cancel";
  bad["responseChoices"][1]["runEffect"] = "new_run";
  EXPECT_EQ(Pointers("ClarificationRequest", bad), (P{"/permissionExpansionRequired", "/responseChoices"}));
  Json user_owned = {{"reason", "user_owned_materially_divergent"}, {"permissionExpansionRequired", false},
                     {"responseChoices", {Choice("a", "within_current_authority", "resume"), Choice("a", "requires_new_run", "new_run")}}};
  EXPECT_EQ(Pointers("ClarificationRequest", user_owned),
            (P{"/responseChoices/1/id", "/responseChoices/1/consequence", "/responseChoices/1/authorityEffect"}));
}

TEST(RefinementsTest, ProblemFrameIdsAreUniqueAndUserOwnedUnknownsNeedClarification) {
  Json frame = {{"knownFacts", {{{"id", "f1"}}}},
                {"inferences", {{{"id", "f1"}}}},
                {"unknowns", {{{"id", "u1"}, {"classification", "permission_expanding"}}}},
                {"draftAcceptanceCriteria", Json::array()},
                {"clarification", {{"required", false}, {"reason", nullptr}}}};
  EXPECT_EQ(Pointers("ProblemFrame", frame), (P{"/inferences/0/id", "/clarification/required"}));
}

// covers TEL-048
TEST(RefinementsTest, TaskContractVerificationAndModeRules) {
  Json contract = {{"intentMode", "analyze_and_fix"},
                   {"acceptanceCriteria", {{{"id", "c1"}, {"stage", "completion"}}}},
                   {"verificationRequirements", {{{"id", "v1"}, {"stage", "completion"}, {"required", true}}}},
                   {"permissions", Json::object()}};
  EXPECT_EQ(Pointers("TaskContract", contract), (P{"/acceptanceCriteria", "/verificationRequirements"}));
  Json plan = {{"intentMode", "plan_only"},
               {"acceptanceCriteria", {{{"id", "c1"}, {"stage", "completion"}}}},
               {"verificationRequirements", {{{"id", "v1"}, {"stage", "diagnosis"}, {"required", false}}}},
               {"permissions", {{"repository", {{"write", {"**"}}}}}}};
  EXPECT_EQ(Pointers("TaskContract", plan), (P{"/verificationRequirements/0/stage", "/permissions"}));
  Json fix = {{"intentMode", "fix_only"}, {"acceptanceCriteria", Json::array()}, {"verificationRequirements", Json::array()}};
  EXPECT_EQ(Pointers("TaskContract", fix), P{"/verificationRequirements"});
}

TEST(RefinementsTest, PromptReadinessScoreUsesJsRounding) {
  Json scores = {{"intentFidelity", 90}, {"repositoryGrounding", 85}, {"constraintsAndPermissions", 80},
                 {"testableAcceptance", 75}, {"executionFeasibility", 70}, {"contextEfficiency", 65}};
  EXPECT_DOUBLE_EQ(PromptReadinessScore(scores), 81.25);
  Json review = {{"dimensionScores", scores}, {"overallScore", 81.2}, {"decision", "pass"},
                 {"hardGates", {{{"passed", true}}}}, {"findings", Json::array()}, {"coverage", {{{"status", "covered"}}}}};
  EXPECT_EQ(Pointers("PromptReview", review), P{"/overallScore"});
  review["overallScore"] = 81.25;
  EXPECT_EQ(Pointers("PromptReview", review), P{});
  review["decision"] = "revise";
  review["revisionNumber"] = 1;
  EXPECT_EQ(Pointers("PromptReview", review), (P{"/revisionNumber", "/findings", "/findings"}));
}

TEST(RefinementsTest, WorkPlanGraphMustBeAcyclicWithKnownDependencies) {
  Json plan = {{"nodes", {{{"id", "a"}, {"dependsOn", {"b"}}}, {{"id", "b"}, {"dependsOn", {"a"}}}, {{"id", "c"}, {"dependsOn", {"c", "zz"}}}}}};
  EXPECT_EQ(Pointers("WorkPlan", plan), (P{"/nodes/2/dependsOn/0", "/nodes/2/dependsOn/1", "/nodes"}));
  Json ok = {{"nodes", {{{"id", "a"}, {"dependsOn", Json::array()}}, {{"id", "b"}, {"dependsOn", {"a"}}}}}};
  EXPECT_EQ(Pointers("WorkPlan", ok), P{});
}

// A dependency is named once (stricter than the reference; docs/DECISIONS.md D48).
TEST(RefinementsTest, WorkPlanDependencyNamedTwiceIsRefused) {
  Json plan = {{"nodes", {{{"id", "a"}, {"dependsOn", Json::array()}}, {{"id", "b"}, {"dependsOn", {"a", "a"}}}}}};
  EXPECT_EQ(Pointers("WorkPlan", plan), P{"/nodes/1/dependsOn/1"});
}

// covers TEL-003
// covers TEL-140: an observed claim filed under inferences is refused (/inferences/0/status).
TEST(RefinementsTest, WorkResultCompletionNeedsEvidence) {
  Json result = {{"status", "completed"},
                 {"observations", {{{"status", "observed"}, {"evidenceRefs", Json::array()}}}},
                 {"inferences", {{{"status", "observed"}, {"evidenceRefs", {"artifact://r/e"}}}}},
                 {"actions", {{{"status", "denied"}, {"evidenceRefs", Json::array()}}}},
                 {"filesChanged", {{{"changeType", "modified"}, {"beforeHash", "sha256:a"}, {"afterHash", "sha256:a"}}}},
                 {"testResults", {{{"status", "passed"}, {"outputRef", nullptr}}}},
                 {"acceptanceCoverage", {{{"status", "unverified"}, {"evidenceRefs", Json::array()}}}},
                 {"evidenceRefs", Json::array()}};
  EXPECT_EQ(Pointers("WorkResult", result),
            (P{"/observations/0/evidenceRefs", "/inferences/0/status", "/filesChanged/0", "/testResults/0/outputRef",
               "/evidenceRefs", "/actions", "/acceptanceCoverage"}));
}

TEST(RefinementsTest, QualityReviewDecisionsNeedTheirEvidence) {
  Json review = {{"workPlanRefs", Json::array()}, {"workResultRefs", {"artifact://r/w"}}, {"decision", "pass"}, {"score", 79},
                 {"hardGates", {{{"passed", true}}}}, {"findings", Json::array()},
                 {"acceptanceResults", {{{"status", "fail"}, {"evidenceRefs", {"artifact://r/e"}}}}},
                 {"ruleCompliance", Json::array()}, {"regressionChecks", Json::array()}, {"verificationResults", Json::array()},
                 {"remediationWorkOrder", nullptr}, {"diagnosisGate", nullptr}};
  EXPECT_EQ(Pointers("QualityReview", review), (P{"/score", "/acceptanceResults"}));
  review["decision"] = "remediate";
  review["remainingRemediations"] = 0;
  EXPECT_EQ(Pointers("QualityReview", review), P{"/remediationWorkOrder"});
  review["decision"] = "proceed_to_fix";
  review["score"] = 90;
  EXPECT_EQ(Pointers("QualityReview", review), P{"/diagnosisGate"});
}

TEST(RefinementsTest, ReleaseAuditAndUserReportStayHonest) {
  Json audit = {{"workResultRefs", {"artifact://r/w"}}, {"decision", "release"}, {"modeCompliance", "pass"},
                {"userFidelity", {{{"status", "pass"}, {"evidenceRefs", {"artifact://r/e"}}}}},
                {"claimEvidenceMatrix", {{{"claimId", "c"}, {"status", "unverified"}, {"evidenceRefs", Json::array()}}}},
                {"findings", Json::array()}, {"remediationDefect", nullptr}, {"userReportRef", nullptr}};
  EXPECT_EQ(Pointers("ReleaseAudit", audit), (P{"/decision", "/userReportRef"}));
  Json report = {{"terminalStatus", "completed"}, {"permissionsHonored", true},
                 {"completionClaims", {{{"status", "unverified"}, {"evidenceRefs", Json::array()}}}}};
  EXPECT_EQ(Pointers("UserReport", report), P{"/completionClaims/0"});
  Json partial = {{"terminalStatus", "partial"}, {"completionClaims", Json::array()}};
  EXPECT_EQ(Pointers("UserReport", partial), P{"/terminalStatus"});
}

TEST(RefinementsTest, ContextManifestTotalsMatchItsCandidates) {
  Json manifest = {{"candidates", {{{"ref", "repo://a"}, {"decision", "selected"}, {"byteSize", 10}},
                                   {{"ref", "repo://a"}, {"decision", "selected"}, {"byteSize", 5}}}},
                   {"excludedCandidateSummaries", {{{"reason", "binary_file"}}, {{"reason", "binary_file"}}}},
                   {"budget", {{"selectedFiles", 2}, {"selectedBytes", 14}, {"maximumTotalBytes", 12}}}};
  EXPECT_EQ(Pointers("ContextManifest", manifest),
            (P{"/candidates/1/ref", "/budget/selectedBytes", "/budget/selectedBytes", "/excludedCandidateSummaries/1/reason"}));
}

TEST(RefinementsTest, UnknownTypesHaveNoRefinements) {
  EXPECT_TRUE(CheckRefinements("Nope", Json::object()).empty());
  EXPECT_TRUE(CheckRefinements("WorkPlan", Json::array()).empty());
}

}  // namespace
}  // namespace telic::protocol
