// The JSONC text editor `telic install` uses on files with comments or
// trailing commas: edits keep every byte of the user's text outside telic's
// span, and each removal undoes its insertion byte for byte.
#include "cli/jsonc_edit.h"

#include <gtest/gtest.h>

namespace telic::cli::jsonc {
namespace {

const OrderedJson kServer = {{"command", "/bin/telic"}, {"args", {"serve"}}};

std::string Set(const std::string& text, const std::vector<std::string>& keys, const OrderedJson& value) {
  auto out = SetValue(text, keys, value);
  EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message());
  return out.value_or("");
}

std::string Remove(const std::string& text, const std::vector<std::string>& keys) {
  auto out = RemoveMember(text, keys);
  EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message());
  return out.value_or("");
}

// Inserting then removing `keys` returns `text`; the inserted text parses to
// the value; the result is returned for layout checks.
std::string RoundTrip(const std::string& text, const std::vector<std::string>& keys, const OrderedJson& value) {
  const std::string inserted = Set(text, keys, value);
  auto parsed = Parse(inserted);
  EXPECT_TRUE(parsed.has_value()) << inserted;
  if (parsed) {
    const OrderedJson* at = &*parsed;
    for (const auto& key : keys) at = &(*at)[key];
    EXPECT_EQ(*at, value) << inserted;
  }
  // Remove the leaf, then the objects the insertion created, deepest first.
  std::string back = inserted;
  auto before = Parse(text);
  size_t existing = 0;
  if (before) {
    const OrderedJson* at = &*before;
    while (existing < keys.size() && at->is_object() && at->contains(keys[existing])) at = &(*at)[keys[existing++]];
  }
  for (size_t depth = keys.size(); depth > existing; --depth) {
    back = Remove(back, {keys.begin(), keys.begin() + static_cast<long>(depth)});
  }
  EXPECT_EQ(back, text);
  return inserted;
}

