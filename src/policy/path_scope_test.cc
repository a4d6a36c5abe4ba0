// Repository path normalisation, symlink escapes, glob matching and glob
// containment (docs/PERMISSIONS.md "Paths" and "Globs").
#include "policy/path_scope.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/fake_file_system.h"
#include "testing/temp_dir.h"

namespace telic::policy {
namespace {

using fakes::FakeFileSystem;

// ---------------------------------------------------------------------------
// Lexical normalisation: an adversarial table. Every row states allow/deny
// and either the normalised path or a substring of the reason.

struct PathCase {
  std::string input;
  bool allowed;
  std::string expected;  // normalised path when allowed, reason substring when denied
};

const RepoRoot kLexicalRoot{"/repo", nullptr, {}};

TEST(NormalizeRepoPathTest, AdversarialTable) {
  const std::string long_path(5000, 'a');
  const std::vector<PathCase> cases = {
      // allowed, with their normal form
      {"src/app.ts", true, "src/app.ts"},
      {"./src/app.ts", true, "src/app.ts"},
      {"src//app.ts", true, "src/app.ts"},
      {"src/", true, "src"},
      {".", true, "."},
      {"./", true, "."},
      {"a/./b", true, "a/b"},
      {"/repo/src/a.ts", true, "src/a.ts"},
      {"/repo", true, "."},
      {"/repo/", true, "."},
      {"//repo//src", true, "src"},
      {".env", true, ".env"},
      {"a..b/c", true, "a..b/c"},
      {"...", true, "..."},
      {"src/~tmp", true, "src/~tmp"},
      {"file name.txt", true, "file name.txt"},
      {"docs/r\xC3\xA9sum\xC3\xA9.md", true, "docs/r\xC3\xA9sum\xC3\xA9.md"},
      {"app/[id]/page.tsx", true, "app/[id]/page.tsx"},
      {"SRC/App.ts", true, "SRC/App.ts"},
      // `..` in any position (stricter than the reference)
      {"../secrets.txt", false, "'..' segment"},
      {"..", false, "'..' segment"},
      {"src/..", false, "'..' segment"},
      {"src/../../etc/passwd", false, "'..' segment"},
      {"a/../b", false, "'..' segment"},
      {"./../x", false, "'..' segment"},
      {"a/b/../../..", false, "'..' segment"},
      {"/repo/../etc/passwd", false, "'..' segment"},
      // absolute paths
      {"/etc/passwd", false, "absolute path outside the repository root"},
      {"/repository/x", false, "absolute path outside the repository root"},
      {"/repo-other/x", false, "absolute path outside the repository root"},
      {"/", false, "absolute path outside the repository root"},
      {"//etc/passwd", false, "absolute path outside the repository root"},
      // bytes that change meaning elsewhere
      {"", false, "empty path"},
      {std::string("src/a\0b", 7), false, "NUL byte"},
      {std::string("\0", 1), false, "NUL byte"},
      {"src\\a.ts", false, "backslash"},
      {"..\\..\\windows\\win.ini", false, "backslash"},
      {"src/%2e%2e/x", false, "percent-encoding"},
      {"%2e%2e/etc/passwd", false, "percent-encoding"},
      {"src/a%00.txt", false, "percent-encoding"},
      {"src/a\nb", false, "control character"},
      {"src/a\rb", false, "control character"},
      {"src/a\tb", false, "control character"},
      {"\x1b[31mred", false, "control character"},
      {"src/\x7f", false, "control character"},
      {"~/.ssh/id_rsa", false, "starts with '~'"},
      {"~root/.bashrc", false, "starts with '~'"},
      {"~", false, "starts with '~'"},
      {"./~/.ssh/id_rsa", false, "starts with '~'"},
      {"/repo/~/x", false, "starts with '~'"},
      {"src/*.ts", false, "glob character"},
      {"src/?", false, "glob character"},
      {"**", false, "glob character"},
      // encodings
      {"src/\xff", false, "invalid UTF-8"},
      {"src/\xc0\xaf", false, "invalid UTF-8"},          // overlong '/'
      {"src/\xe0\x80\xae\xe0\x80\xae", false, "invalid UTF-8"},  // overlong '.'
      {"src/\xed\xa0\x80", false, "invalid UTF-8"},      // UTF-16 surrogate
      {"src/a\xe2\x80", false, "invalid UTF-8"},         // truncated
      {"src/gpj.\xe2\x80\xae" "exe", false, "bidirectional"},  // U+202E right-to-left override
      {"src/se\xe2\x80\x8b" "cret.txt", false, "U+200B"},  // zero-width space
      {"\xef\xbb\xbf" "src/a", false, "U+FEFF"},              // BOM
      {long_path, false, "longer than 4096"},
  };
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    auto result = NormalizeRepoPath(c.input, kLexicalRoot);
    if (c.allowed) {
      ASSERT_TRUE(result.has_value()) << c.input << ": " << result.error().message();
      EXPECT_EQ(*result, c.expected) << c.input;
    } else {
      ASSERT_FALSE(result.has_value()) << c.input << " -> " << *result;
      EXPECT_EQ(result.error().code(), ErrorCode::kPermissionDenied);
      EXPECT_NE(result.error().message().find(c.expected), std::string::npos)
          << c.input << ": " << result.error().message();
    }
  }
}

TEST(NormalizeRepoPathTest, UnknownOrRelativeRoot) {
  RepoRoot unknown{"", nullptr, {}};
  EXPECT_EQ(*NormalizeRepoPath("src/a", unknown), "src/a");
  auto absolute = NormalizeRepoPath("/repo/src/a", unknown);
  ASSERT_FALSE(absolute);
  EXPECT_NE(absolute.error().message().find("no known repository root"), std::string::npos);
  auto relative_root = NormalizeRepoPath("src/a", RepoRoot{"repo", nullptr, {}});
  ASSERT_FALSE(relative_root);
  EXPECT_NE(relative_root.error().message().find("root is not an absolute path"), std::string::npos);
}

TEST(NormalizeRepoPathTest, RootSlashAndRootWithDots) {
  EXPECT_EQ(*NormalizeRepoPath("/etc/passwd", RepoRoot{"/", nullptr, {}}), "etc/passwd");
  EXPECT_EQ(*NormalizeRepoPath("/repo/x", RepoRoot{"/work/../repo/", nullptr, {}}), "x");
}

TEST(NormalizeRepoPathTest, CaseInsensitiveFilesystemRules) {
  RepoRoot root{"/repo", nullptr, MatchOptions{true}};
  EXPECT_EQ(*NormalizeRepoPath("SRC/Secret.TXT", root), "SRC/Secret.TXT");  // kept as written
  for (const std::string input : {"src/secret.txt.", "src/secret.txt ", "src./x", "r\xC3\xA9sum\xC3\xA9"}) {
    auto result = NormalizeRepoPath(input, root);
    EXPECT_FALSE(result) << input;
  }
  EXPECT_NE(NormalizeRepoPath("\xC5\xBFrc/x", root).error().message().find("non-ASCII"), std::string::npos);  // long s
  EXPECT_NE(NormalizeRepoPath("a.", root).error().message().find("ending in '.'"), std::string::npos);
  // Case-sensitive (the Linux default) keeps them.
  EXPECT_TRUE(NormalizeRepoPath("src/secret.txt.", kLexicalRoot));
}

// ---------------------------------------------------------------------------
// Symlinks through a fake filesystem

class FakeSymlinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs.AddDir("/repo/src");
    fs.AddFile("/repo/src/app.ts");
    fs.AddDir("/outside");
    fs.AddFile("/outside/secret.txt");
  }
  RepoRoot Root() const { return RepoRoot{"/repo", &fs, {}}; }
  FakeFileSystem fs;
};

