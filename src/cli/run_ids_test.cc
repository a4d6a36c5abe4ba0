// Run and artifact ids by unique prefix, over a real SQLite ledger.
#include "cli/run_ids.h"

#include <sstream>

#include <gtest/gtest.h>

#include "base/clock.h"
#include "base/ids.h"
#include "controller/run_service.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::cli {
namespace {

class RunIdsTest : public ::testing::Test {
 protected:
  RunIdsTest() : clock_(1764662400000) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, "/repo");
  }
  // Starts a run; SequentialIdSource ids share the prefix 00000000-0000-4000-8000-.
  std::string Start(const std::string& request) {
    clock_.Set(clock_.NowMillis() + 1000);
    controller::StartRunRequest r;
    r.original_request = request;
    r.mode = "report_only";
    auto started = service_->StartRun(r);
    EXPECT_TRUE(started) << started.error().message();
    return started->run.run_id;
  }

  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
};

TEST_F(RunIdsTest, AWholeIdAndAUniquePrefixNameTheirRun) {
  std::string first = Start("Fix the greeting.");
  EXPECT_EQ(*ResolveRunId(*store_, "0000"), first);
  EXPECT_EQ(*ResolveRunId(*store_, first), first);
  std::string second = Start("Fix the farewell.");
  // A whole id names its run even when the prefix alone would not be unique.
  EXPECT_EQ(*ResolveRunId(*store_, first), first);
  EXPECT_EQ(*ResolveRunId(*store_, second), second);
}

TEST_F(RunIdsTest, AnAmbiguousPrefixListsEveryMatchNewestFirst) {
  std::string first = Start("Fix the greeting.");
  std::string second = Start("Fix the farewell.");
  auto resolved = ResolveRunId(*store_, "0000");
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(resolved.error().message(), "Run id prefix '0000' is ambiguous: 2 runs match");
  ASSERT_EQ(resolved.error().issues().size(), 2u);
  EXPECT_EQ(resolved.error().issues()[0].pointer, second);
  EXPECT_EQ(resolved.error().issues()[1].pointer, first);
  EXPECT_NE(resolved.error().issues()[0].message.find("Fix the farewell."), std::string::npos);
  std::ostringstream err;
  EXPECT_EQ(ReportResolutionFailure(err, resolved.error()), 1);
  EXPECT_EQ(err.str(), "telic: Run id prefix '0000' is ambiguous: 2 runs match\n  " + second + "  " +
                           resolved.error().issues()[0].message + "\n  " + first + "  " +
                           resolved.error().issues()[1].message + "\n");
}

TEST_F(RunIdsTest, ARequestThatContainsThePrefixIsNoMatch) {
  std::string run = Start("Look at ffff-and nothing else.");
  auto resolved = ResolveRunId(*store_, "ffff");
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(resolved.error().message(), "Run not found: ffff");
  EXPECT_FALSE(ResolveRunId(*store_, ""));
}

TEST_F(RunIdsTest, ManyMatchesListTheNewestTen) {
  for (int i = 0; i < 12; ++i) Start("request " + std::to_string(i));
  auto resolved = ResolveRunId(*store_, "00000000");
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error().message(), "Run id prefix '00000000' is ambiguous: 12 runs match (10 listed)");
  EXPECT_EQ(resolved.error().issues().size(), kListedCandidates);
}

TEST(ArtifactIdsTest, AUniquePrefixNamesItsArtifact) {
  std::vector<store::ArtifactMeta> artifacts(3);
  artifacts[0].id = "context-manifest-01";
  artifacts[1].id = "problem-frame-01";
  artifacts[2].id = "problem-frame-02";
  EXPECT_EQ(*ResolveArtifactId(artifacts, "context"), "context-manifest-01");
  EXPECT_EQ(*ResolveArtifactId(artifacts, "CONTEXT-M"), "context-manifest-01") << "letters without case";
  EXPECT_EQ(*ResolveArtifactId(artifacts, "problem-frame-02"), "problem-frame-02");
  auto ambiguous = ResolveArtifactId(artifacts, "problem");
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().message(), "Artifact id prefix 'problem' is ambiguous: 2 artifacts match");
  EXPECT_EQ(ambiguous.error().issues().size(), 2u);
  auto missing = ResolveArtifactId(artifacts, "work");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "Artifact not found: work");
}

}  // namespace
}  // namespace telic::cli
