// Text helpers: JavaScript string semantics (UTF-16 length, String#trim) on UTF-8.
#include "base/text.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace telic {
namespace {

const std::string kEAcute = "\xC3\xA9";             // U+00E9, 2 bytes, 1 unit
const std::string kEuro = "\xE2\x82\xAC";           // U+20AC, 3 bytes, 1 unit
const std::string kGrinning = "\xF0\x9F\x98\x80";   // U+1F600, 4 bytes, 2 units
const std::string kNbsp = "\xC2\xA0";               // U+00A0
const std::string kBom = "\xEF\xBB\xBF";            // U+FEFF
const std::string kLineSeparator = "\xE2\x80\xA8";  // U+2028
const std::string kParaSeparator = "\xE2\x80\xA9";  // U+2029
const std::string kIdeographicSpace = "\xE3\x80\x80";  // U+3000
const std::string kZeroWidthSpace = "\xE2\x80\x8B";    // U+200B (not whitespace in JS)

// UTF-8 encoding of a BMP code point.
std::string Utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// ---------------------------------------------------------------------------
// Utf16Length

TEST(LowerHexTest, TwoLowercaseDigitsPerByte) {
  using namespace std::string_literals;
  EXPECT_EQ(LowerHex(""), "");
  EXPECT_EQ(LowerHex("\x00\xff\x10" "a"s), "00ff1061");
  EXPECT_EQ(LowerHex("\xAB\xCD"), "abcd");
}

TEST(Utf16LengthTest, Ascii) {
  EXPECT_EQ(Utf16Length(""), 0u);
  EXPECT_EQ(Utf16Length("a"), 1u);
  EXPECT_EQ(Utf16Length("hello world"), 11u);
  EXPECT_EQ(Utf16Length(std::string(1, '\0')), 1u);
}

TEST(Utf16LengthTest, TwoAndThreeByteCharactersAreOneUnit) {
  EXPECT_EQ(Utf16Length(kEAcute), 1u);
  EXPECT_EQ(Utf16Length(kEuro), 1u);
  EXPECT_EQ(Utf16Length(kBom), 1u);
  EXPECT_EQ(Utf16Length("\xEF\xBF\xBF"), 1u);  // U+FFFF
  EXPECT_EQ(Utf16Length("caf" + kEAcute), 4u);
}

TEST(Utf16LengthTest, FourByteCharactersAreTwoUnits) {
  EXPECT_EQ(Utf16Length(kGrinning), 2u);
  EXPECT_EQ(Utf16Length("\xF4\x8F\xBF\xBF"), 2u);  // U+10FFFF
  EXPECT_EQ(Utf16Length("\xF0\x90\x80\x80"), 2u);  // U+10000
}

TEST(Utf16LengthTest, Mixed) {
  // "a" + é + € + 😀 + "b" = 1 + 1 + 1 + 2 + 1
  EXPECT_EQ(Utf16Length("a" + kEAcute + kEuro + kGrinning + "b"), 6u);
  EXPECT_EQ(Utf16Length(Repeat(kGrinning, 100)), 200u);
}

// ---------------------------------------------------------------------------
// TrimJs / HasNonWhitespace

TEST(TrimJsTest, AsciiWhitespace) {
  EXPECT_EQ(TrimJs("  abc  "), "abc");
  EXPECT_EQ(TrimJs("\t\n\v\f\r abc \r\n\t\v\f"), "abc");
  EXPECT_EQ(TrimJs("abc"), "abc");
  EXPECT_EQ(TrimJs(""), "");
  EXPECT_EQ(TrimJs("   "), "");
}

TEST(TrimJsTest, KeepsInteriorWhitespace) {
  EXPECT_EQ(TrimJs("  a b\n\tc  "), "a b\n\tc");
  EXPECT_EQ(TrimJs(kNbsp + "a" + kNbsp + "b" + kNbsp), "a" + kNbsp + "b");
}

TEST(TrimJsTest, UnicodeWhitespace) {
  EXPECT_EQ(TrimJs(kNbsp + "x" + kNbsp), "x");
  EXPECT_EQ(TrimJs(kBom + "x" + kBom), "x");
  EXPECT_EQ(TrimJs(kLineSeparator + "x" + kLineSeparator), "x");
  EXPECT_EQ(TrimJs(kParaSeparator + "x" + kParaSeparator), "x");
  EXPECT_EQ(TrimJs(kIdeographicSpace + "x" + kIdeographicSpace), "x");
  EXPECT_EQ(TrimJs(kNbsp + kBom + " " + kLineSeparator + kIdeographicSpace + "x" + kIdeographicSpace + "\n" + kBom),
            "x");
}

TEST(TrimJsTest, EveryJsWhitespaceCodePoint) {
  // WhiteSpace and LineTerminator of ECMA-262 (Zs category included).
  std::vector<char32_t> whitespace = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20,   0xA0,   0x1680, 0x2028,
                                      0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF};
  for (char32_t cp = 0x2000; cp <= 0x200A; ++cp) whitespace.push_back(cp);
  for (char32_t cp : whitespace) {
    std::string ws = Utf8(cp);
    EXPECT_EQ(TrimJs(ws + "x" + ws), "x") << std::hex << static_cast<unsigned>(cp);
    EXPECT_EQ(TrimJs(ws), "") << std::hex << static_cast<unsigned>(cp);
    EXPECT_FALSE(HasNonWhitespace(ws + ws)) << std::hex << static_cast<unsigned>(cp);
  }
}

