// Run retention over a real SQLite ledger with an injected clock.
#include "controller/retention.h"

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::controller {
namespace {

constexpr int64_t kStart = 1764662400000;  // 2025-12-02T08:00:00Z
constexpr int64_t kHour = 3'600'000;

class RetentionTest : public ::testing::Test {
 protected:
  RetentionTest() : clock_(kStart) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<RunService>(*store_, clock_, ids_, "/repo");
  }
  // Starts a report_only run at `at_ms`; cancels it then when `cancel`.
  std::string Run(int64_t at_ms, bool cancel) {
    clock_.Set(at_ms);
    StartRunRequest request;
    request.original_request = "request at " + std::to_string(at_ms);
    request.mode = "report_only";
    auto started = service_->StartRun(request);
    EXPECT_TRUE(started) << started.error().message();
    if (cancel) {
      EXPECT_TRUE(service_->CancelRun(started->run.run_id, started->next_action["id"], started->run.version));
    }
    return started->run.run_id;
  }
  store::DeletionRequest Request() { return {"2026-01-01T00:00:00.000Z", "tester@host", "delete"}; }

  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<RunService> service_;
};

// covers issue 22 §2 (a live run needs --force; nothing is deleted otherwise)
TEST_F(RetentionTest, ALiveRunIsRefusedWithoutForceAndNothingIsDeleted) {
  std::string ended = Run(kStart, true);
  std::string live = Run(kStart + 1, false);
  auto refused = DeleteRuns(*service_, {ended, live}, false, Request());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("--force"), std::string::npos);
  EXPECT_TRUE(store_->GetRun(ended)) << "checked before anything was deleted";
  auto unknown = DeleteRuns(*service_, {ended, "no-such-run"}, true, Request());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(store_->GetRun(ended));
  EXPECT_TRUE(store_->ListTombstones(10)->empty());
}

// covers issue 22 §2 (--force cancels through the normal path first)
TEST_F(RetentionTest, ForceCancelsTheLiveRunSoItsFinalHashCoversTheCancellation) {
  std::string live = Run(kStart, false);
  auto before = store_->GetTrace(live, 0, 100)->events;
  auto deleted = DeleteRuns(*service_, {live}, true, Request());
  ASSERT_TRUE(deleted) << deleted.error().message();
  ASSERT_EQ(deleted->size(), 1u);
  const store::RunTombstone& t = deleted->front();
  EXPECT_EQ(t.status, "cancelled");
  EXPECT_EQ(t.trace_events, static_cast<int64_t>(before.size()) + 1);
  // The run_cancelled event the cancel path appended, chained on the last one we saw.
  EXPECT_NE(t.final_trace_hash, before.back().hash);
  EXPECT_EQ(store_->GetRun(live).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->ListTombstones(10)->front().final_trace_hash, t.final_trace_hash);
}

// covers issue 22 §2 (prune: age by last change, ended runs only, --keep)
TEST_F(RetentionTest, PruneSelectsEndedRunsOlderThanTheCutoffExceptTheNewestKept) {
  std::string old_ended = Run(kStart, true);
  std::string old_live = Run(kStart + 1, false);
  std::string older_ended = Run(kStart - kHour, true);
  std::string recent_ended = Run(kStart + 10 * kHour, true);
  clock_.Set(kStart + 11 * kHour);
  store::RetentionPolicy policy;
  policy.older_than_ms = 2 * kHour;
  auto selected = SelectPrunable(*store_, policy, kStart + 11 * kHour);
  ASSERT_TRUE(selected) << selected.error().message();
  ASSERT_EQ(selected->size(), 2u);
  EXPECT_EQ((*selected)[0].run_id, old_ended);  // newest created first
  EXPECT_EQ((*selected)[1].run_id, older_ended);
  policy.keep = 3;  // the three newest: recent_ended, old_live, old_ended
  selected = SelectPrunable(*store_, policy, kStart + 11 * kHour);
  ASSERT_EQ(selected->size(), 1u);
  EXPECT_EQ(selected->front().run_id, older_ended);
  policy.keep = 0;
  policy.statuses = {"completed"};
  EXPECT_TRUE(SelectPrunable(*store_, policy, kStart + 11 * kHour)->empty());
  policy.statuses = {"running"};
  EXPECT_EQ(SelectPrunable(*store_, policy, kStart + 11 * kHour).error().code(), ErrorCode::kInvalidArgument);
  policy.statuses = {};
  auto pruned = PruneRuns(*service_, policy, Request());
  ASSERT_TRUE(pruned) << pruned.error().message();
  EXPECT_EQ(pruned->size(), 2u);
  EXPECT_TRUE(store_->GetRun(old_live));
  EXPECT_TRUE(store_->GetRun(recent_ended));
  EXPECT_FALSE(store_->GetRun(old_ended));
  EXPECT_EQ(store_->ListTombstones(10)->size(), 2u);
}

}  // namespace
}  // namespace telic::controller
