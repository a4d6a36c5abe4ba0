// `telic install` / `telic uninstall`: merging into the user's files and
// taking exactly telic's part out again (docs/HOSTS.md).
#include "cli/install_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "base/sha256.h"
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
    InstallRequest request;
    request.host = host;
    request.user = user;
    request.project_root = project().string();
    request.home = home().string();
    request.telic = "/opt/telic/bin/telic";
    request.state_dir = (dir_.path() / "state/project").string();
    request.user_state_dir = (dir_.path() / "state/home").string();
    return request;
  }
  // Where doctor looks, for the binary `telic`.
  InstallRequest Where(const std::string& telic) const {
    InstallRequest where = Request("");
    where.telic = telic;
    return where;
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
  EXPECT_EQ(hooks["hooks"]["beforeShellExecution"][0]["command"],
            "'/opt/telic/bin/telic' broker-gate --host cursor --outside-run host");

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
            "'/opt/telic/bin/telic' broker-gate --host cursor --outside-run host");
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
  Json report = HostDoctorChecks(Where(moved.telic), ok);
  EXPECT_EQ(report["cursor"]["installs"][0]["hook"], "wired") << "doctor reads JSONC too: " << report.dump();
  const std::string installed = Read(project() / ".cursor/hooks.json");
  EXPECT_EQ(installed.find("/opt/telic"), std::string::npos) << installed;
  auto parsed = jsonc::Parse(installed);
  ASSERT_TRUE(parsed.has_value()) << installed;
  EXPECT_EQ((*parsed)["hooks"]["preToolUse"].size(), 1u) << installed;
  EXPECT_EQ((*parsed)["hooks"]["beforeShellExecution"][0]["command"],
            "'/usr/local/bin/telic' broker-gate --host cursor --outside-run host");
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

TEST_F(InstallCommandTest, GateModeIsWiredRecordedAndSwitchedInPlace) {
  ASSERT_EQ(Install("claude-code"), 0) << err_.str();
  EXPECT_NE(out_.str().find("gate: run: "), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("next: restart claude-code"), std::string::npos) << out_.str();
  auto command = [&] {
    Json settings = Json::parse(Read(project() / ".claude/settings.json"));
    EXPECT_EQ(settings["hooks"]["PreToolUse"].size(), 1u) << settings.dump();
    return settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"].get<std::string>();
  };
  EXPECT_EQ(command(), "'/opt/telic/bin/telic' broker-gate --host claude-code --outside-run host");
  InstallRequest strict = Request("claude-code");
  strict.gate = "strict";
  ASSERT_EQ(RunInstall(strict, out_, err_), 0) << err_.str();
  EXPECT_EQ(command(), "'/opt/telic/bin/telic' broker-gate --host claude-code");
  bool ok = true;
  Json report = HostDoctorChecks(Where("/opt/telic/bin/telic"), ok);
  EXPECT_EQ(report["claude-code"]["installs"][0]["gate"], "strict") << report.dump();
  EXPECT_EQ(report["claude-code"]["installs"][0]["hook"], "wired") << report.dump();
  ASSERT_EQ(Install("vscode"), 0) << err_.str();
  EXPECT_NE(out_.str().find("gate: no hook: "), std::string::npos) << out_.str();
  strict.gate = "sometimes";
  EXPECT_EQ(RunInstall(strict, out_, err_), 1);
  ASSERT_EQ(Uninstall("claude-code"), 0) << err_.str();
  EXPECT_FALSE(fs::exists(project() / ".claude"));
}

TEST_F(InstallCommandTest, DoctorReportsCurrentAndStaleInstalls) {
  ASSERT_EQ(Install("gemini-cli"), 0) << err_.str();
  bool ok = true;
  Json report = HostDoctorChecks(Where("/opt/telic/bin/telic"), ok);
  EXPECT_FALSE(ok) << "the configured binary does not exist";
  ASSERT_TRUE(report.contains("gemini-cli")) << report.dump();
  EXPECT_EQ(report["gemini-cli"]["installs"][0]["hook"], "wired");
  fs::remove(project() / ".gemini/skills/telic/SKILL.md");
  report = HostDoctorChecks(Where("/other/telic"), ok);
  EXPECT_EQ(report["gemini-cli"]["installs"][0]["current"], false);
  EXPECT_GE(report["gemini-cli"]["installs"][0]["problems"].size(), 3u) << report.dump();
}

