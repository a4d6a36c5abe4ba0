#include "store/state_config.h"

#include <fstream>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace telic::store {
namespace {

TEST(ParseDurationTest, AcceptsEachUnitAndRefusesEverythingElse) {
  EXPECT_EQ(*ParseDuration("90s"), 90'000);
  EXPECT_EQ(*ParseDuration("15m"), 900'000);
  EXPECT_EQ(*ParseDuration("2h"), 7'200'000);
  EXPECT_EQ(*ParseDuration("30d"), 30LL * 86'400'000);
  EXPECT_EQ(*ParseDuration("1w"), 604'800'000);
  EXPECT_EQ(*ParseDuration("999999w"), 999999LL * 604'800'000);
  for (const char* bad : {"", "d", "0d", "01d", "-1d", "1.5d", "30", "30D", "30 d", "1000000d", "1y", "d30"}) {
    auto parsed = ParseDuration(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(RetentionPolicyTest, ParsesAFullPolicy) {
  auto policy = ParseRetentionPolicy(R"({"retention": {"olderThan": "7d", "statuses": ["completed", "cancelled"], "keep": 3}})",
                                     "config.json");
  ASSERT_TRUE(policy) << policy.error().message();
  ASSERT_TRUE(policy->has_value());
  EXPECT_EQ((*policy)->older_than_ms, 7LL * 86'400'000);
  EXPECT_EQ((*policy)->statuses, (std::vector<std::string>{"completed", "cancelled"}));
  EXPECT_EQ((*policy)->keep, 3);
  auto none = ParseRetentionPolicy("{}", "config.json");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST(RetentionPolicyTest, RefusesMalformedPoliciesWithAPointer) {
  struct Case {
    const char* text;
    const char* pointer;
  };
  for (const Case& c : {
           Case{"[]", "config.json: : must be a JSON object"},
           Case{"{", "config.json: : not valid JSON"},
           Case{R"({"retentoin": {}})", "/retentoin: unknown key"},
           Case{R"({"retention": 5})", "/retention: must be an object"},
           Case{R"({"retention": {}})", "/retention/olderThan: is required"},
           Case{R"({"retention": {"olderThan": 30}})", "/retention/olderThan: must be a duration"},
           Case{R"({"retention": {"olderThan": "30x"}})", "/retention/olderThan: invalid duration"},
           Case{R"({"retention": {"olderThan": "1d", "statuses": ["running"]}})", "/retention/statuses/0: status \"running\" cannot be pruned"},
           Case{R"({"retention": {"olderThan": "1d", "statuses": []}})", "/retention/statuses: must be a non-empty"},
           Case{R"({"retention": {"olderThan": "1d", "keep": -1}})", "/retention/keep: must be an integer"},
           Case{R"({"retention": {"olderThan": "1d", "keep": 1.5}})", "/retention/keep: must be an integer"},
           Case{R"({"retention": {"olderThan": "1d", "extra": true}})", "/retention/extra: unknown key"},
       }) {
    auto parsed = ParseRetentionPolicy(c.text, "config.json");
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(c.pointer), std::string::npos) << parsed.error().message();
  }
}

TEST(RetentionPolicyTest, ReadsTheStateDirectorysConfigFile) {
  testing::TempDir dir;
  auto missing = ReadRetentionPolicy(dir.path().string());
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  std::ofstream(dir.File("config.json")) << R"({"retention": {"olderThan": "12h"}})";
  auto read = ReadRetentionPolicy(dir.path().string());
  ASSERT_TRUE(read) << read.error().message();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->older_than_ms, 12LL * 3'600'000);
  EXPECT_TRUE((*read)->statuses.empty());
  std::ofstream(dir.File("config.json")) << R"({"retention": {"olderThan": "12h", "keep": "2"}})";
  auto bad = ReadRetentionPolicy(dir.path().string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find(dir.File("config.json") + ": /retention/keep"), std::string::npos);
}

}  // namespace
}  // namespace telic::store

namespace telic::store {
namespace {

TEST(CheckConfigTest, ChecksAreSandboxedUnlessTheOperatorWritesNone) {
  auto absent = ParseCheckConfig(R"({"retention": {"olderThan": "1d"}})", "config.json");
  ASSERT_TRUE(absent) << absent.error().message();
  EXPECT_FALSE(absent->unsandboxed);
  auto sandboxed = ParseCheckConfig(R"({"checks": {"sandbox": "bubblewrap"}})", "config.json");
  ASSERT_TRUE(sandboxed);
  EXPECT_FALSE(sandboxed->unsandboxed);
  auto none = ParseCheckConfig(R"({"checks": {"sandbox": "none"}})", "config.json");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->unsandboxed);
  // The retention reader accepts the key beside its own.
  EXPECT_TRUE(ParseRetentionPolicy(R"({"checks": {"sandbox": "none"}})", "config.json"));
  for (const char* text : {R"({"checks": {"sandbox": "off"}})", R"({"checks": {"sandbox": false}})",
                           R"({"checks": {"sandboxed": "none"}})", R"({"checks": []})", R"({"chekcs": {}})"}) {
    auto parsed = ParseCheckConfig(text, "config.json");
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << text;
  }
}

}  // namespace
}  // namespace telic::store
