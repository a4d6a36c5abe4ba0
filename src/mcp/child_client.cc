#include "mcp/child_client.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "mcp/jsonrpc.h"

extern char** environ;

namespace telic::mcp {

Result<std::unique_ptr<ChildClient>> ChildClient::Start(const std::vector<std::string>& argv,
                                                        const std::map<std::string, std::string>& env) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Fail(ErrorCode::kInternal, fmt::format("pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    if (!env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    return Fail(ErrorCode::kInternal, fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  }
  return std::unique_ptr<ChildClient>(new ChildClient(pid, fdopen(in_pipe[1], "w"), fdopen(out_pipe[0], "r")));
}

ChildClient::~ChildClient() { Close(); }

Result<Json> ChildClient::Request(const std::string& method, const Json& params) {
  int64_t id = next_id_++;
  std::string line = Compact(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  if (!to_ || std::fprintf(to_, "%s\n", line.c_str()) < 0 || std::fflush(to_) != 0) {
    return Fail(ErrorCode::kUnavailable, "the server's stdin is closed");
  }
  char* buffer = nullptr;
  size_t capacity = 0;
  while (getline(&buffer, &capacity, from_) > 0) {
    Json reply = ParseJsonStrict(buffer).value_or(Json(Json::value_t::discarded));
    if (reply.is_object() && reply.value("id", Json()) == id) {
      std::free(buffer);
      if (reply.contains("error")) {
        return Fail(ErrorCode::kInternal, reply["error"].value("message", std::string("JSON-RPC error")));
      }
      return reply["result"];
    }
  }
  std::free(buffer);
  return Fail(ErrorCode::kUnavailable, "the server closed its output before replying");
}

Status ChildClient::Notify(const std::string& method, const Json& params) {
  std::string line = Compact(Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
  if (!to_ || std::fprintf(to_, "%s\n", line.c_str()) < 0 || std::fflush(to_) != 0) {
    return Fail(ErrorCode::kUnavailable, "the server's stdin is closed");
  }
  return Ok();
}

Result<Json> ChildClient::CallTool(const std::string& name, const Json& arguments) {
  TELIC_ASSIGN_OR_RETURN(Json result, Request("tools/call", Json{{"name", name}, {"arguments", arguments}}));
  Json payload = result.value("structuredContent", Json::object());
  if (result.value("isError", false)) {
    return Fail(ErrorCode::kInternal, fmt::format("{} failed: {}", name, payload.value("error", std::string("error"))));
  }
  return payload;
}

int ChildClient::Close() {
  if (to_) {
    std::fclose(to_);
    to_ = nullptr;
  }
  if (from_) {
    std::fclose(from_);
    from_ = nullptr;
  }
  if (pid_ <= 0) return 0;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace telic::mcp
