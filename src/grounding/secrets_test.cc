// Secret rules of grounding (PROTOCOL §16.2 secret-like paths, PROTOCOL §16.4
// content-secret rule).
#include "grounding/secrets.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace telic::grounding {
namespace {

TEST(GroundingSecretsTest, ReferenceContentCases) {
  EXPECT_TRUE(ContainsLikelySecret("const apiKey = 'sk_live_1234567890';"));
  EXPECT_TRUE(ContainsLikelySecret("aws=AKIAIOSFODNN7EXAMPLE"));
  EXPECT_TRUE(ContainsLikelySecret("-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----"));
  EXPECT_FALSE(ContainsLikelySecret("Tokens are bounded and secrets must be redacted."));
  EXPECT_FALSE(ContainsLikelySecret("token = '<redacted>'"));
  EXPECT_TRUE(ContainsLikelySecret("export const token = 'live_token_123456789';"));
}

TEST(GroundingSecretsTest, PrivateKeyHeaders) {
  EXPECT_TRUE(ContainsLikelySecret("-----BEGIN RSA PRIVATE KEY-----"));
  EXPECT_TRUE(ContainsLikelySecret("x-----BEGIN OPENSSH PRIVATE KEY-----y"));
  EXPECT_TRUE(ContainsLikelySecret("-----BEGIN EC 2 PRIVATE KEY-----"));
  // The optional group is one or more of [A-Z0-9 ] and then a space.
  EXPECT_TRUE(ContainsLikelySecret("-----BEGIN   PRIVATE KEY-----"));
  EXPECT_FALSE(ContainsLikelySecret("-----BEGIN  PRIVATE KEY-----"));
  EXPECT_FALSE(ContainsLikelySecret("-----BEGIN PUBLIC KEY-----"));
  EXPECT_FALSE(ContainsLikelySecret("-----BEGIN rsa PRIVATE KEY-----"));  // case-sensitive
  EXPECT_FALSE(ContainsLikelySecret("-----BEGIN RSAPRIVATE KEY-----"));
}

TEST(GroundingSecretsTest, AwsAccessKeysAreWholeWords) {
  EXPECT_TRUE(ContainsLikelySecret("AKIAIOSFODNN7EXAMPL3"));
  EXPECT_TRUE(ContainsLikelySecret("key: AKIAIOSFODNN7EXAMPLE."));
  EXPECT_FALSE(ContainsLikelySecret("AKIAIOSFODNN7EXAMPL"));     // 15
  EXPECT_FALSE(ContainsLikelySecret("AKIAIOSFODNN7EXAMPLEX"));   // 17: no boundary
  EXPECT_FALSE(ContainsLikelySecret("AKIAIOSFODNN7EXAMPLE_"));
  EXPECT_FALSE(ContainsLikelySecret("xAKIAIOSFODNN7EXAMPLE"));
  EXPECT_FALSE(ContainsLikelySecret("AKIAiosfodnn7example"));
}

TEST(GroundingSecretsTest, GithubTokens) {
  const std::string twenty(20, 'a');
  EXPECT_TRUE(ContainsLikelySecret("ghp_" + twenty));
  EXPECT_TRUE(ContainsLikelySecret("token ghs_" + twenty + "Z9 more"));
  EXPECT_TRUE(ContainsLikelySecret("(gho_" + twenty + ")"));
  EXPECT_FALSE(ContainsLikelySecret("ghp_" + std::string(19, 'a')));
  EXPECT_FALSE(ContainsLikelySecret("ghp_" + twenty + "_"));
  EXPECT_FALSE(ContainsLikelySecret("xghp_" + twenty));
  EXPECT_FALSE(ContainsLikelySecret("ghx_" + twenty));
}

TEST(GroundingSecretsTest, JwtLikeTokens) {
  EXPECT_TRUE(ContainsLikelySecret(
      "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"));
  EXPECT_TRUE(ContainsLikelySecret("eyJaaaaaaaa.bbbbbbbb.cccccccc-"));  // the word ends before the '-'
  EXPECT_TRUE(ContainsLikelySecret("eyJaaaaaaaa.bbbbbbbb.cccccccc-d"));  // ... or at "-d"
  EXPECT_FALSE(ContainsLikelySecret("eyJaaaaaaa.bbbbbbbb.cccccccc"));   // 7 after eyJ
  EXPECT_FALSE(ContainsLikelySecret("eyJaaaaaaaa.bbbbbbbb.ccccccc"));
  EXPECT_FALSE(ContainsLikelySecret("xeyJaaaaaaaa.bbbbbbbb.cccccccc"));
  EXPECT_FALSE(ContainsLikelySecret("eyJaaaaaaaa.bbbbbbbb.-------------"));  // never ends on a word character
}

TEST(GroundingSecretsTest, CredentialAssignments) {
  EXPECT_TRUE(ContainsLikelySecret("password=hunter22!"));       // 8 value characters
  EXPECT_FALSE(ContainsLikelySecret("password=hunter2"));        // 7
  EXPECT_TRUE(ContainsLikelySecret("PASSWORD : \"abcdefgh\""));
  EXPECT_TRUE(ContainsLikelySecret("api-key=abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("API_KEY=abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("client-secret: abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("clientsecret=abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("authorization=abc.def/ghi"));
  EXPECT_TRUE(ContainsLikelySecret("TOKEN:=abcdefgh"));         // ':' then '=' is a value character
  EXPECT_FALSE(ContainsLikelySecret("TOKEN := abcdefgh"));      // ... but "=" then a space is one character
  EXPECT_TRUE(ContainsLikelySecret("my-token=abcdefgh"));       // '-' is a word boundary
  EXPECT_FALSE(ContainsLikelySecret("mytoken=abcdefgh"));
  EXPECT_FALSE(ContainsLikelySecret("my_token=abcdefgh"));
  EXPECT_FALSE(ContainsLikelySecret("tokens=abcdefgh"));
  EXPECT_FALSE(ContainsLikelySecret("authorization: Bearer abc"));  // "Bearer" is 6, then a space
  EXPECT_FALSE(ContainsLikelySecret("token = 'abc def ghi'"));
  EXPECT_FALSE(ContainsLikelySecret("token: ${TOKEN_FROM_ENV}"));
  EXPECT_FALSE(ContainsLikelySecret("token=<your token here>"));
  EXPECT_FALSE(ContainsLikelySecret("password = example"));
  EXPECT_FALSE(ContainsLikelySecret("password = 'PLACEHOLDER-value'"));
  EXPECT_FALSE(ContainsLikelySecret("secret: changeme"));
  EXPECT_TRUE(ContainsLikelySecret("password = examples123"));  // not the whole word
  EXPECT_TRUE(ContainsLikelySecret("password: Changeme1234"));
  EXPECT_TRUE(ContainsLikelySecret("secret\xC2\xA0=\xE3\x80\x80" "abcdefgh"));  // NBSP and U+3000 are \s
  EXPECT_FALSE(ContainsLikelySecret("token\n\n# = abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("token\n=\nabcdefgh"));
}

TEST(GroundingSecretsTest, UnicodeCaseFoldingOfTheReferenceRegex) {
  // Under /iu, U+017F (ſ) matches 's' and U+212A (K) matches 'k'.
  EXPECT_TRUE(ContainsLikelySecret("\xC5\xBF" "ecret=abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("api_\xE2\x84\xAA" "ey=abcdefgh"));
  EXPECT_TRUE(ContainsLikelySecret("token=abcdefg\xE2\x84\xAA"));
  // ... and are word characters, so they block a boundary.
  EXPECT_FALSE(ContainsLikelySecret("\xC5\xBFtoken=abcdefgh"));
  // Other non-ASCII letters are not word characters.
  EXPECT_TRUE(ContainsLikelySecret("\xC3\xA9token=abcdefgh"));
}

// The artifact scanner names the kind of each canary, never the secret.
TEST(GroundingSecretsTest, LikelySecretKindNamesEachCanary) {
  const std::pair<std::string, std::string_view> kCanaries[] = {
      {"key AKIAIOSFODNN7EXAMPLE in the log", "AWS access key id"},
      {"push with ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub token"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private key block"},
      {"curl -H 'Authorization: Bearer abcdef0123456789abcdef' https://x", "authorization header"},
      {"proxy-authorization:basic dXNlcjpwYXNzd29yZA==", "authorization header"},
      {"cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0", "JSON Web Token"},
      {"password = hunter2hunter2", "credential assignment"},
  };
  for (const auto& [text, kind] : kCanaries) {
    auto found = LikelySecretKind(text);
    ASSERT_TRUE(found.has_value()) << text;
    EXPECT_EQ(*found, kind) << text;
  }
}

TEST(GroundingSecretsTest, LikelySecretKindLeavesOrdinaryProse) {
  EXPECT_FALSE(LikelySecretKind("Fix the login form: the Authorization header is missing on retry."));
  EXPECT_FALSE(LikelySecretKind("authorization: bearer tokens expire"));  // "tokens" has 6 characters
  EXPECT_FALSE(LikelySecretKind("Authorization: Bearer ${TOKEN}"));
  EXPECT_FALSE(LikelySecretKind("authorizations: Bearer abcdef0123456789"));  // another word
  EXPECT_FALSE(LikelySecretKind("basic functionality of the token parser"));
  EXPECT_FALSE(LikelySecretKind(""));
  // Everything ContainsLikelySecret finds has a kind.
  EXPECT_TRUE(LikelySecretKind("const apiKey = 'sk_live_1234567890';"));
}

TEST(GroundingSecretsTest, SecretLikePaths) {
  for (const char* path : {".env", ".env.local", ".envrc", "apps/web/.env.production", ".git-credentials", ".netrc",
                           ".npmrc", ".pypirc", "credentials.json", "Credentials", "config/credentials/aws.txt",
                           "secrets/cloud.txt", "deploy/secret/x", "Secrets.YAML", "secret", "service-account.json",
                           "service-account_prod.json", "service-account-1.json", "keys/id_ed25519.pub", "id_rsa",
                           "id_dsa.old", "id_ecdsa", "private.pem", "cert.PEM", "tls.key", "store.p12", "a.pfx"}) {
    EXPECT_TRUE(IsSecretLikePath(path)) << path;
  }
  for (const char* path : {"src/environment.ts", "secretary.txt", "credentialing/x.ts", "service-accounts",
                           "service-account", "id_rsa2", "keyboard.ts", "docs/keys.md", "src/pem.ts", "my.env"}) {
    EXPECT_FALSE(IsSecretLikePath(path)) << path;
  }
  EXPECT_TRUE(IsSecretLikePath("tls.\xE2\x84\xAA" "ey"));  // KELVIN SIGN lower-cases to k
}

}  // namespace
}  // namespace telic::grounding
