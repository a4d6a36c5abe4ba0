// Ranking and the per-file checks of selection (PROTOCOL §16.4).
#include "grounding/selection.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grounding/test_repo.h"
#include "testing/temp_dir.h"

namespace telic::grounding {
namespace {

namespace fs = std::filesystem;
using testing::WriteFile;
using Strings = std::vector<std::string>;

std::vector<std::string_view> ViewsOf(const Strings& paths) { return {paths.begin(), paths.end()}; }

RankedCandidate Candidate(std::string_view path, int64_t score) {
  RankedCandidate candidate;
  candidate.path = path;
  candidate.score = score;
  return candidate;
}

const RankedCandidate* Find(const std::vector<RankedCandidate>& ranked, const std::string& path) {
  for (const auto& candidate : ranked) {
    if (candidate.path == path) return &candidate;
  }
  return nullptr;
}

TEST(GroundingSelectionTest, TokensSplitSeparatorsAndCamelCase) {
  EXPECT_EQ(Tokens("src/apiClient.ts"), (Strings{"src", "api", "client", "ts"}));
  EXPECT_EQ(Tokens("my_file-name.test.tsx"), (Strings{"my", "file", "name", "test", "tsx"}));
  EXPECT_EQ(Tokens("HTTPServer"), (Strings{"httpserver"}));  // only lower/digit → upper splits
  EXPECT_EQ(Tokens("parseJSON2Html"), (Strings{"parse", "json2", "html"}));
  // A trailing 's' goes from tokens longer than 4 not ending in ss/is/us.
  EXPECT_EQ(Tokens("classes tests status analysis access bus runs"),
            (Strings{"classe", "test", "status", "analysis", "access", "bus", "runs"}));
  EXPECT_EQ(Tokens("caf\xC3\xA9s"), (Strings{"caf", "s"}));  // non-ASCII letters separate tokens
}

TEST(GroundingSelectionTest, TokensLowerCaseTheCharactersThatFoldIntoAscii) {
  // KELVIN SIGN folds to k and joins its token; U+0130 folds to i + U+0307,
  // which ends the token. CamelCase boundaries are found before folding.
  EXPECT_EQ(Tokens("\xE2\x84\xAA" "eyStore"), (Strings{"key", "store"}));
  EXPECT_EQ(Tokens("a\xC4\xB0" "bC"), (Strings{"ai", "b", "c"}));
  EXPECT_EQ(Tokens("sessionToken/\xE2\x84\xAA" "elvinMode"), (Strings{"session", "token", "kelvin", "mode"}));
}

TEST(GroundingSelectionTest, BasenameTermsCountOnlyAfterTheLastSlash) {
  auto ranked = RankCandidates({"session/token/x.ts", "x/sessionToken.ts", "x/y/session"}, "session token", {});
  EXPECT_EQ(Find(ranked, "session/token/x.ts")->score, 75 + 75);
  EXPECT_EQ(Find(ranked, "x/sessionToken.ts")->score, 250 + 250);
  EXPECT_EQ(Find(ranked, "x/y/session")->score, 250);
}

TEST(GroundingSelectionTest, OrderDoesNotDependOnTheInputOrder) {
  // Sorted input takes a stable sort by score; any other input a full sort.
  const Strings sorted = {"AGENTS.md", "a/client.ts", "b/api/z.ts", "b/client.ts", "c.ts", "d/api.ts", "e.md"};
  Strings shuffled = {"e.md", "b/client.ts", "AGENTS.md", "d/api.ts", "c.ts", "b/api/z.ts", "a/client.ts"};
  auto from_sorted = RankCandidates(ViewsOf(sorted), "api client", {});
  auto from_shuffled = RankCandidates(ViewsOf(shuffled), "api client", {});
  ASSERT_EQ(from_sorted.size(), from_shuffled.size());
  Strings order;
  for (size_t i = 0; i < from_sorted.size(); ++i) {
    EXPECT_EQ(from_sorted[i].path, from_shuffled[i].path);
    EXPECT_EQ(from_sorted[i].score, from_shuffled[i].score);
    order.emplace_back(from_sorted[i].path);
  }
  EXPECT_EQ(order, (Strings{"AGENTS.md", "a/client.ts", "b/client.ts", "d/api.ts", "b/api/z.ts", "c.ts", "e.md"}));
}

TEST(GroundingSelectionTest, RequestTermsDropStopWordsAndShortTokens) {
  EXPECT_EQ(RequestTerms("Please investigate the API failures in src/networkClient and fix it x"),
            (Strings{"api", "client", "failure", "network", "src"}));
  EXPECT_EQ(RequestTerms("the a of to"), Strings{});
}

TEST(GroundingSelectionTest, PathHints) {
  EXPECT_EQ(RequestPathHints("please investigate ./src/Network/client.ts failing requests"),
            (Strings{"src/network/client.ts"}));
  // Trailing punctuation inside the character set stays attached.
  EXPECT_EQ(RequestPathHints("see src/a.ts. and lib/b.js, then c/d"), (Strings{"c/d", "lib/b.js", "src/a.ts."}));
  EXPECT_EQ(RequestPathHints("no hints here / or /x or y/"), Strings{});
  EXPECT_EQ(RequestPathHints("a/b a/b"), (Strings{"a/b"}));
}

TEST(GroundingSelectionTest, TermsMatchOnTokenBoundariesOnly) {
  // TEL-061: `api` scores apps/web/src/lib/api.ts but not apps/rapid/x.ts.
  auto ranked = RankCandidates({"apps/rapid/x.ts", "apps/web/src/lib/api.ts"}, "fix the api", {});
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].path, "apps/web/src/lib/api.ts");
  EXPECT_EQ(ranked[0].score, 250);
  EXPECT_EQ(ranked[0].Reason(), "Path matches request terms: api.");
  EXPECT_EQ(ranked[1].path, "apps/rapid/x.ts");
  EXPECT_EQ(ranked[1].score, 0);
  EXPECT_EQ(ranked[1].Reason(), "Repository source selected by the deterministic budget fallback.");
}

