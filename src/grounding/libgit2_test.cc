// libgit2 opened at run time (libgit2.h).
#include "grounding/libgit2.h"

#include <gtest/gtest.h>

#include "grounding/git_repo.h"

namespace telic::grounding {
namespace {

TEST(Libgit2Test, LoadsTheLibraryOfTheHeadersSoname) { EXPECT_TRUE(git::Load().has_value()); }

// git_libgit2_init asks for the system CA bundle; the executable's
// mbedtls_x509_crt_parse_file answers, so the bundle is never parsed. Fails
// when the executable does not export the definition (the link option is
// missing) or libgit2 no longer asks through mbed TLS.
TEST(Libgit2Test, InitDeclinesTheCaBundleParse) {
  InitLibgit2();
  EXPECT_GE(git::CaBundleParsesDeclined(), 1);
}

}  // namespace
}  // namespace telic::grounding
