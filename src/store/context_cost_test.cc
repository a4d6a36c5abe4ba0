// The context cost kept beside a run (issue 39, docs/DECISIONS.md D-C3), on
// SQLite and on PostgreSQL (a real server, testing/postgres_server.h).
#include <gtest/gtest.h>

#include "store/open_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

enum class CostBackend { kSqlite, kPostgres };

Change RunChange(const std::string& id) {
  Change change;
  change.run.run_id = id;
  change.run.repository_root = "/repo";
  change.run.requested_mode = domain::Mode::kReportOnly;
  change.run.status = domain::RunStatus::kRunning;
  change.run.phase = domain::Phase::kContextGrounding;
  change.run.created_at = change.run.updated_at = "2026-12-02T00:00:00.000Z";
  TraceEventRecord event;
  event.event_id = id + "-e1";
  event.timestamp = "2026-12-02T00:00:00.000Z";
  event.actor = "controller";
  event.phase = "context_grounding";
  event.event_type = "run_started";
  event.summary = "started";
  change.events.push_back(event);
  return change;
}

class ContextCostTest : public ::testing::TestWithParam<CostBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == CostBackend::kPostgres) {
      TELIC_SHARED_POSTGRES_OR_SKIP(server);
      location_ = server.NewSchemaUrl();
    } else {
      location_ = dir_.File("telic.sqlite3");
    }
    auto opened = OpenStore(location_);
    ASSERT_TRUE(opened) << opened.error().message();
    store_ = std::move(*opened);
  }

  testing::TempDir dir_;
  std::string location_;
  std::unique_ptr<Store> store_;
};

// covers issue 39 item 5: counts add up per tool, across instances, and a
// ledger without the table (an older one) reads as no cost.
TEST_P(ContextCostTest, CostsAddUpPerToolAcrossInstances) {
  ASSERT_TRUE(store_->CreateRun(RunChange("r1")));
  auto none = store_->GetContextCost("r1");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty());
  ASSERT_TRUE(store_->AddContextCost("r1", {{"telic_get_run", 2, 900}, {"telic_start_run", 1, 4000}}));
  auto other = OpenStore(location_);
  ASSERT_TRUE(other);
  ASSERT_TRUE((*other)->AddContextCost("r1", {{"telic_get_run", 1, 100}}));
  auto costs = store_->GetContextCost("r1");
  ASSERT_TRUE(costs) << costs.error().message();
  EXPECT_EQ(*costs, (std::vector<ContextCost>{{"telic_get_run", 3, 1000}, {"telic_start_run", 1, 4000}}));
}

// The run's version and trace are untouched, nothing is kept for a run that
// does not exist, and deleting the run deletes its costs.
TEST_P(ContextCostTest, CostsStayOutsideTheRunAndGoWithIt) {
  ASSERT_TRUE(store_->CreateRun(RunChange("r1")));
  ASSERT_TRUE(store_->AddContextCost("r1", {{"telic_get_run", 1, 10}}));
  EXPECT_EQ(store_->GetRun("r1")->version, 1);
  EXPECT_EQ(store_->GetTrace("r1", 0, 10)->events.size(), 1u);
  ASSERT_TRUE(store_->AddContextCost("nope", {{"telic_get_run", 1, 10}}));
  EXPECT_TRUE(store_->GetContextCost("nope")->empty());
  ASSERT_TRUE(store_->DeleteRun("r1", 1, {"2026-12-03T00:00:00.000Z", "tester@host", "delete"}));
  EXPECT_TRUE(store_->GetContextCost("r1")->empty());
}

// covers issue 41 item 1 (D-S28, D-C3): deferred costs are visible to their
// own store at once and to another only once written: on SQLite with the
// run's next change, in that change's commit (none of their own); on
// PostgreSQL when due or flushed. A flush writes every run's, and a clean
// close flushes what is left.
TEST_P(ContextCostTest, DeferredCostsArriveWithTheRunsNextChangeOrAFlush) {
  ASSERT_TRUE(store_->CreateRun(RunChange("r1")));
  ASSERT_TRUE(store_->CreateRun(RunChange("r2")));
  store_->DeferContextCost("r1", {{"telic_start_run", 1, 4000}});
  store_->DeferContextCost("r1", {{"telic_start_run", 1, 10}, {"telic_get_run", 1, 5}});
  store_->DeferContextCost("r2", {{"telic_get_run", 1, 7}});
  const std::vector<ContextCost> r1 = {{"telic_get_run", 1, 5}, {"telic_start_run", 2, 4010}};
  const std::vector<ContextCost> r2 = {{"telic_get_run", 1, 7}};
  EXPECT_EQ(*store_->GetContextCost("r1"), r1);
  auto other = OpenStore(location_);
  ASSERT_TRUE(other);
  EXPECT_TRUE((*other)->GetContextCost("r1")->empty()) << "held, not written yet";
  auto* sqlite = dynamic_cast<SqliteStore*>(store_.get());
  const int64_t commits = sqlite ? sqlite->commit_count() : 0;
  Change next = RunChange("r1");
  next.run.version = 2;
  next.events[0].event_id = "r1-e2";
  ASSERT_TRUE(store_->ApplyChange("r1", 1, next));
  if (sqlite) {
    EXPECT_EQ(sqlite->commit_count(), commits + 1) << "the costs ride in the change's commit";
    EXPECT_EQ(*(*other)->GetContextCost("r1"), r1);
  } else {
    EXPECT_TRUE((*other)->GetContextCost("r1")->empty()) << "PostgreSQL writes held costs when due";
  }
  EXPECT_TRUE((*other)->GetContextCost("r2")->empty()) << "r2 had no change";
  ASSERT_TRUE(store_->FlushContextCosts());
  EXPECT_EQ(*(*other)->GetContextCost("r1"), r1);
  EXPECT_EQ(*(*other)->GetContextCost("r2"), r2);
  store_->DeferContextCost("r2", {{"telic_get_run", 1, 3}});
  store_.reset();
  EXPECT_EQ(*(*other)->GetContextCost("r2"), (std::vector<ContextCost>{{"telic_get_run", 2, 10}}));
}

INSTANTIATE_TEST_SUITE_P(Backends, ContextCostTest, ::testing::Values(CostBackend::kSqlite, CostBackend::kPostgres),
                         [](const ::testing::TestParamInfo<CostBackend>& info) -> std::string {
                           return info.param == CostBackend::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace telic::store
