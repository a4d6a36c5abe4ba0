// Tasks extension (`io.modelcontextprotocol/tasks`, ext-tasks
// specification/draft/tasks.md) for the one long call, telic_ground_context:
// a task runs a tool call on its own thread; tasks/get polls its status,
// progress message and, once terminal, its result; tasks/cancel asks it to
// stop (docs/API.md "Tasks"; docs/DECISIONS.md D-MCPB4..D-MCPB6).
//
// Bounded: at most `max_working` tasks work at once and at most `max_kept`
// are remembered; a terminal task is forgotten `ttl_ms` after its creation.
// Task ids are 256 bits from the OS CSPRNG (they are the only credential a
// task has).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "mcp/server.h"

namespace telic::mcp {

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

struct TaskLimits {
  size_t max_working = 4;
  size_t max_kept = 64;
  int64_t ttl_ms = 60 * 60 * 1000;
  int64_t poll_interval_ms = 250;
};

// How a task's work ended: the tool result (CallToolResult) and whether the
// work stopped because it was cancelled (then nothing was stored).
struct TaskOutcome {
  Json result;
  bool cancelled = false;
};
using TaskWork = std::function<TaskOutcome(const TaskControl& control)>;

// An MCP task's status (the tasks extension's own vocabulary, not a run's or
// a graph task's). working and input_required are live; the rest terminal.
enum class McpTaskStatus { kWorking, kInputRequired, kCompleted, kFailed, kCancelled };
// The status as the wire spells it ("working", "input_required", ...).
std::string_view McpTaskStatusName(McpTaskStatus status);

class TaskRegistry {
 public:
  explicit TaskRegistry(TaskLimits limits = {}, Clock* clock = nullptr);
  // Cancels every working task and waits for its thread.
  ~TaskRegistry();
  TaskRegistry(const TaskRegistry&) = delete;
  TaskRegistry& operator=(const TaskRegistry&) = delete;

  // Starts `work` on its own thread and returns the new Task (status
  // "working"); nullopt when `max_working` tasks are working or `max_kept`
  // tasks are remembered and none can be forgotten.
  std::optional<Json> Start(TaskWork work);
  // The DetailedTask of `task_id` (result on completed), or nullopt for an
  // unknown or forgotten task.
  std::optional<Json> Get(const std::string& task_id);
  // Asks a working task to stop; false for an unknown task. A terminal task
  // is left as it is.
  bool Cancel(const std::string& task_id);

 private:
  struct Entry {
    McpTaskStatus status = McpTaskStatus::kWorking;
    std::string status_message;
    int64_t created_ms = 0;
    int64_t updated_ms = 0;
    Json result;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    std::thread thread;
  };
  Json TaskJson(const std::string& task_id, const Entry& entry, bool detailed) const;
  // Forgets terminal tasks past their TTL; with `make_room`, also the oldest
  // terminal ones while `max_kept` are remembered. Joins their threads.
  void Forget(std::unique_lock<std::mutex>& lock, bool make_room);
  void Finish(const std::string& task_id, TaskOutcome outcome);
  void Progress(const std::string& task_id, std::string_view message);

  TaskLimits limits_;
  Clock& clock_;
  std::mutex mutex_;
  std::map<std::string, Entry> tasks_;
  size_t working_ = 0;
};

// True when the request's client capabilities declare the tasks extension.
bool DeclaresTasksExtension(const RequestContext& context);

}  // namespace telic::mcp
