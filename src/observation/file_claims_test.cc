// CheckFileClaim: every way a claimed FileChange can contradict the work tree.
#include "observation/file_claims.h"

#include <gtest/gtest.h>

#include "base/sha256.h"

namespace telic::observation {
namespace {

ClaimedChange Claim(std::string type, std::optional<std::string> before, std::optional<std::string> after) {
  return {"/filesChanged/0", "src/app.ts", std::move(type), std::move(before), std::move(after)};
}

FileState File(std::string_view bytes) { return {true, Sha256Ref(bytes), std::nullopt}; }

void ExpectMismatch(const Status& status, std::string_view pointer, std::string_view text) {
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_EQ(status.error().issues().size(), 1u);
  EXPECT_EQ(status.error().issues()[0].pointer, pointer);
  EXPECT_EQ(status.error().issues()[0].code, kObservationMismatch);
  EXPECT_NE(status.error().message().find(text), std::string::npos) << status.error().message();
  EXPECT_NE(status.error().message().find("src/app.ts"), std::string::npos);
}

TEST(FileClaimsTest, HonestClaimsPass) {
  std::string old_digest = Sha256Ref("old");
  EXPECT_TRUE(CheckFileClaim(Claim("modified", old_digest, Sha256Ref("new")), old_digest, File("new")));
  EXPECT_TRUE(CheckFileClaim(Claim("created", std::nullopt, Sha256Ref("new")), std::string(kAbsent), File("new")));
  EXPECT_TRUE(CheckFileClaim(Claim("deleted", old_digest, std::nullopt), old_digest, FileState{}));
}

TEST(FileClaimsTest, AnInventedAfterHashIsRefusedWithBothHashes) {
  std::string invented = "sha256:" + std::string(64, '1');
  Status status = CheckFileClaim(Claim("modified", Sha256Ref("old"), invented), Sha256Ref("old"), File("new"));
  ExpectMismatch(status, "/filesChanged/0/afterHash", invented);
  EXPECT_NE(status.error().message().find(Sha256Ref("new")), std::string::npos);
}

TEST(FileClaimsTest, AnUnchangedFileClaimedModifiedIsRefused) {
  std::string old_digest = Sha256Ref("old");
  Status status = CheckFileClaim(Claim("modified", old_digest, Sha256Ref("new")), old_digest, File("old"));
  ExpectMismatch(status, "/filesChanged/0/afterHash", "the file is unchanged");
}

TEST(FileClaimsTest, AWrongBeforeHashIsRefused) {
  Status status = CheckFileClaim(Claim("modified", Sha256Ref("guess"), Sha256Ref("new")), Sha256Ref("old"), File("new"));
  ExpectMismatch(status, "/filesChanged/0/beforeHash", Sha256Ref("old"));
}

TEST(FileClaimsTest, CreatedMustNotHaveExistedAndDeletedMustBeGone) {
  ExpectMismatch(CheckFileClaim(Claim("created", std::nullopt, Sha256Ref("new")), Sha256Ref("old"), File("new")),
                 "/filesChanged/0/changeType", "existed before");
  ExpectMismatch(CheckFileClaim(Claim("deleted", Sha256Ref("old"), std::nullopt), Sha256Ref("old"), File("old")),
                 "/filesChanged/0/changeType", "still in the work tree");
  ExpectMismatch(CheckFileClaim(Claim("created", std::nullopt, Sha256Ref("new")), std::string(kAbsent), FileState{}),
                 "/filesChanged/0/afterHash", "no file");
}

TEST(FileClaimsTest, BaselineRoundTripsAndRejectsCorruption) {
  Baseline baseline{"0123456789012345678901234567890123456789", {{"a", Sha256Ref("a")}, {"b", "absent"}}, false};
  auto back = Baseline::FromJson(baseline.ToJson());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->head_commit, baseline.head_commit);
  EXPECT_EQ(back->dirty, baseline.dirty);
  EXPECT_FALSE(back->complete);
  EXPECT_EQ(Baseline::FromJson(Json{{"dirty", 1}}).error().code(), ErrorCode::kDataLoss);
  EXPECT_EQ(Baseline::FromJson(Json{{"dirty", {{"a", 2}}}}).error().code(), ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace telic::observation
