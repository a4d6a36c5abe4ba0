// Counts what telic's tool results cost a host model (issue 39): per run and
// tool, the calls and the bytes of their text content, added to the store's
// context cost through store::Store::DeferContextCost, in batches.
//
// Counting must not cost a commit of its own (reads are the calls hosts make
// most, and a state-changing call has just committed): after a
// state-changing call or kFlushCalls calls, a run's counts go to
// Store::DeferContextCost, which a store may hold until the run's next
// change commits and write in that transaction; WriteAll (and destroying the
// meter, when the server stops) flushes everything. A failed write is
// dropped (the cost is a statistic; the run is unaffected).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "store/store.h"

namespace telic::mcp {

class ContextMeter {
 public:
  static constexpr int64_t kFlushCalls = 32;

  explicit ContextMeter(store::Store& store) : store_(store) {}
  ~ContextMeter();  // writes what is pending
  ContextMeter(const ContextMeter&) = delete;
  ContextMeter& operator=(const ContextMeter&) = delete;

  // Counts one result of `tool` for `run_id` of `bytes`; with `write_now`
  // (a state-changing call) the run's pending counts are written at once.
  void Count(const std::string& run_id, const std::string& tool, size_t bytes, bool write_now);
  // Writes every run's pending counts.
  void WriteAll();

 private:
  struct Pending {
    std::map<std::string, store::ContextCost> tools;
    int64_t calls = 0;
  };
  void Write(const std::string& run_id, Pending pending);

  store::Store& store_;
  std::mutex mutex_;
  std::map<std::string, Pending> pending_;  // by run id
};

}  // namespace telic::mcp