TEST_F(FakeSymlinkTest, PlainPathsResolveToThemselves) {
  auto path = ResolveRepoPath("src/app.ts", Root());
  ASSERT_TRUE(path) << path.error().message();
  EXPECT_EQ(path->lexical, "src/app.ts");
  EXPECT_EQ(path->resolved, "src/app.ts");
  auto missing = ResolveRepoPath("src/new/deep/file.ts", Root());
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->resolved, "src/new/deep/file.ts");
}

TEST_F(FakeSymlinkTest, LinkToOutsideFileIsDenied) {
  fs.AddSymlink("/repo/linked.txt", "/outside/secret.txt");
  auto result = ResolveRepoPath("linked.txt", Root());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("leaves the repository root through a symlink"), std::string::npos);
}

TEST_F(FakeSymlinkTest, RelativeLinkClimbingOutIsDenied) {
  fs.AddSymlink("/repo/src/up", "../../outside");
  EXPECT_FALSE(ResolveRepoPath("src/up/secret.txt", Root()));
  EXPECT_FALSE(ResolveRepoPath("src/up", Root()));
  // ...and a file that does not exist yet below it (nearest existing ancestor).
  EXPECT_FALSE(ResolveRepoPath("src/up/new/file.txt", Root()));
}

TEST_F(FakeSymlinkTest, DanglingLinkPointingOutsideIsDenied) {
  // The reference skips a path that does not exist and checks its parent, so
  // writing through this link would create /outside/new.txt.
  fs.AddSymlink("/repo/dangling", "/outside/new.txt");
  EXPECT_FALSE(ResolveRepoPath("dangling", Root()));
}

