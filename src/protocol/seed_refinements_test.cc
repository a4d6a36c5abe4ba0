// Seed rules enforced by the body refinements (issue 21 item 6).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/refinements.h"

namespace telic::protocol {
namespace {

std::vector<std::string> SeedRefinementPointers(std::string_view type, const Json& body) {
  std::vector<std::string> out;
  for (const Issue& issue : CheckRefinements(type, body)) out.push_back(issue.pointer);
  return out;
}

bool SeedHas(std::string_view type, const Json& body, const std::string& pointer) {
  for (const auto& p : SeedRefinementPointers(type, body)) {
    if (p == pointer) return true;
  }
  return false;
}

Json SeedScores(double each) {
  return {{"intentFidelity", each},     {"repositoryGrounding", each},  {"constraintsAndPermissions", each},
          {"testableAcceptance", each}, {"executionFeasibility", each}, {"contextEfficiency", each}};
}

Json SeedPassingReview(double each) {
  Json scores = SeedScores(each);
  return {{"dimensionScores", scores},     {"overallScore", PromptReadinessScore(scores)},
          {"decision", "pass"},            {"hardGates", {{{"passed", true}}}},
          {"findings", Json::array()},     {"coverage", {{{"status", "covered"}}}}};
}

// covers TEL-109: pass needs an overall score of at least 80; 80.00 passes,
// 79.95 does not.
TEST(SeedRefinementsTest, PassNeedsAnOverallScoreOfEighty) {
  EXPECT_EQ(SeedRefinementPointers("PromptReview", SeedPassingReview(80)), std::vector<std::string>{});
  Json below = SeedPassingReview(80);
  below["dimensionScores"]["contextEfficiency"] = 79;  // 80 - 0.05
  below["overallScore"] = PromptReadinessScore(below["dimensionScores"]);
  ASSERT_DOUBLE_EQ(below["overallScore"].get<double>(), 79.95);
  EXPECT_EQ(SeedRefinementPointers("PromptReview", below), std::vector<std::string>{"/overallScore"});
  Json low = SeedPassingReview(50);
  EXPECT_TRUE(SeedHas("PromptReview", low, "/overallScore"));
  low["decision"] = "block";
  low["hardGates"][0]["passed"] = false;
  EXPECT_FALSE(SeedHas("PromptReview", low, "/overallScore"));
}

// covers TEL-113: a revise must name at least one typed correction field.
TEST(SeedRefinementsTest, ReviseNamesACorrectionField) {
  Json review = SeedPassingReview(90);
  review["decision"] = "revise";
  review["revisionNumber"] = 0;
  review["findings"] = {{{"severity", "blocking"},
                         {"sourceRefs", {"artifact://r/contract"}},
                         {"requiredCorrection", "Name the outputs."},
                         {"correctionFields", {"requiredOutputs"}}}};
  EXPECT_EQ(SeedRefinementPointers("PromptReview", review), std::vector<std::string>{});
  review["findings"][0]["correctionFields"] = Json::array();
  EXPECT_EQ(SeedRefinementPointers("PromptReview", review), std::vector<std::string>{"/findings"});
}

Json SeedQualityReview(const std::string& decision) {
  Json pass = {{"status", "pass"}, {"evidenceRefs", {"artifact://r/e"}}};
  Json review = {{"workPlanRefs", {"artifact://r/p"}}, {"workResultRefs", {"artifact://r/w"}}, {"decision", decision},
                 {"score", 95}, {"hardGates", {{{"passed", true}}}}, {"findings", Json::array()},
                 {"acceptanceResults", {pass}}, {"ruleCompliance", {pass}}, {"regressionChecks", {pass}},
                 {"verificationResults", {pass}}, {"remediationWorkOrder", nullptr}, {"diagnosisGate", nullptr}};
  if (decision == "proceed_to_fix") {
    review["diagnosisGate"] = {{"status", "supported"},
                               {"withinApprovedScope", true},
                               {"permissionsSufficient", true},
                               {"directEvidenceRefs", {"artifact://r/e"}},
                               {"correctionWorkOrder", {{"sourceRefs", {"artifact://r/e"}}}}};
  }
  return review;
}

// covers TEL-149: pass or proceed_to_fix is refused when any rule-compliance
// or regression check failed.
TEST(SeedRefinementsTest, PassOrProceedRefusedWhenAComplianceOrRegressionCheckFailed) {
  for (const std::string decision : {"pass", "proceed_to_fix"}) {
    SCOPED_TRACE(decision);
    Json review = SeedQualityReview(decision);
    EXPECT_EQ(SeedRefinementPointers("QualityReview", review), std::vector<std::string>{});
    for (const char* list : {"ruleCompliance", "regressionChecks"}) {
      Json failed = review;
      failed[list][0]["status"] = "fail";
      EXPECT_EQ(SeedRefinementPointers("QualityReview", failed), std::vector<std::string>{"/decision"}) << list;
    }
    Json partial = review;
    partial["decision"] = "partial";
    partial["diagnosisGate"] = nullptr;
    partial["ruleCompliance"][0]["status"] = "fail";
    EXPECT_FALSE(SeedHas("QualityReview", partial, "/decision"));
  }
}

// covers TEL-167: release is refused unless every user-fidelity check passes.
TEST(SeedRefinementsTest, ReleaseNeedsEveryUserFidelityCheckPassing) {
  Json pass = {{"status", "pass"}, {"evidenceRefs", {"artifact://r/e"}}};
  Json audit = {{"workResultRefs", {"artifact://r/w"}},
                {"decision", "release"},
                {"modeCompliance", "pass"},
                {"userFidelity", {pass, pass}},
                {"claimEvidenceMatrix", {{{"claimId", "c"}, {"status", "supported"}, {"evidenceRefs", {"artifact://r/e"}}}}},
                {"findings", Json::array()},
                {"remediationDefect", nullptr},
                {"userReportRef", "artifact://r/report"}};
  EXPECT_EQ(SeedRefinementPointers("ReleaseAudit", audit), std::vector<std::string>{});
  for (const std::string status : {"fail", "unverified"}) {
    Json failed = audit;
    failed["userFidelity"][1]["status"] = status;
    EXPECT_EQ(SeedRefinementPointers("ReleaseAudit", failed), std::vector<std::string>{"/decision"}) << status;
  }
}

}  // namespace
}  // namespace telic::protocol
