// The direct index reader against libgit2's reading of the same index files,
// written by real git in every version it can write, and against damaged
// and unsupported files.
#include "grounding/git_index.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "grounding/libgit2.h"
#include <gtest/gtest.h>

#include "grounding/git_repo.h"
#include "grounding/test_repo.h"
#include "grounding/worktree_status.h"
#include "testing/temp_dir.h"

namespace telic::grounding {
namespace {

namespace fs = std::filesystem;
using testing::Git;
using testing::GitCommitAll;
using testing::GitInit;
using testing::WriteFile;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// `git <args>` output, trimmed.
std::string GitOutput(const fs::path& root, const std::string& args) {
  std::string command = "cd '" + root.string() + "' && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null git " + args;
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[256];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

class GitIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(tmp_.path());
    WriteFile(root_, "a.ts", "alpha");
    WriteFile(root_, "a-b.ts", "dash");
    WriteFile(root_, "dir/sub/deep.ts", "deep");
    WriteFile(root_, "dir/z.ts", "zed");
    WriteFile(root_, "run.sh", "echo run\n");
    fs::permissions(root_ / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
    fs::create_symlink("a.ts", root_ / "link.ts");
    GitInit(root_);
    GitCommitAll(root_);
  }

  fs::path IndexPath() const { return root_ / ".git" / "index"; }

  // Every entry as libgit2 reads it must be what IndexFile reads.
  void ExpectSameAsLibgit2(const IndexFile& file) {
    InitLibgit2();
    RepoPtr repo = OpenWorkTree(root_.string());
    ASSERT_TRUE(repo);
    git_index* index = nullptr;
    ASSERT_EQ(git::repository_index(&index, repo.get()), 0);
    ASSERT_EQ(file.size(), git::index_entrycount(index));
    for (size_t i = 0; i < file.size(); ++i) {
      const IndexEntry ours = file.entry(i);
      const git_index_entry* theirs = git::index_get_byindex(index, i);
      EXPECT_EQ(ours.path, theirs->path);
      EXPECT_EQ(ours.mode, theirs->mode) << ours.path;
      EXPECT_EQ(ours.size, theirs->file_size) << ours.path;
      EXPECT_EQ(ours.ino, theirs->ino) << ours.path;
      EXPECT_EQ(ours.mtime.seconds, static_cast<uint32_t>(theirs->mtime.seconds)) << ours.path;
      EXPECT_EQ(ours.mtime.nanoseconds, theirs->mtime.nanoseconds) << ours.path;
      EXPECT_EQ(ours.stage, GIT_INDEX_ENTRY_STAGE(theirs)) << ours.path;
      EXPECT_TRUE(std::equal(ours.id.begin(), ours.id.end(), theirs->id.id)) << ours.path;
    }
    git::index_free(index);
  }

  telic::testing::TempDir tmp_;
  fs::path root_;
};

TEST_F(GitIndexTest, Version2MatchesLibgit2AndCarriesTheCacheTree) {
  auto file = IndexFile::Read(IndexPath().string());
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->version(), 2u);
  ExpectSameAsLibgit2(*file);
  std::vector<std::string_view> paths;
  for (size_t i = 0; i < file->size(); ++i) paths.push_back(file->path(i));
  EXPECT_EQ(paths, (std::vector<std::string_view>{"a-b.ts", "a.ts", "dir/sub/deep.ts", "dir/z.ts", "link.ts", "run.sh"}));
  EXPECT_EQ(file->entry(5).mode, 0100755u);
  EXPECT_EQ(file->entry(4).mode, 0120000u);
  ASSERT_TRUE(file->cache_tree_root());
  char hex[41];
  git_oid oid;
  std::copy(file->cache_tree_root()->begin(), file->cache_tree_root()->end(), oid.id);
  git::oid_tostr(hex, sizeof hex, &oid);
  EXPECT_EQ(std::string(hex), GitOutput(root_, "rev-parse 'HEAD^{tree}'"));
  EXPECT_GT(file->mtime().seconds, 0u);
}

TEST_F(GitIndexTest, StagingInvalidatesTheCacheTree) {
  WriteFile(root_, "dir/z.ts", "changed");
  Git(root_, "add dir/z.ts");
  auto file = IndexFile::Read(IndexPath().string());
  ASSERT_TRUE(file);
  EXPECT_FALSE(file->cache_tree_root());
}

TEST_F(GitIndexTest, Version3ExtendedFlags) {
  Git(root_, "update-index --skip-worktree a.ts");
  WriteFile(root_, "new.ts", "n");
  Git(root_, "add -N new.ts");
  auto file = IndexFile::Read(IndexPath().string());
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->version(), 3u);
  ExpectSameAsLibgit2(*file);
  for (size_t i = 0; i < file->size(); ++i) {
    const IndexEntry entry = file->entry(i);
    EXPECT_EQ(entry.skip_worktree, entry.path == "a.ts") << entry.path;
    EXPECT_EQ(entry.intent_to_add, entry.path == "new.ts") << entry.path;
  }
}