TEST_F(FakeSymlinkTest, ChainOfLinksIsFollowed) {
  fs.AddSymlink("/repo/a", "b");
  fs.AddSymlink("/repo/b", "c");
  fs.AddSymlink("/repo/c", "/outside");
  EXPECT_FALSE(ResolveRepoPath("a/secret.txt", Root()));
  fs.AddSymlink("/repo/c", "src");  // now the chain stays inside
  auto inside = ResolveRepoPath("a/app.ts", Root());
  ASSERT_TRUE(inside) << inside.error().message();
  EXPECT_EQ(inside->lexical, "a/app.ts");
  EXPECT_EQ(inside->resolved, "src/app.ts");
}

TEST_F(FakeSymlinkTest, LinkInsideTheRootReportsItsTarget) {
  fs.AddSymlink("/repo/docs", "src");
  auto path = ResolveRepoPath("docs/app.ts", Root());
  ASSERT_TRUE(path);
  EXPECT_EQ(path->lexical, "docs/app.ts");
  EXPECT_EQ(path->resolved, "src/app.ts");
  fs.AddSymlink("/repo/self", ".");
  auto self = ResolveRepoPath("self", Root());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->resolved, ".");
}

TEST_F(FakeSymlinkTest, LinkWithDotDotInsideTheRootIsAllowed) {
  fs.AddSymlink("/repo/src/sibling", "../lib");
  auto path = ResolveRepoPath("src/sibling/x", Root());
  ASSERT_TRUE(path);
  EXPECT_EQ(path->resolved, "lib/x");
}

TEST_F(FakeSymlinkTest, LinkToTheRootsParentPrefixIsOutside) {
  fs.AddDir("/repo-secrets");
  fs.AddSymlink("/repo/x", "/repo-secrets");
  EXPECT_FALSE(ResolveRepoPath("x/key", Root()));
}

TEST_F(FakeSymlinkTest, SymlinkLoopIsDenied) {
  fs.AddSymlink("/repo/loop1", "loop2");
  fs.AddSymlink("/repo/loop2", "loop1");
  auto result = ResolveRepoPath("loop1/x", Root());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("too many levels of symlinks"), std::string::npos);
}

TEST_F(FakeSymlinkTest, EmptyLinkTargetIsDenied) {
  fs.AddSymlink("/repo/empty", "");
  EXPECT_FALSE(ResolveRepoPath("empty", Root()));
}

