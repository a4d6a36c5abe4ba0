// StoreWrapper forwards every call, including the ones Store answers itself
// by default (refused calls, context cost), so a wrapper that overrides one
// call loses nothing else.
#include "store/store_wrapper.h"

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

Change NewRun(const std::string& id) {
  Change change;
  change.run.run_id = id;
  change.run.repository_root = "/repo";
  change.run.requested_mode = domain::Mode::kReportOnly;
  change.run.status = domain::RunStatus::kRunning;
  change.run.phase = domain::Phase::kContextGrounding;
  change.run.version = 1;
  change.run.created_at = change.run.updated_at = "2026-12-07T00:00:00.000Z";
  change.artifacts.push_back(MakeArtifact({"req", id, domain::ArtifactType::kUserMessage, "1.0", "user", "", {}, "none", "t"},
                                          Json{{"content", "the request"}}));
  TraceEventRecord event;
  event.event_id = id + "-e1";
  event.timestamp = "2026-12-07T00:00:00.000Z";
  event.actor = "controller";
  event.phase = "context_discovery";
  event.event_type = "run_started";
  event.summary = "started";
  change.events.push_back(event);
  return change;
}

// Overrides one call; every other one must reach the SQLite store.
class CountingStore final : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  Result<RunRecord> GetRun(std::string_view run_id) override {
    ++run_reads;
    return StoreWrapper::GetRun(run_id);
  }
  int run_reads = 0;
};

TEST(StoreWrapperTest, ForwardsEveryCallAndKeepsTheOverride) {
  testing::TempDir dir;
  auto sqlite = SqliteStore::Open(dir.File("telic.sqlite3"));
  ASSERT_TRUE(sqlite) << sqlite.error().message();
  CountingStore store(sqlite->get());
  ASSERT_TRUE(store.CreateRun(NewRun("r1")));
  EXPECT_EQ(store.GetRun("r1")->version, 1);
  EXPECT_EQ(store.run_reads, 1);
  EXPECT_EQ(store.ListRuns(10)->size(), 1u);
  EXPECT_EQ(store.ListArtifacts("r1")->size(), 1u);
  EXPECT_EQ(domain::Name(store.GetArtifact("r1", "req")->meta.type), "UserMessage");
  EXPECT_EQ(store.GetTrace("r1", 0, 10)->events.size(), 1u);
  EXPECT_EQ(store.GetRunAndArtifactsAfter("r1", 0)->appended.size(), 1u);
  // The calls a bare Store answers by itself (no log, no cost) reach the backend too.
  RefusedCall call;
  call.run_id = "r1";
  call.at = "2026-12-07T00:00:01.000Z";
  call.tool = "telic_submit_artifact";
  call.code = "invalid_argument";
  call.error = "refused";
  EXPECT_EQ(*store.RecordRefusedCall(call), 1);
  EXPECT_EQ((*sqlite)->ListRefusedCalls("r1", 0, 10)->size(), 1u);
  ASSERT_TRUE(store.AddContextCost("r1", {ContextCost{"telic_get_run", 2, 300}}));
  EXPECT_EQ(*(*sqlite)->GetContextCost("r1"), (std::vector<ContextCost>{{"telic_get_run", 2, 300}}));
  EXPECT_EQ(*store.GetContextCost("r1"), (std::vector<ContextCost>{{"telic_get_run", 2, 300}}));
}

TEST(StoreWrapperTest, AWrapperWithoutATargetFailsEveryCall) {
  StoreWrapper store;
  auto run = store.GetRun("r1");
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code(), ErrorCode::kInternal);
  EXPECT_FALSE(store.CreateRun(NewRun("r1")));
}

}  // namespace
}  // namespace telic::store
