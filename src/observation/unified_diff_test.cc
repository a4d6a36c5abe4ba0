#include "observation/unified_diff.h"

#include <gtest/gtest.h>

#include "base/sha256.h"

namespace telic::observation {
namespace {

TEST(UnifiedDiffTest, ModifiedLineWithContext) {
  DiffText diff = UnifiedDiff("src/a.ts", std::string("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"),
                              std::string("one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\n"));
  EXPECT_EQ(diff.text,
            "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -2,7 +2,7 @@\n two\n three\n four\n-five\n+FIVE\n six\n seven\n eight\n");
  EXPECT_FALSE(diff.truncated);
  EXPECT_FALSE(diff.binary);
}

TEST(UnifiedDiffTest, CreatedAndDeletedFilesUseDevNull) {
  EXPECT_EQ(UnifiedDiff("n.txt", std::nullopt, std::string("a\nb\n")).text,
            "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(UnifiedDiff("n.txt", std::string("a\n"), std::nullopt).text, "--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
}

TEST(UnifiedDiffTest, MissingFinalNewlineIsMarked) {
  std::string text = UnifiedDiff("x", std::string("a"), std::string("b")).text;
  EXPECT_NE(text.find("-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"), std::string::npos) << text;
}

TEST(UnifiedDiffTest, DistantChangesMakeTwoHunks) {
  std::string before, after;
  for (int i = 0; i < 30; ++i) {
    before += "line " + std::to_string(i) + "\n";
    after += (i == 2 || i == 25 ? "changed " : "line ") + std::to_string(i) + "\n";
  }
  std::string text = UnifiedDiff("x", before, after).text;
  EXPECT_NE(text.find("@@ -1,6 +1,6 @@"), std::string::npos) << text;
  EXPECT_NE(text.find("@@ -23,7 +23,7 @@"), std::string::npos) << text;
}

TEST(UnifiedDiffTest, SecretsAreRedactedBeforeTheyAreStored) {
  DiffText diff = UnifiedDiff("config.env", std::string("A=1\n"), std::string("A=1\nGITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\n"));
  EXPECT_EQ(diff.text.find("ghp_0123456789"), std::string::npos) << diff.text;
  EXPECT_NE(diff.text.find("[REDACTED"), std::string::npos);
  ASSERT_FALSE(diff.redactions.empty());
}

TEST(UnifiedDiffTest, BinaryContentIsNamedNotShown) {
  std::string bytes("a\0b", 3);
  DiffText diff = UnifiedDiff("img.png", std::nullopt, bytes);
  EXPECT_TRUE(diff.binary);
  EXPECT_NE(diff.text.find("Binary files differ: absent -> " + Sha256Ref(bytes)), std::string::npos);
}

TEST(UnifiedDiffTest, LargeDiffsAreCutAtTheStatedCap) {
  std::string after;
  while (after.size() < 3 * kMaxDiffBytes) after += "a new line of text that is added\n";
  DiffText diff = UnifiedDiff("big.txt", std::nullopt, after);
  EXPECT_TRUE(diff.truncated);
  EXPECT_GT(diff.full_bytes, kMaxDiffBytes);
  EXPECT_LE(diff.text.size(), kMaxDiffBytes + 100);
  EXPECT_NE(diff.text.find("[telic: diff truncated at"), std::string::npos);
}

TEST(UnifiedDiffTest, HugeMiddlesAreShownRemovedThenAdded) {
  std::string before, after;
  for (int i = 0; i < 3000; ++i) {
    before += "b" + std::to_string(i) + "\n";
    after += "a" + std::to_string(i) + "\n";
  }
  DiffText diff = UnifiedDiff("x", before, after);  // 9,000,000 cells > kMaxAlignedCells: not aligned, still exact
  EXPECT_NE(diff.text.find("@@ -1,3000 +1,3000 @@\n-b0\n"), std::string::npos);
}

}  // namespace
}  // namespace telic::observation
