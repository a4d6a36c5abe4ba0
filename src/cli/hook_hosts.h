// The pre-tool-use hook contracts of the hosts `telic broker-gate --host H`
// answers (docs/HOSTS.md "Hook contracts", with each host's documentation):
// how a host's hook input names a native tool call, and how the host wants
// allow and deny written back. The decision itself is the broker's
// (src/controller/broker.h); this file only translates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::cli {

enum class HookHost {
  kTelic,       // the reference's own hook format (no --host): {command} / {tool_name, tool_input}
  kClaudeCode,  // PreToolUse: {hook_event_name, tool_name, tool_input}
  kCodex,       // PreToolUse: the Claude Code shape; tool names Bash, apply_patch, mcp__*
  kCursor,      // preToolUse / beforeShellExecution / beforeMCPExecution / beforeReadFile
  kCline,       // PreToolUse: {hookName, preToolUse: {toolName, parameters}}
  kGeminiCli,   // BeforeTool: {hook_event_name, tool_name, tool_input}
};

// "claude-code", "codex", "cursor", "cline", "gemini-cli"; nullopt otherwise.
std::optional<HookHost> ParseHookHost(std::string_view name);
// The names ParseHookHost accepts, for usage text and errors.
const std::vector<std::string>& HookHostNames();

// One gated call: a broker capability and its target ("" when the
// capability takes none, e.g. external.write).
struct GatedCall {
  std::string capability;
  std::string target;
};

// What a hook input asks. `calls` empty: the tool is not gated (telic has no
// opinion and the host's own permission flow decides). A Result error means
// the input is not the host's documented shape, names a tool telic does not
// know, or lacks the field the tool's target lives in: the caller denies it
// (fail closed). Several calls (an apply_patch touching several files) are
// all decided; one deny denies the tool call.
struct HookRequest {
  std::vector<GatedCall> calls;
};
Result<HookRequest> MapHostHookInput(HookHost host, const Json& input);

// The answer a host reads from the hook's stdout. Allow is "no objection"
// where the host's allow would also skip the user's own permission prompts
// (Claude Code, Codex, Gemini CLI: an empty object); deny is always the
// host's hard deny, never "ask".
nlohmann::ordered_json HostAllowAnswer(HookHost host);
nlohmann::ordered_json HostDenyAnswer(HookHost host, const std::string& user_message, const std::string& agent_message);

}  // namespace telic::cli
