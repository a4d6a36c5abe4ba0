#include "mcp/request_state.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/canonical_json.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

RequestStateKey KeyOf(unsigned char fill) {
  RequestStateKey key;
  key.fill(fill);
  return key;
}

RequestStateClaims Claims() { return {"telic_get_next_action", "run-1", "action:run-1:4", 4, "clarification-01", 0}; }

RequestStateTarget Target() { return {"telic_get_next_action", "run-1", "action:run-1:4", 4}; }

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// Splits "v1.<payload>.<mac>".
std::pair<std::string, std::string> Parts(const std::string& token) {
  std::string rest = token.substr(3);
  size_t dot = rest.find('.');
  return {rest.substr(0, dot), rest.substr(dot + 1)};
}

TEST(RequestStateTest, IssuedTokenVerifiesForItsTarget) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock, 60'000);
  std::string token = signer.Issue(Claims());
  auto claims = signer.Verify(token, Target());
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->run_id, "run-1");
  EXPECT_EQ(claims->action_id, "action:run-1:4");
  EXPECT_EQ(claims->run_version, 4);
  EXPECT_EQ(claims->request_artifact_id, "clarification-01");
  EXPECT_EQ(claims->expires_at_ms, 1'060'000);
}

// The MAC is HMAC-SHA-256 over "telic-request-state-v1." + the payload's hex,
// as before telic moved from OpenSSL to nettle: tokens issued by either
// verify with the other. The expected MAC is Python's hmac module's.
TEST(RequestStateTest, MacIsHmacSha256OfTheContextAndPayload) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock, 60'000);
  auto [payload_hex, mac_hex] = Parts(signer.Issue(Claims()));
  EXPECT_EQ(Unhex(payload_hex),
            R"({"action":"action:run-1:4","exp":1060000,"request":"clarification-01","run":"run-1",)"
            R"("tool":"telic_get_next_action","version":4})");
  EXPECT_EQ(mac_hex, "bb0eec26cb233b1ae6a5f42cf94a8b9c7dbf9f2e6fd4132724203c10e9056ad6");
}

TEST(RequestStateTest, TokenSignedWithAnotherKeyIsForged) {
  ManualClock clock(1'000'000);
  RequestStateSigner issuer(KeyOf(1), clock), verifier(KeyOf(2), clock);
  auto refused = verifier.Verify(issuer.Issue(Claims()), Target());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason, "forged");
}

// Every field rewritten in the payload, the MAC kept: refused as forged
// before the payload is believed.
TEST(RequestStateTest, TamperingWithAnyFieldIsForged) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock);
  auto [payload_hex, mac] = Parts(signer.Issue(Claims()));
  Json payload = Json::parse(Unhex(payload_hex));
  const std::vector<std::pair<std::string, Json>> edits = {{"tool", "telic_submit_artifact"}, {"run", "run-2"},
                                                           {"action", "action:run-1:9"},     {"version", 9},
                                                           {"request", "clarification-02"},  {"exp", 9'000'000'000'000}};
  for (const auto& [field, value] : edits) {
    Json tampered = payload;
    tampered[field] = value;
    std::string token = "v1." + Hex(CanonicalJson(tampered)) + "." + mac;
    auto refused = signer.Verify(token, Target());
    ASSERT_FALSE(refused) << field;
    EXPECT_EQ(refused.error().reason, "forged") << field;
  }
  // A flipped MAC digit, a truncated MAC, a MAC from another payload.
  std::string flipped = mac;
  flipped[0] = flipped[0] == '0' ? '1' : '0';
  EXPECT_EQ(signer.Verify("v1." + payload_hex + "." + flipped, Target()).error().reason, "forged");
  EXPECT_EQ(signer.Verify("v1." + payload_hex + "." + mac.substr(2), Target()).error().reason, "forged");
  EXPECT_EQ(signer.Verify("v1." + payload_hex + "." + std::string(64, '0'), Target()).error().reason, "forged");
}

TEST(RequestStateTest, MalformedTokensAreRefused) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock);
  for (std::string token : {std::string(""), std::string("v2.00.00"), std::string("v1.nodot"), std::string("garbage"),
                            std::string(5000, 'a')}) {
    auto refused = signer.Verify(token, Target());
    ASSERT_FALSE(refused) << token;
    EXPECT_TRUE(refused.error().reason == "malformed" || refused.error().reason == "forged") << token;
  }
  EXPECT_EQ(signer.Verify("v1.", Target()).error().reason, "malformed");
  EXPECT_EQ(signer.Verify("v1..", Target()).error().reason, "forged");
}

TEST(RequestStateTest, ExpiredTokenIsRefused) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock, 60'000);
  std::string token = signer.Issue(Claims());
  clock.Set(1'059'999);
  EXPECT_TRUE(signer.Verify(token, Target()));
  clock.Set(1'060'000);
  auto refused = signer.Verify(token, Target());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason, "expired");
}

TEST(RequestStateTest, TokenForAnotherRunOrToolIsRefused) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock);
  std::string token = signer.Issue(Claims());
  RequestStateTarget other_run = Target();
  other_run.run_id = "run-2";
  EXPECT_EQ(signer.Verify(token, other_run).error().reason, "other_run");
  RequestStateTarget other_tool = Target();
  other_tool.tool = "telic_get_run";
  EXPECT_EQ(signer.Verify(token, other_tool).error().reason, "other_tool");
}

// The run moved on (the answer was recorded, or another writer advanced it):
// the same state presented again is a replay.
TEST(RequestStateTest, TokenForAnOlderRunVersionIsReplayed) {
  ManualClock clock(1'000'000);
  RequestStateSigner signer(KeyOf(7), clock);
  std::string token = signer.Issue(Claims());
  RequestStateTarget moved = Target();
  moved.run_version = 5;
  moved.action_id = "action:run-1:5";
  auto refused = signer.Verify(token, moved);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason, "replayed");
  EXPECT_NE(refused.error().message.find("version 4"), std::string::npos);
}

TEST(RequestStateKeyTest, CreatedOnceWithMode0600AndReadBack) {
  telic::testing::TempDir dir;
  std::string path = dir.File("request-state.key");
  auto first = LoadOrCreateRequestStateKey(path);
  ASSERT_TRUE(first) << first.error().message();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  EXPECT_EQ(st.st_size, 32);
  auto second = LoadOrCreateRequestStateKey(path);
  ASSERT_TRUE(second);
  EXPECT_EQ(*first, *second);
  EXPECT_NE(*first, RequestStateKey{});
  std::filesystem::remove(path);
  auto third = LoadOrCreateRequestStateKey(path);
  ASSERT_TRUE(third);
  EXPECT_NE(*first, *third);  // fresh CSPRNG bytes
}

TEST(RequestStateKeyTest, UnsafeKeyFilesAreRefused) {
  telic::testing::TempDir dir;
  std::string path = dir.File("request-state.key");
  ASSERT_TRUE(LoadOrCreateRequestStateKey(path));
  ::chmod(path.c_str(), 0644);
  EXPECT_FALSE(LoadOrCreateRequestStateKey(path));
  ::chmod(path.c_str(), 0600);
  std::ofstream(path, std::ios::app) << "x";  // 33 bytes
  EXPECT_FALSE(LoadOrCreateRequestStateKey(path));
  std::string link = dir.File("link.key");
  std::filesystem::create_symlink(path, link);
  EXPECT_FALSE(LoadOrCreateRequestStateKey(link));
}

}  // namespace
}  // namespace telic::mcp
