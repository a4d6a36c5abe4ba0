// Where a repository's state lives (PROTOCOL §1.2-1.3).
#include "store/state_dir.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

namespace fs = std::filesystem;

std::string Key(const std::string& real_root) { return Sha256Hex(real_root).substr(0, 24); }

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::canonical(tmp_.path());
    repo_ = base_ / "repo";
    fs::create_directories(repo_);
  }

  StateLocation Location(const fs::path& state_dir) const {
    StateLocation location;
    location.repository_root = repo_.string();
    location.state_dir = state_dir.string();
    location.ledger_path = (state_dir / "telic.sqlite3").string();
    return location;
  }

  static void Touch(const fs::path& path) { std::ofstream(path) << "x"; }

  testing::TempDir tmp_;
  fs::path base_;  // tmp_, symlink-free
  fs::path repo_;
};

// ---------------------------------------------------------------------------
// ResolveStateLocation

TEST(StateKeyTest, MatchesTheContractExample) {
  // PROTOCOL §1.3: /tmp/fxrepo → 6c25b7629b4be0d380111e9a
  EXPECT_EQ(Key("/tmp/fxrepo"), "6c25b7629b4be0d380111e9a");
}

TEST_F(StateDirTest, ExplicitStateDirWins) {
  Environment env = {{"TELIC_STATE_DIR", (base_ / "explicit").string()},
                     {"XDG_STATE_HOME", (base_ / "xdg").string()},
                     {"HOME", (base_ / "home").string()}};
  auto location = ResolveStateLocation(env, repo_.string());
  ASSERT_TRUE(location) << location.error().message();
  EXPECT_EQ(location->repository_root, repo_.string());
  EXPECT_EQ(location->state_dir, (base_ / "explicit").string());
  EXPECT_EQ(location->ledger_path, (base_ / "explicit" / "telic.sqlite3").string());
}

TEST_F(StateDirTest, ExplicitStateDirIsNormalisedAndMadeAbsolute) {
  auto trailing = ResolveStateLocation({{"TELIC_STATE_DIR", (base_ / "s").string() + "/"}}, repo_.string());
  ASSERT_TRUE(trailing) << trailing.error().message();
  EXPECT_EQ(trailing->state_dir, (base_ / "s").string());
  EXPECT_EQ(trailing->ledger_path, (base_ / "s" / "telic.sqlite3").string());

  auto dotted = ResolveStateLocation({{"TELIC_STATE_DIR", (base_ / "a" / ".." / "b" / "." / "s").string()}},
                                     repo_.string());
  ASSERT_TRUE(dotted) << dotted.error().message();
  EXPECT_EQ(dotted->state_dir, (base_ / "b" / "s").string());

  auto relative = ResolveStateLocation({{"TELIC_STATE_DIR", "rel/state"}}, repo_.string());
  ASSERT_TRUE(relative) << relative.error().message();
  EXPECT_EQ(relative->state_dir, (fs::current_path() / "rel" / "state").lexically_normal().string());
  EXPECT_TRUE(fs::path(relative->state_dir).is_absolute());
}

TEST_F(StateDirTest, XdgStateHome) {
  Environment env = {{"XDG_STATE_HOME", (base_ / "xdg").string()}, {"HOME", (base_ / "home").string()}};
  auto location = ResolveStateLocation(env, repo_.string());
  ASSERT_TRUE(location) << location.error().message();
  fs::path expected = base_ / "xdg" / "telic" / "repositories" / Key(repo_.string());
  EXPECT_EQ(location->state_dir, expected.string());
  EXPECT_EQ(location->ledger_path, (expected / "telic.sqlite3").string());
}

TEST_F(StateDirTest, HomeFallback) {
  auto location = ResolveStateLocation({{"HOME", (base_ / "home").string()}}, repo_.string());
  ASSERT_TRUE(location) << location.error().message();
  fs::path expected = base_ / "home" / ".local" / "state" / "telic" / "repositories" / Key(repo_.string());
  EXPECT_EQ(location->state_dir, expected.string());
}

