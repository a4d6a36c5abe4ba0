#include "store/held_costs.h"

#include <algorithm>

namespace telic::store {

void MergeCosts(std::vector<ContextCost>& into, const std::vector<ContextCost>& more) {
  for (const ContextCost& cost : more) {
    auto same = std::find_if(into.begin(), into.end(), [&](const ContextCost& c) { return c.tool == cost.tool; });
    if (same == into.end()) {
      into.push_back(cost);
      continue;
    }
    same->calls += cost.calls;
    same->bytes += cost.bytes;
  }
}

void HeldContextCosts::Add(std::string_view run_id, const std::vector<ContextCost>& costs) {
  if (costs.empty()) return;
  std::lock_guard lock(mutex_);
  auto held = held_.find(run_id);
  if (held == held_.end()) held = held_.emplace(std::string(run_id), std::vector<ContextCost>{}).first;
  MergeCosts(held->second, costs);
  if (!oldest_) oldest_ = Clock::now();
}

bool HeldContextCosts::Due(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  return held_.size() > kMaxRuns || (oldest_ && now - *oldest_ >= kMaxAge);
}

std::optional<std::vector<ContextCost>> HeldContextCosts::Take(std::string_view run_id) {
  std::lock_guard lock(mutex_);
  auto held = held_.find(run_id);
  if (held == held_.end()) return std::nullopt;
  std::vector<ContextCost> costs = std::move(held->second);
  held_.erase(held);
  if (held_.empty()) oldest_.reset();
  return costs;
}

HeldContextCosts::ByRun HeldContextCosts::TakeAll() {
  std::lock_guard lock(mutex_);
  ByRun all;
  all.swap(held_);
  oldest_.reset();
  return all;
}

void HeldContextCosts::AddHeldTo(std::string_view run_id, std::vector<ContextCost>& costs) const {
  std::lock_guard lock(mutex_);
  if (auto held = held_.find(run_id); held != held_.end()) MergeCosts(costs, held->second);
}

bool HeldContextCosts::empty() const {
  std::lock_guard lock(mutex_);
  return held_.empty();
}

}  // namespace telic::store
