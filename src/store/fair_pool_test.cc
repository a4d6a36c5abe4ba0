// FairPool: first come, first served; nothing is timed, waiting callers are
// observed through waiting().
#include "store/fair_pool.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace telic::store {
namespace {

// Spins (yielding) until `pool` has `count` callers waiting.
template <typename T>
void AwaitWaiting(const FairPool<T>& pool, size_t count) {
  while (pool.waiting() != count) std::this_thread::yield();
}

TEST(FairPoolTest, GrantsSlotsUpToItsCapacityThenReusesIdleConnections) {
  FairPool<int> pool(2);
  EXPECT_EQ(pool.Acquire(), nullptr);  // open one
  EXPECT_EQ(pool.Acquire(), nullptr);  // open another
  EXPECT_EQ(pool.open(), 2);
  int a = 1, b = 2;
  pool.Release(&a);
  pool.Release(&b);
  EXPECT_EQ(pool.Acquire(), &b);  // the most recently used first
  EXPECT_EQ(pool.Acquire(), &a);
  EXPECT_EQ(pool.open(), 2);
}

TEST(FairPoolTest, AReturnedConnectionGoesToTheWaiterNotBackToItsReturner) {
  // The barging a single condition variable allows: the returner asks again
  // at once (a keep-alive worker's next request) and must queue behind the
  // caller that was already waiting.
  FairPool<int> pool(1);
  ASSERT_EQ(pool.Acquire(), nullptr);
  int connection = 7;
  std::atomic<int*> waiter_got{nullptr};
  std::thread waiter([&] { waiter_got = pool.Acquire(); });
  AwaitWaiting(pool, 1);

  pool.Release(&connection);
  std::atomic<int*> returner_got{nullptr};
  std::thread returner([&] { returner_got = pool.Acquire(); });
  waiter.join();
  EXPECT_EQ(waiter_got.load(), &connection);
  AwaitWaiting(pool, 1);  // the returner waits its turn
  EXPECT_EQ(returner_got.load(), nullptr);
  pool.Release(&connection);
  returner.join();
  EXPECT_EQ(returner_got.load(), &connection);
}

TEST(FairPoolTest, WaitersAreServedInArrivalOrder) {
  FairPool<int> pool(1);
  ASSERT_EQ(pool.Acquire(), nullptr);
  int connection = 1;
  constexpr int kWaiters = 6;
  std::vector<int> order;
  std::mutex order_mutex;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      int* got = pool.Acquire();
      {
        std::lock_guard lock(order_mutex);
        order.push_back(i);
      }
      pool.Release(got);
    });
    AwaitWaiting(pool, static_cast<size_t>(i) + 1);  // arrival order is i
  }
  pool.Release(&connection);
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(FairPoolTest, ADiscardedSlotLetsTheFirstWaiterOpenANewConnection) {
  FairPool<int> pool(1);
  ASSERT_EQ(pool.Acquire(), nullptr);
  std::atomic<bool> done{false};
  int sentinel = 0;
  int* got = &sentinel;
  std::thread waiter([&] {
    got = pool.Acquire();
    done = true;
  });
  AwaitWaiting(pool, 1);
  pool.Discard();  // the connection broke: its slot is handed on, still counted
  waiter.join();
  EXPECT_TRUE(done);
  EXPECT_EQ(got, nullptr);  // the right to open one
  EXPECT_EQ(pool.open(), 1);
  pool.Discard();  // opening failed, nobody waits: the slot is freed
  EXPECT_EQ(pool.open(), 0);
  EXPECT_EQ(pool.Acquire(), nullptr);
}

TEST(FairPoolTest, TakeIdleEmptiesThePoolOfIdleConnectionsOnly) {
  FairPool<int> pool(3);
  int a = 1, b = 2;
  ASSERT_EQ(pool.Acquire(), nullptr);
  ASSERT_EQ(pool.Acquire(), nullptr);
  ASSERT_EQ(pool.Acquire(), nullptr);
  pool.Release(&a);
  pool.Release(&b);
  EXPECT_EQ(pool.TakeIdle(), (std::vector<int*>{&a, &b}));
  EXPECT_EQ(pool.open(), 1);  // the one still out
}

TEST(FairPoolTest, ManyThreadsShareASmallPoolWithoutLosingAConnection) {
  FairPool<int> pool(3);
  std::atomic<int> in_use{0};
  std::atomic<int> most{0};
  std::vector<int> storage(3);
  std::atomic<int> opened{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        int* connection = pool.Acquire();
        if (!connection) connection = &storage[static_cast<size_t>(opened++)];
        const int now = ++in_use;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --in_use;
        pool.Release(connection);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(most.load(), 3);
  EXPECT_LE(opened.load(), 3);
  EXPECT_EQ(pool.waiting(), 0u);
  EXPECT_EQ(pool.TakeIdle().size(), static_cast<size_t>(opened.load()));
}

}  // namespace
}  // namespace telic::store
