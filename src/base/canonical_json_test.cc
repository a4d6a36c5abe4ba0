// Canonical JSON (PROTOCOL §19): key order, string escaping and number
// formatting must match what the reference produces with JavaScript, because
// every sha256 digest in telic is computed over this byte form.
#include "base/canonical_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "base/json_parse.h"

namespace telic {
namespace {

// UTF-8 spellings used below.
const std::string kHalfwidthStop = "\xEF\xBD\xA1";  // U+FF61, UTF-16 0xFF61
const std::string kGrinning = "\xF0\x9F\x98\x80";   // U+1F600, UTF-16 0xD83D 0xDE00
const std::string kPrivateUse = "\xEE\x80\x80";     // U+E000
const std::string kEAcute = "\xC3\xA9";             // U+00E9
const std::string kLineSeparator = "\xE2\x80\xA8";  // U+2028

std::string Escaped(std::string_view text) {
  std::string out;
  AppendJsonString(text, out);
  return out;
}

// ---------------------------------------------------------------------------
// Key order

TEST(Utf16LessTest, AsciiOrderIsByteOrder) {
  EXPECT_TRUE(Utf16Less("", "a"));
  EXPECT_FALSE(Utf16Less("a", ""));
  EXPECT_TRUE(Utf16Less("B", "a"));  // uppercase sorts before lowercase
  EXPECT_TRUE(Utf16Less("a", "ab"));
  EXPECT_TRUE(Utf16Less("ab", "b"));
  EXPECT_FALSE(Utf16Less("a", "a"));
  EXPECT_TRUE(Utf16Less("Z", "_"));
  EXPECT_TRUE(Utf16Less("_", "a"));
}

TEST(Utf16LessTest, NonAsciiAfterAscii) {
  EXPECT_TRUE(Utf16Less("z", kEAcute));
  EXPECT_FALSE(Utf16Less(kEAcute, "z"));
  EXPECT_TRUE(Utf16Less("a", "a" + kEAcute));
}

TEST(Utf16LessTest, AstralSortsBeforeUpperBmpUnlikeUtf8) {
  // UTF-8 bytes: EF BD A1 < F0 9F 98 80, but UTF-16: D83D < FF61.
  ASSERT_LT(kHalfwidthStop, kGrinning);  // byte order says the opposite
  EXPECT_TRUE(Utf16Less(kGrinning, kHalfwidthStop));
  EXPECT_FALSE(Utf16Less(kHalfwidthStop, kGrinning));
  // Same for the start of the private use area.
  EXPECT_TRUE(Utf16Less(kGrinning, kPrivateUse));
  EXPECT_FALSE(Utf16Less(kPrivateUse, kGrinning));
  // Below the surrogate range UTF-8 and UTF-16 agree.
  EXPECT_TRUE(Utf16Less(kEAcute, kGrinning));
  EXPECT_TRUE(Utf16Less(kLineSeparator, kGrinning));
}

TEST(Utf16LessTest, IsAStrictWeakOrderOnEqualStrings) {
  EXPECT_FALSE(Utf16Less(kGrinning, kGrinning));
  EXPECT_FALSE(Utf16Less(kHalfwidthStop + "a", kHalfwidthStop + "a"));
  EXPECT_TRUE(Utf16Less(kGrinning, kGrinning + "a"));
}

TEST(CanonicalJsonTest, ObjectKeysSortedByUtf16CodeUnits) {
  Json value = Json::object();
  value[kHalfwidthStop] = 1;
  value[kGrinning] = 2;
  value["a"] = 3;
  value["B"] = 4;
  value[""] = 5;
  value[kEAcute] = 6;
  value["ab"] = 7;
  value[kPrivateUse] = 8;
  // Order as JavaScript's Object.keys(v).sort() prints it.
  EXPECT_EQ(CanonicalJson(value), "{\"\":5,\"B\":4,\"a\":3,\"ab\":7,\"" + kEAcute + "\":6,\"" + kGrinning + "\":2,\"" +
                                      kPrivateUse + "\":8,\"" + kHalfwidthStop + "\":1}");
}

TEST(CanonicalJsonTest, AstralKeyBeforeFf61Key) {
  Json value = {{kHalfwidthStop, "ff61"}, {kGrinning, "astral"}};
  EXPECT_EQ(CanonicalJson(value), "{\"" + kGrinning + "\":\"astral\",\"" + kHalfwidthStop + "\":\"ff61\"}");
}

TEST(CanonicalJsonTest, NestedObjectsAreSortedAtEveryLevel) {
  Json value = Json::parse(R"({"z":{"b":[{"y":1,"x":2}],"a":null},"m":[3,{"d":true,"c":false}],"a":{}})");
  EXPECT_EQ(CanonicalJson(value), R"({"a":{},"m":[3,{"c":false,"d":true}],"z":{"a":null,"b":[{"x":2,"y":1}]}})");
}

TEST(CanonicalJsonTest, ArraysKeepTheirOrder) {
  Json value = Json::parse(R"([3,1,2,"b","a",[2,1],{}])");
  EXPECT_EQ(CanonicalJson(value), R"([3,1,2,"b","a",[2,1],{}])");
}

TEST(CanonicalJsonTest, Scalars) {
  EXPECT_EQ(CanonicalJson(Json(nullptr)), "null");
  EXPECT_EQ(CanonicalJson(Json(true)), "true");
  EXPECT_EQ(CanonicalJson(Json(false)), "false");
  EXPECT_EQ(CanonicalJson(Json("x")), "\"x\"");
  EXPECT_EQ(CanonicalJson(Json::array()), "[]");
  EXPECT_EQ(CanonicalJson(Json::object()), "{}");
  EXPECT_EQ(CanonicalJson(Json::parse("[[[]],{}]")), "[[[]],{}]");
}

TEST(CanonicalJsonTest, NoWhitespaceAnywhere) {
  Json value = Json::parse("{ \"a\" : [ 1 , 2 ] ,\n \"b\" : { \"c\" : \"d e\" } }");
  EXPECT_EQ(CanonicalJson(value), R"({"a":[1,2],"b":{"c":"d e"}})");
}

TEST(CanonicalJsonTest, KeysAreEscapedLikeValues) {
  Json value = {{"a\"b", 1}, {"c\nd", 2}};
  EXPECT_EQ(CanonicalJson(value), "{\"a\\\"b\":1,\"c\\nd\":2}");
}

TEST(CanonicalJsonTest, AppendCanonicalJsonAppends) {
  std::string out = "prefix:";
  AppendCanonicalJson(Json{{"b", 1}, {"a", 2}}, out);
  EXPECT_EQ(out, R"(prefix:{"a":2,"b":1})");
}

// ---------------------------------------------------------------------------
// Strings

TEST(AppendJsonStringTest, ShortEscapes) {
  EXPECT_EQ(Escaped("\b"), R"("\b")");
  EXPECT_EQ(Escaped("\f"), R"("\f")");
  EXPECT_EQ(Escaped("\n"), R"("\n")");
  EXPECT_EQ(Escaped("\r"), R"("\r")");
  EXPECT_EQ(Escaped("\t"), R"("\t")");
  EXPECT_EQ(Escaped("\""), R"("\"")");
  EXPECT_EQ(Escaped("\\"), R"("\\")");
}

TEST(AppendJsonStringTest, OtherControlsAsLowercaseU00xx) {
  EXPECT_EQ(Escaped(std::string(1, '\0')), R"("\u0000")");
  EXPECT_EQ(Escaped("\x01"), R"("\u0001")");
  EXPECT_EQ(Escaped("\x0b"), R"("\u000b")");
  EXPECT_EQ(Escaped("\x0e"), R"("\u000e")");
  EXPECT_EQ(Escaped("\x1a"), R"("\u001a")");
  EXPECT_EQ(Escaped("\x1f"), R"("\u001f")");
}

TEST(AppendJsonStringTest, EveryControlCharacterIsEscaped) {
  for (int c = 0; c < 0x20; ++c) {
    std::string out = Escaped(std::string(1, static_cast<char>(c)));
    ASSERT_GE(out.size(), 4u) << c;
    EXPECT_EQ(out[1], '\\') << "control " << c << " emitted raw";
  }
}

TEST(AppendJsonStringTest, DelSlashAndNonAsciiAreRaw) {
  EXPECT_EQ(Escaped("\x7f"), "\"\x7f\"");
  EXPECT_EQ(Escaped("/"), "\"/\"");
  EXPECT_EQ(Escaped("a/b</script>"), "\"a/b</script>\"");
  EXPECT_EQ(Escaped(kLineSeparator), "\"" + kLineSeparator + "\"");
  EXPECT_EQ(Escaped("\xE2\x80\xA9"), "\"\xE2\x80\xA9\"");  // U+2029
  EXPECT_EQ(Escaped(kEAcute + kGrinning + kHalfwidthStop), "\"" + kEAcute + kGrinning + kHalfwidthStop + "\"");
  EXPECT_EQ(Escaped("'<>&"), "\"'<>&\"");
}

TEST(AppendJsonStringTest, MixedTextMatchesJsonStringify) {
  // JSON.stringify("\b\f\n\r\t\x01\x1f\x7f\u2028/é\"\\\x0b\x00")
  std::string input = std::string("\b\f\n\r\t\x01\x1f\x7f") + kLineSeparator + "/" + kEAcute + "\"\\\x0b" +
                      std::string(1, '\0');
  EXPECT_EQ(Escaped(input),
            std::string("\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f") + kLineSeparator + "/" + kEAcute +
                "\\\"\\\\\\u000b\\u0000\"");
}

TEST(AppendJsonStringTest, AppendsToExistingOutput) {
  std::string out = "x";
  AppendJsonString("y", out);
  EXPECT_EQ(out, "x\"y\"");
  AppendJsonString("", out);
  EXPECT_EQ(out, "x\"y\"\"\"");
}

// ---------------------------------------------------------------------------
// Numbers

struct JsNumberCase {
  double value;
  const char* expected;  // String(value) in JavaScript
};

TEST(FormatJsNumberTest, MatchesJavaScriptNumberToString) {
  const std::vector<JsNumberCase> cases = {
      {0.0, "0"},
      {-0.0, "0"},
      {1.0, "1"},
      {-1.5, "-1.5"},
      {0.1, "0.1"},
      {1e21, "1e+21"},
      {1e-7, "1e-7"},
      {123456789012345680000.0, "123456789012345680000"},
      {1.5e-7, "1.5e-7"},
      {0.000001, "0.000001"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {100.0, "100"},
      {1e20, "100000000000000000000"},
      {2.5e+25, "2.5e+25"},
      // Further values checked against node v20.
      {123.456, "123.456"},
      {-1e-7, "-1e-7"},
      {1.0 / 3.0, "0.3333333333333333"},
      {0.1 + 0.2, "0.30000000000000004"},
      {9007199254740992.0, "9007199254740992"},
      {1.23e-18, "1.23e-18"},
      {-2.5e-300, "-2.5e-300"},
      {4.35, "4.35"},
      {1e301, "1e+301"},
      {12345678901234567890123.0, "1.2345678901234568e+22"},
      {999999999999999900000.0, "999999999999999900000"},
      {0.00001234, "0.00001234"},
      {-123456.75, "-123456.75"},
      {2.0, "2"},
      {-100.0, "-100"},
      {0.5, "0.5"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(FormatJsNumber(c.value), c.expected) << "value " << c.value;
  }
}

TEST(FormatJsNumberTest, ExponentThresholds) {
  // Fixed notation below 1e21, exponent notation from 1e21 on.
  EXPECT_EQ(FormatJsNumber(999999999999999900000.0), "999999999999999900000");
  EXPECT_EQ(FormatJsNumber(1e21), "1e+21");
  EXPECT_EQ(FormatJsNumber(-1e21), "-1e+21");
  // Fixed notation from 1e-6 on, exponent notation below it.
  EXPECT_EQ(FormatJsNumber(1e-6), "0.000001");
  EXPECT_EQ(FormatJsNumber(-1e-6), "-0.000001");
  EXPECT_EQ(FormatJsNumber(9.99e-7), "9.99e-7");
}

TEST(FormatJsNumberTest, SmallestAndLargestDoubles) {
  EXPECT_EQ(FormatJsNumber(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(FormatJsNumber(-std::numeric_limits<double>::denorm_min()), "-5e-324");
  EXPECT_EQ(FormatJsNumber(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(FormatJsNumber(std::numeric_limits<double>::lowest()), "-1.7976931348623157e+308");
  EXPECT_EQ(FormatJsNumber(std::numeric_limits<double>::min()), "2.2250738585072014e-308");
}

TEST(FormatJsNumberTest, ShortestRoundTrip) {
  for (double v : {0.1, 0.7, 1.1, 3.14159, 2.718281828459045, 1e-5, 6.02214076e23, 1.602176634e-19}) {
    std::string text = FormatJsNumber(v);
    EXPECT_EQ(std::stod(text), v) << text;
  }
}

TEST(CanonicalJsonTest, FloatsUseJsFormatting) {
  Json value = Json::array({0.0, -0.0, 1.0, -1.5, 1e21, 1e-7, 2.5e25, 0.1});
  EXPECT_EQ(CanonicalJson(value), "[0,0,1,-1.5,1e+21,1e-7,2.5e+25,0.1]");
}

TEST(CanonicalJsonTest, IntegersAreExact) {
  EXPECT_EQ(CanonicalJson(Json(0)), "0");
  EXPECT_EQ(CanonicalJson(Json(-1)), "-1");
  EXPECT_EQ(CanonicalJson(Json(std::numeric_limits<int64_t>::max())), "9223372036854775807");
  EXPECT_EQ(CanonicalJson(Json(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(CanonicalJson(Json(std::numeric_limits<uint64_t>::max())), "18446744073709551615");
  EXPECT_EQ(CanonicalJson(Json(uint64_t{0})), "0");
  // The safe-integer bounds of PROTOCOL §4.
  EXPECT_EQ(CanonicalJson(Json(int64_t{9007199254740991})), "9007199254740991");
  EXPECT_EQ(CanonicalJson(Json(int64_t{-9007199254740991})), "-9007199254740991");
}

TEST(CanonicalJsonTest, IntegerAndIntegralFloatPrintAlike) {
  EXPECT_EQ(CanonicalJson(Json(42)), CanonicalJson(Json(42.0)));
  EXPECT_EQ(CanonicalJson(Json::parse("1.0")), "1");
  EXPECT_EQ(CanonicalJson(Json::parse("1e2")), "100");
  EXPECT_EQ(CanonicalJson(Json::parse("-0")), "0");
  EXPECT_EQ(CanonicalJson(Json::parse("-0.0")), "0");
}

// JSON.stringify turns non-finite numbers into null; emitting `NaN` would make
// the canonical form invalid JSON. Parsed input cannot hold NaN/Infinity, so
// this only matters for values computed in C++ (see report).
TEST(CanonicalJsonTest, NonFiniteFloatsSerialiseAsNullLikeJsonStringify) {
  EXPECT_EQ(CanonicalJson(Json::array({std::nan(""), INFINITY, -INFINITY})), "[null,null,null]");
}

// ---------------------------------------------------------------------------
// Round trip through the strict parser

TEST(CanonicalJsonTest, ParsedDocumentRoundTripsStably) {
  const std::string source =
      "{\"z\": [1, 2.5, -0, 1e21, 1E-7, true, null, \"\\u00e9\\ud83d\\ude00\\n\"],\n"
      " \"\\uff61\": {\"b\": {}, \"a\": []},\n"
      " \"\\ud83d\\ude00\": \"astral\", \"A\": 18446744073709551615, \"a\": -9223372036854775808,\n"
      " \"ctl\": \"\\u0001\\u001f\\u007f\\u2028/\\\\\\\"\"}";
  auto parsed = ParseJsonStrict(source);
  ASSERT_TRUE(parsed) << parsed.error().message();
  std::string first = CanonicalJson(*parsed);
  EXPECT_EQ(first, "{\"A\":18446744073709551615,\"a\":-9223372036854775808,\"ctl\":\"\\u0001\\u001f\x7f" +
                       kLineSeparator + "/\\\\\\\"\",\"z\":[1,2.5,0,1e+21,1e-7,true,null,\"" + kEAcute + kGrinning +
                       "\\n\"],\"" + kGrinning + "\":\"astral\",\"" + kHalfwidthStop + "\":{\"a\":[],\"b\":{}}}");
  auto reparsed = ParseJsonStrict(first);
  ASSERT_TRUE(reparsed) << reparsed.error().message();
  EXPECT_EQ(CanonicalJson(*reparsed), first);
  EXPECT_EQ(*reparsed, *parsed);
}

TEST(CanonicalJsonTest, CanonicalFormIsIndependentOfInsertionOrder) {
  Json a = Json::object();
  a["x"] = 1;
  a[kGrinning] = 2;
  a[kHalfwidthStop] = 3;
  Json b = Json::object();
  b[kHalfwidthStop] = 3;
  b[kGrinning] = 2;
  b["x"] = 1;
  EXPECT_EQ(CanonicalJson(a), CanonicalJson(b));
}

// The canonical writer appends plain runs whole and sorts members only when
// nlohmann's byte order is not already UTF-16 order. Against the plainest
// spelling of the same rules (byte by byte; every object stably sorted) on
// random trees whose keys and strings mix controls, quotes, astral and
// U+E000..U+FFFF characters, it writes the same bytes: every digest stays.
std::string PlainCanonical(const Json& value) {
  auto string = [](const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        const char* shorts[] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                "\\b", "\\t", "\\n", nullptr, "\\f", "\\r"};
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
        out += c < 14 && shorts[c] ? shorts[c] : buffer;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  };
  if (value.is_string()) return string(value.get<std::string>());
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? "," : "") + PlainCanonical(value[i]);
    return out + "]";
  }
  if (value.is_object()) {
    std::vector<std::string> keys;
    for (auto it = value.begin(); it != value.end(); ++it) keys.push_back(it.key());
    std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) { return Utf16Less(a, b); });
    std::string out = "{";
    for (size_t i = 0; i < keys.size(); ++i) out += (i ? "," : "") + string(keys[i]) + ":" + PlainCanonical(value[keys[i]]);
    return out + "}";
  }
  return CanonicalJson(value);  // numbers, booleans, null: FormatJsNumber's own tests
}

TEST(CanonicalJsonTest, MatchesThePlainSpellingOfItsRulesOnRandomTrees) {
  const std::vector<std::string> pieces = {"a", "Z", "0", "_", " ", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "/",
                                           kEAcute, kLineSeparator, kHalfwidthStop, kGrinning, kPrivateUse,
                                           "plain text run"};
  std::mt19937 random(19);
  auto text = [&] {
    std::string out;
    for (size_t n = random() % 6; n > 0; --n) out += pieces[random() % pieces.size()];
    return out;
  };
  std::function<Json(int)> tree = [&](int depth) -> Json {
    switch (depth > 3 ? random() % 3 : random() % 5) {
      case 0: return Json(text());
      case 1: return Json(static_cast<int64_t>(random() % 1000) - 500);
      case 2: return Json(random() % 2 == 0);
      case 3: {
        Json array = Json::array();
        for (size_t n = random() % 4; n > 0; --n) array.push_back(tree(depth + 1));
        return array;
      }
      default: {
        Json object = Json::object();
        for (size_t n = random() % 6; n > 0; --n) object[text()] = tree(depth + 1);
        return object;
      }
    }
  };
  for (int round = 0; round < 3000; ++round) {
    Json value = tree(0);
    ASSERT_EQ(CanonicalJson(value), PlainCanonical(value)) << value.dump();
  }
}

}  // namespace
}  // namespace telic
