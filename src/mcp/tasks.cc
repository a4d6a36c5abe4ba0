#include "mcp/tasks.h"

#include <algorithm>
#include <vector>

#include "base/ids.h"
#include "mcp/jsonrpc.h"
#include "mcp/revision.h"

namespace telic::mcp {
namespace {

Clock& DefaultClock() {
  static SystemClock clock;
  return clock;
}

bool IsTerminal(McpTaskStatus status) {
  return status != McpTaskStatus::kWorking && status != McpTaskStatus::kInputRequired;
}

}  // namespace

std::string_view McpTaskStatusName(McpTaskStatus status) {
  switch (status) {
    case McpTaskStatus::kWorking: return "working";
    case McpTaskStatus::kInputRequired: return "input_required";
    case McpTaskStatus::kCompleted: return "completed";
    case McpTaskStatus::kFailed: return "failed";
    case McpTaskStatus::kCancelled: return "cancelled";
  }
  return "failed";  // unreachable: the switch names every status
}

bool DeclaresTasksExtension(const RequestContext& context) {
  const Json& capabilities = context.client_capabilities;
  if (!capabilities.is_object() || !capabilities.contains("extensions")) return false;
  const Json& extensions = capabilities["extensions"];
  return extensions.is_object() && extensions.contains(kTasksExtension) && extensions[kTasksExtension].is_object();
}

TaskRegistry::TaskRegistry(TaskLimits limits, Clock* clock) : limits_(limits), clock_(clock ? *clock : DefaultClock()) {}

TaskRegistry::~TaskRegistry() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, entry] : tasks_) {
      entry.cancel->store(true);
      if (entry.thread.joinable()) threads.push_back(std::move(entry.thread));
    }
  }
  for (std::thread& thread : threads) thread.join();
}

Json TaskRegistry::TaskJson(const std::string& task_id, const Entry& entry, bool detailed) const {
  Json task = {{"taskId", task_id},
               {"status", McpTaskStatusName(entry.status)},
               {"createdAt", FormatIsoMillis(entry.created_ms)},
               {"lastUpdatedAt", FormatIsoMillis(entry.updated_ms)},
               {"ttlMs", limits_.ttl_ms},
               {"pollIntervalMs", limits_.poll_interval_ms}};
  if (!entry.status_message.empty()) task["statusMessage"] = entry.status_message;
  if (detailed && entry.status == McpTaskStatus::kCompleted) task["result"] = entry.result;
  return task;
}

void TaskRegistry::Forget(std::unique_lock<std::mutex>& lock, bool make_room) {
  (void)lock;  // held by the caller
  int64_t now = clock_.NowMillis();
  auto forget = [this](std::map<std::string, Entry>::iterator it) {
    // A terminal task's thread has left Finish; joining it here is immediate.
    if (it->second.thread.joinable()) it->second.thread.join();
    return tasks_.erase(it);
  };
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    bool expired = IsTerminal(it->second.status) && now - it->second.created_ms >= limits_.ttl_ms;
    it = expired ? forget(it) : std::next(it);
  }
  while (make_room && tasks_.size() >= limits_.max_kept) {
    auto oldest = tasks_.end();
    for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
      if (IsTerminal(it->second.status) && (oldest == tasks_.end() || it->second.created_ms < oldest->second.created_ms)) {
        oldest = it;
      }
    }
    if (oldest == tasks_.end()) return;
    forget(oldest);
  }
}

std::optional<Json> TaskRegistry::Start(TaskWork work) {
  std::unique_lock lock(mutex_);
  Forget(lock, true);
  if (working_ >= limits_.max_working || tasks_.size() >= limits_.max_kept) return std::nullopt;
  std::string task_id = RandomHex(32);
  Entry& entry = tasks_[task_id];
  entry.created_ms = entry.updated_ms = clock_.NowMillis();
  ++working_;
  TaskControl control;
  control.cancelled = [flag = entry.cancel] { return flag->load(); };
  control.progress = [this, task_id](std::string_view message) { Progress(task_id, message); };
  entry.thread = std::thread([this, task_id, work = std::move(work), control = std::move(control)] {
    TaskOutcome outcome;
    try {
      outcome = work(control);
    } catch (const std::exception& ex) {
      outcome.result = ToolErrorResult(Error(ErrorCode::kInternal, std::string("internal error: ") + ex.what()));
    }
    Finish(task_id, std::move(outcome));
  });
  return TaskJson(task_id, entry, false);
}