TEST_F(StateDirTest, EmptyVariablesCountAsUnset) {
  Environment env = {{"TELIC_STATE_DIR", ""}, {"XDG_STATE_HOME", ""}, {"HOME", (base_ / "home").string()}};
  auto location = ResolveStateLocation(env, repo_.string());
  ASSERT_TRUE(location) << location.error().message();
  EXPECT_EQ(location->state_dir,
            (base_ / "home" / ".local" / "state" / "telic" / "repositories" / Key(repo_.string())).string());
}

// PROTOCOL §1.2: with XDG_STATE_HOME unset the base is $HOME/.local/state, "HOME via
// the OS user home" (Node's os.homedir(): $HOME, else the passwd entry).
// telic instead fails with kFailedPrecondition when HOME is unset. See report.
TEST_F(StateDirTest, NoHomeFallsBackToThePasswdHomeLikeNode) {
  const struct passwd* pw = ::getpwuid(::geteuid());
  ASSERT_NE(pw, nullptr);
  auto location = ResolveStateLocation({}, repo_.string());
  ASSERT_TRUE(location) << location.error().message();
  EXPECT_EQ(location->state_dir,
            (fs::path(pw->pw_dir) / ".local" / "state" / "telic" / "repositories" / Key(repo_.string())).string());
}

