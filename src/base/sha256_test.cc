#include "base/sha256.h"

#include <string>

#include <gtest/gtest.h>

namespace telic {
namespace {

// FIPS 180-4 example messages (NIST CSRC "SHA-256" examples) and the
// million-'a' vector.
TEST(Sha256Test, MatchesTheStandardsVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, RefPrefixesTheHexDigest) {
  EXPECT_EQ(Sha256Ref("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, DigestsBytesNotCStrings) {
  using namespace std::string_literals;
  EXPECT_NE(Sha256Hex("a\0b"s), Sha256Hex("a"));
  EXPECT_EQ(Sha256Hex("a\0b"s), Sha256Hex(std::string_view("a\0b", 3)));
}

TEST(BytesEqualConstantTimeTest, EqualOnlyForTheSameBytesAndLength) {
  using namespace std::string_literals;
  EXPECT_TRUE(BytesEqualConstantTime("", ""));
  EXPECT_TRUE(BytesEqualConstantTime("token-1", "token-1"));
  EXPECT_FALSE(BytesEqualConstantTime("token-1", "token-2"));
  EXPECT_FALSE(BytesEqualConstantTime("Token-1", "token-1"));
  EXPECT_FALSE(BytesEqualConstantTime("token", "token-1"));
  EXPECT_FALSE(BytesEqualConstantTime("token-1", "token"));
  EXPECT_FALSE(BytesEqualConstantTime("a\0b"s, "a\0c"s));
}

}  // namespace
}  // namespace telic

namespace telic {
namespace {

TEST(Sha256StreamTest, PiecesDigestLikeTheWhole) {
  std::string whole;
  Sha256Stream stream;
  for (int i = 0; i < 1000; ++i) {
    std::string piece(static_cast<size_t>(i % 97), static_cast<char>('a' + i % 26));
    whole += piece;
    stream.Update(piece);
  }
  EXPECT_EQ(stream.HexDigest(), Sha256Hex(whole));
  Sha256Stream empty;
  EXPECT_EQ(empty.HexDigest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace telic