// --- a scope that ships its own install record (issue 40 rows 1-3) ---------

// Parameter: user scope. A record inside the scope (<base>/.telic/installs.json,
// as an older telic wrote it) names files outside the scope; uninstall must
// refuse (exit 1) and leave every outside file as it was.
class ForgedRecordTest : public InstallCommandTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool user() const { return GetParam(); }
  fs::path base() const { return user() ? home() : project(); }
  fs::path outside() const { return dir_.path() / "outside"; }
  fs::path state() const { return dir_.path() / (user() ? "state/home" : "state/project"); }

  // The outside files an attack aims at, and a folder.
  void PlantOutside() {
    for (const char* name : {"v1.txt", "v2.txt", "v3.txt", "v4.txt", "claude/settings.json"}) {
      Write(outside() / name, std::string("outside ") + name + "\n");
    }
    Write(outside() / "config.toml", "[keep]\nx = 1\n[cut]\ny = 2\n");
    Write(outside() / "settings.json", "{\"a\": 1, \"b\": 2}");
    fs::create_directories(outside() / "emptydir");
  }
  std::string ShaOf(const fs::path& path) { return Sha256Hex(Read(path)); }

  // A record for host claude-code holding `file`, written where an older telic kept it.
  void ForgeLegacy(const Json& file, const Json& created_dirs = Json::array()) {
    Json manifest = {{"version", 1},
                     {"hosts", {{"claude-code", {{"binary", "/opt/telic/bin/telic"}, {"files", Json::array({file})}}}}},
                     {"createdDirs", created_dirs}};
    Write(base() / ".telic/installs.json", manifest.dump(2));
    Write(base() / ".telic/backups/evil", "the repository's bytes\n");
  }
};

TEST_P(ForgedRecordTest, EveryVariantOfAForgedRecordIsRefusedWithOutsideFilesIntact) {
  PlantOutside();
  const std::string rel = user() ? "../outside/" : "../outside/";
  std::vector<std::pair<std::string, std::pair<Json, Json>>> attacks = {
      {"path ../outside",
       {{{"path", rel + "v1.txt"}, {"format", "file"}, {"sha256", ShaOf(outside() / "v1.txt")}, {"created", true},
         {"backup", nullptr}},
        Json::array()}},
      {"absolute path",
       {{{"path", (outside() / "v2.txt").string()}, {"format", "file"}, {"sha256", ShaOf(outside() / "v2.txt")},
         {"created", true}, {"backup", nullptr}},
        Json::array()}},
      {"backup outside",
       {{{"path", ".mcp.json"}, {"format", "file"}, {"sha256", "0"}, {"created", false}, {"backup", rel + "v3.txt"}},
        Json::array()}},
      {"forged backup overwrite",
       {{{"path", rel + "v4.txt"}, {"format", "file"}, {"sha256", ShaOf(outside() / "v4.txt")}, {"created", false},
         {"backup", ".telic/backups/evil"}},
        Json::array()}},
      {"toml cut from an outside file",
       {{{"path", rel + "config.toml"}, {"format", "toml"}, {"sha256", "0"}, {"created", false}, {"backup", nullptr},
         {"block", "[cut]\ny = 2\n"}},
        Json::array()}},
      {"json keys cut from an outside file",
       {{{"path", rel + "settings.json"}, {"format", "json"}, {"sha256", "0"}, {"created", false}, {"backup", nullptr},
         {"pieces", {{{"keys", {"a"}}, {"value", 1}}}}},
        Json::array()}},
      {"createdDirs outside",
       {{{"path", ".mcp.json"}, {"format", "json"}, {"sha256", "0"}, {"created", false}, {"backup", nullptr},
         {"pieces", Json::array()}},
        Json::array({rel + "emptydir"})}},
  };
  const auto outside_before = Tree(outside());
  for (const auto& [name, attack] : attacks) {
    SCOPED_TRACE(name);
    ForgeLegacy(attack.first, attack.second);
    EXPECT_EQ(Uninstall("claude-code", user()), 1) << out_.str();
    EXPECT_NE(err_.str().find("was not written by telic"), std::string::npos) << err_.str();
    EXPECT_EQ(Tree(outside()), outside_before);
    EXPECT_EQ(Read(base() / ".telic/backups/evil"), "the repository's bytes\n");
    // install refuses to build on such a record too.
    EXPECT_EQ(Install("claude-code", user()), 1);
    EXPECT_EQ(Tree(outside()), outside_before);
    fs::remove_all(base() / ".telic");
    for (const char* left : {".mcp.json", ".claude.json"}) EXPECT_FALSE(fs::exists(base() / left)) << left;
  }
}

