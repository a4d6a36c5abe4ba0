#include "base/redact.h"

#include <gtest/gtest.h>

namespace telic {
namespace {

// covers TEL-186 (secrets never reach the trace): every credential family is replaced.
TEST(RedactTest, ReplacesEveryCredentialFamily) {
  struct Case {
    std::string input;
    std::string must_not_contain;
    std::string category;
  };
  std::vector<Case> cases = {
      {"key AKIAABCDEFGHIJKLMNOP here", "AKIAABCDEFGHIJKLMNOP", "credential"},
      {"token ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123", "credential"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "MIIEabc", "secret"},
      {"Authorization: Bearer abcdef123456789", "abcdef123456789", "credential"},
      {"curl -H 'authorization: basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA==", "credential"},
      {"clone https://alice:s3cretpass@example.com/repo.git", "s3cretpass", "credential"},
      {"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop", "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
       "credential"},
      {"password=hunter2hunter2", "hunter2hunter2", "credential"},
  };
  for (const Case& c : cases) {
    Redacted r = RedactSecrets(c.input);
    EXPECT_EQ(r.text.find(c.must_not_contain), std::string::npos) << c.input << " -> " << r.text;
    ASSERT_FALSE(r.categories.empty()) << c.input;
    EXPECT_EQ(r.categories.front(), c.category) << c.input;
    EXPECT_NE(r.text.find("[REDACTED:"), std::string::npos);
  }
}

TEST(RedactTest, LeavesOrdinaryTextAlone) {
  for (std::string text : {"Run cancelled by user or host.", "Allowed repository.read for src/main.cc.",
                           "https://example.com/path", "token budget 12", "Basic idea"}) {
    Redacted r = RedactSecrets(text);
    EXPECT_EQ(r.text, text);
    EXPECT_TRUE(r.categories.empty()) << text;
  }
}

TEST(RedactTest, IsIdempotent) {
  std::string once = RedactedText("password: hunter2hunter2 and ghp_abcdefghijklmnopqrstuvwxyz0123");
  EXPECT_EQ(RedactedText(once), once);
}

}  // namespace
}  // namespace telic
