// BackgroundOpenedStore: calls wait for the open, then forward or fail with
// the open's error. The Store contract itself runs against it in store_test.cc
// (backend SqliteOpenedInBackground).
#include "store/background_open.h"

#include <chrono>
#include <future>
#include <stdexcept>

#include <gtest/gtest.h>

#include "store/open_store.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

using namespace std::chrono_literals;

TEST(BackgroundOpenedStoreTest, CallsWaitForTheOpenAndThenReachTheOpenedStore) {
  testing::TempDir dir;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  BackgroundOpenedStore store([released, path = dir.File("telic.sqlite3")] {
    released.wait();
    return OpenStore(path);
  });
  auto listed = std::async(std::launch::async, [&store] { return store.ListRuns(5); });
  EXPECT_EQ(listed.wait_for(100ms), std::future_status::timeout) << "a call returned before the store was open";
  EXPECT_FALSE(store.finished());
  release.set_value();
  auto runs = listed.get();
  ASSERT_TRUE(runs) << runs.error().message();
  EXPECT_TRUE(runs->empty());
  EXPECT_TRUE(store.finished());
  auto opened = store.Opened();
  ASSERT_TRUE(opened);
  EXPECT_NE(*opened, nullptr);
}

TEST(BackgroundOpenedStoreTest, AFailedOpenIsEveryCallsError) {
  BackgroundOpenedStore store(
      [] { return Result<std::unique_ptr<Store>>(Fail(ErrorCode::kFailedPrecondition, "cannot open ledger /x: locked")); });
  auto run = store.GetRun("r");
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(run.error().message(), "cannot open ledger /x: locked");
  auto created = store.CreateRun(Change{});
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().message(), "cannot open ledger /x: locked");
  EXPECT_FALSE(store.ListTombstones(1));
  EXPECT_FALSE(store.GetTrace("r", 0, 10));
  EXPECT_FALSE(store.Opened());
}

TEST(BackgroundOpenedStoreTest, AnOpenerThatThrowsOrReturnsNothingIsAnInternalError) {
  BackgroundOpenedStore throwing([]() -> Result<std::unique_ptr<Store>> { throw std::runtime_error("disk on fire"); });
  auto listed = throwing.ListRuns(1);
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().code(), ErrorCode::kInternal);
  EXPECT_NE(listed.error().message().find("disk on fire"), std::string::npos);
  BackgroundOpenedStore empty([] { return Result<std::unique_ptr<Store>>(std::unique_ptr<Store>()); });
  ASSERT_FALSE(empty.Opened());
  EXPECT_EQ(empty.Opened().error().code(), ErrorCode::kInternal);
}

TEST(BackgroundOpenedStoreTest, DestroyingItWaitsForAnOpenStillRunning) {
  std::atomic<bool> open_returned{false};
  {
    BackgroundOpenedStore store([&open_returned] {
      std::this_thread::sleep_for(50ms);
      open_returned = true;
      return Result<std::unique_ptr<Store>>(Fail(ErrorCode::kUnavailable, "gave up"));
    });
  }
  EXPECT_TRUE(open_returned);
}

}  // namespace
}  // namespace telic::store
