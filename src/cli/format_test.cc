// Plain-text tables for the CLI (format.h).
#include "cli/format.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/text.h"

namespace telic::cli {
namespace {

const std::string kEllipsis = "\xE2\x80\xA6";      // U+2026, 1 UTF-16 unit
const std::string kEAcute = "\xC3\xA9";            // 1 unit
const std::string kGrinning = "\xF0\x9F\x98\x80";  // 2 units

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FormatTableTest, AlignsColumnsWithTwoSpacesAndUnderlinesTheHeader) {
  std::string table = FormatTable({"ID", "NAME", "STATUS"}, {{"1", "alpha", "running"}, {"22", "b", "done"}});
  EXPECT_EQ(table,
            "ID  NAME   STATUS\n"
            "--  -----  -------\n"
            "1   alpha  running\n"
            "22  b      done\n");
}

TEST(FormatTableTest, HeaderWiderThanCells) {
  EXPECT_EQ(FormatTable({"IDENTIFIER", "X"}, {{"a", "b"}}),
            "IDENTIFIER  X\n"
            "----------  -\n"
            "a           b\n");
}

TEST(FormatTableTest, NoRowsGivesHeaderAndRule) {
  EXPECT_EQ(FormatTable({"A", "BB"}, {}), "A  BB\n-  --\n");
}

TEST(FormatTableTest, NoTrailingSpaces) {
  std::string table = FormatTable({"A", "B"}, {{"long value", ""}, {"x", "y"}});
  for (const auto& line : SplitLines(table)) {
    ASSERT_FALSE(line.empty());
    EXPECT_NE(line.back(), ' ') << "'" << line << "'";
  }
  EXPECT_EQ(table,
            "A           B\n"
            "----------  -\n"
            "long value\n"
            "x           y\n");
}

TEST(FormatTableTest, ShortRowsAndExtraCells) {
  // A row with fewer cells than the header ends early; cells past the header are dropped.
  EXPECT_EQ(FormatTable({"A", "B"}, {{"1"}, {"2", "3", "ignored"}}),
            "A  B\n"
            "-  -\n"
            "1\n"
            "2  3\n");
}

TEST(FormatTableTest, TruncatesLongCellsWithEllipsis) {
  std::string table = FormatTable({"C"}, {{"abcdefgh"}, {"abcde"}, {"abcdef"}}, 5);
  EXPECT_EQ(table, "C\n-----\nabcd" + kEllipsis + "\nabcde\nabcd" + kEllipsis + "\n");
}

TEST(FormatTableTest, TruncatedCellIsExactlyMaxWidthUnits) {
  std::string table = FormatTable({"C", "D"}, {{std::string(100, 'x'), "end"}}, 60);
  auto lines = SplitLines(table);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], std::string(59, 'x') + kEllipsis + "  end");
  EXPECT_EQ(lines[1], std::string(60, '-') + "  ---");
  EXPECT_EQ(Utf16Length(lines[2].substr(0, lines[2].find("  end"))), 60u);
}

TEST(FormatTableTest, DefaultMaxWidthIsSixty) {
  std::string sixty(60, 'y');
  EXPECT_EQ(FormatTable({"C"}, {{sixty}}), "C\n" + std::string(60, '-') + "\n" + sixty + "\n");
  EXPECT_EQ(FormatTable({"C"}, {{sixty + "z"}}),
            "C\n" + std::string(60, '-') + "\n" + std::string(59, 'y') + kEllipsis + "\n");
}

TEST(FormatTableTest, HeaderIsNotTruncated) {
  EXPECT_EQ(FormatTable({"LONGHEADER"}, {{"abcdefgh"}}, 4), "LONGHEADER\n----------\nabc" + kEllipsis + "\n");
}

TEST(FormatTableTest, MultiByteCellsAlignByUtf16Units) {
  // é is 2 bytes but 1 unit; padding must follow units, not bytes.
  std::string table = FormatTable({"A", "B"}, {{"caf" + kEAcute, "1"}, {"tea", "2"}});
  EXPECT_EQ(table,
            "A     B\n"
            "----  -\n"
            "caf" + kEAcute + "  1\n"
            "tea   2\n");
}

