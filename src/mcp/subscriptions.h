// Change notifications: 2026-07-28 subscriptions/listen streams and the
// legacy resources/subscribe set.
//
// A listener is a sink (a function that delivers one JSON-RPC line) with the
// filter its client opted in to. The server publishes after every tool call
// that changed a run: notifications/resources/updated for the run's run:// and
// trace:// URIs (when subscribed) and notifications/resources/list_changed
// (when opted in; a changed run may have new artifacts). telic's tool and
// prompt lists never change while it runs, so those filters are acknowledged
// and never fire.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::mcp {

struct SubscriptionFilter {
  bool tools_list_changed = false;
  bool prompts_list_changed = false;
  bool resources_list_changed = false;
  std::set<std::string> resource_uris;
};

// Parses subscriptions/listen params.notifications; kInvalidArgument when
// malformed.
Result<SubscriptionFilter> ParseSubscriptionFilter(const Json& params);
// The notifications/subscriptions/acknowledged line for subscription `id`.
std::string SubscriptionAcknowledgement(const Json& id, const SubscriptionFilter& granted);
// The listen result sent when the server closes the stream gracefully.
std::string SubscriptionClosedReply(const Json& id);

// The lines waiting for one HTTP listen stream: the hub's sink pushes, the
// response writer pops. Bounded: a client that stops reading loses the
// stream (Overflowed), not the server's memory.
class ListenQueue {
 public:
  static constexpr size_t kMaxQueued = 1024;
  void Push(const std::string& line);
  // Waits up to `wait` for a line; false on timeout.
  bool Pop(std::string& line, std::chrono::milliseconds wait);
  bool Overflowed() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::string> lines_;
  bool overflowed_ = false;
};

class NotificationHub {
 public:
  using Sink = std::function<void(const std::string& line)>;

  // Registers a subscriptions/listen stream; returns its handle.
  int64_t Listen(const Json& subscription_id, SubscriptionFilter filter, Sink sink);
  // Ends the stream opened by subscriptions/listen request `subscription_id`
  // (stdio: notifications/cancelled); true when there was one.
  bool CancelBySubscriptionId(const Json& subscription_id);
  void Unlisten(int64_t handle);
  size_t listener_count() const;

  // Legacy: resources/subscribe adds, resources/unsubscribe removes; delivered
  // through the legacy sink (stdio only: legacy HTTP has no server stream).
  void SubscribeLegacy(const std::string& uri, bool subscribe);
  void set_legacy_sink(Sink sink);

  // A tool call changed run `run_id`.
  void PublishRunChanged(const std::string& run_id);

 private:
  struct Listener {
    Json subscription_id;
    SubscriptionFilter filter;
    Sink sink;
  };
  mutable std::mutex mutex_;
  int64_t next_handle_ = 1;
  std::map<int64_t, Listener> listeners_;
  std::set<std::string> legacy_uris_;
  Sink legacy_sink_;
};

}  // namespace telic::mcp
