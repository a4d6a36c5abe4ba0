// The MCP server core: lifecycle, tools and prompts, independent of transport.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"
#include "mcp/context_meter.h"
#include "mcp/lean_profile.h"
#include "mcp/read_cache.h"
#include "mcp/request_state.h"
#include "mcp/revision.h"
#include "mcp/subscriptions.h"

namespace telic::mcp {

inline constexpr const char* kServerName = "telic";
inline constexpr const char* kServerVersion = "0.2.0";

// Protocol versions telic speaks, newest first. An unknown client version is
// answered with the newest.
const std::vector<std::string>& SupportedProtocolVersions();

// A tool handler receives arguments already validated against the tool's
// input schema (defaults applied) and returns the success payload fields
// (without `ok`) or an Error.
using ToolHandler = std::function<Result<Json>(const Json& arguments)>;

// What a tool running as a task (mcp/tasks.h) is given: a cancellation flag
// to poll and a sink for progress messages.
struct TaskControl {
  std::function<bool()> cancelled;
  std::function<void(std::string_view)> progress;
};
using TaskHandler = std::function<Result<Json>(const Json& arguments, const TaskControl& control)>;

struct ToolSpec {
  std::string name;
  std::string title;
  std::string description;
  std::string schema_path;  // under schemas/, e.g. "tools/telic_get_run.json"
  bool read_only = false;
  bool idempotent = false;
  ToolHandler handler;
  TaskHandler task_handler;  // set for a tool that may run as a task (telic_ground_context)
};

struct ClarificationState;
class TaskRegistry;
struct TaskLimits;

class Server {
 public:
  // Sets `service` to build NextActions with served-schema references
  // (RunService::set_action_schemas): the server writes or expands them, so
  // what it sends is unchanged; a caller that reads NextActions from the same
  // service directly gets references too.
  explicit Server(controller::RunService& service);
  ~Server();  // cancels working tasks and waits for them

  // Handles one line from the client; returns the reply line, if any.
  std::optional<std::string> HandleLine(std::string_view line);

  // Registers more tools after the run tools (e.g. the task-graph tools).
  // Call before serving: the tools/list entries are built once after it.
  void AddTools(std::vector<ToolSpec> tools);

  // The tools/list entries (also used by docs and the compatibility test),
  // parsed from the kept text of ToolListReply. Thread-safe.
  Json ListTools() const;
  // The tools/list reply line: ResultResponse(id, {"tools": ListTools()}),
  // as a 2026-07-28 result when `modern`. The entries' text is built once
  // (after AddTools) from the schema bundles made at build time
  // (schema/prebuilt_bundles.h) and written in as precomputed text
  // (WriteJson with a WriteOrder): bundling and serialising
  // them at run time cost ~50 M instructions, the first tools/list 37 ms.
  std::string ToolListReply(const Json& id, bool modern) const;

  // Calls a tool by name with raw arguments; returns the tools/call result
  // object (content + structuredContent, isError on failure), or nullopt for
  // an unknown tool.
  std::optional<Json> CallTool(const std::string& name, const Json* arguments);

  static constexpr size_t kMaxMessageBytes = 16 * 1024 * 1024;

  // Called after every successful tool call with the tool and its payload
  // (e.g. for tests that watch results).
  void set_tool_observer(std::function<void(const ToolSpec&, const Json&)> observer) { observer_ = std::move(observer); }

  // Where a transport that shares one channel for every message (stdio)
  // delivers server-initiated lines: subscriptions/listen notifications and
  // legacy resources/updated. Unset: no stream can be opened in HandleLine.
  void set_output(NotificationHub::Sink output);
  NotificationHub& hub() { return hub_; }

  // Opens a subscriptions/listen stream for request `id`: delivers the
  // acknowledgement through `sink`, then registers it. Returns the hub handle
  // or the JSON-RPC error reply.
  std::variant<int64_t, std::string> OpenListen(const Json& id, const Json& params, NotificationHub::Sink sink);

  // The file holding the per-store key that authenticates requestState
  // (clarification_mrtr.cc); read or created on first use. Unset: no
  // InputRequiredResult is issued (a retry gets -32603).
  void set_request_state_key_file(std::string path);

  // The profile of sessions that ask for none at initialize (mcp/lean_profile.h).
  void set_profile(Profile profile) { profile_ = profile; }
  // The profile the current request is answered in: its session's choice at
  // initialize (SessionProfileScope over HTTP; this server's own over stdio),
  // else set_profile's.
  Profile EffectiveProfile() const;