TEST_F(FakeSymlinkTest, LstatErrorsDeny) {
  fs.FailLstat("/repo/src");
  auto result = ResolveRepoPath("src/app.ts", Root());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("Permission denied"), std::string::npos);
}

TEST_F(FakeSymlinkTest, RootBehindASymlink) {
  fs.AddDir("/data/real-repo/src");
  fs.AddSymlink("/repo-link", "/data/real-repo");
  RepoRoot root{"/repo-link", &fs, {}};
  auto inside = ResolveRepoPath("src/x", root);
  ASSERT_TRUE(inside) << inside.error().message();
  EXPECT_EQ(inside->resolved, "src/x");
  // An absolute target may name the root by either spelling.
  EXPECT_EQ(*NormalizeRepoPath("/repo-link/src/x", root), "src/x");
  EXPECT_EQ(*NormalizeRepoPath("/data/real-repo/src/x", root), "src/x");
  EXPECT_FALSE(NormalizeRepoPath("/data/other/x", root));
}

TEST_F(FakeSymlinkTest, RealPathDisagreementDenies) {
  fs.SetRealPath("/repo/src/app.ts", "/repo/src/app.ts");
  EXPECT_TRUE(ResolveRepoPath("src/app.ts", Root()));
  fs.SetRealPath("/repo/src/app.ts", "/elsewhere/app.ts");
  auto result = ResolveRepoPath("src/app.ts", Root());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("realpath disagrees"), std::string::npos);
}

TEST_F(FakeSymlinkTest, WithoutAFilesystemOnlyLexicalChecks) {
  fs.AddSymlink("/repo/linked.txt", "/outside/secret.txt");
  EXPECT_TRUE(ResolveRepoPath("linked.txt", RepoRoot{"/repo", nullptr, {}}));
}

// ---------------------------------------------------------------------------
// Symlinks on the real filesystem

class DiskSymlinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(repo() / "src");
    std::filesystem::create_directories(outside());
    std::ofstream(outside() / "secret.txt") << "secret";
    std::ofstream(repo() / "src" / "app.ts") << "app";
  }
  std::filesystem::path repo() const { return dir.path() / "repo"; }
  std::filesystem::path outside() const { return dir.path() / "outside"; }
  RepoRoot Root() const { return RepoRoot::OnDisk(repo().string()); }
  telic::testing::TempDir dir;
};

TEST_F(DiskSymlinkTest, RegularFileIsAllowed) {
  auto path = ResolveRepoPath("src/app.ts", Root());
  ASSERT_TRUE(path) << path.error().message();
  EXPECT_EQ(path->resolved, "src/app.ts");
  EXPECT_TRUE(ResolveRepoPath("src/not-yet/created.ts", Root()));
  EXPECT_EQ(*NormalizeRepoPath((repo() / "src" / "app.ts").string(), Root()), "src/app.ts");
}

TEST_F(DiskSymlinkTest, FileLinkOutsideIsDenied) {
  std::filesystem::create_symlink(outside() / "secret.txt", repo() / "linked.txt");
  auto result = ResolveRepoPath("linked.txt", Root());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("symlink"), std::string::npos);
}

TEST_F(DiskSymlinkTest, DirectoryLinkOutsideIsDenied) {
  std::filesystem::create_directory_symlink(outside(), repo() / "src" / "vendor");
  EXPECT_FALSE(ResolveRepoPath("src/vendor/secret.txt", Root()));
  EXPECT_FALSE(ResolveRepoPath("src/vendor/new-file.txt", Root()));
}

TEST_F(DiskSymlinkTest, RelativeDotDotLinkOutsideIsDenied) {
  std::filesystem::create_symlink("../../outside/secret.txt", repo() / "src" / "rel");
  EXPECT_FALSE(ResolveRepoPath("src/rel", Root()));
}

TEST_F(DiskSymlinkTest, DanglingLinkOutsideIsDenied) {
  std::filesystem::create_symlink(outside() / "does-not-exist.txt", repo() / "dangling");
  EXPECT_FALSE(ResolveRepoPath("dangling", Root()));
}

