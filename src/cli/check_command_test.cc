// `telic check`: exit codes, text and JSON output.
#include "cli/check_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/canonical_json.h"
#include "testing/temp_dir.h"

namespace telic::cli {
namespace {

class CheckCommandTest : public ::testing::Test {
 protected:
  std::string Policy(const Json& policy) {
    std::string path = dir_.File("policy-" + std::to_string(++files_) + ".json");
    std::ofstream(path) << policy.dump();
    return path;
  }
  int Run(const std::string& policy_file, const std::string& action, bool json = false) {
    out_.str("");
    err_.str("");
    return RunCheckCommand(policy_file, action, json, out_, err_);
  }
  static Json Grant(Json repository) {
    return {{"repository", std::move(repository)},
            {"shell", {{"inspect", true}, {"executeAllowlist", {"npm test"}}}}};
  }
  Json Everywhere(const std::string& mode, Json repository) {
    Json p = Grant(std::move(repository));
    return {{"mode", mode},           {"host", p},          {"authorization", {{"granted", p}, {"denied", nullptr}}},
            {"repositoryPolicy", p},  {"taskContract", p},  {"workPlanNode", p},
            {"workPlanNodeId", "n1"}, {"toolCapability", p}};
  }
  testing::TempDir dir_;
  int files_ = 0;
  std::ostringstream out_, err_;
};

// covers TEL-041, TEL-045
TEST_F(CheckCommandTest, AllowIsExitZeroAndDenyIsExitThreeWithLayerAndRule) {
  Json policy = Everywhere("fix_only", {{"read", {"**"}}, {"write", {"src/**"}}});
  policy["taskContract"]["repository"]["write"] = {"src/api/**"};
  std::string file = Policy(policy);
  EXPECT_EQ(Run(file, R"({"capability":"repository.write","path":"src/api/a.ts"})"), 0);
  EXPECT_EQ(out_.str().rfind("allow repository.write src/api/a.ts\n", 0), 0u) << out_.str();

  EXPECT_EQ(Run(file, R"({"capability":"repository.write","path":"src/web/a.ts"})"), 3);
  EXPECT_NE(out_.str().find("deciding layer: task_contract"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("no repository.write entry covers src/web/a.ts"), std::string::npos);

  EXPECT_EQ(Run(file, R"({"capability":"repository.write","path":"../x"})", true), 3);
  Json decision = Json::parse(out_.str());
  EXPECT_EQ(decision["decision"], "deny");
  EXPECT_EQ(decision["reasonCode"], "invalid_target");
  EXPECT_EQ(decision["decidingLayer"], "intent_mode:fix_only");
  EXPECT_EQ(decision["layers"].size(), 7u);
  EXPECT_EQ(decision["layers"][5]["layer"], "work_node:n1");

  EXPECT_EQ(Run(file, R"({"capability":"shell.execute","command":"npm test; id"})", true), 3);
  EXPECT_NE(Json::parse(out_.str())["rule"].get<std::string>().find("';' command separator"), std::string::npos);
  EXPECT_EQ(Run(file, R"({"capability":"shell.execute","command":"npm test"})", true), 0);
  EXPECT_EQ(Json::parse(out_.str())["summary"], "Allowed by all 7 policies.");
}

// covers TEL-042
TEST_F(CheckCommandTest, MissingLayersGrantNothing) {
  std::string file = Policy(Json{{"mode", "fix_only"}, {"host", Grant({{"read", {"**"}}})}});
  EXPECT_EQ(Run(file, R"({"capability":"repository.read","path":"a"})", true), 3);
  EXPECT_EQ(Json::parse(out_.str())["decidingLayer"], "user_authorization");
}

TEST_F(CheckCommandTest, UsageErrorsAreExitTwo) {
  std::string file = Policy(Everywhere("fix_only", {{"read", {"**"}}}));
  EXPECT_EQ(Run(dir_.File("missing.json"), R"({"capability":"repository.read","path":"a"})"), 2);
  EXPECT_NE(err_.str().find("cannot read"), std::string::npos);
  EXPECT_EQ(Run(file, "{not json"), 2);
  EXPECT_EQ(Run(file, R"({"capability":"shell.exec","command":"ls"})"), 2);
  EXPECT_NE(err_.str().find("unknown capability"), std::string::npos);
  EXPECT_EQ(Run(file, R"({"capability":"repository.read","command":"ls"})"), 2);
  EXPECT_EQ(Run(Policy(Json{{"mode", "fix_only"}, {"extra", 1}}), R"({"capability":"repository.read","path":"a"})"), 2);
  EXPECT_EQ(Run(Policy(Json{{"repositoryRoot", "relative/dir"}}), R"({"capability":"repository.read","path":"a"})"), 2);
  std::ofstream(dir_.File("broken.json")) << "{\"mode\": \"fix_only\",}";
  EXPECT_EQ(Run(dir_.File("broken.json"), R"({"capability":"repository.read","path":"a"})"), 2);
}

TEST_F(CheckCommandTest, ActionFromFileAndSymlinksThroughRepositoryRoot) {
  std::string root = std::filesystem::canonical(dir_.path()).string() + "/repo";
  std::filesystem::create_directories(root + "/src");
  std::filesystem::create_symlink("/etc", root + "/src/etc");
  Json policy = Everywhere("fix_only", {{"read", {"**"}}, {"write", {"**"}}});
  policy["repositoryRoot"] = root;
  std::string file = Policy(policy);
  std::ofstream(dir_.File("action.json")) << R"({"capability":"repository.write","path":"src/etc/passwd"})";
  EXPECT_EQ(Run(file, "@" + dir_.File("action.json"), true), 3);
  EXPECT_NE(Json::parse(out_.str())["rule"].get<std::string>().find("leaves the repository root through a symlink"),
            std::string::npos);
  EXPECT_EQ(Run(file, R"({"capability":"repository.write","path":"src/new.ts"})"), 0);
  EXPECT_EQ(Run(file, "{\"capability\":\"repository.write\",\"path\":\"" + root + "/src/new.ts\"}"), 0);
}

TEST_F(CheckCommandTest, ControlCharactersAreEscapedInText) {
  std::string file = Policy(Everywhere("fix_only", {{"read", {"**"}}}));
  EXPECT_EQ(Run(file, R"({"capability":"repository.read","path":"a\u001b[2Jb"})"), 3);
  EXPECT_EQ(out_.str().find('\x1b'), std::string::npos);
  EXPECT_NE(out_.str().find("\\x1b"), std::string::npos);
}

}  // namespace
}  // namespace telic::cli