  // Replaces the tasks extension's limits (tests; mcp/tasks.h). Call before serving.
  void set_task_limits(const TaskLimits& limits);

 private:
  // A tool's result payload ({ok, ...}) before it is written as a result.
  struct ToolPayload {
    Json payload;
    bool is_error = false;
  };
  // With `control`, a tool that has a task_handler runs through it.
  std::optional<ToolPayload> CallToolPayload(const std::string& name, const Json* arguments,
                                             const TaskControl* control = nullptr);
  std::optional<std::string> Dispatch(const Json& id, const std::string& method, const Json& params);
  Json Initialize(const Json& params) const;
  // 2026-07-28 requests (modern_dispatch.cc).
  std::optional<std::string> DispatchModern(const Json& id, const std::string& method, const Json& params,
                                            const RequestContext& context);
  // The capabilities an era advertises (initialize, server/discover).
  Json Capabilities(bool modern) const;
  // Resources, completion, legacy subscribe and logging (resources.cc);
  // nullopt when `method` is none of them.
  std::optional<std::string> DispatchResources(const Json& id, const std::string& method, const Json& params,
                                               const RequestContext& context);
  std::string ListResources(const Json& id, const Json& params, bool modern);
  std::string ReadResource(const Json& id, const Json& params, bool modern);
  std::string Complete(const Json& id, const Json& params, bool modern);
  // The clarification as a multi round-trip request (clarification_mrtr.cc):
  // the reply for a 2026-07-28 tools/call that asks for or answers the run's
  // clarification, or refuses its requestState; nullopt for today's result.
  std::optional<std::string> ClarificationRoundTrip(const Json& id, const std::string& name, const Json* arguments,
                                                    const Json& params, const RequestContext& context);
  std::optional<std::string> AnswerClarification(const Json& id, const Json& responses, const ClarificationState& state);
  Result<const RequestStateSigner*> Signer();
  // The tasks extension (tasks.cc): a tools/call answered with a task, or
  // nullopt to answer it synchronously; tasks/get, tasks/update, tasks/cancel.
  std::optional<std::string> StartToolTask(const Json& id, const std::string& name, const Json* arguments,
                                           const RequestContext& context);
  std::string DispatchTasks(const Json& id, const std::string& method, const Json& params, const RequestContext& context);
  // Counts a tools/call result of `bytes` text for its run (ContextMeter):
  // the run named by arguments.run_id, else by the payload's run.runId.
  void CountContextCost(const std::string& name, const Json* arguments, const Json* payload, size_t bytes);
  // A read-only tool's payload for validated `arguments` (resources/read).
  Result<Json> ReadToolPayload(const std::string& name, Json arguments);

  controller::RunService& service_;
  Profile profile_ = Profile::kDefault;
  mutable std::atomic<int> session_profile_{-1};  // what initialize asked for on stdio: a Profile, or -1
  std::vector<ToolSpec> tools_;
  struct ToolList {
    std::string text;  // the entries' array, as Compact writes it
  };
  std::shared_ptr<const ToolList> BuiltToolList() const;
  mutable std::mutex tool_list_mutex_;
  mutable std::shared_ptr<const ToolList> tool_list_;  // once built
  // Keeps a refused call of `tool` in its run's refused-call log (when the
  // arguments name an existing run; best effort).
  void KeepRefusal(const ToolSpec& tool, const Json& arguments, const Json& refusal);
  std::function<void(const ToolSpec&, const Json&)> observer_;
  ReadResultCache read_results_;
  NotificationHub hub_;
  NotificationHub::Sink output_;
  std::mutex signer_mutex_;
  std::string key_file_;
  std::unique_ptr<RequestStateSigner> signer_;
  std::unique_ptr<ContextMeter> meter_;  // after tasks_ is destroyed, writes what is pending
  // Last: destroyed (its task threads joined) before everything they use.
  std::unique_ptr<TaskRegistry> tasks_;
};

// The tool result for a handled failure: isError, structuredContent
// {ok:false, code, error, issues?}, text = the same object as compact JSON
// (members in wire order, mcp/result_writer.h).
Json ToolErrorResult(const Error& error);
// The tool result for a success payload: {ok:true, ...payload}, text pretty
// (members in wire order).
Json ToolSuccessResult(const Json& payload);
// The tool result for a structuredContent payload ({ok, ...}).
Json ToolResultFromPayload(Json payload, bool is_error);
// The structuredContent of those results.
Json ToolErrorPayload(const Error& error);
Json ToolSuccessPayload(Json fields);

}  // namespace telic::mcp
