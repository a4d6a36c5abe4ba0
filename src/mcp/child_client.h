// An MCP client that runs a server as a child process and speaks JSON-RPC
// over its stdin/stdout (used by `telic demo`; tests use their own client).
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::mcp {

class ChildClient {
 public:
  // Starts `argv` with `env` added to the current environment. The child's
  // stderr is inherited.
  static Result<std::unique_ptr<ChildClient>> Start(const std::vector<std::string>& argv,
                                                    const std::map<std::string, std::string>& env);
  ~ChildClient();

  // Sends one request and waits for the reply with the same id.
  Result<Json> Request(const std::string& method, const Json& params);
  // Sends a notification (no reply).
  Status Notify(const std::string& method, const Json& params);
  // tools/call; returns structuredContent, or the error payload as an Error.
  Result<Json> CallTool(const std::string& name, const Json& arguments);
  // Closes stdin and waits for the child; returns its exit status.
  int Close();

 private:
  ChildClient(pid_t pid, std::FILE* to_child, std::FILE* from_child) : pid_(pid), to_(to_child), from_(from_child) {}
  pid_t pid_;
  std::FILE* to_;
  std::FILE* from_;
  int64_t next_id_ = 1;
};

}  // namespace telic::mcp
