// Issue 40 row 8: a credential in any submitted artifact body is refused with
// its JSON pointer and kind, and nothing is stored; the run's request is the
// one body kept exactly (its presentations mask it, src/ui, src/cli).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "controller/scenario_run_for_test.h"

namespace telic::controller {
namespace {

using testing_support::ScenarioRun;

// One canary of each kind, and the kind the refusal names.
const std::pair<std::string, std::string> kCanaries[] = {
    {"AKIAZ7Q4VXW2M9K3L8PD", "AWS access key id"},
    {"ghp_Zq8Xw3Vn5Lm2Kp7Rt9Yb4Hc6Jd1Fg0Sa2Ee3", "GitHub token"},
    {"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAz9Lq0vYt3\n-----END RSA PRIVATE KEY-----", "private key block"},
    {"Authorization: Bearer z9Lq0vYt3Wc8Nf2Hb7Rk4Mx", "authorization header"},
    {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ6OUxxMHZZdDMifQ.Qm9vZ2llV29vZ2llQ2FuYXJ5", "JSON Web Token"},
};

TEST(ArtifactSecretsTest, ACredentialInAProblemFrameIsRefusedWithItsPointerAndNothingIsStored) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("frames the problem"));
  const Json step = s.Step("frames the problem");
  const auto artifacts = s.Artifacts().size();
  const auto trace = s.Trace().size();
  const int64_t version = s.run().version;
  for (const auto& [canary, kind] : kCanaries) {
    Json body = s.Body(step);
    body["goal"] = "Fix the greeting; the CI secret " + canary + " leaked.";
    auto refused = s.Submit("ProblemFrame", body);
    ASSERT_FALSE(refused) << kind;
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(refused.error().message(), "Artifact body /goal holds a likely credential (" + kind +
                                             "); nothing was stored: remove the value or name where it is kept instead");
    ASSERT_EQ(refused.error().issues().size(), 1u);
    EXPECT_EQ(refused.error().issues()[0].pointer, "/goal");
    EXPECT_EQ(s.Artifacts().size(), artifacts);
    EXPECT_EQ(s.Trace().size(), trace);
    EXPECT_EQ(s.run().version, version);
  }
  Json body = s.Body(step);
  body["knownFacts"][0]["claim"] = "token " + kCanaries[1].first;
  auto deep = s.Submit("ProblemFrame", body);
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().issues()[0].pointer, "/knownFacts/0/claim");
  // The frame itself is accepted.
  ASSERT_TRUE(s.Do(step));
}

// A supporting artifact is checked before its schema: a member name holding
// a secret is reported at its object (pointer escaped per RFC 6901).
TEST(ArtifactSecretsTest, AMemberNameIsReportedAtItsObject) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("captures the source as evidence"));
  Json body = s.Body(s.Step("captures the source as evidence"));
  body["a/b~c"] = Json::object({{kCanaries[0].first, 1}});
  auto named = s.Submit("Evidence", body);
  ASSERT_FALSE(named);
  EXPECT_EQ(named.error().issues()[0].pointer, "/a~1b~0c");
  EXPECT_EQ(named.error().message().find(kCanaries[0].first), std::string::npos);
  EXPECT_NE(named.error().message().find("has a member name holding a likely credential (AWS access key id)"),
            std::string::npos);
}

TEST(ArtifactSecretsTest, EvidenceNamesThePointerToo) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("captures the source as evidence"));
  Json body = s.Body(s.Step("captures the source as evidence"));
  body["content"] = "headers: Authorization: Bearer z9Lq0vYt3Wc8Nf2Hb7Rk4Mx";
  auto refused = s.Submit("Evidence", body);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().issues()[0].pointer, "/content");
  EXPECT_NE(refused.error().message().find("likely credential (authorization header)"), std::string::npos);
}

TEST(ArtifactSecretsTest, TheRequestIsStoredExactlyAndTheTraceNeverHoldsIt) {
  ScenarioRun s;
  for (const auto& [canary, kind] : kCanaries) {
    const std::string request = "Fix the greeting. The log shows " + canary;
    ASSERT_TRUE(s.Start([&](StartRunRequest& r) { r.original_request = request; })) << kind;
    auto stored = s.store().GetArtifact(s.run().run_id, s.Artifacts().front().id);
    ASSERT_TRUE(stored);
    EXPECT_EQ(Json::parse(stored->canonical_body)["content"], request);
    for (const auto& event : s.Trace()) {
      EXPECT_EQ(event.summary.find(canary.substr(0, 12)), std::string::npos) << kind;  // covers TEL-186
    }
  }
}

}  // namespace
}  // namespace telic::controller
