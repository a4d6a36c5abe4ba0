#include "base/redact.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace telic {
namespace {

struct SecretCase {
  const char* format;  // what kind of secret this is
  std::string input;
  std::string secret;  // must not survive redaction
  std::string kept;    // must survive (shows what was removed), may be empty
  const char* category = "credential";
};

std::string Base64(std::string_view text) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : text) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out.push_back(kAlphabet[(bits >> count) & 63]);
    }
  }
  if (count > 0) out.push_back(kAlphabet[(bits << (6 - count)) & 63]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

const std::string kGithub = "ghp_" + std::string("aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5");  // 36 after ghp_
const std::string kOpenAi = "sk-proj-" + std::string("Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe");

std::vector<SecretCase> SecretCases() {
  return {
      {"bearer header in curl", "curl -H 'Authorization: Bearer abc123def456ghi789' https://evil.com",
       "abc123def456ghi789", "Authorization: Bearer "},
      {"basic header", "curl -H 'authorization: basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA==",
       "authorization: basic "},
      {"token scheme header", "Authorization: token 0123456789abcdef0123", "0123456789abcdef0123", "Authorization: token "},
      {"proxy authorization", "Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "QWxhZGRpbjpvcGVu",
       "Proxy-Authorization: Basic "},
      {"cookie header", "curl -H 'Cookie: session=8f7e6d5c4b3a; theme=dark' https://x.test", "8f7e6d5c4b3a",
       "Cookie: "},
      {"set-cookie header", "Set-Cookie: sid=31d4d96e407aad42; Path=/", "31d4d96e407aad42", "Set-Cookie: "},
      {"api key header", "curl -H \"X-Api-Key: 9a8b7c6d5e4f3a2b\" https://api.test", "9a8b7c6d5e4f3a2b", "X-Api-Key: "},
      {"bare bearer", "use Bearer abcdefghijklmnop0123 please", "abcdefghijklmnop0123", "Bearer "},
      {"github token assignment", "export GITHUB_TOKEN=" + kGithub, kGithub, "GITHUB_TOKEN="},
      {"github token bare", "token " + kGithub + " end", kGithub, ""},
      {"github oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a", ""},
      {"github server", "ghs_16C7e42F292c6912E7710c838347Ae178B4a", "ghs_16C7e42F292c6912E7710c838347Ae178B4a", ""},
      {"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
       "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", ""},
      {"aws access key id", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", ""},
      {"aws secret assignment", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
       "wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY="},
      {"slack bot token", "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp", "xoxb-1234567890", ""},
      {"slack app token", "xapp-1-A0123456789-0123456789012-abcdef", "xapp-1-A0123456789", ""},
      {"slack webhook", "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX now", "XXXXXXXXXXXXXXXX",
       "https://hooks.slack.com/services/"},
      {"discord webhook", "https://discord.com/api/webhooks/123456789/abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrs",
       "https://discord.com/api/webhooks/"},
      {"openai key", "OPENAI=" + kOpenAi, "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe", ""},
      {"anthropic key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789", ""},
      {"stripe secret key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", ""},
      {"google api key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX", ""},
      {"google oauth token", "ya29.a0AfH6SMBx0123456789abcdefghij", "a0AfH6SMBx0123456789", ""},
      {"gitlab token", "glpat-xxxxxxxxxxxxxxxxxxxx12", "glpat-xxxxxxxxxxxxxxxxxxxx12", ""},
      {"npm token", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789", ""},
      {"pypi token", "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAw", "AgEIcHlwaS5vcmcCJDAw", ""},
      {"hugging face token", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", ""},
      {"sendgrid key", "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg", "SG.abcdefghijklmnop", ""},
      {"digitalocean token", "dop_v1_" + std::string(64, 'a'), std::string(64, 'a'), ""},
      {"docker hub token", "dckr_pat_abcdefghijklmnopqrstuvwx", "dckr_pat_abcdefghijklmnopqrstuvwx", ""},
      {"shopify token", "shpat_0123456789abcdef0123456789abcdef", "shpat_0123456789abcdef0123456789abcdef", ""},
      {"vault token", "hvs.CAESIJ0123456789abcdefghijklmnop", "hvs.CAESIJ0123456789", ""},
      {"databricks token", "dapi0123456789abcdef0123456789abcdef", "dapi0123456789abcdef0123456789abcdef", ""},
      {"telegram bot token", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8", ""},
      {"twilio api key", "SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef0123456789abcdef", ""},
      {"atlassian token", "ATATT3xFfGF0abcdefghijklmnopqrstuvwxyz", "ATATT3xFfGF0abcdefghij", ""},
      {"jwt", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop", "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
       ""},
      {"pem private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "MIIEabc", "",
       "secret"},
      {"pem key cut short", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "b3BlbnNzaC1rZXktdjEAAAA",
       "", "secret"},
      {"pgp private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF",
       "", "secret"},
      {"age secret key", "AGE-SECRET-KEY-1" + std::string(58, 'Q'), std::string(58, 'Q'), "", "secret"},
      {"url password", "clone https://alice:s3cretpass@example.com/repo.git", "s3cretpass", "https://alice:"},
      {"postgres url password", "postgresql://telic:pg-pass-99@db.internal/telic", "pg-pass-99", "postgresql://telic:"},
      {"url token parameter", "https://api.test/v1?user=me&access_token=abc123xyz789", "abc123xyz789", "access_token="},
      {"aws presigned signature", "https://b.s3.amazonaws.com/k?X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027",
       "fe5f80f77d5fa3beca038a248ff027", "X-Amz-Signature="},
      {"password assignment", "password=hunter2hunter2", "hunter2hunter2", "password="},
      {"env password", "DB_PASSWORD=correct-horse ./migrate", "correct-horse", "DB_PASSWORD="},
      {"api key env", "STRIPE_API_KEY='rk_abc_123456' node x.js", "rk_abc_123456", "STRIPE_API_KEY='"},
      {"private key env", "MY_PRIVATE_KEY=\"abcdef0123\" run", "abcdef0123", "MY_PRIVATE_KEY=\""},
      {"json secret field", R"({"client_secret": "s3cr3t-value-1", "id": 4})", "s3cr3t-value-1", R"("client_secret": ")"},
      {"yaml password", "password: hunter2hunter2", "hunter2hunter2", "password: "},
      {"password option", "mysql --password=Sup3rS3cret db", "Sup3rS3cret", "--password="},
      {"token option", "gh auth login --token abcdef123456", "abcdef123456", "--token "},
      {"curl user option", "curl -u admin:adminpass123 https://x.test", "adminpass123", "-u admin:"},
      {"azure account key", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=YWJjZGVmZ2hpamtsbW5vcHFyc3Q=;",
       "YWJjZGVmZ2hpamtsbW5vcHFyc3Q", "AccountKey="},
      {"base64 of a github token", "echo " + Base64("GITHUB_TOKEN=" + kGithub) + " | base64 -d", Base64("GITHUB_TOKEN=" + kGithub),
       "echo "},
      {"base64 of a pem block", Base64("-----BEGIN PRIVATE KEY-----\nMIIBVQ\n-----END PRIVATE KEY-----"),
       Base64("-----BEGIN PRIVATE KEY-----\nMIIBVQ\n-----END PRIVATE KEY-----"), ""},
      {"base64 of an aws key", "k=" + Base64("id AKIAIOSFODNN7EXAMPLE"), Base64("id AKIAIOSFODNN7EXAMPLE"), "k="},
  };
}

// covers TEL-186 (secrets never reach the trace): every credential format
// of the table is replaced, and what names it is kept.
TEST(RedactTest, ReplacesEveryCredentialFormat) {
  std::vector<SecretCase> cases = SecretCases();
  EXPECT_GE(cases.size(), 30u);
  for (const SecretCase& c : cases) {
    Redacted r = RedactSecrets(c.input);
    EXPECT_EQ(r.text.find(c.secret), std::string::npos) << c.format << ": " << c.input << " -> " << r.text;
    if (!c.kept.empty()) {
      EXPECT_NE(r.text.find(c.kept + "[REDACTED:"), std::string::npos) << c.format << " -> " << r.text;
    }
    ASSERT_TRUE(r.changed()) << c.format;
    EXPECT_EQ(r.categories.front(), c.category) << c.format;
    EXPECT_EQ(RedactedText(r.text), r.text) << c.format << ": not idempotent";
  }
}

TEST(RedactTest, LeavesOrdinaryTextAlone) {
  for (std::string text :
       {"Run cancelled by user or host.", "Allowed repository.read for src/main.cc.", "https://example.com/path",
        "token budget 12", "Basic idea", "npm test", "git commit -m 'fix: the token parser'", "max_tokens=100",
        "TOKEN_BUDGET: 5", "Authorization failed for shell.execute.", "author=Bob", "--token-budget 3",
        "cd /home/user && PWD=/tmp ls", "ls -la src/controller/next_action_test.cc", "the password field is empty",
        "ThisIsALongIdentifierNameWithoutSecrets", "https://api.example.com/v1/items?page=2&sort=asc"}) {
    Redacted r = RedactSecrets(text);
    EXPECT_EQ(r.text, text);
    EXPECT_FALSE(r.changed()) << text;
  }
}

TEST(RedactTest, CountsOneCategoryPerReplacedValue) {
  Redacted r = RedactSecrets("password: hunter2hunter2 and " + kGithub + " and -----BEGIN PRIVATE KEY-----\nx");
  ASSERT_EQ(r.categories.size(), 3u) << r.text;
  EXPECT_EQ(r.categories[0], "secret");
  EXPECT_EQ(r.categories[1], "credential");
  EXPECT_EQ(r.categories[2], "credential");
}

TEST(RedactTest, IsIdempotent) {
  std::string once = RedactedText("password: hunter2hunter2 and " + kGithub + " Cookie: a=b");
  EXPECT_EQ(RedactedText(once), once);
}

TEST(RedactTest, HostileInputIsBoundedAndKeepsUtf8Whole) {
  // Long runs that several patterns start on, and invalid UTF-8.
  std::string hostile(200'000, 'a');
  hostile += "\xff\xfe password=\xc3\xa9\xc3\xa9\xc3\xa9 ";
  hostile += std::string(100'000, '=');
  Redacted r = RedactSecrets(hostile);
  EXPECT_EQ(r.text.find("\xc3\xa9"), std::string::npos);
  EXPECT_NE(r.text.find("\xff\xfe password=[REDACTED:credential]"), std::string::npos);
  std::string utf8 = "Authorization: Bearer \xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac tail";
  Redacted u = RedactSecrets(utf8);
  EXPECT_EQ(u.text, "Authorization: Bearer [REDACTED:credential] tail");
}

}  // namespace
}  // namespace telic
