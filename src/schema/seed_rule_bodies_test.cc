// Seed rules enforced by the artifact body schemas (issue 21 item 6): each
// test starts from a golden body of tests/fixtures/artifacts/valid, changes
// the one field the rule is about, and checks the schema's verdict.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/json_parse.h"
#include "schema/registry.h"
#include "schema/validator.h"

namespace telic::schema {
namespace {

namespace fs = std::filesystem;

Json SeedGolden(const std::string& name) {
  fs::path path = fs::path(__FILE__).parent_path().parent_path().parent_path() / "tests" / "fixtures" / "artifacts" /
                  "valid" / (name + ".json");
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseJsonStrict(text.str());
  EXPECT_TRUE(parsed.has_value()) << path;
  return parsed ? *parsed : Json::object();
}

// The pointers of the issues `type`'s schema finds in `body` (validated on a copy).
std::vector<std::string> SeedIssuePointers(const std::string& type, Json body) {
  auto validator = Registry::Default().Find("artifacts/" + type + ".json");
  EXPECT_TRUE(validator.has_value()) << type;
  if (!validator) return {"<no schema>"};
  std::vector<std::string> out;
  for (const Issue& issue : (*validator)->Validate(body)) out.push_back(issue.pointer);
  return out;
}

bool SeedValid(const std::string& type, const Json& body) { return SeedIssuePointers(type, body).empty(); }

bool SeedFlags(const std::string& type, const Json& body, const std::string& pointer) {
  for (const auto& p : SeedIssuePointers(type, body)) {
    if (p.rfind(pointer, 0) == 0) return true;
  }
  return false;
}

// covers TEL-010: artifacts and trace events may carry a short structured
// decision summary: a rationaleSummary is accepted on every type that has
// one, and one beyond the summary limit is refused.
TEST(SeedRuleBodiesTest, RationaleSummaryIsAcceptedOnArtifactsAndTraceEvents) {
  for (const std::string name : {"ProblemFrame-1", "TaskContract-1", "PromptReview-1", "WorkPlan-1", "QualityReview-1",
                                 "ReleaseAudit-1", "ClarificationRequest-1", "TraceEvent-1"}) {
    SCOPED_TRACE(name);
    Json body = SeedGolden(name);
    std::string type = name.substr(0, name.find('-'));
    ASSERT_TRUE(SeedValid(type, body));
    body["rationaleSummary"] = "Chose the smallest change the evidence supports.";
    EXPECT_TRUE(SeedValid(type, body));
    body["rationaleSummary"] = std::string(5000, 'x');
    EXPECT_TRUE(SeedFlags(type, body, "/rationaleSummary"));
  }
}

// covers TEL-016: a derived summary (a ContextDocument derived from a
// repository file) must name its source: without repositoryRef, or with a
// non-repository source, it is refused.
TEST(SeedRuleBodiesTest, DerivedContextDocumentNamesItsSource) {
  Json document = SeedGolden("ContextDocument-1");
  ASSERT_TRUE(SeedValid("ContextDocument", document));
  ASSERT_TRUE(document.contains("repositoryRef"));
  Json missing = document;
  missing.erase("repositoryRef");
  EXPECT_FALSE(SeedValid("ContextDocument", missing));
  Json artifact = document;
  artifact["repositoryRef"] = "artifact://run-1/other";
  EXPECT_TRUE(SeedFlags("ContextDocument", artifact, "/repositoryRef"));
}

// covers TEL-058: every manifest candidate carries its source ref, content
// hash, decision and selection reason (that telic's own reasons are
// non-empty is checked on every grounded manifest, ground_test.cc).
TEST(SeedRuleBodiesTest, ManifestCandidatesCarryProvenance) {
  Json manifest = SeedGolden("ContextManifest-1");
  ASSERT_TRUE(SeedValid("ContextManifest", manifest));
  ASSERT_FALSE(manifest["candidates"].empty());
  for (const std::string field : {"ref", "contentHash", "decision", "selectionReason"}) {
    SCOPED_TRACE(field);
    Json without = manifest;
    without["candidates"][0].erase(field);
    EXPECT_TRUE(SeedFlags("ContextManifest", without, "/candidates/0"));
  }
}

// covers TEL-074 (choice count): a clarification needs 2 to 8 choices.
TEST(SeedRuleBodiesTest, ClarificationOffersTwoToEightChoices) {
  Json request = SeedGolden("ClarificationRequest-1");
  ASSERT_TRUE(SeedValid("ClarificationRequest", request));
  Json choice = request["responseChoices"][0];
  auto with = [&](size_t n) {
    Json body = request;
    body["responseChoices"] = Json::array();
    for (size_t i = 0; i < n; ++i) {
      Json c = choice;
      c["id"] = "choice-" + std::to_string(i);
      body["responseChoices"].push_back(c);
    }
    return body;
  };
  EXPECT_TRUE(SeedFlags("ClarificationRequest", with(1), "/responseChoices"));
  EXPECT_FALSE(SeedFlags("ClarificationRequest", with(2), "/responseChoices"));
  EXPECT_FALSE(SeedFlags("ClarificationRequest", with(8), "/responseChoices"));
  EXPECT_TRUE(SeedFlags("ClarificationRequest", with(9), "/responseChoices"));
}

// covers TEL-106: a PromptReview decision is pass, revise or block only.
TEST(SeedRuleBodiesTest, PromptReviewDecisionIsPassReviseOrBlock) {
  Json review = SeedGolden("PromptReview-1");
  for (const std::string decision : {"pass", "revise", "block"}) {
    review["decision"] = decision;
    EXPECT_FALSE(SeedFlags("PromptReview", review, "/decision")) << decision;
  }
  for (const std::string decision : {"approve", "remediate", "partial", ""}) {
    review["decision"] = decision;
    EXPECT_TRUE(SeedFlags("PromptReview", review, "/decision")) << decision;
  }
}

// covers TEL-107: a review scores exactly the six dimensions; covers TEL-111:
// a decorative dimension (prompt style) cannot be scored or rewarded.
TEST(SeedRuleBodiesTest, PromptReviewScoresExactlySixDimensions) {
  Json review = SeedGolden("PromptReview-1");
  ASSERT_TRUE(SeedValid("PromptReview", review));
  const std::vector<std::string> six = {"intentFidelity",       "repositoryGrounding",  "constraintsAndPermissions",
                                        "testableAcceptance",   "executionFeasibility", "contextEfficiency"};
  ASSERT_EQ(review["dimensionScores"].size(), six.size());
  for (const auto& dimension : six) {
    Json without = review;
    without["dimensionScores"].erase(dimension);
    EXPECT_TRUE(SeedFlags("PromptReview", without, "/dimensionScores")) << dimension;
  }
  Json decorative = review;
  decorative["dimensionScores"]["promptStyle"] = 100;
  EXPECT_TRUE(SeedFlags("PromptReview", decorative, "/dimensionScores"));
}

// covers TEL-114: a revise may not correct scope, constraints, non-goals,
// acceptance criteria, rule refs or permissions; requiredOutputs it may.
TEST(SeedRuleBodiesTest, ReviseCannotCorrectFrozenContractFields) {
  Json review = SeedGolden("PromptReview-1");
  Json finding = {{"id", "PR-1"},
                  {"severity", "blocking"},
                  {"claim", "Required outputs are vague."},
                  {"sourceRefs", Json::array({review["targetRef"]})},
                  {"rubricDimension", "testableAcceptance"},
                  {"requiredCorrection", "Name the outputs."},
                  {"preserveFields", Json::array()},
                  {"correctionFields", Json::array({"requiredOutputs"})},
                  {"rationaleSummary", "Outputs must be checkable."}};
  review["findings"] = Json::array({finding});
  ASSERT_FALSE(SeedFlags("PromptReview", review, "/findings")) << SeedIssuePointers("PromptReview", review).size();
  for (const std::string field : {"scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs", "permissions"}) {
    Json bad = review;
    bad["findings"][0]["correctionFields"] = Json::array({field});
    EXPECT_TRUE(SeedFlags("PromptReview", bad, "/findings/0/correctionFields")) << field;
  }
}

// covers TEL-138: a WorkResult status is completed, partial, blocked or failed only.
TEST(SeedRuleBodiesTest, WorkResultStatusEnum) {
  Json result = SeedGolden("WorkResult-1");
  for (const std::string status : {"completed", "partial", "blocked", "failed"}) {
    result["status"] = status;
    EXPECT_FALSE(SeedFlags("WorkResult", result, "/status")) << status;
  }
  for (const std::string status : {"done", "running", "failed_verification", "cancelled"}) {
    result["status"] = status;
    EXPECT_TRUE(SeedFlags("WorkResult", result, "/status")) << status;
  }
}

// covers TEL-140: observations and inferences are separate required lists.
TEST(SeedRuleBodiesTest, WorkResultKeepsObservationsAndInferencesApart) {
  Json result = SeedGolden("WorkResult-1");
  ASSERT_TRUE(SeedValid("WorkResult", result));
  for (const std::string list : {"observations", "inferences"}) {
    Json without = result;
    without.erase(list);
    EXPECT_FALSE(SeedValid("WorkResult", without)) << list;
  }
  Json merged = result;
  merged["claims"] = Json::array();
  EXPECT_FALSE(SeedValid("WorkResult", merged));
}

// covers TEL-148: a QualityReview decision is pass, partial, block,
// proceed_to_fix or remediate (the bounded remediation).
TEST(SeedRuleBodiesTest, QualityReviewDecisionEnum) {
  Json review = SeedGolden("QualityReview-1");
  for (const std::string decision : {"pass", "partial", "block", "proceed_to_fix", "remediate"}) {
    review["decision"] = decision;
    EXPECT_FALSE(SeedFlags("QualityReview", review, "/decision")) << decision;
  }
  for (const std::string decision : {"release", "revise", "fail"}) {
    review["decision"] = decision;
    EXPECT_TRUE(SeedFlags("QualityReview", review, "/decision")) << decision;
  }
}

// covers TEL-162: a correction work order records id, target criteria,
// objective, allowed capabilities, permissions, source refs, maximum tool
// calls and a rationale; each is required.
TEST(SeedRuleBodiesTest, CorrectionWorkOrderRecordsEveryField) {
  Json review = SeedGolden("QualityReview-2");
  ASSERT_TRUE(SeedValid("QualityReview", review));
  ASSERT_TRUE(review["diagnosisGate"]["correctionWorkOrder"].is_object());
  for (const std::string field : {"id", "targetCriterionIds", "objective", "allowedCapabilities", "permissions",
                                  "sourceRefs", "maximumToolCalls", "rationaleSummary"}) {
    Json without = review;
    without["diagnosisGate"]["correctionWorkOrder"].erase(field);
    EXPECT_TRUE(SeedFlags("QualityReview", without, "/diagnosisGate")) << field;
  }
}

// covers TEL-174: terminalStatus accepts completed, partial, blocked and
// failed_verification (the schema also knows cancelled, which only the
// controller's cancel writes: a submitted cancelled report is refused by
// AdvanceRun, TransitionsTest.TerminalReports); anything else is refused.
TEST(SeedRuleBodiesTest, UserReportTerminalStatusEnum) {
  Json report = SeedGolden("UserReport-1");
  for (const std::string status : {"completed", "partial", "blocked", "failed_verification"}) {
    report["terminalStatus"] = status;
    EXPECT_FALSE(SeedFlags("UserReport", report, "/terminalStatus")) << status;
  }
  for (const std::string status : {"active", "running", "failed", "released"}) {
    report["terminalStatus"] = status;
    EXPECT_TRUE(SeedFlags("UserReport", report, "/terminalStatus")) << status;
  }
}

// covers TEL-073: a clarification is accepted only once discovery was tried
// (evidenceInspected is non-empty) and for a user-owned divergence or a
// permission boundary only; covers TEL-088: an unknown that inspection
// could answer (discoverable, bounded_reversible, irrelevant) is no reason
// to ask the user.
TEST(SeedRuleBodiesTest, ClarificationNeedsDiscoveryAndAUserReason) {
  Json request = SeedGolden("ClarificationRequest-1");
  ASSERT_TRUE(SeedValid("ClarificationRequest", request));
  Json no_discovery = request;
  no_discovery["evidenceInspected"] = Json::array();
  EXPECT_TRUE(SeedFlags("ClarificationRequest", no_discovery, "/evidenceInspected"));
  for (const std::string reason : {"discoverable", "bounded_reversible", "irrelevant"}) {
    Json asked = request;
    asked["reason"] = reason;
    EXPECT_TRUE(SeedFlags("ClarificationRequest", asked, "/reason")) << reason;
  }
  for (const std::string reason : {"user_owned_materially_divergent", "permission_expanding"}) {
    Json asked = request;
    asked["reason"] = reason;
    EXPECT_FALSE(SeedFlags("ClarificationRequest", asked, "/reason")) << reason;
  }
}

}  // namespace
}  // namespace telic::schema
