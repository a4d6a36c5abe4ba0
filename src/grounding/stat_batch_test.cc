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

// kFastest: the first kTrialNames names by fstatat, the next by io_uring,
// then one of the two for good; the answers are the same throughout.
TEST_F(StatBatchTest, FastestModeTriesBothThenKeepsOneWithTheSameAnswers) {
  std::vector<std::string> names;
  for (int i = 0; i < 600; ++i) names.push_back("many/f" + std::to_string(i));
  names.insert(names.end(), {"file.txt", "dir", "link", "dangling", "missing", "file.txt/below"});
  std::vector<const char*> pointers;
  for (const std::string& name : names) pointers.push_back(name.c_str());
  std::vector<NameStat> expected = StatAll(false, names);

  const bool ring_available = StatBatch(StatMode::kRing).batched();
  StatBatch batch(StatMode::kFastest);
  EXPECT_EQ(batch.deciding(), ring_available);  // no trial without a ring
  EXPECT_FALSE(batch.batched());               // the trial starts with fstatat
  std::vector<NameStat> results;
  // Folder-sized calls of 100 names: 3 fstatat calls (300 >= 256), then 3
  // io_uring calls, then the decision.
  size_t calls = 0;
  for (size_t first = 0; first < pointers.size(); first += 100, ++calls) {
    std::vector<const char*> part(pointers.begin() + static_cast<std::ptrdiff_t>(first),
                                  pointers.begin() + static_cast<std::ptrdiff_t>(std::min(first + 100, pointers.size())));
    batch.Stat(dir_fd_, part, results);
    ASSERT_EQ(results.size(), part.size());
    for (size_t i = 0; i < part.size(); ++i) ExpectSame(results[i], expected[first + i], names[first + i]);
    if (ring_available && calls < 5) {
      EXPECT_TRUE(batch.deciding()) << "call " << calls;
      EXPECT_EQ(batch.batched(), calls >= 2) << "call " << calls;  // 300 names by fstatat, then the ring
    }
  }
  EXPECT_FALSE(batch.deciding());
  std::cout << "[ info ] kFastest kept " << (batch.batched() ? "io_uring" : "fstatat") << "\n";
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
