// SessionTable: the cap evicts instead of refusing, uninitialized sessions
// are reaped within seconds, idle ones later; driven by explicit times.
#include "mcp/http_sessions.h"

#include <gtest/gtest.h>

namespace telic::mcp {
namespace {

using std::chrono::seconds;

SessionTable::Limits SmallLimits(size_t max_sessions) {
  return SessionTable::Limits{max_sessions, seconds(2), seconds(60)};
}

TEST(SessionTableTest, AtTheCapTheLeastRecentlyUsedIdleSessionIsEvicted) {
  SessionTable table(SmallLimits(3));
  auto t = SessionTable::Clock::now();
  for (const char* id : {"a", "b", "c"}) {
    ASSERT_TRUE(table.Open(id, "v", t));
    ASSERT_TRUE(table.Use(id, t));  // initialized
  }
  ASSERT_TRUE(table.Use("a", t + seconds(1)));  // b is now the least recently used
  ASSERT_TRUE(table.Open("d", "v", t + seconds(1)));
  EXPECT_FALSE(table.Use("b", t + seconds(1)));
  EXPECT_TRUE(table.Use("a", t + seconds(1)));
  EXPECT_TRUE(table.Use("c", t + seconds(1)));
  EXPECT_EQ(table.Count(t + seconds(1)), 3u);
}

TEST(SessionTableTest, PendingSessionsAreEvictedBeforeInitializedOnes) {
  // An initialize flood evicts its own sessions, not the working client's.
  SessionTable table(SmallLimits(4));
  auto t = SessionTable::Clock::now();
  ASSERT_TRUE(table.Open("client", "v", t));
  ASSERT_TRUE(table.Use("client", t));
  for (int i = 0; i < 4200; ++i) ASSERT_TRUE(table.Open("flood" + std::to_string(i), "v", t + seconds(1)));
  EXPECT_EQ(table.Count(t + seconds(1)), 4u);
  EXPECT_EQ(table.Use("client", t + seconds(1)), "v");
  EXPECT_TRUE(table.Use("flood4199", t + seconds(1)));
  EXPECT_FALSE(table.Use("flood0", t + seconds(1)));
}

TEST(SessionTableTest, ASessionWithARequestInProgressIsNeverEvicted) {
  SessionTable table(SmallLimits(1));
  auto t = SessionTable::Clock::now();
  ASSERT_TRUE(table.Open("busy", "v", t));
  ASSERT_TRUE(table.Use("busy", t, /*begin=*/true));
  EXPECT_FALSE(table.Open("new", "v", t));  // refused: the only session is busy
  EXPECT_TRUE(table.Use("busy", t));
  table.End("busy");
  EXPECT_TRUE(table.Open("new", "v", t));
  EXPECT_FALSE(table.Use("busy", t));
}

TEST(SessionTableTest, UninitializedSessionsAreReapedWithinTheInitTimeout) {
  SessionTable table(SmallLimits(10));
  auto t = SessionTable::Clock::now();
  ASSERT_TRUE(table.Open("never", "v", t));
  ASSERT_TRUE(table.Open("ready", "v", t));
  ASSERT_TRUE(table.Use("ready", t + seconds(1)));
  EXPECT_EQ(table.Count(t + seconds(2)), 2u);
  EXPECT_EQ(table.Count(t + seconds(3)), 1u);  // past 2 s uninitialized
  EXPECT_FALSE(table.Use("never", t + seconds(3)));
  EXPECT_TRUE(table.Use("ready", t + seconds(3)));
}

TEST(SessionTableTest, IdleSessionsAreReapedAfterTheIdleTimeoutButNotWhileBusy) {
  SessionTable table(SmallLimits(10));
  auto t = SessionTable::Clock::now();
  for (const char* id : {"idle", "busy", "used"}) {
    ASSERT_TRUE(table.Open(id, "v", t));
    ASSERT_TRUE(table.Use(id, t));
  }
  ASSERT_TRUE(table.Use("busy", t, /*begin=*/true));
  ASSERT_TRUE(table.Use("used", t + seconds(30)));
  EXPECT_EQ(table.Count(t + seconds(60)), 3u);
  EXPECT_EQ(table.Count(t + seconds(61)), 2u);
  EXPECT_FALSE(table.Use("idle", t + seconds(61)));
  table.End("busy");
  EXPECT_EQ(table.Count(t + seconds(62)), 1u);
  EXPECT_TRUE(table.Use("used", t + seconds(62)));
}

TEST(SessionTableTest, CloseForgetsTheSession) {
  SessionTable table(SmallLimits(10));
  auto t = SessionTable::Clock::now();
  ASSERT_TRUE(table.Open("a", "2025-11-25", t));
  EXPECT_EQ(table.Use("a", t), "2025-11-25");
  EXPECT_TRUE(table.Close("a"));
  EXPECT_FALSE(table.Close("a"));
  EXPECT_FALSE(table.Use("a", t));
  EXPECT_EQ(table.Count(t), 0u);
}

}  // namespace
}  // namespace telic::mcp
