// The sessions of the HTTP transport (Mcp-Session-Id), bounded so that a
// flood of `initialize` cannot lock other clients out.
//
// A session is pending from `initialize` until its client sends anything
// else in it (notifications/initialized or a request); a pending session is
// forgotten after `init_timeout`, any other after `idle_timeout` without use.
// At the cap, opening a session evicts the least recently used pending
// session, else the least recently used idle one (a session with a request
// being handled is never evicted). A forgotten session's client gets 404 and
// initializes again: a session holds nothing but its negotiated version.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "mcp/lean_profile.h"

namespace telic::mcp {

class SessionTable {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    size_t max_sessions = 4096;
    std::chrono::milliseconds init_timeout = std::chrono::seconds(10);
    std::chrono::milliseconds idle_timeout = std::chrono::seconds(1800);
  };

  explicit SessionTable(Limits limits) : limits_(limits) {}

  // Adds a pending session, evicting one at the cap; false (nothing added)
  // when every session has a request being handled. `profile`: what its
  // initialize asked for (nullopt: the server's).
  [[nodiscard]] bool Open(const std::string& id, std::string protocol_version, Clock::time_point now,
                          std::optional<Profile> profile = std::nullopt);
  // The profile the session's initialize asked for; nullopt when none or unknown.
  std::optional<Profile> ProfileOf(const std::string& id);
  // The session's negotiated version, or nullopt when it is unknown,
  // closed, expired or evicted. Marks it used and initialized; with `begin`,
  // it also counts a request being handled until End(id).
  std::optional<std::string> Use(const std::string& id, Clock::time_point now, bool begin = false);
  void End(const std::string& id);
  // Forgets the session; false when it was not known.
  bool Close(const std::string& id);
  // Sessions alive at `now`.
  size_t Count(Clock::time_point now);

 private:
  struct Entry {
    std::string protocol_version;
    bool pending = true;
    int busy = 0;
    Clock::time_point last_used;
    std::list<std::string>::iterator position;  // in pending_ or ready_
    std::optional<Profile> profile;
  };
  using Map = std::unordered_map<std::string, Entry>;

  void Reap(Clock::time_point now);
  bool EvictOne();
  void Forget(Map::iterator it);

  Limits limits_;
  std::mutex mutex_;
  Map sessions_;
  // Least recently used first; each ordered by last_used.
  std::list<std::string> pending_;
  std::list<std::string> ready_;
};

}  // namespace telic::mcp
