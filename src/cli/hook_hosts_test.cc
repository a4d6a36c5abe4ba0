// The host hook formats of `telic broker-gate --host` (docs/HOSTS.md).
#include "cli/hook_hosts.h"

#include <gtest/gtest.h>

namespace telic::cli {
namespace {

std::vector<GatedCall> Calls(HookHost host, const char* text) {
  auto request = MapHostHookInput(host, Json::parse(text));
  EXPECT_TRUE(request) << text;
  return request ? request->calls : std::vector<GatedCall>{};
}

bool Unreadable(HookHost host, const Json& input) { return !MapHostHookInput(host, input).has_value(); }

TEST(HookHostsTest, ParsesHostNames) {
  EXPECT_EQ(ParseHookHost("claude-code"), HookHost::kClaudeCode);
  EXPECT_EQ(ParseHookHost("gemini-cli"), HookHost::kGeminiCli);
  EXPECT_FALSE(ParseHookHost("telic"));
  EXPECT_FALSE(ParseHookHost("Cursor"));
  EXPECT_EQ(HookHostNames().size(), 5u);
}

TEST(HookHostsTest, ClaudeCodeTools) {
  auto shell = Calls(HookHost::kClaudeCode,
                     R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm test"}})");
  ASSERT_EQ(shell.size(), 1u);
  EXPECT_EQ(shell[0].capability, "shell.execute");
  EXPECT_EQ(shell[0].target, "npm test");
  EXPECT_EQ(Calls(HookHost::kClaudeCode,
                  R"({"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/r/a.ts"}})")[0]
                .capability,
            "repository.write");
  EXPECT_EQ(Calls(HookHost::kClaudeCode,
                  R"({"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/r/a.ts"}})")[0]
                .capability,
            "repository.read");
  EXPECT_EQ(Calls(HookHost::kClaudeCode,
                  R"({"hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://x.y/"}})")[0]
                .capability,
            "network.read");
  // MCP: telic's own tools are not gated, another server's need external.write.
  EXPECT_TRUE(Calls(HookHost::kClaudeCode,
                    R"({"hook_event_name":"PreToolUse","tool_name":"mcp__telic__telic_get_run","tool_input":{}})")
                  .empty());
  auto other = Calls(HookHost::kClaudeCode,
                     R"({"hook_event_name":"PreToolUse","tool_name":"mcp__github__create_issue","tool_input":{}})");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].capability, "external.write");
  EXPECT_EQ(other[0].target, "");
}

TEST(HookHostsTest, CodexApplyPatchNamesEveryFile) {
  auto calls = Calls(HookHost::kCodex, R"({"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":
      {"command":"*** Begin Patch\n*** Add File: a.ts\n+x\n*** Update File: b.ts\n*** Move to: c.ts\n*** Delete File: d.ts\n*** End Patch\n"}})");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].target, "a.ts");
  EXPECT_EQ(calls[2].target, "c.ts");
  EXPECT_EQ(calls[3].capability, "repository.delete");
  EXPECT_TRUE(Unreadable(HookHost::kCodex, Json::parse(R"({"hook_event_name":"PreToolUse","tool_name":"apply_patch",
      "tool_input":{"command":"no headers here"}})")));
}

TEST(HookHostsTest, CursorEvents) {
  EXPECT_EQ(Calls(HookHost::kCursor, R"({"hook_event_name":"beforeShellExecution","command":"ls"})")[0].capability,
            "shell.execute");
  EXPECT_EQ(Calls(HookHost::kCursor, R"({"hook_event_name":"beforeReadFile","file_path":"a"})")[0].capability,
            "repository.read");
  EXPECT_TRUE(
      Calls(HookHost::kCursor, R"({"hook_event_name":"beforeMCPExecution","tool_name":"telic_get_run"})").empty());
  EXPECT_EQ(
      Calls(HookHost::kCursor, R"({"hook_event_name":"preToolUse","tool_name":"Delete","tool_input":{"path":"x"}})")[0]
          .capability,
      "repository.delete");
}

TEST(HookHostsTest, ClineAndGemini) {
  EXPECT_EQ(Calls(HookHost::kCline,
                  R"({"hookName":"PreToolUse","preToolUse":{"toolName":"write_to_file","parameters":{"path":"a"}}})")[0]
                .capability,
            "repository.write");
  EXPECT_TRUE(Calls(HookHost::kCline,
                    R"({"hookName":"PreToolUse","preToolUse":{"toolName":"attempt_completion","parameters":{}}})")
                  .empty());
  auto fetch = Calls(HookHost::kGeminiCli, R"({"hook_event_name":"BeforeTool","tool_name":"web_fetch",
      "tool_input":{"prompt":"compare https://a.example/x and http://b.example/y"}})");
  ASSERT_EQ(fetch.size(), 2u);
  EXPECT_EQ(fetch[1].target, "http://b.example/y");
  EXPECT_TRUE(Calls(HookHost::kGeminiCli, R"({"hook_event_name":"BeforeTool","tool_name":"mcp_telic_x",
      "tool_input":{},"mcp_context":{"server_name":"telic","tool_name":"x"}})")
                  .empty());
}