TEST_F(DiskSymlinkTest, LinkInsideIsAllowedAndResolved) {
  std::filesystem::create_directory_symlink("src", repo() / "alias");
  auto path = ResolveRepoPath("alias/app.ts", Root());
  ASSERT_TRUE(path) << path.error().message();
  EXPECT_EQ(path->lexical, "alias/app.ts");
  EXPECT_EQ(path->resolved, "src/app.ts");
}

TEST_F(DiskSymlinkTest, LoopIsDenied) {
  std::filesystem::create_symlink("b", repo() / "a");
  std::filesystem::create_symlink("a", repo() / "b");
  EXPECT_FALSE(ResolveRepoPath("a", Root()));
}

TEST_F(DiskSymlinkTest, RootThroughASymlink) {
  std::filesystem::create_directory_symlink(repo(), dir.path() / "root-link");
  RepoRoot root = RepoRoot::OnDisk((dir.path() / "root-link").string());
  auto path = ResolveRepoPath("src/app.ts", root);
  ASSERT_TRUE(path) << path.error().message();
  EXPECT_EQ(path->resolved, "src/app.ts");
  EXPECT_EQ(*NormalizeRepoPath((repo() / "src").string(), root), "src");
}

TEST_F(DiskSymlinkTest, ProbeCaseInsensitive) {
  // Linux temp directories are case-sensitive (tmpfs, ext4).
  auto probe = ProbeCaseInsensitive(repo().string());
  ASSERT_TRUE(probe.has_value());
  EXPECT_FALSE(*probe);
  EXPECT_FALSE(ProbeCaseInsensitive((dir.path() / "missing").string()).has_value());
  EXPECT_FALSE(ProbeCaseInsensitive("relative").has_value());
  EXPECT_FALSE(RepoRoot::OnDisk(repo().string()).match.case_insensitive);
  EXPECT_TRUE(RepoRoot::OnDisk(repo().string(), MatchOptions{true}).match.case_insensitive);
  EXPECT_EQ(RepoRoot::OnDisk(repo().string()).fs, &HostFileSystem());
}

// ---------------------------------------------------------------------------
// Glob matching

struct GlobCase {
  std::string pattern;
  std::string path;
  bool matches;
};

TEST(GlobTest, MatchingTable) {
  const std::vector<GlobCase> cases = {
      {"**", ".", true},
      {"**", "a/b/c", true},
      {"**", ".env", true},
      {"*", "a", true},
      {"*", ".hidden", true},  // dotfiles are not special (gitignore, unlike Node)
      {"*", "a/b", false},
      {"*", ".", false},
      {".", ".", true},
      {".", "a", false},
      {"src/**", "src", true},
      {"src/**", "src/a/b", true},
      {"src/**", "srcx/a", false},
      {"src/**", ".", false},
      {"src/*", "src/a", true},
      {"src/*", "src/a/b", false},
      {"src/*", "src", false},
      {"**/*.ts", "a.ts", true},
      {"**/*.ts", "x/y/a.ts", true},
      {"**/*.ts", "a.tsx", false},
      {"*.ts", ".ts", true},
      {"a/**/b", "a/b", true},
      {"a/**/b", "a/x/y/b", true},
      {"a/**/b", "a/x/c", false},
      {"**/node_modules/**", "node_modules", true},
      {"**/node_modules/**", "a/node_modules/x/y", true},
      {"**/node_modules/**", "a/node_modulesx/y", false},
      {"?.md", "a.md", true},
      {"?.md", "ab.md", false},
      {"?.md", "\xC3\xA9.md", true},  // one code point, two bytes
      {"?", "/", false},
      {"[abc].txt", "b.txt", true},
      {"[abc].txt", "d.txt", false},
      {"[!abc].txt", "d.txt", true},
      {"[!abc].txt", "a.txt", false},
      {"[^abc].txt", "a.txt", false},
      {"[!a]", "\xC3\xA9", true},
      {"[a-c]x", "bx", true},
      {"[a-c]x", "dx", false},
      {"[]]", "]", true},
      {"[!]]", "]", false},
      {"[a-]", "-", true},
      {"{a,b}.txt", "a.txt", false},  // no brace expansion
      {"{a,b}.txt", "{a,b}.txt", true},
      {"src/", "src/x", true},
      {"src/", "src", true},
      {"a**b", "axxb", true},
      {"a**b", "ax/b", false},
      {"**/**/x", "x", true},
      {"./src/**", "src/a", true},
      {"src//a", "src/a", true},
      {"SRC/**", "src/a", false},
      {"*a*b*c*", "xxaxxbxxcxx", true},
      {"*a*b*c*", "xxaxxcxxbxx", false},
      {"app/[[]id]/page.tsx", "app/[id]/page.tsx", true},
  };
  for (const auto& c : cases) {
    auto glob = Glob::Compile(c.pattern);
    ASSERT_TRUE(glob) << c.pattern << ": " << glob.error().message();
    EXPECT_EQ(glob->Matches(c.path), c.matches) << c.pattern << " vs " << c.path;
  }
}

