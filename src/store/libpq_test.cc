// libpq is opened at run time (store/libpq.h): a missing library is a clear
// error at store opening, not a failure to start telic.
#include "store/libpq.h"

#include <gtest/gtest.h>

namespace telic::store::pq {
namespace {

TEST(LibpqTest, TheInstalledLibraryHasEveryFunctionTelicCalls) {
  auto status = CheckLibrary(kLibraryName);
  EXPECT_TRUE(status.has_value()) << status.error().message();
  EXPECT_TRUE(Load().has_value());
}

TEST(LibpqTest, AMissingLibraryNamesThePackageToInstall) {
  auto status = CheckLibrary("libpq-telic-test-missing.so.5");
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.error().message().find("libpq5"), std::string::npos) << status.error().message();
  EXPECT_NE(status.error().message().find("libpq-telic-test-missing.so.5"), std::string::npos);
}

TEST(LibpqTest, ALibraryWithoutTheFunctionsIsRefusedByName) {
  // libc is a shared library, but not libpq.
  auto status = CheckLibrary("libc.so.6");
  ASSERT_FALSE(status.has_value());
  EXPECT_NE(status.error().message().find("has no function PQ"), std::string::npos) << status.error().message();
}

}  // namespace
}  // namespace telic::store::pq