TEST_P(ForgedRecordTest, ASymlinkedFolderLeadingOutIsNeverFollowed) {
  PlantOutside();
  fs::create_directory_symlink(outside() / "claude", base() / ".claude");
  const auto outside_before = Tree(outside());
  ForgeLegacy({{"path", ".claude/settings.json"}, {"format", "file"},
               {"sha256", ShaOf(outside() / "claude/settings.json")}, {"created", true}, {"backup", nullptr}},
              Json::array({".claude"}));
  EXPECT_EQ(Uninstall("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("is a symlink to"), std::string::npos) << err_.str();
  fs::remove_all(base() / ".telic");
  // Row 2: install does not write through it either, and writes nothing at all.
  EXPECT_EQ(Install("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("outside the scope"), std::string::npos) << err_.str();
  EXPECT_EQ(Tree(outside()), outside_before);
  EXPECT_FALSE(fs::exists(base() / (user() ? ".claude.json" : ".mcp.json")));
}

TEST_P(ForgedRecordTest, TelicsOwnRecordIsConfinedAndHashCheckedToo) {
  // A damaged (or tampered) record in the state folder gets the same treatment.
  PlantOutside();
  ASSERT_EQ(Install("claude-code", user()), 0) << err_.str();
  const fs::path manifest = state() / "installs.json";
  const std::string good = Read(manifest);
  const auto outside_before = Tree(outside());
  auto tamper = [&](const std::function<void(Json&)>& edit) {
    Json record = Json::parse(good);
    edit(record["hosts"]["claude-code"]["files"][0]);
    Write(manifest, record.dump());
  };
  tamper([&](Json& file) { file["path"] = "../outside/v1.txt", file["sha256"] = ShaOf(outside() / "v1.txt"); });
  EXPECT_EQ(Uninstall("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("refusing recorded path \"../outside/v1.txt\""), std::string::npos) << err_.str();
  tamper([&](Json& file) { file["backup"] = "../../outside/v3.txt", file["backupSha256"] = "0"; });
  EXPECT_EQ(Uninstall("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("backups live in"), std::string::npos) << err_.str();
  EXPECT_EQ(Tree(outside()), outside_before);
  Write(manifest, good);
  ASSERT_EQ(Uninstall("claude-code", user()), 0) << err_.str();
  EXPECT_FALSE(fs::exists(manifest));
}

TEST_P(ForgedRecordTest, AForgedBackupIsNeverRestored) {
  const fs::path settings = base() / ".claude/settings.json";
  Write(settings, "{\"model\": \"opus\"}");
  ASSERT_EQ(Install("claude-code", user()), 0) << err_.str();
  Json record = Json::parse(Read(state() / "installs.json"));
  std::string backup;
  for (const auto& file : record["hosts"]["claude-code"]["files"]) {
    if (file["path"] == ".claude/settings.json") backup = file["backup"];
  }
  ASSERT_FALSE(backup.empty()) << record.dump();
  Write(state() / backup, "{\"evil\": true}");
  EXPECT_EQ(Uninstall("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("is not what telic saved"), std::string::npos) << err_.str();
  EXPECT_EQ(Json::parse(Read(settings))["hooks"]["PreToolUse"].size(), 1u) << "left as install wrote it";
}

TEST_P(ForgedRecordTest, AnOlderTelicsRecordIsUninstalledFromThePlanOnly) {
  // Migration: what an older telic wrote, recorded only inside the scope.
  const fs::path settings = base() / ".claude/settings.json";
  Write(settings, "{\"model\": \"opus\"}");
  ASSERT_EQ(Install("claude-code", user()), 0) << err_.str();
  Json record = Json::parse(Read(state() / "installs.json"));
  for (auto& file : record["hosts"]["claude-code"]["files"]) {
    if (file["backup"].is_string()) file["backup"] = ".telic/backups/claude-code/x";
  }
  Write(base() / ".telic/installs.json", record.dump(2));
  Write(base() / ".telic/backups/claude-code/x", "{\"forged\": true}");
  fs::remove(state() / "installs.json");
  ASSERT_EQ(Uninstall("claude-code", user()), 0) << err_.str();
  EXPECT_NE(out_.str().find("recorded by an older telic"), std::string::npos) << out_.str();
  EXPECT_EQ(Json::parse(Read(settings)), Json({{"model", "opus"}})) << "telic's hook taken out, the backup not used";
  EXPECT_FALSE(fs::exists(base() / (user() ? ".claude.json" : ".mcp.json"))) << "created, now empty: removed";
  EXPECT_FALSE(fs::exists(base() / ".claude/skills"));
  EXPECT_FALSE(fs::exists(base() / ".telic/installs.json"));
  EXPECT_EQ(Read(base() / ".telic/backups/claude-code/x"), "{\"forged\": true}") << "not trusted, not touched";
}

TEST_P(ForgedRecordTest, InstallOverAnOlderRecordTakesItOver) {
  ASSERT_EQ(Install("cursor", user()), 0) << err_.str();
  fs::create_directories(base() / ".telic");
  fs::rename(state() / "installs.json", base() / ".telic/installs.json");
  ASSERT_EQ(Install("cursor", user()), 0) << err_.str();
  EXPECT_FALSE(fs::exists(base() / ".telic/installs.json"));
  EXPECT_TRUE(Json::parse(Read(state() / "installs.json"))["hosts"].contains("cursor"));
  ASSERT_EQ(Uninstall("cursor", user()), 0) << err_.str();
  EXPECT_FALSE(fs::exists(base() / ".cursor")) << "everything install created is gone";
}

TEST_P(ForgedRecordTest, DeeplyNestedConfigsAreRefusedNotCrashedOn) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const fs::path mcp = base() / (user() ? ".claude.json" : ".mcp.json");
  Write(mcp, deep);
  EXPECT_EQ(Install("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("nested deeper than 64 levels at byte 64"), std::string::npos) << err_.str();
  EXPECT_EQ(Read(mcp), deep);
  fs::remove(mcp);
  Write(base() / ".claude/settings.json", "{\"hooks\": " + std::string(100000, '{'));
  EXPECT_EQ(Install("claude-code", user()), 1);
  EXPECT_NE(err_.str().find("settings.json: nested deeper than 64 levels"), std::string::npos) << err_.str();
  std::string dotted = "[a";
  for (int i = 0; i < 100000; ++i) dotted += ".a";
  Write(base() / ".codex/config.toml", dotted + "]\n");
  EXPECT_EQ(Install("codex", user()), 1);
  EXPECT_NE(err_.str().find("config.toml: a dotted key of more than 16 dots"), std::string::npos) << err_.str();
  Write(base() / ".codex/config.toml", "a = " + deep + "\n");
  EXPECT_EQ(Install("codex", user()), 1);
  EXPECT_NE(err_.str().find("config.toml: nested deeper than 64 levels"), std::string::npos) << err_.str();
}

INSTANTIATE_TEST_SUITE_P(BothScopes, ForgedRecordTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "User" : "Project"; });

}  // namespace
}  // namespace telic::cli
