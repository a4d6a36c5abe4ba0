// WriteJson must write exactly the bytes of nlohmann's dump() (compact and
// pretty, replace handler), so moving the response path onto it changes no
// byte on the wire except where a WriteOrder asks for it.
#include "base/json_writer.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

namespace telic {
namespace {

std::string Dump(const Json& value, int indent) { return value.dump(indent, ' ', false, Json::error_handler_t::replace); }

std::string Written(const Json& value, int indent, const WriteOrder* order = nullptr, int context = 0) {
  std::string out;
  WriteJson(value, indent, out, order, context);
  return out;
}

void ExpectSameAsDump(const Json& value) {
  EXPECT_EQ(Written(value, -1), Dump(value, -1));
  EXPECT_EQ(Written(value, 2), Dump(value, 2));
  EXPECT_EQ(Written(value, 4), Dump(value, 4));
}

TEST(JsonWriterTest, ScalarsAndContainersAreWrittenAsDumpWritesThem) {
  for (const char* text : {R"(null)", R"(true)", R"(false)", R"(0)", R"(-9223372036854775808)",
                           R"(18446744073709551615)", R"(1.5)", R"(-0.0)", R"(1e300)", R"(0.1)", R"([])", R"({})",
                           R"([[], {}, [1, [2, {}]]])", R"({"b": {"a": []}, "a": [1, 2, {"z": null}]})",
                           R"({"": "", "\u0000k": "\u001f\u007f"})"}) {
    SCOPED_TRACE(text);
    ExpectSameAsDump(Json::parse(text));
  }
}

TEST(JsonWriterTest, StringsEscapeLikeDumpIncludingInvalidUtf8) {
  std::vector<std::string> strings = {"plain", "quote \" backslash \\ slash /", "\b\f\n\r\t\x01\x1f\x7f",
                                      "\xC3\xA9\xE2\x80\xA8\xF0\x9F\x98\x80", "\xEF\xBF\xBF",
                                      // invalid: lone continuation, overlong, surrogate, truncated, > U+10FFFF
                                      "a\x80z", "\xC0\xAF", "\xED\xA0\x80", "ok\xE2\x82", "\xF4\x90\x80\x80",
                                      "\xF0\x9F\x98", "x\"\xFFy\n"};
  std::mt19937 random(18);
  for (int i = 0; i < 2000; ++i) {  // random bytes, mostly invalid UTF-8 somewhere
    std::string s(random() % 12, '\0');
    for (char& c : s) c = static_cast<char>(random() % 256);
    strings.push_back(s);
  }
  for (const std::string& s : strings) {
    std::string out;
    WriteJsonString(s, out);
    EXPECT_EQ(out, Dump(Json(s), -1));
    ExpectSameAsDump(Json{{s, Json::array({s, s})}});
  }
}

// The writer escapes a slice of 4096 input bytes at a time: long strings,
// with escapes, multi-byte sequences straddling every slice boundary and
// invalid UTF-8 after the first slice, still match dump().
TEST(JsonWriterTest, LongStringsMatchDumpAcrossEverySliceBoundary) {
  const std::vector<std::string> pieces = {"a", "\"", "\n", "\x01", "\xC3\xA9", "\xE2\x80\xA8", "\xF0\x9F\x98\x80"};
  std::mt19937 random(4096);
  for (int round = 0; round < 200; ++round) {
    std::string s;
    size_t target = 4000 + random() % 9000;
    while (s.size() < target) s += pieces[random() % pieces.size()];
    if (round % 10 == 9) s.insert(4096 + random() % (s.size() - 4096), "\xFF");  // invalid, late
    std::string out = "prefix";
    WriteJsonString(s, out);
    ASSERT_EQ(out, "prefix" + Dump(Json(s), -1)) << "round " << round;
  }
  for (size_t pad = 4090; pad <= 4100; ++pad) {  // a 4-byte sequence at each offset around the boundary
    std::string s = std::string(pad, 'x') + "\xF0\x9F\x98\x80" + std::string(pad % 7, '"');
    std::string out;
    WriteJsonString(s, out);
    EXPECT_EQ(out, Dump(Json(s), -1)) << "pad " << pad;
  }
}

// Strings are scanned 16 bytes at a time: plain runs of every length
// between bytes that need care (escapes, controls, UTF-8 of every length,
// invalid bytes), at every alignment, still match dump().
TEST(JsonWriterTest, PlainRunsOfEveryLengthBetweenEscapesMatchDump) {
  const std::vector<std::string> care = {"\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xC3\xA9", "\xE2\x80\xA8",
                                         "\xF0\x9F\x98\x80", " ", "~"};
  std::mt19937 random(16);
  for (int round = 0; round < 3000; ++round) {
    std::string s(random() % 20, 'p');
    while (s.size() < 200) {
      s += std::string(random() % 40, static_cast<char>('a' + random() % 26));
      s += care[random() % care.size()];
    }
    if (round % 50 == 49) s.insert(random() % s.size(), "\x80");  // invalid
    std::string out;
    WriteJsonString(s, out);
    ASSERT_EQ(out, Dump(Json(s), -1)) << "round " << round;
  }
}

TEST(JsonWriterTest, EveryEmbeddedSchemaAndFixtureIsWrittenAsDumpWritesIt) {
  int files = 0;
  for (const char* folder : {"schemas", "tests/fixtures/artifacts"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::filesystem::path(TELIC_SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".json") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      Json value = Json::parse(text.str(), nullptr, false);
      if (value.is_discarded()) continue;
      SCOPED_TRACE(entry.path().string());
      ExpectSameAsDump(value);
      ++files;
    }
  }
  EXPECT_GT(files, 100);
}

class TestOrder : public WriteOrder {
 public:
  std::span<const std::string_view> FirstKeys(int context) const override {
    static constexpr std::string_view kRoot[] = {"z", "missing", "m"};
    return context == 1 ? std::span<const std::string_view>(kRoot) : std::span<const std::string_view>();
  }
  int ChildContext(int context, std::string_view key) const override { return context == 1 && key == "m" ? 1 : 0; }
  std::optional<std::string_view> Precomputed(int, std::string_view key, const Json&, int) const override {
    if (key == "spliced") return std::string_view("\"text\"");
    return std::nullopt;
  }
};

TEST(JsonWriterTest, AnOrderPutsItsKeysFirstAndSplicesPrecomputedText) {
  TestOrder order;
  Json value = Json::parse(R"({"a": 1, "m": {"b": 2, "z": 3, "m": {}}, "spliced": [1], "z": [{"z": 1, "a": 2}]})");
  EXPECT_EQ(Written(value, -1, &order, 1),
            R"({"z":[{"a":2,"z":1}],"m":{"z":3,"m":{},"b":2},"a":1,"spliced":"text"})");
  // Context 0 is plain: map order; only Precomputed applies.
  EXPECT_EQ(Written(value, -1, &order, 0), R"({"a":1,"m":{"b":2,"m":{},"z":3},"spliced":"text","z":[{"a":2,"z":1}]})");
  Json parsed = Json::parse(Written(value, 2, &order, 1));
  value["spliced"] = "text";
  EXPECT_EQ(parsed, value);
}

}  // namespace
}  // namespace telic