TEST_F(GitIndexTest, Version4PrefixCompressedPaths) {
  auto before = IndexFile::Read(IndexPath().string());
  ASSERT_TRUE(before);
  std::vector<std::string> expected;
  for (size_t i = 0; i < before->size(); ++i) expected.emplace_back(before->path(i));
  Git(root_, "update-index --index-version 4");
  auto file = IndexFile::Read(IndexPath().string());
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->version(), 4u);
  std::vector<std::string> paths;
  for (size_t i = 0; i < file->size(); ++i) paths.emplace_back(file->path(i));
  EXPECT_EQ(paths, expected);
  ExpectSameAsLibgit2(*file);
}

TEST_F(GitIndexTest, ConflictStagesAreListed) {
  Git(root_, "checkout -q -b other");
  WriteFile(root_, "a.ts", "other");
  GitCommitAll(root_, "other");
  Git(root_, "checkout -q main");
  WriteFile(root_, "a.ts", "main");
  GitCommitAll(root_, "main");
  std::string merge = "cd '" + root_.string() +
                      "' && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null git -c user.name=t "
                      "-c user.email=t@example.invalid merge -q other >/dev/null 2>&1";
  ASSERT_NE(std::system(merge.c_str()), 0);
  auto file = IndexFile::Read(IndexPath().string());
  ASSERT_TRUE(file);
  ExpectSameAsLibgit2(*file);
  std::vector<int> stages;
  for (size_t i = 0; i < file->size(); ++i) {
    if (file->path(i) == "a.ts") stages.push_back(file->entry(i).stage);
  }
  EXPECT_TRUE(file->has_conflicts());
  EXPECT_EQ(stages, (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(file->cache_tree_root());
}

TEST_F(GitIndexTest, AMissingIndexIsEmpty) {
  auto file = IndexFile::Read((root_ / ".git" / "no-such-index").string());
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size(), 0u);
  EXPECT_FALSE(file->cache_tree_root());
}

TEST_F(GitIndexTest, DamagedIndexesAreRefusedWithTheReason) {
  std::string bytes = Slurp(IndexPath());
  ASSERT_TRUE(IndexFile::FromBytes(bytes));

  std::string flipped = bytes;
  flipped[40] ^= 0x01;  // inside the first entry
  auto damaged = IndexFile::FromBytes(flipped);
  ASSERT_FALSE(damaged);
  EXPECT_EQ(damaged.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(damaged.error().message().find("checksum"), std::string::npos) << damaged.error().message();

  auto cut = IndexFile::FromBytes(bytes.substr(0, 20));
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code(), ErrorCode::kDataLoss);

  std::string signature = bytes;
  signature[0] = 'X';
  EXPECT_EQ(IndexFile::FromBytes(signature).error().code(), ErrorCode::kDataLoss);

  // A zero checksum (index.skipHash) is not verified, so the structure checks
  // must stand alone: an entry count larger than the file is refused.
  std::string unchecked = bytes;
  std::fill(unchecked.end() - 20, unchecked.end(), '\0');
  ASSERT_TRUE(IndexFile::FromBytes(unchecked));
  unchecked[8] = '\x7f';
  auto overcount = IndexFile::FromBytes(unchecked);
  ASSERT_FALSE(overcount);
  EXPECT_EQ(overcount.error().code(), ErrorCode::kDataLoss);
}

// Found by review: a FIFO at the index path hung the reader in open().
TEST_F(GitIndexTest, AnIndexThatIsNotARegularFileIsRefusedWithoutBlocking) {
  fs::path fifo = root_ / ".git" / "fifo-index";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto file = IndexFile::Read(fifo.string());
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code(), ErrorCode::kUnavailable);
}

TEST_F(GitIndexTest, SplitIndexesAreLeftToLibgit2) {
  Git(root_, "update-index --split-index");
  auto file = IndexFile::Read(IndexPath().string());
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(file.error().message().find("'link'"), std::string::npos) << file.error().message();
  // The work-tree scan falls back rather than guessing: it either reads the
  // index through libgit2 or reports that it could not.
  WorktreeStatus status = ReadWorktreeStatus(root_.string());
  if (status.ok) {
    EXPECT_TRUE(status.records.empty());
  }
}

}  // namespace
}  // namespace telic::grounding
