#include "controller/acceptance_rules.h"

#include <map>

#include <gtest/gtest.h>

#include "cli/demo.h"
#include "store/store_wrapper.h"

namespace telic::controller::rules {
namespace {

// A store that answers GetArtifact with canned canonical bodies, by id.
class CannedBodyStore : public store::StoreWrapper {
 public:
  std::map<std::string, std::string, std::less<>> bodies;

  Result<store::StoredArtifact> GetArtifact(std::string_view run_id, std::string_view artifact_id) override {
    auto found = bodies.find(artifact_id);
    if (found == bodies.end()) return Fail(ErrorCode::kNotFound, "no such artifact");
    store::StoredArtifact stored;
    stored.meta.id = std::string(artifact_id);
    stored.meta.run_id = std::string(run_id);
    stored.canonical_body = found->second;
    return stored;
  }
};

Json ExampleWorkResult() {
  Result<Json> scenario = cli::LoadScenario("analyze_and_fix");
  EXPECT_TRUE(scenario.has_value());
  if (!scenario) return Json::object();
  for (const Json& step : (*scenario)["steps"]) {
    if (step.value("submit", "") == "WorkResult") return step["body"];
  }
  ADD_FAILURE() << "the example submits no WorkResult";
  return Json::object();
}

store::ArtifactMeta Meta(const std::string& id) {
  store::ArtifactMeta meta;
  meta.id = id;
  meta.run_id = "run-1";
  meta.type = domain::ArtifactType::kWorkResult;
  return meta;
}

RunSnapshot SnapshotOf(CannedBodyStore& store, std::vector<store::ArtifactMeta> artifacts) {
  store::RunRecord run;
  run.run_id = "run-1";
  return RunSnapshot(store, run, std::move(artifacts));
}

TEST(AcceptanceRulesTest, StoredBodiesAreReadThroughTheirViews) {
  CannedBodyStore store;
  store.bodies["result-1"] = ExampleWorkResult().dump();
  RunSnapshot snapshot = SnapshotOf(store, {Meta("result-1")});
  Result<WorkResultView> latest = LatestView(snapshot, "WorkResult", ViewWorkResult);
  ASSERT_TRUE(latest.has_value()) << latest.error().message();
  EXPECT_EQ(latest->node_id, ExampleWorkResult()["nodeId"].get<std::string>());
  Result<std::optional<ReleaseAuditView>> none = LatestViewOrNull(snapshot, "ReleaseAudit", ViewReleaseAudit);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  Result<ReleaseAuditView> missing = LatestView(snapshot, "ReleaseAudit", ViewReleaseAudit);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kFailedPrecondition);
}

TEST(AcceptanceRulesTest, AStoredBodyThatDoesNotFitItsViewIsDataLossNamingTheArtifact) {
  CannedBodyStore store;
  Json broken = ExampleWorkResult();
  broken.erase("actions");
  store.bodies["result-1"] = ExampleWorkResult().dump();
  store.bodies["result-2"] = broken.dump();
  RunSnapshot snapshot = SnapshotOf(store, {Meta("result-1"), Meta("result-2")});
  Result<std::vector<WorkResultView>> all = AllViews(snapshot, "WorkResult", ViewWorkResult);
  ASSERT_FALSE(all.has_value());
  EXPECT_EQ(all.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(all.error().message().find("result-2"), std::string::npos) << all.error().message();
  EXPECT_NE(all.error().message().find("/actions"), std::string::npos) << all.error().message();
  Result<WorkResultView> latest = LatestView(snapshot, "WorkResult", ViewWorkResult);
  ASSERT_FALSE(latest.has_value());
  EXPECT_EQ(latest.error().code(), ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace telic::controller::rules
