// Size and nesting bounds of the host config files install reads (issue 40 row 3).
#include "cli/config_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace telic::cli {
namespace {

std::string Nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

std::string Message(const Status& status) { return status ? std::string("ok") : status.error().message(); }

TEST(ConfigLimitsTest, JsonNestingIsBoundedWithTheOffset) {
  EXPECT_TRUE(CheckJsonBounds(Nested(kMaxConfigDepth), "f.json"));
  const std::string refused = Message(CheckJsonBounds(Nested(100000), "f.json"));
  EXPECT_EQ(refused, "f.json: nested deeper than 64 levels at byte 64; telic will not read or rewrite it");
  std::string objects;
  for (int i = 0; i < 100; ++i) objects += "{\"a\":";
  EXPECT_NE(Message(CheckJsonBounds(objects, "f.json")).find("at byte 320"), std::string::npos);
}

TEST(ConfigLimitsTest, BracketsInStringsAndCommentsDoNotCount) {
  const std::string deep_text = "\"" + std::string(1000, '[') + "\\\"[\"";
  EXPECT_TRUE(CheckJsonBounds("{\"k\": " + deep_text + "}", "f.json"));
  EXPECT_TRUE(CheckJsonBounds("{// " + std::string(1000, '{') + "\n /* " + std::string(1000, '[') + " */}", "f.json"));
}

TEST(ConfigLimitsTest, OversizedTextIsRefused) {
  EXPECT_NE(Message(CheckJsonBounds(std::string(kMaxConfigBytes + 1, ' '), "f.json")).find("larger than 8388608 bytes"),
            std::string::npos);
  EXPECT_FALSE(CheckTomlBounds(std::string(kMaxConfigBytes + 1, '#'), "f.toml"));
}

TEST(ConfigLimitsTest, TomlNestingAndDottedKeysAreBounded) {
  EXPECT_TRUE(CheckTomlBounds("a = " + Nested(kMaxConfigDepth) + "\n[x.y.z]\nv = 1.5\nt = 07:32:00.999\n", "c.toml"));
  EXPECT_NE(Message(CheckTomlBounds("a = " + Nested(100000) + "\n", "c.toml")).find("nested deeper than 64 levels"),
            std::string::npos);
  std::string dotted = "[a";
  for (int i = 0; i < 100000; ++i) dotted += ".a";
  EXPECT_NE(Message(CheckTomlBounds(dotted + "]\n", "c.toml")).find("a dotted key of more than 16 dots"),
            std::string::npos);
  std::string quoted = "\"a\"";
  for (int i = 0; i < 20; ++i) quoted += ".\"a\"";
  EXPECT_FALSE(CheckTomlBounds(quoted + " = 1\n", "c.toml")) << "quoted key parts count too";
  EXPECT_TRUE(CheckTomlBounds("v = \"" + std::string(100, '.') + "\"\n# " + std::string(100, '.') + "\n", "c.toml"));
  EXPECT_TRUE(CheckTomlBounds("xs = [" + std::string(200, '1') + ".5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, "
                              "10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5]\n",
                              "c.toml"))
      << "floats in an array are not one dotted key";
}

TEST(ConfigLimitsTest, ParseConfigChecksBoundsFirst) {
  EXPECT_FALSE(ParseConfig(Nested(100000), "x.json"));
  EXPECT_EQ(*ParseConfig("  \n", "x.json"), OrderedJson::object());
  EXPECT_EQ((*ParseConfig("{\"a\": 1, // c\n}", "x.json"))["a"], 1);
  EXPECT_NE(ParseConfig("[1]", "x.json").error().message().find("not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace telic::cli

namespace telic::cli {
namespace {

// Found by jsonc_config_fuzz: U+00A1 where toml++ 3.3 looks for whitespace
// reaches its TOML_UNREACHABLE; telic refuses non-ASCII TOML before parsing.
TEST(ConfigLimitsTomlTest, NonAsciiTomlIsRefusedBeforeTomlPlusPlusSeesIt) {
  EXPECT_TRUE(CheckTomlBounds("[mcp_servers.x]\ncommand = \"telic\"\n", "config.toml"));
  auto refused = CheckTomlBounds("a = 1\xC2\xA1\n", "config.toml");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("non-ASCII byte at byte 5"), std::string::npos) << refused.error().message();
}

}  // namespace
}  // namespace telic::cli
