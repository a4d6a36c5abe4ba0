#include "mcp/http_sessions.h"

namespace telic::mcp {

bool SessionTable::Open(const std::string& id, std::string protocol_version, Clock::time_point now,
                        std::optional<Profile> profile) {
  std::lock_guard lock(mutex_);
  Reap(now);
  if (sessions_.size() >= limits_.max_sessions && !EvictOne()) return false;
  pending_.push_back(id);
  sessions_[id] = Entry{std::move(protocol_version), true, 0, now, std::prev(pending_.end()), profile};
  return true;
}

std::optional<Profile> SessionTable::ProfileOf(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? std::nullopt : it->second.profile;
}

std::optional<std::string> SessionTable::Use(const std::string& id, Clock::time_point now, bool begin) {
  std::lock_guard lock(mutex_);
  Reap(now);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  Entry& entry = it->second;
  std::list<std::string>& from = entry.pending ? pending_ : ready_;
  ready_.splice(ready_.end(), from, entry.position);  // the most recently used
  entry.pending = false;
  entry.last_used = now;
  if (begin) ++entry.busy;
  return entry.protocol_version;
}

void SessionTable::End(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it != sessions_.end() && it->second.busy > 0) --it->second.busy;
}

bool SessionTable::Close(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  Forget(it);
  return true;
}

size_t SessionTable::Count(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  Reap(now);
  return sessions_.size();
}

// Each list is ordered by last use, so only its expired head is visited
// (busy sessions excepted: they stay, and are passed over).
void SessionTable::Reap(Clock::time_point now) {
  auto reap = [&](std::list<std::string>& order, std::chrono::milliseconds timeout) {
    for (auto at = order.begin(); at != order.end();) {
      auto it = sessions_.find(*at);
      ++at;
      if (now - it->second.last_used <= timeout) return;
      if (it->second.busy == 0) Forget(it);
    }
  };
  reap(pending_, limits_.init_timeout);
  reap(ready_, limits_.idle_timeout);
}

bool SessionTable::EvictOne() {
  if (!pending_.empty()) {
    Forget(sessions_.find(pending_.front()));
    return true;
  }
  for (const std::string& id : ready_) {
    auto it = sessions_.find(id);
    if (it->second.busy == 0) {
      Forget(it);
      return true;
    }
  }
  return false;
}

void SessionTable::Forget(Map::iterator it) {
  (it->second.pending ? pending_ : ready_).erase(it->second.position);
  sessions_.erase(it);
}

}  // namespace telic::mcp