TEST_F(StateDirTest, KeyIsFirst24HexOfSha256OfTheRealRoot) {
  auto location = ResolveStateLocation({{"XDG_STATE_HOME", "/xdg"}}, repo_.string());
  ASSERT_TRUE(location) << location.error().message();
  std::string key = fs::path(location->state_dir).filename().string();
  EXPECT_EQ(key.size(), 24u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(key, Sha256Hex(repo_.string()).substr(0, 24));
}

TEST_F(StateDirTest, RepositoryRootVariableWinsOverCwd) {
  fs::path other = base_ / "other";
  fs::create_directories(other);
  Environment env = {{"TELIC_REPOSITORY_ROOT", repo_.string()}, {"XDG_STATE_HOME", "/xdg"}};
  auto location = ResolveStateLocation(env, other.string());
  ASSERT_TRUE(location) << location.error().message();
  EXPECT_EQ(location->repository_root, repo_.string());
  EXPECT_EQ(location->state_dir, "/xdg/telic/repositories/" + Key(repo_.string()));

  env["TELIC_REPOSITORY_ROOT"] = "";  // empty → cwd
  auto from_cwd = ResolveStateLocation(env, other.string());
  ASSERT_TRUE(from_cwd) << from_cwd.error().message();
  EXPECT_EQ(from_cwd->repository_root, other.string());
  EXPECT_EQ(from_cwd->state_dir, "/xdg/telic/repositories/" + Key(other.string()));
}

TEST_F(StateDirTest, SymlinkedRootIsResolved) {
  fs::path link = base_ / "link";
  fs::create_directory_symlink(repo_, link);
  auto location = ResolveStateLocation({{"TELIC_REPOSITORY_ROOT", link.string()}, {"XDG_STATE_HOME", "/xdg"}},
                                       "/nonexistent");
  ASSERT_TRUE(location) << location.error().message();
  EXPECT_EQ(location->repository_root, repo_.string());
  EXPECT_EQ(location->state_dir, "/xdg/telic/repositories/" + Key(repo_.string()));
  EXPECT_NE(Key(link.string()), Key(repo_.string()));
}

TEST_F(StateDirTest, RootSpellingDoesNotChangeTheKey) {
  Environment env = {{"XDG_STATE_HOME", "/xdg"}};
  auto plain = ResolveStateLocation(env, repo_.string());
  auto trailing = ResolveStateLocation(env, repo_.string() + "/");
  auto dotted = ResolveStateLocation(env, (base_ / "repo" / ".." / "repo" / ".").string());
  ASSERT_TRUE(plain && trailing && dotted);
  EXPECT_EQ(trailing->repository_root, repo_.string());
  EXPECT_EQ(dotted->repository_root, repo_.string());
  EXPECT_EQ(trailing->state_dir, plain->state_dir);
  EXPECT_EQ(dotted->state_dir, plain->state_dir);
}

TEST_F(StateDirTest, MissingRootIsAFailedPrecondition) {
  auto from_cwd = ResolveStateLocation({{"XDG_STATE_HOME", "/xdg"}}, (base_ / "missing").string());
  ASSERT_FALSE(from_cwd);
  EXPECT_EQ(from_cwd.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(from_cwd.error().message().find((base_ / "missing").string()), std::string::npos)
      << from_cwd.error().message();

  auto from_env = ResolveStateLocation(
      {{"TELIC_REPOSITORY_ROOT", (base_ / "gone").string()}, {"XDG_STATE_HOME", "/xdg"}}, repo_.string());
  ASSERT_FALSE(from_env);
  EXPECT_EQ(from_env.error().code(), ErrorCode::kFailedPrecondition);

  fs::path dangling = base_ / "dangling";
  fs::create_directory_symlink(base_ / "nowhere", dangling);
  auto through_dangling = ResolveStateLocation({{"XDG_STATE_HOME", "/xdg"}}, dangling.string());
  ASSERT_FALSE(through_dangling);
  EXPECT_EQ(through_dangling.error().code(), ErrorCode::kFailedPrecondition);
}

TEST_F(StateDirTest, ResolveDoesNotTouchTheFileSystem) {
  fs::path xdg = base_ / "xdg";
  auto location = ResolveStateLocation({{"XDG_STATE_HOME", xdg.string()}}, repo_.string());
  ASSERT_TRUE(location);
  EXPECT_FALSE(fs::exists(xdg));
}

TEST(CurrentEnvironmentTest, ReadsTheProcessEnvironment) {
  ASSERT_EQ(::setenv("TELIC_STATE_DIR_TEST_PROBE", "a=b", 1), 0);
  Environment env = CurrentEnvironment();
  EXPECT_EQ(env["TELIC_STATE_DIR_TEST_PROBE"], "a=b");  // split at the first '='
  ::unsetenv("TELIC_STATE_DIR_TEST_PROBE");
  EXPECT_EQ(CurrentEnvironment().count("TELIC_STATE_DIR_TEST_PROBE"), 0u);
}

// ---------------------------------------------------------------------------
// PrepareStateDir

TEST_F(StateDirTest, CreatesTheStateDirWithMode0700) {
  fs::path state = base_ / "state" / "nested" / "deeper";
  ASSERT_TRUE(PrepareStateDir(Location(state)));
  struct stat st;
  ASSERT_EQ(::lstat(state.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A second call on the existing directory succeeds.
  EXPECT_TRUE(PrepareStateDir(Location(state)));
}

// The header promises "mode 0700, parents too", and PROTOCOL §1.3 says directories
// are created 0700 (the reference's mkdir({recursive, mode: 0o700}) applies
// the mode to every directory it creates). telic chmods only the leaf, so
// created parents keep the umask default (0755 under umask 022). See report.
TEST_F(StateDirTest, CreatedParentsAreAlso0700) {
  fs::path state = base_ / "p1" / "p2" / "leaf";
  ASSERT_TRUE(PrepareStateDir(Location(state)));
  for (const fs::path& dir : {base_ / "p1", base_ / "p1" / "p2", state}) {
    struct stat st;
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << dir;
  }
}

TEST_F(StateDirTest, AcceptsAnExistingDirectoryAndRegularLedgerFiles) {
  fs::path state = base_ / "state";
  fs::create_directories(state);
  Touch(state / "telic.sqlite3");
  Touch(state / "telic.sqlite3-wal");
  Touch(state / "telic.sqlite3-shm");
  auto status = PrepareStateDir(Location(state));
  EXPECT_TRUE(status) << status.error().message();
}

TEST_F(StateDirTest, ResolvedLocationCanBePrepared) {
  auto location = ResolveStateLocation({{"XDG_STATE_HOME", (base_ / "xdg").string()}}, repo_.string());
  ASSERT_TRUE(location);
  auto status = PrepareStateDir(*location);
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_TRUE(fs::is_directory(location->state_dir));
}

TEST_F(StateDirTest, RefusesStateDirInsideTheRepository) {
  for (const fs::path& inside : {repo_ / ".telic", repo_ / "a" / "b" / "state"}) {
    auto status = PrepareStateDir(Location(inside));
    ASSERT_FALSE(status) << inside;
    EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(status.error().message().find("must be outside the repository"), std::string::npos)
        << status.error().message();
    EXPECT_FALSE(fs::exists(inside)) << "created " << inside;
  }
}

TEST_F(StateDirTest, RefusesStateDirEqualToOrContainingTheRepository) {
  for (const fs::path& outer : {repo_, base_, fs::path("/")}) {
    auto status = PrepareStateDir(Location(outer));
    ASSERT_FALSE(status) << outer;
    EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  }
}

TEST_F(StateDirTest, RefusesStateDirThatIsInsideOnlyLexicallyAfterDotDot) {
  // base/other/../repo/state is inside the repo once normalised.
  fs::create_directories(base_ / "other");
  auto status = PrepareStateDir(Location(base_ / "other" / ".." / "repo" / "state"));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
}

TEST_F(StateDirTest, RefusesStateDirInsideTheRepositoryThroughASymlinkedAncestor) {
  fs::path link = base_ / "repo-link";
  fs::create_directory_symlink(repo_, link);
  fs::path state = link / "not-yet" / "state";  // nearest existing ancestor is the link
  auto status = PrepareStateDir(Location(state));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(repo_ / "not-yet"));
}

TEST_F(StateDirTest, RefusesStateDirContainingTheRepositoryThroughASymlink) {
  fs::path link = base_ / "base-link";
  fs::create_directory_symlink(base_, link);
  auto status = PrepareStateDir(Location(link));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
}

TEST_F(StateDirTest, SiblingWithCommonPrefixIsNotInside) {
  // base/repo-state shares the string prefix "base/repo" but not a path component.
  fs::path sibling = base_ / "repo-state";
  auto status = PrepareStateDir(Location(sibling));
  EXPECT_TRUE(status) << status.error().message();
  EXPECT_TRUE(fs::is_directory(sibling));
}

TEST_F(StateDirTest, RefusesASymlinkStateDir) {
  fs::path target = base_ / "real-state";
  fs::create_directories(target);
  fs::path link = base_ / "state-link";
  fs::create_directory_symlink(target, link);
  auto status = PrepareStateDir(Location(link));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.error().message().find("symlink"), std::string::npos) << status.error().message();
}

TEST_F(StateDirTest, RefusesADanglingSymlinkStateDir) {
  fs::path link = base_ / "dangling-state";
  fs::create_directory_symlink(base_ / "nowhere", link);
  auto status = PrepareStateDir(Location(link));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(base_ / "nowhere"));
}

TEST_F(StateDirTest, RefusesAStateDirThatIsAFile) {
  fs::path file = base_ / "state-file";
  Touch(file);
  auto status = PrepareStateDir(Location(file));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.error().message().find("not a directory"), std::string::npos) << status.error().message();
}

