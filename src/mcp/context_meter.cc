#include "mcp/context_meter.h"

#include <utility>
#include <vector>

namespace telic::mcp {

ContextMeter::~ContextMeter() { WriteAll(); }

void ContextMeter::Count(const std::string& run_id, const std::string& tool, size_t bytes, bool write_now) {
  Pending ready;
  {
    std::lock_guard lock(mutex_);
    Pending& pending = pending_[run_id];
    store::ContextCost& cost = pending.tools[tool];
    cost.tool = tool;
    cost.calls += 1;
    cost.bytes += static_cast<int64_t>(bytes);
    if (++pending.calls < kFlushCalls && !write_now) return;
    ready = std::move(pending);
    pending_.erase(run_id);
  }
  Write(run_id, std::move(ready));
}

void ContextMeter::WriteAll() {
  std::map<std::string, Pending> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(pending_);
  }
  for (auto& [run_id, pending] : all) Write(run_id, std::move(pending));
  (void)store_.FlushContextCosts();  // a statistic: a failed write loses only these counts
}

void ContextMeter::Write(const std::string& run_id, Pending pending) {
  std::vector<store::ContextCost> costs;
  for (auto& [tool, cost] : pending.tools) costs.push_back(std::move(cost));
  store_.DeferContextCost(run_id, std::move(costs));
}

}  // namespace telic::mcp
