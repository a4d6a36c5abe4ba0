#include "base/file_read.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace telic {
namespace {

class ReadRegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "telic-file-read-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ReadRegularFileTest, ReadsARegularFileWithinItsLimit) {
  std::string path = Write("a.json", "{\"x\": 1}\n");
  auto read = ReadRegularFile(path, 9, "--policy");
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, "{\"x\": 1}\n");
  auto empty = ReadRegularFile(Write("empty", ""), 0, "--policy");
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, "");
}

TEST_F(ReadRegularFileTest, RefusesAFileOverItsLimit) {
  auto read = ReadRegularFile(Write("big", std::string(10, 'x')), 9, "--policy");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(read.error().message().find("larger than 9 bytes"), std::string::npos);
}

TEST_F(ReadRegularFileTest, RefusesAMissingFile) {
  auto read = ReadRegularFile((dir_ / "missing").string(), 100, "FILE");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(read.error().message(), "cannot read FILE " + (dir_ / "missing").string() + ": no such file");
}

TEST_F(ReadRegularFileTest, RefusesDirectoriesDevicesAndFifosWithoutBlocking) {
  std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  const std::pair<std::string, std::string> kCases[] = {
      {dir_.string(), "it is a directory"}, {fifo, "it is a FIFO"}, {"/dev/zero", "it is a device"}};
  for (const auto& [path, reason] : kCases) {
    auto read = ReadRegularFile(path, 1 << 20, "--action");
    ASSERT_FALSE(read) << path;
    EXPECT_EQ(read.error().code(), ErrorCode::kInvalidArgument) << path;
    EXPECT_NE(read.error().message().find(reason), std::string::npos) << read.error().message();
    EXPECT_EQ(NonRegularFileReason(path).substr(0, reason.size()), reason);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(NonRegularFileReason((dir_ / "missing").string()), "");
  EXPECT_EQ(NonRegularFileReason(Write("regular", "x")), "");
}

}  // namespace
}  // namespace telic