TEST_F(StateDirTest, RefusesALedgerPathThatIsADirectory) {
  fs::path state = base_ / "state";
  fs::create_directories(state / "telic.sqlite3");
  auto status = PrepareStateDir(Location(state));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.error().message().find("not a regular file"), std::string::npos) << status.error().message();
}

TEST_F(StateDirTest, RefusesWalOrShmThatAreNotRegularFiles) {
  for (const char* suffix : {"-wal", "-shm"}) {
    testing::TempDir scratch;
    fs::path state = fs::canonical(scratch.path()) / "state";
    fs::create_directories(state);
    fs::create_directories(state / (std::string("telic.sqlite3") + suffix));
    auto status = PrepareStateDir(Location(state));
    ASSERT_FALSE(status) << suffix;
    EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  }
}

TEST_F(StateDirTest, RefusesASymlinkLedger) {
  fs::path state = base_ / "state";
  fs::create_directories(state);
  Touch(base_ / "elsewhere.sqlite3");
  fs::create_symlink(base_ / "elsewhere.sqlite3", state / "telic.sqlite3");
  auto status = PrepareStateDir(Location(state));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
}

// ---- scratch directories (issue 40 item 7) ----

size_t ScratchEntries(const std::filesystem::path& state_dir) {
  std::error_code ec;
  auto it = std::filesystem::directory_iterator(state_dir / kScratchFolder, ec);
  return ec ? 0 : static_cast<size_t>(std::distance(it, std::filesystem::directory_iterator()));
}