TEST(FormatTableTest, AstralCellsCountTwoUnits) {
  std::string table = FormatTable({"E", "N"}, {{kGrinning, "1"}, {"ab", "2"}, {"a", "3"}});
  EXPECT_EQ(table,
            "E   N\n"
            "--  -\n" +
                kGrinning + "  1\n"
                "ab  2\n"
                "a   3\n");
}

TEST(FormatTableTest, TruncationNeverSplitsACodePoint) {
  // "ab😀c" is 5 units; max 4 keeps 3 units, which would split the emoji.
  std::string table = FormatTable({"C"}, {{"ab" + kGrinning + "c"}}, 4);
  EXPECT_EQ(table, "C\n---\nab" + kEllipsis + "\n");
  // "a😀😀b" (6 units), max 4 keeps "a😀" (3 units).
  EXPECT_EQ(FormatTable({"C"}, {{"a" + kGrinning + kGrinning + "b"}}, 4), "C\n----\na" + kGrinning + kEllipsis + "\n");
  // Multi-byte BMP text: "ééééé" (5 units), max 3.
  EXPECT_EQ(FormatTable({"C"}, {{kEAcute + kEAcute + kEAcute + kEAcute + kEAcute}}, 3),
            "C\n---\n" + kEAcute + kEAcute + kEllipsis + "\n");
}

TEST(FormatTableTest, LineBreaksInCellsAreCollapsed) {
  // Column A is 9 units wide ("two lines").
  EXPECT_EQ(FormatTable({"A", "B"}, {{"two\nlines", "x"}, {"tab\there", "y"}, {"crlf\r\n\r\nrun", "z"}}),
            "A" + std::string(10, ' ') + "B\n" +   //
                std::string(9, '-') + "  -\n" +    //
                "two lines  x\n" +                  //
                "tab here" + std::string(3, ' ') + "y\n" +  //
                "crlf run" + std::string(3, ' ') + "z\n");
}

TEST(FormatTableTest, CollapsingHappensBeforeMeasuringWidth) {
  // "a\n\n\n\nb" is 6 units raw but 3 after collapsing, so it is not cut at max 3.
  EXPECT_EQ(FormatTable({"C"}, {{"a\n\n\n\nb"}}, 3), "C\n---\na b\n");
}