TEST(JsoncEditTest, MaskBlanksCommentsAndTrailingCommasKeepingOffsets) {
  const std::string text = "{ // a \"quoted\" note\n \"a\": \"x // not a comment /* nor this */\", /* b */\n \"b\": [1, 2,],\n}";
  auto masked = Mask(text);
  ASSERT_TRUE(masked.has_value()) << masked.error().message();
  EXPECT_EQ(masked->size(), text.size());
  EXPECT_EQ(OrderedJson::parse(*masked),
            OrderedJson::parse(R"({"a": "x // not a comment /* nor this */", "b": [1, 2]})"));
  EXPECT_TRUE(IsJsoncOnly(text));
  EXPECT_FALSE(IsJsoncOnly(R"({"a": 1})"));
}

TEST(JsoncEditTest, RefusesMalformedText) {
  for (const std::string bad : {"{\"a\": 1 /* open", "{\"a\": \"open", "{\"a\" 1}", "{\"a\": 1,,}", "{\"a\": }",
                                "{\"a\": 1} x", "[1 2]", "{\"a\": tru}", "{\"a\": \"\\", "", "/", "{\"a\":1}/"}) {
    EXPECT_FALSE(Parse(bad).has_value()) << bad;
    EXPECT_FALSE(SetValue(bad, {"x"}, 1).has_value()) << bad;
  }
  EXPECT_FALSE(SetValue(std::string(1000, '[') + std::string(1000, ']'), {"x"}, 1).has_value());
}

TEST(JsoncEditTest, InsertsIntoAnEmptyObject) {
  EXPECT_EQ(RoundTrip("{}", {"servers"}, OrderedJson::object()), "{\n  \"servers\": {}\n}");
  EXPECT_EQ(RoundTrip("// mine\n{}\n", {"a"}, 1), "// mine\n{\n  \"a\": 1\n}\n");
  // A comment inside the empty object stays, after the new member.
  EXPECT_EQ(RoundTrip("{ // none yet\n}", {"a"}, 1), "{\n  \"a\": 1 // none yet\n}");
}

TEST(JsoncEditTest, InsertsAfterTheLastMemberIndentedLikeItsSiblings) {
  const std::string text = "{\n    // my servers\n    \"servers\": {\n        \"docs\": {\"command\": \"docs\"} /* keep */\n    }\n}\n";
  const std::string inserted = RoundTrip(text, {"servers", "telic"}, kServer);
  EXPECT_EQ(inserted,
            "{\n    // my servers\n    \"servers\": {\n        \"docs\": {\"command\": \"docs\"},\n        \"telic\": {\n"
            "            \"command\": \"/bin/telic\",\n            \"args\": [\n                \"serve\"\n"
            "            ]\n        } /* keep */\n    }\n}\n");
}

TEST(JsoncEditTest, CreatesMissingObjectsOnTheWay) {
  const std::string text = "{\n  \"other\": true, // keep\n}\n";
  const std::string inserted = RoundTrip(text, {"mcp", "servers", "telic"}, "x");
  EXPECT_EQ(inserted, "{\n  \"other\": true,\n  \"mcp\": {\n    \"servers\": {\n      \"telic\": \"x\"\n    }\n  }, // keep\n}\n");
  // Removing only the leaf leaves the created objects, empty.
  EXPECT_EQ(Remove(inserted, {"mcp", "servers", "telic"}),
            "{\n  \"other\": true,\n  \"mcp\": {\n    \"servers\": {}\n  }, // keep\n}\n");
}

TEST(JsoncEditTest, KeepsATrailingCommaAndCrlfLineBreaks) {
  const std::string text = "{\r\n\t\"a\": 1,\r\n}\r\n";
  EXPECT_EQ(RoundTrip(text, {"b"}, OrderedJson{{"c", 2}}), "{\r\n\t\"a\": 1,\r\n\t\"b\": {\r\n\t\t\"c\": 2\r\n\t},\r\n}\r\n");
}

TEST(JsoncEditTest, StringsHoldingCommentMarkersAreNotComments) {
  const std::string text = "{\"url\": \"http://x/*y*/\", \"esc\": \"a\\\"//b\" /* c */}";
  EXPECT_EQ(RoundTrip(text, {"k"}, 1), "{\"url\": \"http://x/*y*/\", \"esc\": \"a\\\"//b\", \"k\": 1 /* c */}");
}

TEST(JsoncEditTest, ReplacesAValueSpanOnly) {
  const std::string text = "{\n  // c\n  \"a\": /* old */ 1, // after\n  \"b\": 2\n}";
  EXPECT_EQ(Set(text, {"a"}, OrderedJson{{"x", true}}),
            "{\n  // c\n  \"a\": /* old */ {\n    \"x\": true\n  }, // after\n  \"b\": 2\n}");
  auto span = Find(text, {"b"});
  ASSERT_TRUE(span.has_value() && span->has_value());
  EXPECT_EQ(text.substr((*span)->begin, (*span)->end - (*span)->begin), "2");
  auto absent = Find(text, {"z"});
  ASSERT_TRUE(absent.has_value());
  EXPECT_FALSE(absent->has_value());
  EXPECT_FALSE(SetValue(text, {"a", "x"}, 1).has_value()) << "/a is not an object";
}

TEST(JsoncEditTest, AppendsAndRemovesArrayItems) {
  const std::string empty = "{\"hooks\": [] /* none */}";
  auto one = AppendItem(empty, {"hooks"}, kServer);
  ASSERT_TRUE(one.has_value()) << one.error().message();
  EXPECT_EQ(*one,
            "{\"hooks\": [\n  {\n    \"command\": \"/bin/telic\",\n    \"args\": [\n      \"serve\"\n    ]\n  }\n] /* "
            "none */}");
  auto back = RemoveItem(*one, {"hooks"}, 0);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, empty);

  const std::string inline_items = "{\"a\": [\"x\", /* y */ \"y\",]}";
  auto two = AppendItem(inline_items, {"a"}, "z");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(*two, "{\"a\": [\"x\", /* y */ \"y\", \"z\",]}");
  EXPECT_EQ(RemoveItem(*two, {"a"}, 2).value_or(""), inline_items);
  EXPECT_EQ(ReplaceItem(*two, {"a"}, 2, "w").value_or(""), "{\"a\": [\"x\", /* y */ \"y\", \"w\",]}");
  // The first item goes with its comma and the blank after it.
  EXPECT_EQ(RemoveItem(*two, {"a"}, 0).value_or(""), "{\"a\": [/* y */ \"y\", \"z\",]}");
  EXPECT_FALSE(RemoveItem(*two, {"a"}, 3).has_value());
  EXPECT_FALSE(AppendItem(*two, {"b"}, 1).has_value());
}

TEST(JsoncEditTest, RemovesAFirstOrMiddleMemberWithItsComma) {
  const std::string text = "{\n  \"a\": 1, // a\n  \"b\": 2,\n  \"c\": 3\n}";
  EXPECT_EQ(Remove(text, {"a"}), "{ // a\n  \"b\": 2,\n  \"c\": 3\n}");
  EXPECT_EQ(Remove(text, {"b"}), "{\n  \"a\": 1, // a\n  \"c\": 3\n}");
  EXPECT_EQ(Parse(Remove(text, {"b"})).value_or(OrderedJson()), OrderedJson::parse(R"({"a": 1, "c": 3})"));
  EXPECT_EQ(Parse(Remove(text, {"c"})).value_or(OrderedJson()), OrderedJson::parse(R"({"a": 1, "b": 2})"));
  EXPECT_FALSE(RemoveMember(text, {"z"}).has_value());
}

}  // namespace
}  // namespace telic::cli::jsonc
