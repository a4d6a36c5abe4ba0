// RunService's observations with injected facts (observation::WorkTreeObserver):
// the controller judges what the observer reports, refuses what contradicts
// it without storing anything, stores telic's own diff, and replays without one.
#include "controller/observe_work.h"

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "controller/scenario_run_for_test.h"

namespace telic::controller {
namespace {

using observation::FileState;

// A work tree held in memory: the committed files at commit "c1" and the files now.
class FakeWorkTree final : public observation::WorkTreeObserver {
 public:
  std::map<std::string, std::string> committed;
  std::map<std::string, std::string> now;
  int reads = 0;

  Result<FileState> ReadFile(const std::string& path, bool with_bytes) override {
    ++reads;
    return State(now, path, with_bytes);
  }
  Result<FileState> ReadCommitted(const std::optional<std::string>& commit, const std::string& path,
                                  bool with_bytes) override {
    if (!commit) return FileState{};
    return State(committed, path, with_bytes);
  }
  Result<observation::WorkTreeState> ReadState() override {
    observation::WorkTreeState state;
    state.head_commit = "c1";
    std::set<std::string> paths;
    for (const auto& [path, bytes] : now) paths.insert(path);
    for (const auto& [path, bytes] : committed) paths.insert(path);
    for (const std::string& path : paths) {
      auto a = now.find(path);
      auto b = committed.find(path);
      if (a == now.end() || b == committed.end() || a->second != b->second) state.changed_paths.push_back(path);
    }
    return state;
  }
  Result<std::vector<std::string>> CommittedChanges(const std::optional<std::string>&,
                                                    const std::optional<std::string>&) override {
    return std::vector<std::string>{};
  }

 private:
  static Result<FileState> State(const std::map<std::string, std::string>& files, const std::string& path, bool with_bytes) {
    auto it = files.find(path);
    if (it == files.end()) return FileState{};
    return FileState{true, Sha256Ref(it->second), with_bytes ? std::optional<std::string>(it->second) : std::nullopt};
  }
};

class ObserveWorkTest : public ::testing::Test {
 protected:
  void SetUp() override { Begin(std::nullopt); }
  // Starts the example run under `policy` and drives it to the fix's WorkResult.
  void Begin(std::optional<std::string> policy) {
    const Json& repository = scenario_.Step("the host applies the one-line fix");
    fixed_ = repository["write_file"]["content"];
    Json loaded = *cli::LoadScenario("analyze_and_fix");
    for (auto it = loaded["repository"].begin(); it != loaded["repository"].end(); ++it) {
      tree_->committed[it.key()] = it->get<std::string>();
    }
    tree_->now = tree_->committed;
    scenario_.service().set_work_tree(tree_);
    ASSERT_TRUE(scenario_.Start([&](StartRunRequest& request) { request.observation = policy; }));
    ASSERT_TRUE(scenario_.RunUntil("the executor reports the fix"));
  }
  // Runs every step from "Agent 3 reviews the fix" on; the first refusal, or Ok.
  Status FinishRun() {
    bool started = false;
    for (const Json& step : scenario_.Steps()) {
      if (step.value("say", "") == "Agent 3 reviews the fix") started = true;
      if (started) TELIC_RETURN_IF_ERROR(scenario_.Do(step));
    }
    return Ok();
  }
  size_t ArtifactCount() { return scenario_.store().ListArtifacts(scenario_.run().run_id)->size(); }