TEST(GlobTest, CaseFolding) {
  MatchOptions fold{true};
  EXPECT_TRUE(GlobMatches("SRC/**", "src/a", fold));
  EXPECT_TRUE(GlobMatches("src/secret.txt", "SRC/Secret.TXT", fold));
  EXPECT_TRUE(GlobMatches("[A-Z].md", "a.md", fold));
  EXPECT_TRUE(GlobMatches("[a-z].md", "A.md", fold));
  EXPECT_FALSE(GlobMatches("[!a].md", "a.md", fold));
  EXPECT_FALSE(GlobMatches("src/secret.txt", "SRC/Secret.TXT"));
}

TEST(GlobTest, NormalForm) {
  EXPECT_EQ(Glob::Compile("./src//a/")->text(), "src/a/**");
  EXPECT_EQ(Glob::Compile("**/**/x/**/**")->text(), "**/x/**");
  EXPECT_EQ(Glob::Compile("./")->text(), "**");
  EXPECT_EQ(Glob::Compile(".")->text(), ".");
}

TEST(GlobTest, InvalidPatterns) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"/abs/**", "leading '/'"},
      {"!src/**", "negation"},
      {"#comment", "leading '#'"},
      // Found by policy_path_fuzz: "./!" normalised to "!", which did not compile.
      {".///.//!", "negation"},
      {"./#x", "starts with '#'"},
      {"a/../b", "'..'"},
      {"..", "'..'"},
      {"a\\*", "backslash"},
      {std::string("a\0b", 3), "control"},
      {"a\nb", "control"},
      {"[abc", "unterminated"},
      {"[a/b]", "unterminated"},
      {"[[:alpha:]]", "POSIX"},
      {"[z-a]", "reversed"},
      {"[\xC3\xA9]", "non-ASCII"},
      {"\xff", "UTF-8"},
  };
  for (const auto& [pattern, reason] : cases) {
    auto glob = Glob::Compile(pattern);
    ASSERT_FALSE(glob) << pattern;
    EXPECT_EQ(glob.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(glob.error().message().find(reason), std::string::npos) << pattern << ": " << glob.error().message();
    EXPECT_FALSE(GlobMatches(pattern, "a"));
  }
}

TEST(GlobTest, UnnormalisedPathsNeverMatch) {
  EXPECT_FALSE(GlobMatches("**", "a//b"));
  EXPECT_FALSE(GlobMatches("**", "a/../b"));
  EXPECT_FALSE(GlobMatches("**", "./a"));
  EXPECT_FALSE(GlobMatches("**", "a/\xff"));
}

TEST(GlobTest, LongInputsStayFast) {
  // Backtracking is linear per star; this would take forever exponentially.
  std::string path(3000, 'a');
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "*a";
  pattern += "b";
  EXPECT_FALSE(GlobMatches(pattern, path));
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += (i ? "/d" : "d");
  EXPECT_FALSE(GlobMatches("**/**/x/**/y", deep));
}

