// `telic install` / `telic uninstall`: merging into the user's files and
// taking exactly telic's part out again (docs/HOSTS.md).
#include "cli/install_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/jsonc_edit.h"
#include "testing/temp_dir.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;

class InstallCommandTest : public ::testing::Test {
 protected:
  InstallCommandTest() {
    fs::create_directories(project());
    fs::create_directories(home());
  }
  fs::path project() const { return dir_.path() / "project"; }
  fs::path home() const { return dir_.path() / "home"; }

  InstallRequest Request(const std::string& host, bool user = false) const {
    return InstallRequest{host, user, project().string(), home().string(), "/opt/telic/bin/telic", false};
  }
  int Install(const std::string& host, bool user = false) {
    out_.str("");
    err_.str("");
    return RunInstall(Request(host, user), out_, err_);
  }
  int Uninstall(const std::string& host, bool user = false) {
    out_.str("");
    err_.str("");
    return RunUninstall(Request(host, user), out_, err_);
  }
  void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // Every file under a folder with its bytes.
  static std::map<std::string, std::string> Tree(const fs::path& root) {
    std::map<std::string, std::string> tree;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      tree[fs::relative(entry.path(), root).string()] = entry.is_regular_file() ? Read(entry.path()) : "<dir>";
    }
    return tree;
  }

  testing::TempDir dir_;
  std::ostringstream out_, err_;
};

TEST_F(InstallCommandTest, JsonMergeKeepsUserKeysAndUninstallRestoresBytes) {
  const std::string original = "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}, \"theme\":   \"dark\"}";
  Write(project() / ".cursor/mcp.json", original);
  const auto before = Tree(project());
  ASSERT_EQ(Install("cursor"), 0) << err_.str();
  Json merged = Json::parse(Read(project() / ".cursor/mcp.json"));
  EXPECT_EQ(merged["mcpServers"]["other"]["command"], "x");
  EXPECT_EQ(merged["theme"], "dark");
  EXPECT_EQ(merged["mcpServers"]["telic"]["command"], "/opt/telic/bin/telic");
  EXPECT_EQ(merged["mcpServers"]["telic"]["args"], Json::array({"serve", "--profile", "lean"}));
  Json hooks = Json::parse(Read(project() / ".cursor/hooks.json"));
  EXPECT_EQ(hooks["version"], 1);
  EXPECT_EQ(hooks["hooks"]["beforeShellExecution"][0]["command"], "'/opt/telic/bin/telic' broker-gate --host cursor");

  const auto installed = Tree(project());
  ASSERT_EQ(Install("cursor"), 0) << err_.str();
  EXPECT_EQ(Tree(project()), installed) << "a reinstall changes no byte";

  ASSERT_EQ(Uninstall("cursor"), 0) << err_.str();
  EXPECT_EQ(Tree(project()), before) << "uninstall restores the original bytes and removes what it created";
}

TEST_F(InstallCommandTest, UserEditsAfterInstallSurviveUninstall) {
  ASSERT_EQ(Install("claude-code"), 0) << err_.str();
  Json settings = Json::parse(Read(project() / ".claude/settings.json"));
  settings["model"] = "opus";
  Write(project() / ".claude/settings.json", settings.dump(2));
  ASSERT_EQ(Uninstall("claude-code"), 0) << err_.str();
  Json after = Json::parse(Read(project() / ".claude/settings.json"));
  EXPECT_EQ(after, Json({{"model", "opus"}})) << after.dump();
  EXPECT_FALSE(fs::exists(project() / ".mcp.json"));
  EXPECT_FALSE(fs::exists(project() / ".claude/skills"));
  EXPECT_FALSE(fs::exists(project() / ".telic"));
}

