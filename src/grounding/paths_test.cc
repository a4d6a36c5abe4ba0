// Path rules of grounding (PROTOCOL §16.2-16.5).
#include "grounding/paths.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/canonical_json.h"

namespace telic::grounding {
namespace {

TEST(GroundingPathsTest, NormalizesOnlySafeRelativePaths) {
  EXPECT_EQ(NormalizeRepositoryPath("./src//index.ts"), "src/index.ts");
  EXPECT_EQ(NormalizeRepositoryPath("src/a.ts"), "src/a.ts");
  EXPECT_EQ(NormalizeRepositoryPath("../outside.ts"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("/absolute.ts"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("bad\\name.ts"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath(std::string("nul\0byte", 8)), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath(""), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("."), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("./"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("a/./b"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("a/../b"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath("nested/"), std::nullopt);  // how git lists an untracked nested repository
  EXPECT_EQ(NormalizeRepositoryPath("bad\xff.ts"), std::nullopt);
  EXPECT_EQ(NormalizeRepositoryPath(std::string(1024, 'a')), std::string(1024, 'a'));
  EXPECT_EQ(NormalizeRepositoryPath(std::string(1025, 'a')), std::nullopt);
  // The limit counts UTF-16 units: 512 × U+1F600 is 1024 units (2048 bytes).
  std::string emoji;
  for (int i = 0; i < 512; ++i) emoji += "\xF0\x9F\x98\x80";
  EXPECT_TRUE(NormalizeRepositoryPath(emoji));
  EXPECT_FALSE(NormalizeRepositoryPath(emoji + "a"));
}

TEST(GroundingPathsTest, ExcludedDirectoriesAreCaseInsensitiveSegments) {
  EXPECT_TRUE(IsExcludedDirectoryPath("node_modules/x/index.js"));
  EXPECT_TRUE(IsExcludedDirectoryPath("packages/a/Build/out.js"));
  EXPECT_TRUE(IsExcludedDirectoryPath("dist"));
  EXPECT_TRUE(IsExcludedDirectoryPath(".telic/ledger"));
  EXPECT_FALSE(IsExcludedDirectoryPath("src/builder/x.ts"));
  EXPECT_FALSE(IsExcludedDirectoryPath("distribution/x.ts"));
}

TEST(GroundingPathsTest, InstructionPaths) {
  EXPECT_TRUE(IsInstructionPath("AGENTS.md"));
  EXPECT_TRUE(IsInstructionPath("packages/web/CLAUDE.md"));
  EXPECT_TRUE(IsInstructionPath(".github/copilot-instructions.md"));
  EXPECT_TRUE(IsInstructionPath(".roo/rules/testing.md"));
  EXPECT_TRUE(IsInstructionPath(".Cursor/Rules/style.mdc"));
  EXPECT_TRUE(IsInstructionPath(".github/instructions/a.md"));
  EXPECT_FALSE(IsInstructionPath("agents.md"));  // basenames are exact
  EXPECT_FALSE(IsInstructionPath("src/index.ts"));
  EXPECT_FALSE(IsInstructionPath("docs/.roo/rules/x.md"));  // rule folders only at the root
  EXPECT_EQ(InstructionScope("AGENTS.md"), ".");
  EXPECT_EQ(InstructionScope("packages/web/CLAUDE.md"), "packages/web");
}

TEST(GroundingPathsTest, RepoRefsEncodeEachSegmentLikeEncodeUriComponent) {
  EXPECT_EQ(MakeRepoRef("src/file name.ts"), "repo://src/file%20name.ts");
  EXPECT_EQ(MakeRepoRef("a+b/c#d?.ts"), "repo://a%2Bb/c%23d%3F.ts");
  EXPECT_EQ(MakeRepoRef("keep/-_.!~*'()"), "repo://keep/-_.!~*'()");
  EXPECT_EQ(MakeRepoRef("caf\xC3\xA9/x:y@z.ts"), "repo://caf%C3%A9/x%3Ay%40z.ts");
  EXPECT_EQ(MakeRepoRef("100%.md"), "repo://100%25.md");
}

TEST(GroundingPathsTest, ContainmentIsSegmentWise) {
  EXPECT_TRUE(IsPathContained("/tmp/repo", "/tmp/repo/src/index.ts"));
  EXPECT_TRUE(IsPathContained("/tmp/repo", "/tmp/repo"));
  EXPECT_FALSE(IsPathContained("/tmp/repo", "/tmp/repository/secret.txt"));
  EXPECT_FALSE(IsPathContained("/tmp/repo", "/tmp"));
  EXPECT_TRUE(IsPathContained("/", "/anything"));
  EXPECT_EQ(RelativeTo("/tmp/repo", "/tmp/repo/src/a.ts"), "src/a.ts");
  EXPECT_EQ(RelativeTo("/tmp/repo", "/tmp/repo"), "");
  EXPECT_EQ(LexicalAbsolute("/a/b/../c/./d/"), "/a/c/d");
  EXPECT_EQ(LexicalAbsolute("/../.."), "/");
}

TEST(GroundingPathsTest, BinaryPrefixes) {
  EXPECT_FALSE(IsProbablyBinary(""));
  EXPECT_FALSE(IsProbablyBinary("ABC"));
  EXPECT_TRUE(IsProbablyBinary(std::string("A\0C", 3)));
  EXPECT_TRUE(IsProbablyBinary("\x01\x02\x03" "A"));
  // Exactly 10% control bytes is still text; one more is binary.
  EXPECT_FALSE(IsProbablyBinary("\x01" + std::string(9, 'a')));
  EXPECT_TRUE(IsProbablyBinary("\x01\x1f" + std::string(17, 'a')));
  // Tab, LF, VT, FF, CR are text.
  EXPECT_FALSE(IsProbablyBinary("\t\n\v\f\r"));
}

TEST(GroundingPathsTest, StrictUtf8) {
  EXPECT_TRUE(IsValidUtf8("plain ascii text that is long enough for the fast path"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3\x28"));          // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xC0\x80"));          // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("abc\xE2\x82"));       // truncated
  EXPECT_FALSE(IsValidUtf8("\x80"));              // stray continuation
}

TEST(GroundingPathsTest, Utf16OrderMatchesTheCanonicalJsonComparator) {
  // U+1F600 (a surrogate pair in UTF-16) sorts before U+FF5E, unlike its bytes.
  EXPECT_TRUE(Utf16Before("a\xF0\x9F\x98\x80", "a\xEF\xBD\x9E"));
  EXPECT_FALSE(Utf16Before("a\xEF\xBD\x9E", "a\xF0\x9F\x98\x80"));
  EXPECT_TRUE(Utf16Before("a", "a/b"));
  EXPECT_TRUE(Utf16Before("a.txt", "a/b"));
  EXPECT_FALSE(Utf16Before("same", "same"));
  const std::vector<std::string> atoms = {"a", "Z", "/", ".", "\xC3\xA9", "\xE2\x82\xAC", "\xEE\x80\x80",
                                          "\xEF\xBF\xBD", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\xD7\xBF"};
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7FFF; };
  for (int i = 0; i < 20000; ++i) {
    // Valid UTF-8 only: b shares a prefix of whole atoms with a (long enough
    // to cross the eight-byte steps of the comparison).
    std::vector<std::string> parts;
    for (int k = static_cast<int>(next() % 12); k >= 0; --k) parts.push_back(atoms[next() % atoms.size()]);
    std::string a, b;
    const size_t shared = next() % (parts.size() + 1);
    for (size_t k = 0; k < parts.size(); ++k) {
      a += parts[k];
      if (k < shared) b += parts[k];
    }
    for (int k = static_cast<int>(next() % 3); k >= 0; --k) b += atoms[next() % atoms.size()];
    ASSERT_EQ(Utf16Before(a, b), Utf16Less(a, b)) << a << " | " << b;
    ASSERT_EQ(Utf16Before(b, a), Utf16Less(b, a)) << a << " | " << b;
  }
}

TEST(GroundingPathsTest, LowerCasesLikeJavaScriptWhereAsciiCanResult) {
  EXPECT_EQ(JsLowerCase("AbC/Node_Modules"), "abc/node_modules");
  EXPECT_EQ(JsLowerCase("\xE2\x84\xAA"), "k");          // KELVIN SIGN
  EXPECT_EQ(JsLowerCase("\xC4\xB0"), "i\xCC\x87");      // İ
  EXPECT_EQ(JsLowerCase("\xC3\x84"), "\xC3\x84");       // other letters unchanged
}

}  // namespace
}  // namespace telic::grounding