void TaskRegistry::Progress(const std::string& task_id, std::string_view message) {
  std::lock_guard lock(mutex_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || IsTerminal(it->second.status)) return;
  it->second.status_message = std::string(message);
  it->second.updated_ms = clock_.NowMillis();
}

void TaskRegistry::Finish(const std::string& task_id, TaskOutcome outcome) {
  std::lock_guard lock(mutex_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return;
  Entry& entry = it->second;
  --working_;
  entry.updated_ms = clock_.NowMillis();
  if (outcome.cancelled) {
    entry.status = McpTaskStatus::kCancelled;
    entry.status_message = "Cancelled; nothing was stored.";
  } else {
    entry.status = McpTaskStatus::kCompleted;
    entry.status_message = outcome.result.value("isError", false) ? "Finished with a tool error." : "Finished.";
    entry.result = std::move(outcome.result);
  }
}

std::optional<Json> TaskRegistry::Get(const std::string& task_id) {
  std::unique_lock lock(mutex_);
  Forget(lock, false);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return std::nullopt;
  return TaskJson(task_id, it->second, true);
}

bool TaskRegistry::Cancel(const std::string& task_id) {
  std::unique_lock lock(mutex_);
  Forget(lock, false);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return false;
  if (!IsTerminal(it->second.status)) {
    it->second.cancel->store(true);
    it->second.status_message = "Cancellation requested.";
    it->second.updated_ms = clock_.NowMillis();
  }
  return true;
}

}  // namespace telic::mcp

namespace telic::mcp {
namespace {

std::string MissingTasksCapability(const Json& id) {
  return ErrorResponse(id, kMissingRequiredClientCapability, "Missing required client capability",
                       {{"requiredCapabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}});
}

}  // namespace

void Server::set_task_limits(const TaskLimits& limits) { tasks_ = std::make_unique<TaskRegistry>(limits); }

std::optional<std::string> Server::StartToolTask(const Json& id, const std::string& name, const Json* arguments,
                                                 const RequestContext& context) {
  if (!DeclaresTasksExtension(context)) return std::nullopt;
  auto tool = std::find_if(tools_.begin(), tools_.end(), [&](const ToolSpec& t) { return t.name == name; });
  if (tool == tools_.end() || !tool->task_handler) return std::nullopt;
  std::optional<Json> copied = arguments ? std::optional<Json>(*arguments) : std::nullopt;
  auto task = tasks_->Start([this, name, copied](const TaskControl& control) {
    auto payload = CallToolPayload(name, copied ? &*copied : nullptr, &control);
    TaskOutcome outcome;
    outcome.cancelled = payload->is_error && control.cancelled();
    outcome.result = ModernResult(ToolResultFromPayload(std::move(payload->payload), payload->is_error));
    return outcome;
  });
  if (!task) return std::nullopt;  // at the limit: answered synchronously (D-MCPB5)
  (*task)["resultType"] = "task";
  return ResultResponse(id, ModernResult(std::move(*task)));
}

std::string Server::DispatchTasks(const Json& id, const std::string& method, const Json& params,
                                  const RequestContext& context) {
  if (!DeclaresTasksExtension(context)) return MissingTasksCapability(id);
  if (!params.is_object() || !params.contains("taskId") || !params["taskId"].is_string()) {
    return ErrorResponse(id, kInvalidParams, "Invalid params: taskId must be a string");
  }
  std::string task_id = params["taskId"].get<std::string>();
  if (method == "tasks/get") {
    auto task = tasks_->Get(task_id);
    if (!task) return ErrorResponse(id, kInvalidParams, "Failed to retrieve task: Task not found");
    return ResultResponse(id, ModernResult(std::move(*task)));
  }
  if (method == "tasks/update") {
    if (!params.contains("inputResponses") || !params["inputResponses"].is_object()) {
      return ErrorResponse(id, kInvalidParams, "Invalid params: inputResponses must be an object");
    }
    // telic's tasks never ask for input: responses are ignored, as the
    // extension says for keys that are not outstanding.
    if (!tasks_->Get(task_id)) return ErrorResponse(id, kInvalidParams, "Failed to update task: Task not found");
    return ResultResponse(id, ModernResult(Json::object()));
  }
  if (!tasks_->Cancel(task_id)) return ErrorResponse(id, kInvalidParams, "Failed to cancel task: Task not found");
  return ResultResponse(id, ModernResult(Json::object()));
}

}  // namespace telic::mcp
