#include "cli/hook_hosts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace telic::cli {
namespace {

using Ordered = nlohmann::ordered_json;

// Shorthand for "this input is not something telic can decide": denied.
std::unexpected<Error> Unreadable(const std::string& what) { return Fail(ErrorCode::kInvalidArgument, what); }

// The string at object[key] when it is a non-empty string.
std::optional<std::string> StringAt(const Json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(std::string(key));
  if (it == object.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
  return it->get<std::string>();
}

// The first of `keys` holding a non-empty string, or an error naming them.
Result<std::string> Field(const Json& args, std::initializer_list<std::string_view> keys, const std::string& tool) {
  for (auto key : keys) {
    if (auto value = StringAt(args, key)) return *value;
  }
  std::string names;
  for (auto key : keys) names += (names.empty() ? "" : "|") + std::string(key);
  return Unreadable(fmt::format("tool {} without a non-empty string {}", tool, names));
}

HookRequest One(std::string capability, std::string target) {
  return HookRequest{{GatedCall{std::move(capability), std::move(target)}}};
}

// A call to a tool of an MCP server: telic's own tools are decided by telic
// itself (not gated here); any other server's tool may act outside the
// repository, so it needs external.write (D-HOST3).
HookRequest McpCall(std::string_view server, std::string_view tool) {
  if (server == "telic" || tool.rfind("telic_", 0) == 0) return HookRequest{};
  return One("external.write", "");
}

// `mcp__<server>__<tool>` (Claude Code, Codex): the server part.
std::optional<std::pair<std::string, std::string>> SplitMcpName(const std::string& name) {
  if (name.rfind("mcp__", 0) != 0) return std::nullopt;
  auto rest = name.substr(5);
  auto sep = rest.find("__");
  if (sep == std::string::npos || sep == 0) return std::nullopt;
  return std::make_pair(rest.substr(0, sep), rest.substr(sep + 2));
}

// The files an apply_patch envelope touches ("*** Add File: p", "*** Update
// File: p", "*** Move to: p" → write; "*** Delete File: p" → delete). A line
// scan, not std::regex: libstdc++'s regex recurses per character and a long
// hostile line would exhaust the stack.
Result<HookRequest> PatchCalls(const std::string& patch) {
  static constexpr std::pair<std::string_view, const char*> kHeaders[] = {
      {"*** Add File: ", "repository.write"},
      {"*** Update File: ", "repository.write"},
      {"*** Move to: ", "repository.write"},
      {"*** Delete File: ", "repository.delete"}};
  HookRequest request;
  std::string_view rest = patch;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    for (const auto& [prefix, capability] : kHeaders) {
      if (line.rfind(prefix, 0) != 0) continue;
      std::string_view path = line.substr(prefix.size());
      while (!path.empty() && (path.back() == '\r' || path.back() == ' ' || path.back() == '\t')) {
        path.remove_suffix(1);
      }
      if (!path.empty()) request.calls.push_back({capability, std::string(path)});
    }
  }
  if (request.calls.empty()) return Unreadable("apply_patch input names no file (*** Add/Update/Delete File:)");
  return request;
}

// Every http(s) URL in a text (Gemini CLI's web_fetch takes a prompt): from
// "http://" or "https://" (any case) to the next space, quote or angle bracket.
Result<HookRequest> UrlCalls(const std::string& text) {
  HookRequest request;
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t at = 0;
  while ((at = lower.find("http", at)) != std::string::npos) {
    size_t scheme = lower.compare(at, 8, "https://") == 0 ? 8 : lower.compare(at, 7, "http://") == 0 ? 7 : 0;
    if (scheme == 0) {
      at += 4;
      continue;
    }
    size_t end = text.find_first_of(" \t\r\n\"'<>", at + scheme);
    if (end == std::string::npos) end = text.size();
    if (end > at + scheme) request.calls.push_back({"network.read", text.substr(at, end - at)});
    at = end;
  }
  if (request.calls.empty()) return Unreadable("web fetch input names no http(s) URL");
  return request;
}

Result<HookRequest> OneFrom(std::string capability, Result<std::string> target) {
  if (!target) return std::unexpected(target.error());
  return One(std::move(capability), std::move(*target));
}
Result<HookRequest> PatchFrom(Result<std::string> patch) {
  if (!patch) return std::unexpected(patch.error());
  return PatchCalls(*patch);
}
Result<HookRequest> UrlFrom(Result<std::string> text) {
  if (!text) return std::unexpected(text.error());
  return UrlCalls(*text);
}

const Json& ObjectOr(const Json& input, std::string_view key) {
  static const Json kEmpty = Json::object();
  auto it = input.find(std::string(key));
  return it != input.end() && it->is_object() ? *it : kEmpty;
}

// Claude Code and Codex PreToolUse (Codex uses the same wire format).
Result<HookRequest> MapClaudeLike(const Json& input, bool codex) {
  if (StringAt(input, "hook_event_name") != "PreToolUse") return Unreadable("hook_event_name is not PreToolUse");
  auto tool = StringAt(input, "tool_name");
  if (!tool) return Unreadable("tool_name missing");
  auto it = input.find("tool_input");
  if (it == input.end() || !it->is_object()) return Unreadable("tool_input is not an object");
  const Json& args = *it;
  if (auto mcp = SplitMcpName(*tool)) return McpCall(mcp->first, mcp->second);
  if (*tool == "Bash") return OneFrom("shell.execute", Field(args, {"command"}, *tool));
  if (*tool == "Write" || *tool == "Edit" || *tool == "MultiEdit") {
    return OneFrom("repository.write", Field(args, {"file_path"}, *tool));
  }
  if (*tool == "NotebookEdit") return OneFrom("repository.write", Field(args, {"notebook_path"}, *tool));
  if (*tool == "Read") return OneFrom("repository.read", Field(args, {"file_path"}, *tool));
  if (*tool == "WebFetch") return OneFrom("network.read", Field(args, {"url"}, *tool));
  if (codex && *tool == "apply_patch") return PatchFrom(Field(args, {"command", "patch", "input"}, *tool));
  return Unreadable(fmt::format("tool {} is not one telic gates; denied by default", *tool));
}

Result<HookRequest> MapCursor(const Json& input) {
  auto event = StringAt(input, "hook_event_name");
  if (event == "beforeShellExecution") return OneFrom("shell.execute", Field(input, {"command"}, "shell"));
  if (event == "beforeReadFile") return OneFrom("repository.read", Field(input, {"file_path"}, "read"));
  if (event == "beforeMCPExecution") {
    auto tool = StringAt(input, "tool_name");
    if (!tool) return Unreadable("tool_name missing");
    return McpCall(StringAt(input, "server").value_or(""), *tool);
  }
  if (event != "preToolUse") return Unreadable("hook_event_name is not a Cursor pre-tool event");
  auto tool = StringAt(input, "tool_name");
  if (!tool) return Unreadable("tool_name missing");
  const Json& args = ObjectOr(input, "tool_input");
  if (tool->rfind("MCP:", 0) == 0) return McpCall("", tool->substr(4));
  if (*tool == "Shell") return OneFrom("shell.execute", Field(args, {"command"}, *tool));
  if (*tool == "Write" || *tool == "StrReplace" || *tool == "ApplyPatch") {
    return OneFrom("repository.write", Field(args, {"file_path", "path"}, *tool));
  }
  if (*tool == "EditNotebook") return OneFrom("repository.write", Field(args, {"target_notebook"}, *tool));
  if (*tool == "Delete") return OneFrom("repository.delete", Field(args, {"file_path", "path"}, *tool));
  if (*tool == "Read") return OneFrom("repository.read", Field(args, {"file_path", "path"}, *tool));
  if (*tool == "WebFetch") return OneFrom("network.read", Field(args, {"url"}, *tool));
  return Unreadable(fmt::format("tool {} is not one telic gates; denied by default", *tool));
}

Result<HookRequest> MapCline(const Json& input) {
  if (StringAt(input, "hookName") != "PreToolUse") return Unreadable("hookName is not PreToolUse");
  auto it = input.find("preToolUse");
  if (it == input.end() || !it->is_object()) return Unreadable("preToolUse is not an object");
  auto tool = StringAt(*it, "toolName");
  if (!tool) return Unreadable("preToolUse.toolName missing");
  const Json& args = ObjectOr(*it, "parameters");
  // Cline's tools that neither touch the repository nor leave the machine.
  static const std::set<std::string> kUngated = {
      "ask_followup_question",  "attempt_completion", "plan_mode_respond", "act_mode_respond", "new_task",
      "load_mcp_documentation", "condense",           "summarize_task",    "focus_chain"};
  if (kUngated.contains(*tool)) return HookRequest{};
  if (*tool == "execute_command") return OneFrom("shell.execute", Field(args, {"command"}, *tool));
  if (*tool == "write_to_file" || *tool == "replace_in_file" || *tool == "new_rule") {
    return OneFrom("repository.write", Field(args, {"path"}, *tool));
  }
  if (*tool == "apply_patch") return PatchFrom(Field(args, {"input"}, *tool));
  if (*tool == "read_file" || *tool == "list_files" || *tool == "search_files" ||
      *tool == "list_code_definition_names") {
    return OneFrom("repository.read", Field(args, {"path"}, *tool));
  }
  if (*tool == "web_fetch") return OneFrom("network.read", Field(args, {"url"}, *tool));
  if (*tool == "browser_action") return One("browser.mutate", "");
  if (*tool == "use_mcp_tool" || *tool == "access_mcp_resource") {
    TELIC_ASSIGN_OR_RETURN(std::string server, Field(args, {"server_name"}, *tool));
    return McpCall(server, StringAt(args, "tool_name").value_or(""));
  }
  return Unreadable(fmt::format("tool {} is not one telic gates; denied by default", *tool));
}

Result<HookRequest> MapGemini(const Json& input) {
  if (StringAt(input, "hook_event_name") != "BeforeTool") return Unreadable("hook_event_name is not BeforeTool");
  auto tool = StringAt(input, "tool_name");
  if (!tool) return Unreadable("tool_name missing");
  auto it = input.find("tool_input");
  if (it == input.end() || !it->is_object()) return Unreadable("tool_input is not an object");
  const Json& args = *it;
  const Json& mcp = ObjectOr(input, "mcp_context");
  if (auto server = StringAt(mcp, "server_name")) return McpCall(*server, StringAt(mcp, "tool_name").value_or(*tool));
  if (auto split = SplitMcpName(*tool)) return McpCall(split->first, split->second);
  if (*tool == "run_shell_command") return OneFrom("shell.execute", Field(args, {"command"}, *tool));
  if (*tool == "write_file" || *tool == "replace") {
    return OneFrom("repository.write", Field(args, {"file_path", "absolute_path"}, *tool));
  }
  if (*tool == "read_file") return OneFrom("repository.read", Field(args, {"file_path", "absolute_path"}, *tool));
  if (*tool == "web_fetch") return UrlFrom(Field(args, {"prompt", "url"}, *tool));
  return Unreadable(fmt::format("tool {} is not one telic gates; denied by default", *tool));
}

}  // namespace