TEST(TrimJsTest, DoesNotTrimNonWhitespaceLookalikes) {
  // JavaScript's trim keeps U+200B, U+0085 and U+180E (checked with node v20).
  EXPECT_EQ(TrimJs(kZeroWidthSpace + "x" + kZeroWidthSpace), kZeroWidthSpace + "x" + kZeroWidthSpace);
  EXPECT_EQ(TrimJs(kZeroWidthSpace), kZeroWidthSpace);
  EXPECT_EQ(TrimJs(Utf8(0x85)), Utf8(0x85));
  EXPECT_EQ(TrimJs(Utf8(0x180E)), Utf8(0x180E));
  EXPECT_EQ(TrimJs(Utf8(0x200C)), Utf8(0x200C));
  EXPECT_EQ(TrimJs(std::string(1, '\0')), std::string(1, '\0'));
  EXPECT_EQ(TrimJs("\x1f"), "\x1f");
  EXPECT_TRUE(HasNonWhitespace(kZeroWidthSpace));
}

TEST(TrimJsTest, StopsAtMultiByteNonWhitespace) {
  EXPECT_EQ(TrimJs(" " + kEAcute + kNbsp), kEAcute);
  EXPECT_EQ(TrimJs(kIdeographicSpace + kGrinning + " "), kGrinning);
  EXPECT_EQ(TrimJs(kEuro + kIdeographicSpace + kEuro), kEuro + kIdeographicSpace + kEuro);
  // U+20A9 has the same lead byte (E2) as U+2000..U+202F whitespace.
  EXPECT_EQ(TrimJs("\xE2\x82\xA9 "), "\xE2\x82\xA9");
}

TEST(TrimJsTest, ReturnsViewIntoInput) {
  std::string text = "  abc ";
  std::string_view trimmed = TrimJs(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 3u);
}

TEST(HasNonWhitespaceTest, Basics) {
  EXPECT_FALSE(HasNonWhitespace(""));
  EXPECT_FALSE(HasNonWhitespace(" \t\r\n"));
  EXPECT_FALSE(HasNonWhitespace(kNbsp + kBom + kIdeographicSpace));
  EXPECT_TRUE(HasNonWhitespace(" a "));
  EXPECT_TRUE(HasNonWhitespace(kGrinning));
}

// ---------------------------------------------------------------------------
// CollapseLineBreaks

TEST(CollapseLineBreaksTest, EachRunBecomesOneSpace) {
  EXPECT_EQ(CollapseLineBreaks("a\nb"), "a b");
  EXPECT_EQ(CollapseLineBreaks("a\r\nb"), "a b");
  EXPECT_EQ(CollapseLineBreaks("a\tb"), "a b");
  EXPECT_EQ(CollapseLineBreaks("a\n\n\t\r\nb"), "a b");
  EXPECT_EQ(CollapseLineBreaks("a\nb\nc"), "a b c");
}

TEST(CollapseLineBreaksTest, LeadingAndTrailingRuns) {
  EXPECT_EQ(CollapseLineBreaks("\nabc\n"), " abc ");
  EXPECT_EQ(CollapseLineBreaks("\r\n\t"), " ");
}

TEST(CollapseLineBreaksTest, LeavesOtherCharactersAlone) {
  EXPECT_EQ(CollapseLineBreaks(""), "");
  EXPECT_EQ(CollapseLineBreaks("plain"), "plain");
  EXPECT_EQ(CollapseLineBreaks("a  b"), "a  b");       // spaces are not collapsed
  EXPECT_EQ(CollapseLineBreaks("a \n b"), "a   b");    // only the CR/LF/TAB run is replaced
  EXPECT_EQ(CollapseLineBreaks("a\vb\fc"), "a\vb\fc");  // VT and FF are not line breaks here
  EXPECT_EQ(CollapseLineBreaks(kEAcute + "\n" + kGrinning), kEAcute + " " + kGrinning);
  EXPECT_EQ(CollapseLineBreaks("a" + kLineSeparator + "b"), "a" + kLineSeparator + "b");
}

// ---------------------------------------------------------------------------
// TruncateUtf16

TEST(TruncateUtf16Test, ShortTextUnchanged) {
  EXPECT_EQ(TruncateUtf16("", 0), "");
  EXPECT_EQ(TruncateUtf16("", 5), "");
  EXPECT_EQ(TruncateUtf16("abc", 3), "abc");
  EXPECT_EQ(TruncateUtf16("abc", 100), "abc");
  EXPECT_EQ(TruncateUtf16(kGrinning, 2), kGrinning);
}

