// Batched lstat (stat_batch.h): io_uring and fstatat give the same answers.
#include "grounding/stat_batch.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grounding/test_repo.h"
#include "testing/temp_dir.h"

namespace telic::grounding {
namespace {

namespace fs = std::filesystem;

class StatBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(tmp_.path()).string();
    testing::WriteFile(root_, "file.txt", "twelve bytes");
    testing::WriteFile(root_, "dir/inner.txt", "x");
    fs::create_symlink("file.txt", fs::path(root_) / "link");
    fs::create_symlink("missing-target", fs::path(root_) / "dangling");
    // More names than one ring round (256) holds.
    for (int i = 0; i < 600; ++i) testing::WriteFile(root_, "many/f" + std::to_string(i), std::string(i, 'a'));
    dir_fd_ = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_fd_, 0);
  }
  void TearDown() override { close(dir_fd_); }

  std::vector<NameStat> StatAll(bool io_uring, const std::vector<std::string>& names, bool* batched = nullptr) {
    StatBatch batch(io_uring);
    if (batched != nullptr) *batched = batch.batched();
    std::vector<const char*> pointers;
    for (const std::string& name : names) pointers.push_back(name.c_str());
    std::vector<NameStat> results;
    batch.Stat(dir_fd_, pointers, results);
    return results;
  }

  static void ExpectSame(const NameStat& a, const NameStat& b, const std::string& name) {
    ASSERT_EQ(a.ok, b.ok) << name;
    if (!a.ok) return;
    EXPECT_EQ(a.info.st_mode, b.info.st_mode) << name;
    EXPECT_EQ(a.info.st_size, b.info.st_size) << name;
    EXPECT_EQ(a.info.st_ino, b.info.st_ino) << name;
    EXPECT_EQ(a.info.st_dev, b.info.st_dev) << name;
    EXPECT_EQ(a.info.st_uid, b.info.st_uid) << name;
    EXPECT_EQ(a.info.st_gid, b.info.st_gid) << name;
    EXPECT_EQ(a.info.st_mtim.tv_sec, b.info.st_mtim.tv_sec) << name;
    EXPECT_EQ(a.info.st_mtim.tv_nsec, b.info.st_mtim.tv_nsec) << name;
    EXPECT_EQ(a.info.st_ctim.tv_sec, b.info.st_ctim.tv_sec) << name;
    EXPECT_EQ(a.info.st_ctim.tv_nsec, b.info.st_ctim.tv_nsec) << name;
  }

  telic::testing::TempDir tmp_;
  std::string root_;
  int dir_fd_ = -1;
};

TEST_F(StatBatchTest, BatchedAnswersEqualFstatatForEveryKindOfName) {
  std::vector<std::string> names = {"file.txt", "dir", "link", "dangling", "missing", "file.txt/below", "dir/inner.txt"};
  for (int i = 0; i < 600; ++i) names.push_back("many/f" + std::to_string(i));
  bool batched = false;
  std::vector<NameStat> fast = StatAll(true, names, &batched);
  std::vector<NameStat> plain = StatAll(false, names);
  ASSERT_EQ(fast.size(), names.size());
  ASSERT_EQ(plain.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) ExpectSame(fast[i], plain[i], names[i]);
  // The answers themselves: lstat semantics, failures as not ok.
  EXPECT_TRUE(S_ISREG(plain[0].info.st_mode));
  EXPECT_EQ(plain[0].info.st_size, 12);
  EXPECT_TRUE(S_ISDIR(plain[1].info.st_mode));
  EXPECT_TRUE(S_ISLNK(plain[2].info.st_mode));  // not followed
  EXPECT_TRUE(S_ISLNK(plain[3].info.st_mode));
  EXPECT_FALSE(plain[4].ok);                     // ENOENT
  EXPECT_FALSE(plain[5].ok);                     // ENOTDIR
  EXPECT_EQ(plain[7 + 599].info.st_size, 599);
  // Informational: where the kernel refuses io_uring the batch falls back.
  std::cout << "[ info ] io_uring " << (batched ? "used" : "unavailable: fstatat fallback") << "\n";
}

TEST_F(StatBatchTest, NoNamesIsNoWorkAndABatchIsReusable) {
  StatBatch batch(true);
  std::vector<const char*> none;
  std::vector<NameStat> results(3);
  batch.Stat(dir_fd_, none, results);
  EXPECT_TRUE(results.empty());
  std::vector<const char*> one = {"file.txt"};
  for (int round = 0; round < 3; ++round) {
    batch.Stat(dir_fd_, one, results);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].ok);
    EXPECT_EQ(results[0].info.st_size, 12);
  }
}

}  // namespace
}  // namespace telic::grounding
