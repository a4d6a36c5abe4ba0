// GitWorkTree over real Git repositories: hashes, committed blobs, status,
// and the paths it must refuse (escapes, symlinks, .git, swapped links).
#include "observation/work_tree.h"

#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "grounding/paths.h"
#include "grounding/test_repo.h"
#include "testing/temp_dir.h"

namespace telic::observation {
namespace {

namespace fs = std::filesystem;
using grounding::testing::GitCommitAll;
using grounding::testing::GitInit;
using grounding::testing::WriteFile;

class WorkTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = *grounding::RealPath(MakeRepo());
    auto opened = GitWorkTree::Open(root_, {root_ + "/.telic"});
    ASSERT_TRUE(opened) << opened.error().message();
    tree_ = std::move(*opened);
  }
  std::string MakeRepo() {
    fs::path repo = dir_.path() / "repo";
    WriteFile(repo, "src/app.ts", "old\n");
    WriteFile(repo, "README.md", "readme\n");
    GitInit(repo);
    GitCommitAll(repo);
    WriteFile(dir_.path(), "outside/secret.txt", "outside\n");
    return repo.string();
  }
  std::string Head() {
    auto state = tree_->ReadState();
    return state && state->head_commit ? *state->head_commit : "";
  }
  testing::TempDir dir_;
  std::string root_;
  std::unique_ptr<GitWorkTree> tree_;
};

TEST_F(WorkTreeTest, HashesFilesAndReadsCommittedBlobs) {
  WriteFile(root_, "src/app.ts", "new\n");
  auto now = tree_->ReadFile("src/app.ts", true);
  ASSERT_TRUE(now) << now.error().message();
  EXPECT_EQ(now->sha256, Sha256Ref("new\n"));
  EXPECT_EQ(now->bytes, "new\n");
  auto committed = tree_->ReadCommitted(Head(), "src/app.ts", true);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->sha256, Sha256Ref("old\n"));
  EXPECT_FALSE(tree_->ReadCommitted(Head(), "src/none.ts", false)->exists);
  EXPECT_FALSE(tree_->ReadCommitted(std::nullopt, "src/app.ts", false)->exists);
  EXPECT_FALSE(tree_->ReadFile("src/none.ts", false)->exists);
}

TEST_F(WorkTreeTest, StateListsChangedAndUntrackedButNotIgnoredOrState) {
  WriteFile(root_, ".gitignore", "build/\n");
  GitCommitAll(root_);
  WriteFile(root_, "src/app.ts", "new\n");
  WriteFile(root_, "src/added.ts", "added\n");
  WriteFile(root_, "build/out.js", "ignored\n");
  WriteFile(root_, ".telic/ledger", "state\n");
  fs::remove(fs::path(root_) / "README.md");
  auto state = tree_->ReadState();
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->complete);
  EXPECT_EQ(state->changed_paths, (std::vector<std::string>{"README.md", "src/added.ts", "src/app.ts"}));
}

TEST_F(WorkTreeTest, CommittedChangesBetweenCommits) {
  std::string first = Head();
  WriteFile(root_, "src/app.ts", "new\n");
  WriteFile(root_, "src/b.ts", "b\n");
  GitCommitAll(root_);
  auto changed = tree_->CommittedChanges(first, Head());
  ASSERT_TRUE(changed);
  EXPECT_EQ(*changed, (std::vector<std::string>{"src/app.ts", "src/b.ts"}));
}

TEST_F(WorkTreeTest, RefusesEscapesSymlinksAndGit) {
  for (const char* path : {"../outside/secret.txt", "src/../../outside/secret.txt", "/etc/passwd", ".git/config",
                           "src/.git/x", ".telic/ledger"}) {
    auto read = tree_->ReadFile(path, false);
    ASSERT_FALSE(read) << path;
    EXPECT_EQ(read.error().code(), ErrorCode::kPermissionDenied) << path;
  }
  ASSERT_EQ(symlink((dir_.path() / "outside").c_str(), (fs::path(root_) / "linked").c_str()), 0);
  ASSERT_EQ(symlink((dir_.path() / "outside/secret.txt").c_str(), (fs::path(root_) / "file-link").c_str()), 0);
  for (const char* path : {"linked/secret.txt", "file-link"}) {
    auto read = tree_->ReadFile(path, false);
    ASSERT_FALSE(read) << path;
    EXPECT_EQ(read.error().code(), ErrorCode::kPermissionDenied);
    EXPECT_NE(read.error().message().find("symlink"), std::string::npos) << read.error().message();
  }
  fs::create_directories(fs::path(root_) / "dir");
  EXPECT_EQ(tree_->ReadFile("dir", false).error().code(), ErrorCode::kPermissionDenied);  // not a regular file
}

// A symlink swapped in between any check and the hash is never followed:
// each read sees the real file or is refused, never the outside file.
TEST_F(WorkTreeTest, ASymlinkSwappedInDuringReadsIsNeverFollowed) {
  fs::path real_dir = fs::path(root_) / "swap";
  WriteFile(root_, "swap/secret.txt", "inside\n");
  fs::path parked = fs::path(root_) / "parked";
  std::atomic<bool> stop = false;
  std::thread swapper([&] {
    while (!stop) {
      fs::rename(real_dir, parked);
      symlink((dir_.path() / "outside").c_str(), real_dir.c_str());
      unlink(real_dir.c_str());
      fs::rename(parked, real_dir);
    }
  });
  for (int i = 0; i < 2000; ++i) {
    auto read = tree_->ReadFile("swap/secret.txt", false);
    if (!read) continue;  // refused: a symlink was on the way
    if (read->exists) {
      EXPECT_EQ(read->sha256, Sha256Ref("inside\n"));
    }
    if (HasFailure()) break;
  }
  stop = true;
  swapper.join();
}

TEST(WorkTreeOpenTest, ANonGitFolderIsNotObserved) {
  testing::TempDir dir;
  auto opened = GitWorkTree::Open(*grounding::RealPath(dir.path().string()), {});
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), ErrorCode::kFailedPrecondition);
  LazyGitWorkTree lazy(dir.path().string(), {});
  EXPECT_EQ(lazy.ReadState().error().code(), ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace telic::observation
