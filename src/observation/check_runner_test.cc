#include "observation/check_runner.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace telic::observation {
namespace {

namespace fs = std::filesystem;

TEST(ParseCheckCommandTest, AnExactStringIsSplitAtItsSpaces) {
  auto parsed = ParseCheckCommand(Json("npm test -- --runInBand"));
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->text, "npm test -- --runInBand");
  EXPECT_EQ(parsed->argv, (std::vector<std::string>{"npm", "test", "--", "--runInBand"}));
}

TEST(ParseCheckCommandTest, AnArgvArrayIsJoinedIntoTheExactCommand) {
  auto parsed = ParseCheckCommand(Json::array({"ctest", "--test-dir", "build"}));
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->text, "ctest --test-dir build");
}

// covers issue 38: shell metacharacters are refused
TEST(ParseCheckCommandTest, ShellMetacharactersAndSpacedWordsAreRefused) {
  for (const char* text : {"make test; rm -rf /", "make test && curl x", "echo $HOME", "make  test", " make",
                           "cat <secret", "FOO=1 make", "eval make", "make `id`", "make test | tee log"}) {
    auto parsed = ParseCheckCommand(Json(text));
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kPermissionDenied) << text;
  }
  auto spaced = ParseCheckCommand(Json::array({"sh", "-c", "make test"}));
  ASSERT_FALSE(spaced);
  EXPECT_EQ(spaced.error().code(), ErrorCode::kPermissionDenied);
  ASSERT_EQ(spaced.error().issues().size(), 1u);
  EXPECT_EQ(spaced.error().issues()[0].pointer, "/command/2");
  auto glob = ParseCheckCommand(Json::array({"rm", "*"}));
  ASSERT_FALSE(glob);
  EXPECT_EQ(glob.error().code(), ErrorCode::kPermissionDenied);
  for (const Json& malformed : {Json::array(), Json(3), Json::array({""}), Json::array({1})}) {
    auto parsed = ParseCheckCommand(malformed);
    ASSERT_FALSE(parsed) << malformed.dump();
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << malformed.dump();
  }
}

class CheckDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path()).string() + "/repo";
    fs::create_directories(root_ + "/src/lib");
    fs::create_directories(fs::canonical(dir_.path()).string() + "/elsewhere");
    fs::create_symlink(fs::canonical(dir_.path()).string() + "/elsewhere", root_ + "/escape");
    fs::create_symlink("src/lib", root_ + "/inner");
    std::ofstream(root_ + "/file.txt") << "x";
  }
  testing::TempDir dir_;
  std::string root_;
};

TEST_F(CheckDirectoryTest, ResolvesInsideTheRepository) {
  EXPECT_EQ(ResolveCheckDirectory(root_, "").value(), root_);
  EXPECT_EQ(ResolveCheckDirectory(root_, ".").value(), root_);
  EXPECT_EQ(ResolveCheckDirectory(root_, "src/lib").value(), root_ + "/src/lib");
  EXPECT_EQ(ResolveCheckDirectory(root_, "inner").value(), root_ + "/src/lib");  // a symlink that stays inside
}

// covers issue 38: a working directory escaping the repository
TEST_F(CheckDirectoryTest, EscapesAreRefusedWithThePointer) {
  for (const char* cwd : {"..", "../elsewhere", "src/../..", "escape", "/etc", "~/x"}) {
    auto resolved = ResolveCheckDirectory(root_, cwd);
    ASSERT_FALSE(resolved) << cwd;
    EXPECT_EQ(resolved.error().code(), ErrorCode::kPermissionDenied) << cwd;
    ASSERT_FALSE(resolved.error().issues().empty()) << cwd;
    EXPECT_EQ(resolved.error().issues()[0].pointer, "/cwd");
  }
  for (const char* cwd : {"file.txt", "missing"}) {
    auto resolved = ResolveCheckDirectory(root_, cwd);
    ASSERT_FALSE(resolved) << cwd;
    EXPECT_EQ(resolved.error().code(), ErrorCode::kInvalidArgument) << cwd;
  }
}

TEST_F(CheckDirectoryTest, ARunRecordsItsLimitsAndRedactsItsTail) {
  CheckRequest request;
  request.command = {"sh -c", {"sh", "-c", "pwd; echo token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB; printf '\\377'; exit 1"}};
  request.repository_root = root_;
  request.cwd = "src";
  SandboxLimits limits;
  limits.wall_time_ms = 10'000;
  auto record = RunCheck(request, limits, {});
  ASSERT_TRUE(record) << record.error().message();
  EXPECT_FALSE(record->passed());
  EXPECT_EQ(record->cwd, "src");
  EXPECT_EQ(record->redacted_tail.find("ghp_0123"), std::string::npos) << record->redacted_tail;
  EXPECT_EQ(record->redacted_tail.rfind(root_ + "/src\n", 0), 0u) << record->redacted_tail;
  EXPECT_NE(record->redacted_tail.find("\xEF\xBF\xBD"), std::string::npos);  // the invalid byte, repaired
  EXPECT_FALSE(record->redactions.empty());
  Json json = CheckRecordToJson(*record);
  EXPECT_EQ(json["exitStatus"], 1);
  EXPECT_EQ(json["passed"], false);
  EXPECT_EQ(json["sandbox"], "bubblewrap");
  EXPECT_EQ(json["limits"]["wallTimeMs"], 10'000);
  EXPECT_EQ(json["limits"]["maxProcesses"], 256);
  EXPECT_EQ(json["output"]["bytes"], record->outcome.output_bytes);
  EXPECT_EQ(json["output"]["sha256"].get<std::string>().size(), 7u + 64u);
  EXPECT_FALSE(json.contains("signal"));
}

TEST(RepairUtf8Test, ReplacesOnlyInvalidSequences) {
  EXPECT_EQ(RepairUtf8("h\xC3\xA9llo"), "h\xC3\xA9llo");
  EXPECT_EQ(RepairUtf8("\xA9x"), "\xEF\xBF\xBDx");               // a cut sequence at the tail's start
  EXPECT_EQ(RepairUtf8("x\xE2\x82"), "x\xEF\xBF\xBD\xEF\xBF\xBD");  // and at its end
  EXPECT_EQ(RepairUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

}  // namespace
}  // namespace telic::observation