std::optional<HookHost> ParseHookHost(std::string_view name) {
  if (name == "claude-code") return HookHost::kClaudeCode;
  if (name == "codex") return HookHost::kCodex;
  if (name == "cursor") return HookHost::kCursor;
  if (name == "cline") return HookHost::kCline;
  if (name == "gemini-cli") return HookHost::kGeminiCli;
  return std::nullopt;
}

const std::vector<std::string>& HookHostNames() {
  static const std::vector<std::string> kNames = {"claude-code", "codex", "cursor", "cline", "gemini-cli"};
  return kNames;
}

Result<HookRequest> MapHostHookInput(HookHost host, const Json& input) {
  if (!input.is_object()) return Unreadable("the hook input is not a JSON object");
  switch (host) {
    case HookHost::kClaudeCode:
      return MapClaudeLike(input, false);
    case HookHost::kCodex:
      return MapClaudeLike(input, true);
    case HookHost::kCursor:
      return MapCursor(input);
    case HookHost::kCline:
      return MapCline(input);
    case HookHost::kGeminiCli:
      return MapGemini(input);
    case HookHost::kTelic:
      break;
  }
  return Unreadable("no host hook format selected");
}

nlohmann::ordered_json HostAllowAnswer(HookHost host) {
  switch (host) {
    case HookHost::kClaudeCode:
    case HookHost::kCodex:
    case HookHost::kGeminiCli:
      return Ordered::object();
    case HookHost::kCline:
      return Ordered{{"cancel", false}};
    case HookHost::kTelic:
    case HookHost::kCursor:
      break;
  }
  return Ordered{{"permission", "allow"}};
}

nlohmann::ordered_json HostDenyAnswer(HookHost host, const std::string& user_message,
                                      const std::string& agent_message) {
  switch (host) {
    case HookHost::kClaudeCode:
    case HookHost::kCodex:
      return Ordered{{"hookSpecificOutput",
                      {{"hookEventName", "PreToolUse"},
                       {"permissionDecision", "deny"},
                       {"permissionDecisionReason", agent_message}}}};
    case HookHost::kGeminiCli:
      return Ordered{{"decision", "deny"}, {"reason", agent_message}, {"systemMessage", user_message}};
    case HookHost::kCline:
      return Ordered{{"cancel", true}, {"errorMessage", agent_message}};
    case HookHost::kTelic:
    case HookHost::kCursor:
      break;
  }
  return Ordered{{"permission", "deny"}, {"user_message", user_message}, {"agent_message", agent_message}};
}

}  // namespace telic::cli
