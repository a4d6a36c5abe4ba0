// The bookkeeping of a bounded pool of connections, first come first served.
//
// A pool built on one condition variable lets a thread that returns a
// connection take it straight back (a keep-alive HTTP worker starting its next
// request) while the thread woken for it finds the pool empty again and goes
// back to sleep: under load some callers wait for seconds (issue 18: two
// instances on one PostgreSQL showed read p99s of 0.5-1.5 s). Here a returned
// connection is handed to the caller that has waited longest, on its own
// condition variable, and a caller never takes an idle connection while
// others wait.
//
// The pool holds pointers only; opening and closing connections is the
// owner's (Acquire grants the right to open one, Discard gives a slot back).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

namespace telic::store {

template <typename Connection>
class FairPool {
 public:
  explicit FairPool(int capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  FairPool(const FairPool&) = delete;
  FairPool& operator=(const FairPool&) = delete;

  // Blocks until the caller is first in line and a connection or a free slot
  // is there. Returns an idle connection, or nullptr: the caller may open a
  // new one (its slot is counted; give it back with Discard if opening fails).
  Connection* Acquire() {
    std::unique_lock lock(mutex_);
    if (waiters_.empty()) {
      if (!idle_.empty()) {
        Connection* connection = idle_.back();  // the most recently used: warm
        idle_.pop_back();
        return connection;
      }
      if (open_ < capacity_) {
        ++open_;
        return nullptr;
      }
    }
    Waiter self;
    waiters_.push_back(&self);
    self.wake.wait(lock, [&self] { return self.granted; });
    return self.connection;
  }

  // Returns a healthy connection: to the longest waiting caller, else idle.
  void Release(Connection* connection) {
    std::lock_guard lock(mutex_);
    if (waiters_.empty()) {
      idle_.push_back(connection);
      return;
    }
    Grant(connection);
  }

  // A connection was closed (broken) or could not be opened: its slot goes to
  // the longest waiting caller as the right to open one, else is freed.
  void Discard() {
    std::lock_guard lock(mutex_);
    if (waiters_.empty()) {
      --open_;
      return;
    }
    Grant(nullptr);
  }

  // The idle connections, removed from the pool (to close them).
  std::vector<Connection*> TakeIdle() {
    std::lock_guard lock(mutex_);
    open_ -= static_cast<int>(idle_.size());
    return std::exchange(idle_, {});
  }

  size_t waiting() const {
    std::lock_guard lock(mutex_);
    return waiters_.size();
  }
  int open() const {
    std::lock_guard lock(mutex_);
    return open_;
  }

 private:
  struct Waiter {
    std::condition_variable wake;
    Connection* connection = nullptr;
    bool granted = false;
  };

  // Hands `connection` (nullptr: a slot to open one in) to the first waiter.
  // Called with mutex_ held; the waiter cannot leave before it is released.
  void Grant(Connection* connection) {
    Waiter* first = waiters_.front();
    waiters_.pop_front();
    first->connection = connection;
    first->granted = true;
    first->wake.notify_one();
  }

  const int capacity_;
  mutable std::mutex mutex_;
  std::deque<Waiter*> waiters_;      // oldest first
  std::vector<Connection*> idle_;    // empty while anyone waits
  int open_ = 0;                     // connections out, idle, or being opened
};

}  // namespace telic::store
