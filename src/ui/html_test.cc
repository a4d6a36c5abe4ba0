#include "ui/html.h"

#include <gtest/gtest.h>

namespace telic::ui {
namespace {

// Issue 19: stored text is data, never markup.
TEST(UiEscapeTest, EscapesMarkupCharactersAndQuotes) {
  EXPECT_EQ(Escape(R"(<script>alert("x")</script> & 'y')"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
  EXPECT_EQ(Escape("plain text · ünïcode ✓"), "plain text · ünïcode ✓");
}

TEST(UiEscapeTest, InvalidUtf8AndNulBecomeReplacementCharacters) {
  EXPECT_EQ(Escape(std::string("a\0b", 3)), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(Escape("\xC3"), "\xEF\xBF\xBD");          // truncated sequence
  EXPECT_EQ(Escape("\xC0\xBC"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '<'
  EXPECT_EQ(Escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(UiEscapeTest, AttributeValuesCannotCloseTheirQuotes) {
  Html html;
  html.Open("a", {{"title", "x\" onmouseover=\"alert(1)"}}).Close("a");
  EXPECT_EQ(html.str(), "<a title=\"x&quot; onmouseover=&quot;alert(1)\"></a>");
}

TEST(UiPathTest, SegmentsArePercentEncoded) {
  EXPECT_EQ(EncodeComponent("a b/c?d#e<f>"), "a%20b%2Fc%3Fd%23e%3Cf%3E");
  EXPECT_EQ(RunPath("r/../x"), "/ui/runs/r%2F..%2Fx");
  EXPECT_EQ(ArtifactPath("run-1", "frame 01"), "/ui/runs/run-1/artifacts/frame%2001");
  EXPECT_EQ(TasksPath(std::nullopt), "/ui/tasks");
  EXPECT_EQ(TasksPath(std::string("r")), "/ui/runs/r/tasks");
  EXPECT_EQ(DecodeComponent("a%20b+c%2F%zz"), "a b c/%zz");
}

TEST(UiPathTest, ParsesArtifactUris) {
  auto ref = ParseArtifactUri("artifact://run-1/evidence-01");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->run_id, "run-1");
  EXPECT_EQ(ref->artifact_id, "evidence-01");
  EXPECT_FALSE(ParseArtifactUri("artifact://run-1"));
  EXPECT_FALSE(ParseArtifactUri("artifact:///x"));
  EXPECT_FALSE(ParseArtifactUri("repo://src/a.py"));
}

TEST(UiLinkTest, ArtifactReferencesInTextBecomeLinksAndTheRestIsEscaped) {
  Html html;
  html.TextWithLinks("see artifact://r1/frame-01, and <b>artifact://r1/x\"onclick=1</b>.");
  EXPECT_EQ(html.str(),
            "see <a href=\"/ui/runs/r1/artifacts/frame-01\" class=\"ref\">artifact://r1/frame-01</a>, and &lt;b&gt;"
            "<a href=\"/ui/runs/r1/artifacts/x\" class=\"ref\">artifact://r1/x</a>&quot;onclick=1&lt;/b&gt;.");
  Html other;
  other.TextWithLinks("javascript:alert(1) artifact://only");
  EXPECT_EQ(other.str(), "javascript:alert(1) artifact://only");
}

TEST(UiJsonTest, PrettyPrintsWithSortedKeysEscapedStringsAndLinkedReferences) {
  Json body = {{"z", 1}, {"a<b", "<img src=x onerror=alert(1)>"}, {"refs", {"artifact://r/a1"}}, {"ok", true},
               {"empty", Json::object()}};
  std::string html = PrettyJsonHtml(body);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"jk\">&quot;a&lt;b&quot;</span>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"/ui/runs/r/artifacts/a1\" class=\"ref\">artifact://r/a1</a>"), std::string::npos);
  EXPECT_LT(html.find("a&lt;b"), html.find("&quot;z&quot;"));  // keys sorted
  EXPECT_NE(html.find("<span class=\"jl\">true</span>"), std::string::npos);
  EXPECT_NE(html.find("{}"), std::string::npos);
}

TEST(UiTextTest, FirstLineDurationAndTimestamps) {
  EXPECT_EQ(FirstLine("  fix it\nthen more"), "fix it…");
  EXPECT_EQ(FirstLine("short"), "short");
  EXPECT_EQ(FirstLine("ééééé", 3), "ééé…");
  EXPECT_EQ(FirstLine("\n\n"), "");
  EXPECT_EQ(FormatDuration(850), "850 ms");
  EXPECT_EQ(FormatDuration(12400), "12.4 s");
  EXPECT_EQ(FormatDuration(185000), "3 min 5 s");
  EXPECT_EQ(FormatDuration(2 * 3600000 + 4 * 60000), "2 h 4 min");
  auto start = ParseIsoMillis("2026-12-02T08:15:53.310Z");
  auto end = ParseIsoMillis("2026-12-02T08:15:54Z");
  ASSERT_TRUE(start && end);
  EXPECT_EQ(*end - *start, 690);
  EXPECT_FALSE(ParseIsoMillis("yesterday"));
  EXPECT_FALSE(ParseIsoMillis("2026-12-02T08:15:53.3x0Z"));
}

}  // namespace
}  // namespace telic::ui

namespace telic::ui {
namespace {

TEST(ShortIdTest, KeepsShortIdsAndShowsTheHeadAndTailOfLongOnes) {
  EXPECT_EQ(ShortId("frame-01"), "frame-01");
  EXPECT_EQ(ShortId("12345678901234567890"), "12345678901234567890");
  EXPECT_EQ(ShortId("2d6ee06c-5c2b-4f1e-9a3d-0123456789ab"), "2d6ee06c-5\xE2\x80\xA6" "6789ab");
  EXPECT_EQ(ShortId("context-545d0a-source-001-abcdef1"), "context-54\xE2\x80\xA6" "bcdef1");
  // A multi-byte character at the cut is kept whole.
  std::string accented = "abcdefghi\xC3\xA9xxxxxxxxxxxxxxxxxx";
  EXPECT_EQ(ShortId(accented).substr(0, 9), "abcdefghi");
}

}  // namespace
}  // namespace telic::ui
