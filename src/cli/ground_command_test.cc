// `telic ground` (issue 6 interface).
#include "cli/ground_command.h"

#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/canonical_json.h"
#include "base/json_parse.h"
#include "grounding/ground.h"
#include "grounding/test_repo.h"
#include "testing/temp_dir.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;
using grounding::testing::GitInit;
using grounding::testing::WriteFile;

class GroundCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(tmp_.path()).string();
    WriteFile(root_, "AGENTS.md", "Rules\n");
    WriteFile(root_, "src/api/client.ts", "export const api = 1;\n");
    WriteFile(root_, "notes.txt", "notes\n");
    WriteFile(root_, ".env", "SECRET=x\n");
    GitInit(root_);
  }

  int Run(const std::string& request, bool json, bool bar = false) {
    out_.str("");
    err_.str("");
    return RunGroundCommand(root_, request, json, out_, err_, bar);
  }

  telic::testing::TempDir tmp_;
  std::string root_;
  std::ostringstream out_, err_;
};

TEST_F(GroundCommandTest, JsonIsTheCanonicalPreviewManifest) {
  ASSERT_EQ(Run("fix the api client", true), 0) << err_.str();
  auto parsed = ParseJsonStrict(out_.str().substr(0, out_.str().size() - 1));
  ASSERT_TRUE(parsed) << out_.str();
  EXPECT_EQ(CanonicalJson(*parsed) + "\n", out_.str());
  EXPECT_EQ((*parsed)["runId"], "preview");
  EXPECT_EQ((*parsed)["candidates"][1]["path"], "src/api/client.ts");

  grounding::GroundingRequest request;
  request.run_id = "preview";
  request.repository_root = root_;
  request.request_text = "fix the api client";
  auto direct = grounding::GroundRepository(request);
  ASSERT_TRUE(direct);
  EXPECT_EQ(CanonicalJson(direct->manifest) + "\n", out_.str());
  // Same state, same request: the same bytes.
  std::string first = out_.str();
  ASSERT_EQ(Run("fix the api client", true), 0);
  EXPECT_EQ(out_.str(), first);
  EXPECT_TRUE(err_.str().empty());
}

TEST_F(GroundCommandTest, TableListsCandidatesExclusionsAndWarnings) {
  for (int i = 0; i < 9; ++i) WriteFile(root_, fmt::format("misc/{}.txt", i), fmt::format("{}\n", i));
  ASSERT_EQ(Run("fix the api client", false), 0) << err_.str();
  const std::string text = out_.str();
  EXPECT_NE(text.find("manifest   context-"), std::string::npos) << text;
  EXPECT_NE(text.find("inventory  git"), std::string::npos) << text;
  EXPECT_NE(text.find("PATH"), std::string::npos);
  EXPECT_NE(text.find("REASON"), std::string::npos);
  EXPECT_NE(text.find("AGENTS.md (pinned)  1000000"), std::string::npos) << text;
  EXPECT_NE(text.find("src/api/client.ts"), std::string::npos);
  EXPECT_NE(text.find("Path matches request terms: api, client."), std::string::npos) << text;
  EXPECT_NE(text.find("low_relevance"), std::string::npos) << text;
  EXPECT_NE(text.find("secret_like_file"), std::string::npos) << text;
  EXPECT_NE(text.find("  - Unpinned zero-relevance context was capped at 8 files."), std::string::npos) << text;
}

TEST_F(GroundCommandTest, ProgressBarOnlyForLargeInventories) {
  ASSERT_EQ(Run("api", true, true), 0);
  EXPECT_TRUE(err_.str().empty());  // 4 files: no bar
  for (int i = 0; i < 2100; ++i) WriteFile(root_, fmt::format("gen/{:04}.txt", i), "");
  ASSERT_EQ(Run("api", true, true), 0);
  EXPECT_NE(err_.str().find("inventory"), std::string::npos);
  EXPECT_NE(err_.str().find("read"), std::string::npos);
  EXPECT_TRUE(err_.str().ends_with("\r\x1b[K")) << err_.str();  // the bar is cleared
  // stdout is untouched by the bar.
  EXPECT_TRUE(ParseJsonStrict(out_.str().substr(0, out_.str().size() - 1)));
}

TEST_F(GroundCommandTest, ErrorsGoToStderr) {
  out_.str("");
  err_.str("");
  EXPECT_EQ(RunGroundCommand(root_ + "/missing", "x", false, out_, err_, false), 1);
  EXPECT_EQ(err_.str(), "telic: repository_root could not be resolved.\n");
  EXPECT_TRUE(out_.str().empty());
}

}  // namespace
}  // namespace telic::cli
