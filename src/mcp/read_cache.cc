#include "mcp/read_cache.h"

namespace telic::mcp {

const std::string* ReadResultCache::CacheableRun(const std::string& tool, const Json* arguments) {
  if (tool != "telic_get_run" && tool != "telic_get_next_action") return nullptr;
  if (arguments == nullptr || !arguments->is_object() || arguments->size() != 1) return nullptr;
  auto run_id = arguments->find("run_id");
  if (run_id == arguments->end() || !run_id->is_string()) return nullptr;
  return &run_id->get_ref<const std::string&>();
}

std::shared_ptr<const std::string> ReadResultCache::Find(const std::string& tool, const std::string& run_id,
                                                         const controller::RunStamp& stamp) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find({tool, run_id});
  if (it == entries_.end() || !(it->second.stamp == stamp)) return nullptr;
  return it->second.body;
}

void ReadResultCache::Keep(const std::string& tool, const std::string& run_id, controller::RunStamp stamp,
                           std::string body) {
  auto kept = std::make_shared<const std::string>(std::move(body));
  std::lock_guard lock(mutex_);
  std::pair<std::string, std::string> key{tool, run_id};
  if (entries_.size() >= kMaxEntries && !entries_.contains(key)) entries_.clear();
  entries_[std::move(key)] = Entry{std::move(stamp), std::move(kept)};
}

}  // namespace telic::mcp