// ---------------------------------------------------------------------------
// Glob containment

struct SubsetCase {
  std::string a;
  std::string b;
  bool subset;
};

TEST(GlobSubsetTest, Table) {
  const std::vector<SubsetCase> cases = {
      {"src/a.ts", "src/**", true},
      {"src/**", "**", true},
      {"**", "**", true},
      {"**", "src/**", false},
      {"src/*.ts", "src/*", true},
      {"src/*", "src/*.ts", false},
      {"src/a/**", "src/**", true},
      {"src/**", "src/a/**", false},
      {"src", "src/**", true},
      {"src/**", "src", false},
      {"a/b/c", "a/*/c", true},
      {"a/*/c", "a/b/c", false},
      {"a/**/c", "a/**", true},
      {"**/*.ts", "**", true},
      {"**/*.ts", "**/*", true},
      {"**/*", "**/*.ts", false},
      {"**/x", "*/**", true},
      {"[ab].ts", "[abc].ts", true},
      {"[abc].ts", "[ab].ts", false},
      {"?.ts", "*.ts", true},
      {"*.ts", "?.ts", false},
      {"a.ts", "?.ts", true},
      {"[!a]", "*", true},
      {"[a]", "a", true},
      {"[ab]", "a", false},
      {"[!a]", "[!ab]", false},
      {"[!ab]", "[!a]", true},
      {"\xC3\xA9", "?", true},
      {".", "**", true},
      {".", "src/**", false},
      {"src/", "src/**", true},
      {"**", "**/**", true},
      {"src/{a,b}", "src/*", true},
      {"src/*", "src/{a,b}", false},
      {"[", "**", false},  // invalid patterns are never subsets
      {"a", "[", false},
      {"a*b", "a*", true},
      {"a*", "a*b", false},
      {"*", "**", true},
      {"*/*", "*/**", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(GlobSubset(c.a, c.b), c.subset) << c.a << " within " << c.b;
  }
}

// A naive recursive matcher over the same grammar, for cross-checking.
bool NaiveSegment(const std::string& p, size_t i, const std::string& s, size_t j) {
  if (i == p.size()) return j == s.size();
  if (p[i] == '*') {
    for (size_t k = j; k <= s.size(); ++k) {
      if (NaiveSegment(p, i + 1, s, k)) return true;
    }
    return false;
  }
  if (j == s.size()) return false;
  if (p[i] == '?') return NaiveSegment(p, i + 1, s, j + 1);
  if (p[i] == '[') {  // only [xy] and [!x] shapes are generated
    size_t close = p.find(']', i + 2);
    bool negate = p[i + 1] == '!';
    std::string members = p.substr(i + (negate ? 2 : 1), close - i - (negate ? 2 : 1));
    bool in = members.find(s[j]) != std::string::npos;
    return in != negate && NaiveSegment(p, close + 1, s, j + 1);
  }
  return p[i] == s[j] && NaiveSegment(p, i + 1, s, j + 1);
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  if (text == ".") return out;
  size_t start = 0;
  while (true) {
    size_t slash = text.find('/', start);
    out.push_back(text.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

bool NaiveMatch(const std::vector<std::string>& p, size_t i, const std::vector<std::string>& s, size_t j) {
  if (i == p.size()) return j == s.size();
  if (p[i] == "**") {
    for (size_t k = j; k <= s.size(); ++k) {
      if (NaiveMatch(p, i + 1, s, k)) return true;
    }
    return false;
  }
  return j < s.size() && NaiveSegment(p[i], 0, s[j], 0) && NaiveMatch(p, i + 1, s, j + 1);
}

std::string RandomPattern(std::mt19937& rng) {
  static const std::vector<std::string> kSegmentParts = {"a", "b", "*", "?", "[ab]", "[!a]", "c"};
  int segments = 1 + static_cast<int>(rng() % 3);
  std::string out;
  for (int s = 0; s < segments; ++s) {
    if (s) out += '/';
    if (rng() % 4 == 0) {
      out += "**";
      continue;
    }
    int parts = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < parts; ++k) out += kSegmentParts[rng() % kSegmentParts.size()];
  }
  return out;
}

std::vector<std::string> AllPaths() {
  // Every path of 0-3 segments over segments {a, b, ab, ba, c, aa}.
  static const std::vector<std::string> kSegments = {"a", "b", "ab", "ba", "c", "aa"};
  std::vector<std::string> paths = {"."};
  std::vector<std::string> frontier = {""};
  for (int depth = 0; depth < 3; ++depth) {
    std::vector<std::string> next;
    for (const auto& prefix : frontier) {
      for (const auto& seg : kSegments) {
        std::string path = prefix.empty() ? seg : prefix + "/" + seg;
        paths.push_back(path);
        next.push_back(path);
      }
    }
    frontier = std::move(next);
  }
  return paths;
}

TEST(GlobPropertyTest, MatcherAgreesWithNaiveMatcher) {
  std::mt19937 rng(20240601);
  const auto paths = AllPaths();
  for (int round = 0; round < 300; ++round) {
    std::string pattern = RandomPattern(rng);
    auto glob = Glob::Compile(pattern);
    ASSERT_TRUE(glob) << pattern;
    auto pattern_segments = Split(glob->text());
    for (const auto& path : paths) {
      ASSERT_EQ(glob->Matches(path), NaiveMatch(pattern_segments, 0, Split(path), 0)) << pattern << " vs " << path;
    }
  }
}

TEST(GlobPropertyTest, SubsetIsSound) {
  // GlobSubset(a, b) ⇒ every enumerated path matched by a is matched by b.
  std::mt19937 rng(7);
  const auto paths = AllPaths();
  int proven = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string a = RandomPattern(rng);
    std::string b = rng() % 3 == 0 ? a + "/**" : RandomPattern(rng);
    if (!GlobSubset(a, b)) continue;
    ++proven;
    for (const auto& path : paths) {
      if (GlobMatches(a, path)) {
        ASSERT_TRUE(GlobMatches(b, path)) << a << " within " << b << " but " << path;
      }
    }
  }
  EXPECT_GT(proven, 100);  // the property was exercised
}

TEST(NormalizeRepoPathPropertyTest, RandomInputsNormaliseToSafeFixedPoints) {
  // Invariants on arbitrary input: a normalised path is relative, has no
  // empty, "." or ".." segment, none of the refused characters, normalises to
  // itself, and is matched by "**".
  std::mt19937 rng(31337);
  const std::string alphabet =
      std::string("ab./\\%*?[]~ :\n\t\x7f-") + std::string("\0", 1) + "\xc3\xa9\xe2\x80\xae\xff";
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string input;
    int length = static_cast<int>(rng() % 12);
    for (int i = 0; i < length; ++i) {
      input += rng() % 8 == 0 ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    if (rng() % 4 == 0) input = "/repo/" + input;
    auto result = NormalizeRepoPath(input, kLexicalRoot);
    if (!result) continue;
    ++accepted;
    const std::string& out = *result;
    ASSERT_FALSE(out.empty());
    ASSERT_NE(out.front(), '/') << input;
    ASSERT_EQ(out.find_first_of(std::string("\\%*?\n\t\x7f") + std::string("\0", 1)), std::string::npos) << out;
    if (out != ".") {
      for (const auto& segment : Split(out)) {
        ASSERT_TRUE(!segment.empty() && segment != "." && segment != "..") << input << " -> " << out;
      }
    }
    auto again = NormalizeRepoPath(out, kLexicalRoot);
    ASSERT_TRUE(again) << input << " -> " << out << " -> " << again.error().message();
    ASSERT_EQ(*again, out) << input;
    ASSERT_TRUE(GlobMatches("**", out)) << out;
  }
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace telic::policy