  testing_support::ScenarioRun scenario_;
  std::shared_ptr<FakeWorkTree> tree_ = std::make_shared<FakeWorkTree>();
  std::string fixed_;
};

TEST_F(ObserveWorkTest, InjectedFactsAcceptTheFixStoreTelicsDiffAndReplayWithoutAnObserver) {
  tree_->now["src/greet.py"] = fixed_;  // the host really applied the fix
  auto result = scenario_.Submit("WorkResult", scenario_.Body(scenario_.Step("the executor reports the fix")));
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_TRUE(result->observation);
  EXPECT_TRUE((*result->observation)["observed"].get<bool>());
  std::string diff_ref = (*result->observation)["diffEvidenceRefs"][0];
  std::string diff_id = diff_ref.substr(diff_ref.rfind('/') + 1);
  auto diff = scenario_.store().GetArtifact(scenario_.run().run_id, diff_id);
  ASSERT_TRUE(diff);
  EXPECT_EQ(store::ProvenanceOf(diff->meta), store::Provenance::kObserved);
  Json body = Json::parse(diff->canonical_body);
  EXPECT_NE(body["content"].get<std::string>().find("+    return f\"Hello, {name}!\""), std::string::npos) << body;
  bool started = false;
  for (const Json& step : scenario_.Steps()) {
    if (step.value("say", "") == "Agent 3 reviews the fix") started = true;
    if (started) {
      ASSERT_TRUE(scenario_.Do(step));
    }
  }
  EXPECT_EQ(domain::Name(scenario_.store().GetRun(scenario_.run().run_id)->status), "completed");
  ManualClock clock(1764662400000, 1);
  SequentialIdSource ids;
  RunService unobserved(scenario_.store(), clock, ids, "/repo");  // replay needs no observer
  auto replay = unobserved.ReplayRun(scenario_.run().run_id);
  ASSERT_TRUE(replay);
  EXPECT_TRUE((*replay)["stateCheck"]["consistent"].get<bool>()) << (*replay)["stateCheck"];
}

TEST_F(ObserveWorkTest, InjectedFactsThatContradictTheClaimRefuseAndStoreNothing) {
  size_t before = ArtifactCount();  // the file was never changed
  auto result = scenario_.Submit("WorkResult", scenario_.Body(scenario_.Step("the executor reports the fix")));
  ASSERT_FALSE(result);
  ASSERT_EQ(result.error().issues().size(), 1u);
  EXPECT_EQ(result.error().issues()[0].pointer, "/filesChanged/0/afterHash");
  EXPECT_NE(result.error().message().find("the file is unchanged"), std::string::npos) << result.error().message();
  EXPECT_EQ(ArtifactCount(), before);
}

TEST_F(ObserveWorkTest, AnUndeclaredChangeRefusesTheCompletedReport) {
  tree_->now["src/greet.py"] = fixed_;
  ASSERT_TRUE(scenario_.Submit("WorkResult", scenario_.Body(scenario_.Step("the executor reports the fix"))));
  tree_->now["src/extra.py"] = "print('not declared')\n";
  bool started = false;
  Status last = Ok();
  for (const Json& step : scenario_.Steps()) {
    if (step.value("say", "") == "Agent 3 reviews the fix") started = true;
    if (started) {
      last = scenario_.Do(step);
      if (!last) break;
    }
  }
  ASSERT_FALSE(last);  // only the UserReport is refused: every step before it was accepted
  ASSERT_EQ(last.error().issues().size(), 1u);
  EXPECT_EQ(last.error().issues()[0].pointer, "/terminalStatus");
  EXPECT_NE(last.error().message().find("src/extra.py (undeclared)"), std::string::npos) << last.error().message();
  EXPECT_EQ(domain::Name(scenario_.store().GetRun(scenario_.run().run_id)->status), "running");
}

class RequireObservedTest : public ObserveWorkTest {
 protected:
  void SetUp() override { Begin("require_observed"); }
  std::string Ref(const std::string& id) { return store::ArtifactUri(scenario_.run().run_id, id); }
  // The host's own test Evidence, stored as claimed.
  Status SubmitClaimedTestOutput() {
    Json evidence = {{"schemaVersion", "1.0"}, {"id", "host-tests"}, {"runId", scenario_.run().run_id},
                     {"kind", "test"}, {"capturedAt", FormatIsoMillis(testing_support::ScenarioRun::kStartMillis)},
                     {"summary", "1 test passed."}, {"contentType", "text/plain"}, {"encoding", "utf8"},
                     {"content", "test_greet ... ok"}, {"sourceRefs", Json::array()}, {"redactions", Json::array()},
                     {"rationaleSummary", "Run by the host."}};
    auto stored = scenario_.Submit("Evidence", evidence);
    if (!stored) return std::unexpected(stored.error());
    return Ok();
  }
};

// covers issue 38 item 6: with require_observed, a run whose work telic saw completes
TEST_F(RequireObservedTest, ObservedDiffLetsTheRunComplete) {
  tree_->now["src/greet.py"] = fixed_;
  ASSERT_TRUE(scenario_.Submit("WorkResult", scenario_.Body(scenario_.Step("the executor reports the fix"))));
  Status finished = FinishRun();
  ASSERT_TRUE(finished) << finished.error().message();
  EXPECT_EQ(domain::Name(scenario_.store().GetRun(scenario_.run().run_id)->status), "completed");
}

// covers issue 38 item 6: a WorkResult's test output claimed by the host keeps the run from completing
TEST_F(RequireObservedTest, ClaimedTestOutputOfAWorkResultRefusesCompletion) {
  tree_->now["src/greet.py"] = fixed_;
  ASSERT_TRUE(SubmitClaimedTestOutput());
  Json result = scenario_.Body(scenario_.Step("the executor reports the fix"));
  result["testResults"] = Json::array({{{"id", "t1"}, {"name", "greet test"}, {"status", "passed"},
                                         {"commandRef", nullptr}, {"outputRef", Ref("host-tests")}, {"exitCode", 0},
                                         {"rationaleSummary", "The host ran it."}}});
  auto accepted = scenario_.Submit("WorkResult", result);
  ASSERT_TRUE(accepted) << accepted.error().message();
  Status finished = FinishRun();
  ASSERT_FALSE(finished);
  EXPECT_NE(finished.error().message().find("require_observed: test evidence " + Ref("host-tests")), std::string::npos)
      << finished.error().message();
  EXPECT_NE(finished.error().message().find("WorkResult result-fix /testResults/0/outputRef"), std::string::npos);
  ASSERT_EQ(finished.error().issues().size(), 1u);
  EXPECT_EQ(finished.error().issues()[0].pointer, "/terminalStatus");
  EXPECT_EQ(domain::Name(scenario_.store().GetRun(scenario_.run().run_id)->status), "running");
}

}  // namespace
}  // namespace telic::controller
