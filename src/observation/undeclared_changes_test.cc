#include "observation/undeclared_changes.h"

#include <gtest/gtest.h>

namespace telic::observation {
namespace {

TEST(UndeclaredChangesTest, ListsChangedPathsNoFileChangeCovers) {
  std::map<std::string, PathDigests> candidates = {
      {"declared.ts", {"sha256:a", "sha256:b"}},      // covered by its FileChange
      {"redeclared.ts", {"sha256:a", "sha256:c"}},    // changed again after its FileChange
      {"sneaky.ts", {"sha256:a", "sha256:x"}},        // changed, never declared
      {"dist/out.js", {"absent", "sha256:y"}},        // outside the write scope
      {"untouched.ts", {"sha256:a", "sha256:a"}},     // dirty at grounding, unchanged since
      {"secret/keys.txt", {"sha256:k", "absent"}},    // deleted under a path the contract excludes
  };
  std::map<std::string, std::string> declared = {{"declared.ts", "sha256:b"}, {"redeclared.ts", "sha256:b"}};
  auto classify = [](std::string_view path) {
    if (path.starts_with("dist/")) return UndeclaredKind::kOutsideWriteScope;
    if (path.starts_with("secret/")) return UndeclaredKind::kExcludedByContract;
    return UndeclaredKind::kUndeclared;
  };
  auto found = FindUndeclaredChanges(candidates, declared, classify);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].path, "dist/out.js");
  EXPECT_EQ(found[0].kind, UndeclaredKind::kOutsideWriteScope);
  EXPECT_EQ(found[1].path, "redeclared.ts");
  EXPECT_EQ(found[1].kind, UndeclaredKind::kChangedAfterDeclared);
  EXPECT_EQ(found[2].path, "secret/keys.txt");
  EXPECT_EQ(found[2].kind, UndeclaredKind::kExcludedByContract);
  EXPECT_EQ(found[3].path, "sneaky.ts");
  EXPECT_EQ(found[3].ToJson(),
            (Json{{"path", "sneaky.ts"}, {"groundedHash", "sha256:a"}, {"currentHash", "sha256:x"}, {"kind", "undeclared"}}));
  EXPECT_EQ(DescribeUndeclared(found, 2), "dist/out.js (outside_write_scope), redeclared.ts (changed_after_declared) and 2 more");
}

TEST(UndeclaredChangesTest, NothingChangedMeansNothingListed) {
  auto found = FindUndeclaredChanges({{"a", {"sha256:a", "sha256:a"}}}, {},
                                     [](std::string_view) { return UndeclaredKind::kUndeclared; });
  EXPECT_TRUE(found.empty());
}

}  // namespace
}  // namespace telic::observation