TEST_F(InstallCommandTest, JsoncIsMergedKeepingCommentsAndUninstallRestoresBytes) {
  // covers issue 22 §1: merge without losing what the user wrote (JSONC)
  const std::string jsonc =
      "{\n  // my servers\n  \"servers\": {\n    \"docs\": {\"command\": \"docs\", /* pinned */ \"args\": [\"a\",],},\n"
      "  },\n  \"inputs\": [] // none yet\n}\n";
  Write(project() / ".vscode/mcp.json", jsonc);
  const auto before = Tree(project());
  ASSERT_EQ(Install("vscode"), 0) << err_.str();
  const std::string installed = Read(project() / ".vscode/mcp.json");
  EXPECT_EQ(installed,
            "{\n  // my servers\n  \"servers\": {\n    \"docs\": {\"command\": \"docs\", /* pinned */ \"args\": [\"a\",],},\n"
            "    \"telic\": {\n      \"type\": \"stdio\",\n      \"command\": \"/opt/telic/bin/telic\",\n      \"args\": [\n"
            "        \"serve\",\n        \"--profile\",\n        \"lean\"\n      ]\n    },\n  },\n  \"inputs\": [] // none yet\n}\n");

  const auto tree = Tree(project());
  ASSERT_EQ(Install("vscode"), 0) << err_.str();
  EXPECT_EQ(Tree(project()), tree) << "a reinstall changes no byte";

  // Edited after install: uninstall edits the text, taking out only telic's member.
  Write(project() / ".vscode/mcp.json", "// edited\n" + installed);
  ASSERT_EQ(Uninstall("vscode"), 0) << err_.str();
  EXPECT_EQ(Read(project() / ".vscode/mcp.json"), "// edited\n" + jsonc);

  Write(project() / ".vscode/mcp.json", jsonc);
  ASSERT_EQ(Install("vscode"), 0) << err_.str();
  ASSERT_EQ(Uninstall("vscode"), 0) << err_.str();
  EXPECT_EQ(Tree(project()), before) << "uninstall restores the original bytes";
}

TEST_F(InstallCommandTest, JsoncArraysAndCreatedObjectsComeOutByteForByte) {
  // Cursor's hooks file: an `only_if_absent` version, a created object and an
  // appended array item, in a file with comments and trailing commas.
  const std::string hooks = "{\r\n\t// mine\r\n\t\"hooks\": {\r\n\t\t\"stop\": [{\"command\": \"x\"},],\r\n\t},\r\n}\r\n";
  const std::string mcp = "/* servers */ {}";
  Write(project() / ".cursor/hooks.json", hooks);
  Write(project() / ".cursor/mcp.json", mcp);
  ASSERT_EQ(Install("cursor"), 0) << err_.str();
  const std::string installed = Read(project() / ".cursor/hooks.json");
  EXPECT_EQ(installed.rfind("{\r\n\t// mine\r\n\t\"hooks\": {\r\n\t\t\"stop\": [{\"command\": \"x\"},],\r\n\t\t\"preToolUse\": [\r\n", 0),
            0u)
      << installed;
  for (size_t i = 0; i < installed.size(); ++i) {
    if (installed[i] == '\n') {
      EXPECT_TRUE(i > 0 && installed[i - 1] == '\r') << "CRLF kept, byte " << i;
    }
  }
  auto parsed = jsonc::Parse(installed);
  ASSERT_TRUE(parsed.has_value()) << installed;
  EXPECT_EQ((*parsed)["version"], 1);
  EXPECT_EQ((*parsed)["hooks"]["beforeShellExecution"][0]["command"],
            "'/opt/telic/bin/telic' broker-gate --host cursor");
  EXPECT_EQ(Read(project() / ".cursor/mcp.json").rfind("/* servers */ {\n  \"mcpServers\": {\n", 0), 0u);

  const std::string edited_hooks = installed + "// later\r\n";
  Write(project() / ".cursor/hooks.json", edited_hooks);
  Write(project() / ".cursor/mcp.json", Read(project() / ".cursor/mcp.json") + "\n");
  ASSERT_EQ(Uninstall("cursor"), 0) << err_.str();
  auto back = jsonc::Parse(Read(project() / ".cursor/hooks.json"));
  ASSERT_TRUE(back.has_value());
  // The version telic added stays (only_if_absent pieces are never taken out).
  EXPECT_EQ(Read(project() / ".cursor/hooks.json"),
            "{\r\n\t// mine\r\n\t\"hooks\": {\r\n\t\t\"stop\": [{\"command\": \"x\"},],\r\n\t},\r\n\t\"version\": 1,\r\n}\r\n"
            "// later\r\n");
  EXPECT_EQ(Read(project() / ".cursor/mcp.json"), mcp + "\n");
}