TEST(HookHostsTest, FailsClosedOnAnythingElse) {
  for (HookHost host :
       {HookHost::kClaudeCode, HookHost::kCodex, HookHost::kCursor, HookHost::kCline, HookHost::kGeminiCli}) {
    EXPECT_TRUE(Unreadable(host, Json::array()));
    EXPECT_TRUE(Unreadable(host, Json::object()));
    EXPECT_TRUE(Unreadable(host, Json("text")));
    EXPECT_TRUE(Unreadable(host, Json::parse(R"({"hook_event_name":"PostToolUse","hookName":"PostToolUse",
        "tool_name":"Bash","tool_input":{"command":"ls"}})")));
  }
  // A known tool without its target field, and an unknown tool.
  EXPECT_TRUE(Unreadable(HookHost::kClaudeCode,
                         Json::parse(R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}})")));
  EXPECT_TRUE(Unreadable(HookHost::kClaudeCode,
                         Json::parse(R"({"hook_event_name":"PreToolUse","tool_name":"Teleport","tool_input":{}})")));
  EXPECT_TRUE(Unreadable(HookHost::kClaudeCode,
                         Json::parse(R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"})")));
}

TEST(HookHostsTest, AnswersInEachHostsFormatAndNeverAsk) {
  EXPECT_EQ(HostAllowAnswer(HookHost::kClaudeCode).dump(), "{}");
  EXPECT_EQ(HostAllowAnswer(HookHost::kCline).dump(), R"({"cancel":false})");
  EXPECT_EQ(HostAllowAnswer(HookHost::kCursor).dump(), R"({"permission":"allow"})");
  EXPECT_EQ(
      HostDenyAnswer(HookHost::kCodex, "u", "a").dump(),
      R"({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"a"}})");
  EXPECT_EQ(HostDenyAnswer(HookHost::kGeminiCli, "u", "a").dump(),
            R"({"decision":"deny","reason":"a","systemMessage":"u"})");
  EXPECT_EQ(HostDenyAnswer(HookHost::kCline, "u", "a").dump(), R"({"cancel":true,"errorMessage":"a"})");
  EXPECT_EQ(HostDenyAnswer(HookHost::kTelic, "u", "a").dump(),
            R"({"permission":"deny","user_message":"u","agent_message":"a"})");
}

TEST(HookHostsTest, LongHostileLinesAreScannedNotRecursed) {
  // One 4 MB line: no header, so unreadable, and no stack exhaustion.
  Json input = {{"hook_event_name", "PreToolUse"},
                {"tool_name", "apply_patch"},
                {"tool_input", {{"command", std::string(4 * 1024 * 1024, 'a')}}}};
  EXPECT_TRUE(Unreadable(HookHost::kCodex, input));
  Json fetch = {{"hook_event_name", "BeforeTool"},
                {"tool_name", "web_fetch"},
                {"tool_input", {{"prompt", "see HTTPS://A.example/x " + std::string(1024 * 1024, 'h')}}}};
  auto calls = MapHostHookInput(HookHost::kGeminiCli, fetch);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->calls.size(), 1u);
  EXPECT_EQ(calls->calls[0].target, "HTTPS://A.example/x");
}

}  // namespace
}  // namespace telic::cli