TEST(TruncateUtf16Test, CutsAscii) {
  EXPECT_EQ(TruncateUtf16("abcdef", 3), "abc");
  EXPECT_EQ(TruncateUtf16("abcdef", 0), "");
}

TEST(TruncateUtf16Test, NeverSplitsASurrogatePair) {
  // "a😀b" is 4 units; a cut after 2 units falls inside the pair.
  EXPECT_EQ(TruncateUtf16("a" + kGrinning + "b", 1), "a");
  EXPECT_EQ(TruncateUtf16("a" + kGrinning + "b", 2), "a");
  EXPECT_EQ(TruncateUtf16("a" + kGrinning + "b", 3), "a" + kGrinning);
  EXPECT_EQ(TruncateUtf16("a" + kGrinning + "b", 4), "a" + kGrinning + "b");
  EXPECT_EQ(TruncateUtf16(kGrinning, 1), "");
  EXPECT_EQ(TruncateUtf16(Repeat(kGrinning, 3), 5), Repeat(kGrinning, 2));
}

TEST(TruncateUtf16Test, NeverSplitsMultiByteBmpCharacters) {
  EXPECT_EQ(TruncateUtf16(kEuro + kEuro, 1), kEuro);
  EXPECT_EQ(TruncateUtf16(kEAcute + "x" + kEuro, 2), kEAcute + "x");
  EXPECT_EQ(TruncateUtf16(kEAcute + "x" + kEuro, 3), kEAcute + "x" + kEuro);
}

TEST(TruncateUtf16Test, ResultIsAlwaysWithinLimitAndAPrefix) {
  const std::string text = "a" + kEAcute + kGrinning + kEuro + "b" + kGrinning + kGrinning + "c";
  for (size_t max = 0; max <= Utf16Length(text) + 1; ++max) {
    std::string cut = TruncateUtf16(text, max);
    EXPECT_LE(Utf16Length(cut), max);
    EXPECT_EQ(text.compare(0, cut.size(), cut), 0);
    // The cut is greedy: one more code point would exceed the limit (or there is none).
    if (cut.size() < text.size()) {
      std::string longer = TruncateUtf16(text, Utf16Length(cut) + 2);
      EXPECT_GT(Utf16Length(longer), max) << max;
    }
  }
}

// ---------------------------------------------------------------------------
// CleanMessage

TEST(CleanMessageTest, CollapsesAndCutsAt800UnitsByDefault) {
  EXPECT_EQ(CleanMessage("line one\nline two\r\n\tthree"), "line one line two three");
  std::string long_text(1000, 'x');
  EXPECT_EQ(CleanMessage(long_text), std::string(800, 'x'));
  EXPECT_EQ(CleanMessage(std::string(800, 'y')), std::string(800, 'y'));
}

TEST(CleanMessageTest, CutsAfterCollapsing) {
  // "a\n\n\nb" collapses to "a b" (3 units) before the cut.
  EXPECT_EQ(CleanMessage("a\n\n\nbcd", 3), "a b");
}

TEST(CleanMessageTest, CustomLimitKeepsCodePointsWhole) {
  EXPECT_EQ(CleanMessage("ab" + kGrinning, 3), "ab");
  EXPECT_EQ(CleanMessage("ab" + kGrinning, 4), "ab" + kGrinning);
  std::string emojis = Repeat(kGrinning, 500);  // 1000 units
  std::string cleaned = CleanMessage(emojis);
  EXPECT_EQ(Utf16Length(cleaned), 800u);
  EXPECT_EQ(cleaned, Repeat(kGrinning, 400));
  EXPECT_EQ(CleanMessage("x" + emojis).size(), 1u + 399u * 4u);  // 1 + 399·2 = 799 units
}

}  // namespace
}  // namespace telic

namespace telic {
namespace {

// Found by fuzz/mcp_line_fuzz: a line starting with a 4-byte lead byte and
// only 3 bytes long made TrimJs read past the end. Every helper must be safe
// on arbitrary bytes, since they run before (or without) UTF-8 validation.
TEST(TextInvalidUtf8Test, HelpersNeverReadPastTheEnd) {
  for (std::string bytes : {std::string("\xfa\x00\x03", 3), std::string("\xf0\x9f"), std::string("\xe2"),
                            std::string("\x80\x80"), std::string("ok \xff"), std::string("\xc3")}) {
    EXPECT_LE(Utf16Length(bytes), bytes.size());
    EXPECT_LE(TrimJs(bytes).size(), bytes.size());
    EXPECT_LE(TruncateUtf16(bytes, 1).size(), bytes.size());
    EXPECT_LE(CleanMessage(bytes).size(), bytes.size());
    (void)HasNonWhitespace(bytes);
  }
}

}  // namespace
}  // namespace telic