TEST_F(InstallCommandTest, JsoncReinstallWithAnotherBinaryReplacesOnlyTelicsValues) {
  const std::string hooks = "{\n  // mine\n  \"version\": 1,\n  \"hooks\": {\"stop\": [{\"command\": \"x\"}]},\n}\n";
  Write(project() / ".cursor/hooks.json", hooks);
  ASSERT_EQ(Install("cursor"), 0) << err_.str();
  InstallRequest moved = Request("cursor");
  moved.telic = "/usr/local/bin/telic";
  ASSERT_EQ(RunInstall(moved, out_, err_), 0) << err_.str();
  bool ok = true;
  Json report = HostDoctorChecks(project().string(), home().string(), moved.telic, ok);
  EXPECT_EQ(report["cursor"]["installs"][0]["hook"], "wired") << "doctor reads JSONC too: " << report.dump();
  const std::string installed = Read(project() / ".cursor/hooks.json");
  EXPECT_EQ(installed.find("/opt/telic"), std::string::npos) << installed;
  auto parsed = jsonc::Parse(installed);
  ASSERT_TRUE(parsed.has_value()) << installed;
  EXPECT_EQ((*parsed)["hooks"]["preToolUse"].size(), 1u) << installed;
  EXPECT_EQ((*parsed)["hooks"]["beforeShellExecution"][0]["command"],
            "'/usr/local/bin/telic' broker-gate --host cursor");
  EXPECT_EQ(installed.rfind("{\n  // mine\n  \"version\": 1,\n  \"hooks\": {\"stop\": [{\"command\": \"x\"}], ", 0), 0u)
      << installed;
  Write(project() / ".cursor/hooks.json", installed + "// later\n");
  ASSERT_EQ(RunUninstall(moved, out_, err_), 0) << err_.str();
  EXPECT_EQ(Read(project() / ".cursor/hooks.json"), hooks + "// later\n");
}

TEST_F(InstallCommandTest, RefusesInvalidFilesWithoutTouchingThem) {
  Write(project() / ".roo/mcp.json", "{\"mcpServers\": ");
  EXPECT_EQ(Install("roo-code"), 1);
  EXPECT_NE(err_.str().find("not valid JSON"), std::string::npos) << err_.str();
  EXPECT_EQ(Read(project() / ".roo/mcp.json"), "{\"mcpServers\": ");
  Write(project() / ".vscode/mcp.json", "{\"servers\": {} // open /* \n");
  EXPECT_EQ(Install("vscode"), 1);
  EXPECT_NE(err_.str().find("not valid JSON"), std::string::npos) << err_.str();
  EXPECT_EQ(Read(project() / ".vscode/mcp.json"), "{\"servers\": {} // open /* \n");
  Write(project() / ".gemini/settings.json", "[1]");
  EXPECT_EQ(Install("gemini-cli"), 1);
  EXPECT_NE(err_.str().find("not a JSON object"), std::string::npos) << err_.str();
}

TEST_F(InstallCommandTest, RefusesToOverwriteAnEntryTelicDidNotWrite) {
  const std::string mine = R"({"mcpServers": {"telic": {"command": "/my/own/telic", "args": ["mcp"]}}})";
  Write(project() / ".mcp.json", mine);
  EXPECT_EQ(Install("claude-code"), 1);
  EXPECT_NE(err_.str().find("/mcpServers/telic already holds"), std::string::npos) << err_.str();
  EXPECT_EQ(Read(project() / ".mcp.json"), mine);
}