// covers issue 40 item 3: text from a ledger or a bundle cannot drive the terminal
TEST(TerminalTextTest, EscapesControlCharactersAndInvalidUtf8) {
  EXPECT_EQ(TerminalText("\x1b]0;pwned\a\x1b[2J"), "\\x1b]0;pwned\\x07\\x1b[2J");
  EXPECT_EQ(TerminalText(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(TerminalText("tab\there\nnl\x7f"), "tab\\x09here\\x0anl\\x7f");
  EXPECT_EQ(TerminalText("csi \xC2\x9B" "2J next \xC2\x85"), "csi \\u009b2J next \\u0085");
  EXPECT_EQ(TerminalText("bad \xFF\xC3 end \xED\xA0\x80"), "bad \\xff\\xc3 end \\xed\\xa0\\x80");
  // Printable text, other scripts and emoji included, is unchanged.
  for (const std::string& fine : {std::string("run 00000000-0000-4000-8000-000000000001"), kEAcute + " " + kGrinning,
                                  std::string("\xC2\xA0nbsp \xE2\x80\xA6 \\x1b literal")}) {
    EXPECT_EQ(TerminalText(fine), fine);
  }
}

TEST(TerminalJsonTest, IsTheSameJsonWithDelAndC1Escaped) {
  Json value = {{"a", "\x1b[2J"}, {"b", "x\x7fy\xC2\x9Bz"}, {"c", kEAcute}};
  std::string shown = TerminalJson(value);
  EXPECT_EQ(shown, "{\"a\":\"\\u001b[2J\",\"b\":\"x\\u007fy\\u009bz\",\"c\":\"" + kEAcute + "\"}");
  EXPECT_EQ(Json::parse(shown), value);
  EXPECT_EQ(TerminalJson(Json("\xFF")), "\"\xEF\xBF\xBD\"");  // invalid UTF-8 is replaced, never thrown
  EXPECT_EQ(TerminalJson(value, 2).find('\x1b'), std::string::npos);
}

TEST(FormatTableTest, CellsAreShownThroughTerminalText) {
  std::string table = FormatTable({"RUN", "PHASE"}, {{"r\x1b[2Jx", "a\nb"}});
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("r\\x1b[2Jx"), std::string::npos) << table;
  EXPECT_NE(table.find("a b"), std::string::npos) << table;
}

TEST(TableLayoutTest, TheFlexibleColumnTakesWhatTheWidthLeaves) {
  TableLayout layout;
  layout.width = 30;
  layout.flex = 1;
  std::string table = FormatTable({"ID", "TEXT"}, {{"abc", std::string(100, 'x')}, {"de", "short"}}, layout);
  // ID is 3 wide, two spaces between: TEXT gets 25.
  EXPECT_EQ(SplitLines(table),
            (std::vector<std::string>{"ID   TEXT", "---  " + std::string(25, '-'), "abc  " + std::string(24, 'x') + kEllipsis,
                                      "de   short"}));
  // A short flexible column is not padded out to the width.
  EXPECT_EQ(FormatTable({"ID", "TEXT"}, {{"a", "b"}}, layout), "ID  TEXT\n--  ----\na   b\n");
  // Without a width the flexible column is cut at max_width like the rest.
  layout.width = 0;
  layout.max_width = 10;
  EXPECT_EQ(SplitLines(FormatTable({"ID", "TEXT"}, {{"a", std::string(20, 'y')}}, layout))[2],
            "a   " + std::string(9, 'y') + kEllipsis);
}

TEST(TableLayoutTest, ATooNarrowWidthStillLeavesTheFlexibleColumnItsMinimum) {
  TableLayout layout;
  layout.width = 20;
  layout.flex = 1;
  std::string table = FormatTable({"ID", "TEXT"}, {{std::string(18, 'i'), std::string(40, 't')}}, layout);
  EXPECT_EQ(SplitLines(table)[2], std::string(18, 'i') + "  " + std::string(kMinFlexWidth - 1, 't') + kEllipsis);
}

TEST(TableLayoutTest, ColourPaintsTheHeaderAndStyledCellsWithoutShiftingColumns) {
  TableLayout layout;
  layout.color = true;
  layout.style = [](size_t column, const std::string& cell) { return column == 0 && cell == "ok" ? Style::kGreen : Style::kPlain; };
  std::string table = FormatTable({"S", "N"}, {{"ok", "1"}, {"bad", "2"}}, layout);
  EXPECT_EQ(SplitLines(table), (std::vector<std::string>{"\x1b[1mS\x1b[0m    \x1b[1mN\x1b[0m",
                                                         "\x1b[2m---\x1b[0m  \x1b[2m-\x1b[0m",
                                                         "\x1b[32mok\x1b[0m   1", "bad  2"}));
  layout.color = false;
  EXPECT_EQ(FormatTable({"S", "N"}, {{"ok", "1"}}, layout), "S   N\n--  -\nok  1\n");
}

TEST(OneLineTest, CutsToTheWidthWithAnEllipsis) {
  EXPECT_EQ(OneLine("two\nlines", 0), "two lines");
  EXPECT_EQ(OneLine("abcdef", 4), "abc" + kEllipsis);
  EXPECT_EQ(OneLine("a\x1b", 10), "a\\x1b");
}

TEST(ReportFailureTest, TheErrorLineIsEscaped) {
  std::ostringstream err;
  EXPECT_EQ(ReportFailure(err, Error(ErrorCode::kNotFound, "Run \x1b]0;x\a not found")), 1);
  EXPECT_EQ(err.str(), "telic: Run \\x1b]0;x\\x07 not found\n");
}

}  // namespace
}  // namespace telic::cli