// covers issue 40 item 7: scratch lives under the state directory and goes with its owner
TEST(ScratchDirTest, LivesUnderTheStateDirectoryAndIsRemovedWithItsOwner) {
  testing::TempDir dir;
  std::string state = dir.File("state");  // missing: created with the scratch folder
  std::string path;
  {
    auto scratch = ScratchDir::Create(state);
    ASSERT_TRUE(scratch) << scratch.error().message();
    path = (*scratch)->path();
    EXPECT_EQ(std::filesystem::path(path).parent_path(), std::filesystem::path(state) / kScratchFolder);
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::ofstream(path + "/scratch.sqlite3") << "ledger";
    auto cleaned = CleanStaleScratch(state);  // a live scratch directory is never removed
    ASSERT_TRUE(cleaned);
    EXPECT_EQ(*cleaned, 0);
    EXPECT_TRUE(std::filesystem::exists(path + "/scratch.sqlite3"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(ScratchEntries(state), 0u);
}

// covers issue 40 item 7: a process killed while it held scratch leaves it unlocked; the next start removes it
TEST(ScratchDirTest, ScratchOfAKilledProcessIsCleanedAtTheNextStart) {
  testing::TempDir dir;
  std::string state = dir.File("state");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto scratch = ScratchDir::Create(state);
    if (!scratch) ::_exit(2);
    std::ofstream((*scratch)->path() + "/scratch.sqlite3") << std::string(4096, 'x');
    (void)scratch->release();  // never destroyed: as if killed
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(ScratchEntries(state), 1u);
  // A symlink planted in the scratch folder is removed without being followed.
  std::filesystem::create_directory(dir.File("outside"));
  std::ofstream(dir.File("outside/keep.txt")) << "keep";
  std::filesystem::create_directory_symlink(dir.File("outside"), std::filesystem::path(state) / kScratchFolder / "link");
  auto cleaned = CleanStaleScratch(state);
  ASSERT_TRUE(cleaned) << cleaned.error().message();
  EXPECT_EQ(*cleaned, 2);
  EXPECT_EQ(ScratchEntries(state), 0u);
  EXPECT_TRUE(std::filesystem::exists(dir.File("outside/keep.txt")));
  EXPECT_EQ(*CleanStaleScratch(dir.File("never-created")), 0);
}

TEST(ScratchDirTest, RefusesAScratchFolderThatIsASymlink) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.File("state"));
  std::filesystem::create_directory(dir.File("elsewhere"));
  std::filesystem::create_directory_symlink(dir.File("elsewhere"), dir.File("state/scratch"));
  auto scratch = ScratchDir::Create(dir.File("state"));
  ASSERT_FALSE(scratch);
  EXPECT_EQ(scratch.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(std::filesystem::is_empty(dir.File("elsewhere")));
}

}  // namespace
}  // namespace telic::store
