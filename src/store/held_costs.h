// Context costs a store holds before writing them (Store::DeferContextCost):
// summed per run and tool, thread-safe. A store writes a run's held costs
// with that run's next change, or all of them once Due() says the set is too
// large or too old, and at close.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace telic::store {

// Adds each of `more` to the entry of its tool in `into` (calls and bytes summed).
void MergeCosts(std::vector<ContextCost>& into, const std::vector<ContextCost>& more);

class HeldContextCosts {
 public:
  using Clock = std::chrono::steady_clock;
  using ByRun = std::map<std::string, std::vector<ContextCost>, std::less<>>;
  static constexpr size_t kMaxRuns = 256;
  static constexpr std::chrono::milliseconds kMaxAge{1000};

  // Holds `costs` for `run_id`, added to what it holds already.
  void Add(std::string_view run_id, const std::vector<ContextCost>& costs);
  // Whether the held set should be written now: more than kMaxRuns runs, or
  // the oldest held since before `now - kMaxAge`.
  bool Due(Clock::time_point now = Clock::now()) const;
  // Removes and returns the run's held costs (nullopt when none).
  std::optional<std::vector<ContextCost>> Take(std::string_view run_id);
  // Removes and returns everything held.
  ByRun TakeAll();
  // Adds the run's held costs to `costs` (a read shows what is not written yet).
  void AddHeldTo(std::string_view run_id, std::vector<ContextCost>& costs) const;
  // Whether anything is held.
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  ByRun held_;
  std::optional<Clock::time_point> oldest_;  // when the first of held_ was added
};

}  // namespace telic::store