TEST(GroundingSelectionTest, ScoreComponents) {
  auto ranked = RankCandidates(
      {"AGENTS.md", "src/active.ts", "src/active.ts.bak", "src", "src/net/client.ts", "lib/client/util.ts",
       "package.json", "README.md", "tsconfig.base.json", "docs/package.json", "zzz.txt"},
      "look at src/net/client.ts and the client", {"src/active.ts"});
  EXPECT_EQ(Find(ranked, "AGENTS.md")->score, 1'000'000);
  EXPECT_TRUE(Find(ranked, "AGENTS.md")->pinned);
  EXPECT_EQ(Find(ranked, "AGENTS.md")->Reason(), "Applicable repository instruction source pinned by policy.");
  // Terms: client, look, net, src, ts.
  EXPECT_EQ(Find(ranked, "src/active.ts")->score, 1'000'000 + 50'000 + 250 + 75);  // + ts (basename), src
  EXPECT_EQ(Find(ranked, "src/active.ts")->Reason(), "Exact active-path source pinned by the host context.");
  EXPECT_FALSE(Find(ranked, "src/active.ts.bak")->pinned);
  EXPECT_EQ(Find(ranked, "src/active.ts.bak")->score, 250 + 75);
  EXPECT_EQ(Find(ranked, "src")->score, 10'000 + 250);  // ancestor of an active path; "src" in its basename
  EXPECT_EQ(Find(ranked, "src/net/client.ts")->score, 5'000 + 250 + 250 + 75 + 75);  // hint, client + ts, src + net
  EXPECT_EQ(Find(ranked, "src/net/client.ts")->Reason(), "Path matches an explicit request hint: src/net/client.ts.");
  EXPECT_EQ(Find(ranked, "lib/client/util.ts")->score, 250 + 75);
  EXPECT_EQ(Find(ranked, "package.json")->score, 20);
  EXPECT_EQ(Find(ranked, "package.json")->Reason(), "Root project metadata selected for bounded baseline context.");
  EXPECT_EQ(Find(ranked, "README.md")->score, 20);
  EXPECT_EQ(Find(ranked, "tsconfig.base.json")->score, 20);
  EXPECT_EQ(Find(ranked, "docs/package.json")->score, 0);
  EXPECT_EQ(Find(ranked, "zzz.txt")->score, 0);
  // Score descending, ties by path.
  for (size_t i = 1; i < ranked.size(); ++i) {
    EXPECT_TRUE(ranked[i - 1].score > ranked[i].score ||
                (ranked[i - 1].score == ranked[i].score && ranked[i - 1].path < ranked[i].path));
  }
}

TEST(GroundingSelectionTest, ActivePathsMatchCaseInsensitivelyAndAdjacency) {
  auto ranked = RankCandidates({"Src/App.ts", "src/app/inner.ts", "srcx/app.ts"}, "", {"src/app"});
  EXPECT_EQ(Find(ranked, "Src/App.ts")->score, 0);  // neither equal nor adjacent to src/app
  EXPECT_EQ(Find(ranked, "src/app/inner.ts")->score, 10'000);
  EXPECT_EQ(Find(ranked, "src/app/inner.ts")->Reason(), "Path is adjacent to an active host path.");
  auto exact = RankCandidates({"Src/App"}, "", {"src/app"});
  EXPECT_TRUE(exact[0].pinned);  // exact active match is case-insensitive, as in the reference
}

TEST(GroundingSelectionTest, ReasonsListAtMostThreeHintsAndFiveTerms) {
  auto ranked = RankCandidates({"alpha/beta/gamma/delta/epsilon/zeta.ts"}, "alpha beta gamma delta epsilon zeta", {});
  EXPECT_EQ(ranked[0].Reason(), "Path matches request terms: alpha, beta, delta, epsilon, gamma.");
}

class GroundingFileTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = fs::canonical(tmp_.path()).string(); }
  telic::testing::TempDir tmp_;
  telic::testing::TempDir outside_;
  std::string root_;
};

TEST_F(GroundingFileTest, ResolvesRegularFilesAndClassifiesEscapes) {
  WriteFile(root_, "src/a.ts", "a");
  WriteFile(outside_.path(), "secret.txt", "outside");
  fs::create_directories(fs::path(root_) / "dir");
  fs::create_symlink(outside_.path() / "secret.txt", fs::path(root_) / "escape.txt");
  fs::create_symlink(outside_.path(), fs::path(root_) / "linkdir");
  fs::create_symlink(fs::path(root_) / "src/a.ts", fs::path(root_) / "inside.txt");

  EXPECT_EQ(ResolveRepositoryPath(root_, "src/a.ts").outcome, ResolveOutcome::kFile);
  EXPECT_EQ(ResolveRepositoryPath(root_, "dir").outcome, ResolveOutcome::kNotRegular);
  EXPECT_EQ(ResolveRepositoryPath(root_, "../x").outcome, ResolveOutcome::kNotRegular);  // not normalisable
  EXPECT_EQ(ResolveRepositoryPath(root_, "escape.txt").outcome, ResolveOutcome::kSymlinkEscape);
  // Through a symlinked folder: the final component is no symlink.
  EXPECT_EQ(ResolveRepositoryPath(root_, "linkdir/secret.txt").outcome, ResolveOutcome::kPathEscape);
  // Missing, but its nearest existing ancestor leads outside.
  EXPECT_EQ(ResolveRepositoryPath(root_, "linkdir/missing/x.ts").outcome, ResolveOutcome::kPathEscape);
  EXPECT_EQ(ResolveRepositoryPath(root_, "src/missing.ts").outcome, ResolveOutcome::kUnreadable);
  // A symlink inside the root resolves to its target.
  auto inside = ResolveRepositoryPath(root_, "inside.txt");
  EXPECT_EQ(inside.outcome, ResolveOutcome::kFile);
  EXPECT_EQ(inside.absolute_path, root_ + "/src/a.ts");
}

TEST_F(GroundingFileTest, ReadsBoundedStrictUtf8Text) {
  WriteFile(root_, "text.txt", "hello\n");
  WriteFile(root_, "bom.txt", "\xEF\xBB\xBFhi");
  WriteFile(root_, "large.txt", std::string(17, 'x'));
  WriteFile(root_, "exact.txt", std::string(16, 'x'));
  WriteFile(root_, "binary.dat", std::string("\0\1\2\3", 4));
  WriteFile(root_, "latin1.txt", "caf\xE9");
  WriteFile(root_, "empty.txt", "");
  // Binary after the first 8192 bytes is not looked for.
  WriteFile(root_, "late-nul.txt", std::string(8192, 'a') + std::string(1, '\0'));
  fs::create_symlink(fs::path(root_) / "text.txt", fs::path(root_) / "link.txt");

  auto read = [&](const std::string& name, int64_t max = 16) { return ReadBoundedTextFile(root_ + "/" + name, max); };
  EXPECT_EQ(read("text.txt").outcome, ReadOutcome::kText);
  EXPECT_EQ(read("text.txt").bytes, "hello\n");
  EXPECT_EQ(read("bom.txt").bytes, "\xEF\xBB\xBFhi");
  EXPECT_EQ(read("large.txt").outcome, ReadOutcome::kTooLarge);
  EXPECT_EQ(read("exact.txt").outcome, ReadOutcome::kText);
  EXPECT_EQ(read("binary.dat").outcome, ReadOutcome::kBinary);
  EXPECT_EQ(read("latin1.txt").outcome, ReadOutcome::kInvalidUtf8);
  EXPECT_EQ(read("empty.txt").outcome, ReadOutcome::kText);
  EXPECT_EQ(read("late-nul.txt", 10'000).outcome, ReadOutcome::kText);
  EXPECT_EQ(read("link.txt").outcome, ReadOutcome::kUnreadable);  // never follows a final symlink
  EXPECT_EQ(read("missing.txt").outcome, ReadOutcome::kUnreadable);
  EXPECT_EQ(ReadBoundedTextFile(root_, 16).outcome, ReadOutcome::kBinary);  // a folder: the reference's quirk
}

TEST_F(GroundingFileTest, SelectionWalkAppliesEachCheckInOrder) {
  WriteFile(root_, "a.ts", "same\n");
  WriteFile(root_, "b.ts", "same\n");
  WriteFile(root_, "c.ts", "token = 'abcdefgh1234'\n");
  WriteFile(root_, "d.ts", "0123456789ab\n");
  WriteFile(root_, "e.ts", "\xEF\xBB\xBF" "bom text\n");
  std::vector<RankedCandidate> ranked = {
      Candidate("a.ts", 5), Candidate("b.ts", 4), Candidate("c.ts", 3),
      Candidate("d.ts", 2), Candidate("e.ts", 1), Candidate("missing.ts", 1)};
  ExclusionCounts exclusions;
  Selection selection = SelectCandidates(root_, ranked, {10, 100, 17, 0, "run"}, {}, exclusions);
  ASSERT_EQ(selection.selected.size(), 2u);
  EXPECT_EQ(selection.selected[0].path, "a.ts");
  EXPECT_EQ(selection.selected[1].path, "e.ts");
  EXPECT_EQ(selection.selected[1].content, "bom text\n");  // the BOM is not part of the text
  EXPECT_EQ(selection.selected[1].size_bytes, 12);         // but counts in the bytes
  EXPECT_EQ(selection.selected_bytes, 17);
  EXPECT_EQ(exclusions, (ExclusionCounts{{"duplicate_content", 1},
                                         {"secret_content", 1},
                                         {"total_bytes_budget", 1},
                                         {"unreadable_file", 1}}));
  // Hashes of every file read past the secret check, selected or not.
  EXPECT_EQ(selection.read_hashes.size(), 4u);
  EXPECT_FALSE(selection.read_hashes.contains("c.ts"));
}

TEST_F(GroundingFileTest, ExcludedRootsAreCheckedOnTheRealPath) {
  WriteFile(root_, "state/ledger.txt", "state");
  fs::create_symlink(fs::path(root_) / "state/ledger.txt", fs::path(root_) / "alias.txt");
  std::vector<RankedCandidate> ranked = {Candidate("alias.txt", 1)};
  ExclusionCounts exclusions;
  Selection selection = SelectCandidates(root_, ranked, {10, 100, 100, 0, "run"}, {root_ + "/state"}, exclusions);
  EXPECT_TRUE(selection.selected.empty());
  EXPECT_EQ(exclusions, (ExclusionCounts{{"excluded_directory", 1}}));
}

}  // namespace
}  // namespace telic::grounding