TEST_F(InstallCommandTest, TomlBlockIsAppendedAndRemovedByteForByte) {
  const std::string original = "# my codex\nmodel = \"gpt-5\"  # pinned\n\n[mcp_servers.docs]\ncommand = \"docs\"";
  Write(project() / ".codex/config.toml", original);
  ASSERT_EQ(Install("codex"), 0) << err_.str();
  const std::string installed = Read(project() / ".codex/config.toml");
  EXPECT_EQ(installed.rfind(original, 0), 0u) << "the user's bytes stay first, unchanged";
  EXPECT_NE(installed.find("[mcp_servers.telic]\ncommand = \"/opt/telic/bin/telic\"\nargs = [\"serve\",\"--profile\",\"lean\"]\n"),
            std::string::npos)
      << installed;
  // The user edits another line; uninstall takes only telic's block out.
  Write(project() / ".codex/config.toml", "# edited\n" + installed);
  ASSERT_EQ(Uninstall("codex"), 0) << err_.str();
  EXPECT_EQ(Read(project() / ".codex/config.toml"), "# edited\n" + original);
}

TEST_F(InstallCommandTest, TomlWithATelicTableOrInvalidSyntaxIsRefused) {
  Write(project() / ".codex/config.toml", "[mcp_servers.telic]\ncommand = \"mine\"\n");
  EXPECT_EQ(Install("codex"), 1);
  EXPECT_NE(err_.str().find("[mcp_servers.telic] already exists"), std::string::npos) << err_.str();
  Write(project() / ".codex/config.toml", "model = \n");
  EXPECT_EQ(Install("codex"), 1);
  EXPECT_NE(err_.str().find("not valid TOML"), std::string::npos) << err_.str();
  EXPECT_EQ(Read(project() / ".codex/config.toml"), "model = \n");
}

TEST_F(InstallCommandTest, UserScopeWritesUnderHomeOnly) {
  const auto project_before = Tree(project());
  ASSERT_EQ(Install("antigravity", true), 0) << err_.str();
  EXPECT_TRUE(fs::exists(home() / ".gemini/antigravity/mcp_config.json"));
  EXPECT_EQ(Tree(project()), project_before);
  ASSERT_EQ(Uninstall("antigravity", true), 0) << err_.str();
  EXPECT_TRUE(Tree(home()).empty());
}

TEST_F(InstallCommandTest, SharedFilesStayUntilTheLastHostLeaves) {
  ASSERT_EQ(Install("kiro"), 0) << err_.str();
  ASSERT_EQ(Install("kiro-ide"), 0) << err_.str();
  ASSERT_EQ(Uninstall("kiro"), 0) << err_.str();
  EXPECT_TRUE(fs::exists(project() / ".kiro/steering/telic.md"));
  EXPECT_FALSE(fs::exists(project() / ".kiro/agents"));
  ASSERT_EQ(Uninstall("kiro-ide"), 0) << err_.str();
  EXPECT_TRUE(Tree(project()).empty()) << Tree(project()).size();
}

TEST_F(InstallCommandTest, DoctorReportsCurrentAndStaleInstalls) {
  ASSERT_EQ(Install("gemini-cli"), 0) << err_.str();
  bool ok = true;
  Json report = HostDoctorChecks(project().string(), home().string(), "/opt/telic/bin/telic", ok);
  EXPECT_FALSE(ok) << "the configured binary does not exist";
  ASSERT_TRUE(report.contains("gemini-cli")) << report.dump();
  EXPECT_EQ(report["gemini-cli"]["installs"][0]["hook"], "wired");
  fs::remove(project() / ".gemini/skills/telic/SKILL.md");
  report = HostDoctorChecks(project().string(), home().string(), "/other/telic", ok);
  EXPECT_EQ(report["gemini-cli"]["installs"][0]["current"], false);
  EXPECT_GE(report["gemini-cli"]["installs"][0]["problems"].size(), 3u) << report.dump();
}

}  // namespace
}  // namespace telic::cli
