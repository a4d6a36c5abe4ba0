#include "mcp/subscriptions.h"

#include <vector>

#include "mcp/jsonrpc.h"
#include "mcp/revision.h"

namespace telic::mcp {
namespace {

std::string NotificationLine(const std::string& method, Json params) {
  return Compact(Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

Json TaggedParams(Json params, const Json& subscription_id) {
  params["_meta"] = {{kMetaSubscriptionId, subscription_id}};
  return params;
}

}  // namespace

Result<SubscriptionFilter> ParseSubscriptionFilter(const Json& params) {
  if (!params.is_object() || !params.contains("notifications") || !params["notifications"].is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "Invalid params: subscriptions/listen requires a notifications object");
  }
  const Json& n = params["notifications"];
  SubscriptionFilter filter;
  for (auto [key, flag] : {std::pair{"toolsListChanged", &filter.tools_list_changed},
                           std::pair{"promptsListChanged", &filter.prompts_list_changed},
                           std::pair{"resourcesListChanged", &filter.resources_list_changed}}) {
    if (!n.contains(key)) continue;
    if (!n[key].is_boolean()) return Fail(ErrorCode::kInvalidArgument, std::string("Invalid params: ") + key + " must be a boolean");
    *flag = n[key].get<bool>();
  }
  if (n.contains("resourceSubscriptions")) {
    const Json& uris = n["resourceSubscriptions"];
    if (!uris.is_array() || uris.size() > 256) {
      return Fail(ErrorCode::kInvalidArgument, "Invalid params: resourceSubscriptions must be an array of at most 256 URIs");
    }
    for (const Json& uri : uris) {
      if (!uri.is_string() || uri.get<std::string>().size() > 2048) {
        return Fail(ErrorCode::kInvalidArgument, "Invalid params: resourceSubscriptions must hold URI strings");
      }
      filter.resource_uris.insert(uri.get<std::string>());
    }
  }
  return filter;
}

std::string SubscriptionAcknowledgement(const Json& id, const SubscriptionFilter& granted) {
  Json notifications = Json::object();
  if (granted.tools_list_changed) notifications["toolsListChanged"] = true;
  if (granted.prompts_list_changed) notifications["promptsListChanged"] = true;
  if (granted.resources_list_changed) notifications["resourcesListChanged"] = true;
  if (!granted.resource_uris.empty()) notifications["resourceSubscriptions"] = granted.resource_uris;
  return NotificationLine("notifications/subscriptions/acknowledged",
                          TaggedParams({{"notifications", notifications}}, id));
}

std::string SubscriptionClosedReply(const Json& id) {
  return ResultResponse(id, ModernResult({{"_meta", {{kMetaSubscriptionId, id}}}}));
}

void ListenQueue::Push(const std::string& line) {
  {
    std::lock_guard lock(mutex_);
    if (lines_.size() >= kMaxQueued) {
      overflowed_ = true;
      return;
    }
    lines_.push_back(line);
  }
  ready_.notify_one();
}

bool ListenQueue::Pop(std::string& line, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, wait, [&] { return !lines_.empty(); })) return false;
  line = std::move(lines_.front());
  lines_.pop_front();
  return true;
}

bool ListenQueue::Overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

int64_t NotificationHub::Listen(const Json& subscription_id, SubscriptionFilter filter, Sink sink) {
  std::lock_guard lock(mutex_);
  int64_t handle = next_handle_++;
  listeners_[handle] = Listener{subscription_id, std::move(filter), std::move(sink)};
  return handle;
}

bool NotificationHub::CancelBySubscriptionId(const Json& subscription_id) {
  std::lock_guard lock(mutex_);
  for (auto it = listeners_.begin(); it != listeners_.end(); ++it) {
    if (it->second.subscription_id == subscription_id) {
      listeners_.erase(it);
      return true;
    }
  }
  return false;
}

void NotificationHub::Unlisten(int64_t handle) {
  std::lock_guard lock(mutex_);
  listeners_.erase(handle);
}

size_t NotificationHub::listener_count() const {
  std::lock_guard lock(mutex_);
  return listeners_.size();
}

void NotificationHub::SubscribeLegacy(const std::string& uri, bool subscribe) {
  std::lock_guard lock(mutex_);
  if (subscribe) legacy_uris_.insert(uri);
  else legacy_uris_.erase(uri);
}

void NotificationHub::set_legacy_sink(Sink sink) {
  std::lock_guard lock(mutex_);
  legacy_sink_ = std::move(sink);
}

void NotificationHub::PublishRunChanged(const std::string& run_id) {
  const std::vector<std::string> changed = {"run://" + run_id, "trace://" + run_id};
  std::vector<std::pair<Sink, std::string>> deliveries;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [handle, listener] : listeners_) {
      if (listener.filter.resources_list_changed) {
        deliveries.emplace_back(listener.sink, NotificationLine("notifications/resources/list_changed",
                                                                TaggedParams(Json::object(), listener.subscription_id)));
      }
      for (const auto& uri : changed) {
        if (!listener.filter.resource_uris.count(uri)) continue;
        deliveries.emplace_back(listener.sink, NotificationLine("notifications/resources/updated",
                                                                TaggedParams({{"uri", uri}}, listener.subscription_id)));
      }
    }
    if (legacy_sink_) {
      for (const auto& uri : changed) {
        if (legacy_uris_.count(uri)) {
          deliveries.emplace_back(legacy_sink_, NotificationLine("notifications/resources/updated", {{"uri", uri}}));
        }
      }
    }
  }
  for (const auto& [sink, line] : deliveries) sink(line);  // outside the lock: a sink may block
}

}  // namespace telic::mcp
