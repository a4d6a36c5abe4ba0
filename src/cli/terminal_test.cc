#include "cli/terminal.h"

#include <gtest/gtest.h>

namespace telic::cli {
namespace {

TerminalFacts Facts(bool tty, store::Environment env = {}, std::optional<size_t> columns = std::nullopt) {
  TerminalFacts facts;
  facts.stdout_is_tty = tty;
  facts.env = std::move(env);
  facts.tty_columns = columns;
  return facts;
}

TEST(TerminalTest, AutoColoursOnlyATerminal) {
  EXPECT_TRUE(DecideTerminal(ColorChoice::kAuto, Facts(true)).color);
  EXPECT_FALSE(DecideTerminal(ColorChoice::kAuto, Facts(false)).color);
}

TEST(TerminalTest, NoColorAndADumbTerminalTurnAutoOff) {
  EXPECT_FALSE(DecideTerminal(ColorChoice::kAuto, Facts(true, {{"NO_COLOR", "1"}})).color);
  EXPECT_FALSE(DecideTerminal(ColorChoice::kAuto, Facts(true, {{"TERM", "dumb"}})).color);
  // An empty NO_COLOR is not set (no-color.org).
  EXPECT_TRUE(DecideTerminal(ColorChoice::kAuto, Facts(true, {{"NO_COLOR", ""}})).color);
}

TEST(TerminalTest, AnExplicitChoiceWinsOverTheEnvironment) {
  EXPECT_TRUE(DecideTerminal(ColorChoice::kAlways, Facts(false, {{"NO_COLOR", "1"}})).color);
  EXPECT_FALSE(DecideTerminal(ColorChoice::kNever, Facts(true)).color);
}

TEST(TerminalTest, WidthComesFromColumnsThenTheTerminal) {
  EXPECT_EQ(DecideTerminal(ColorChoice::kAuto, Facts(false)).width, 0u);
  EXPECT_EQ(DecideTerminal(ColorChoice::kAuto, Facts(true, {}, 132)).width, 132u);
  EXPECT_EQ(DecideTerminal(ColorChoice::kAuto, Facts(false, {{"COLUMNS", "90"}})).width, 90u);
  EXPECT_EQ(DecideTerminal(ColorChoice::kAuto, Facts(true, {{"COLUMNS", "90"}}, 132)).width, 90u);
  // Nonsense in COLUMNS is ignored.
  for (const char* bad : {"abc", "-5", "5", "90x", "100000", ""}) {
    EXPECT_EQ(DecideTerminal(ColorChoice::kAuto, Facts(true, {{"COLUMNS", bad}}, 100)).width, 100u) << bad;
  }
  // A window's width is not read when stdout is not a terminal.
  EXPECT_EQ(DecideTerminal(ColorChoice::kAuto, Facts(false, {}, 132)).width, 0u);
}

TEST(TerminalTest, ParseColorChoiceAcceptsTheThreeNames) {
  EXPECT_EQ(*ParseColorChoice("auto"), ColorChoice::kAuto);
  EXPECT_EQ(*ParseColorChoice("always"), ColorChoice::kAlways);
  EXPECT_EQ(*ParseColorChoice("never"), ColorChoice::kNever);
  EXPECT_FALSE(ParseColorChoice("yes"));
}

TEST(TerminalTest, PaintAddsEscapesOnlyWhenColouring) {
  EXPECT_EQ(Paint("ok", Style::kGreen, true), "\x1b[32mok\x1b[0m");
  EXPECT_EQ(Paint("ok", Style::kGreen, false), "ok");
  EXPECT_EQ(Paint("ok", Style::kPlain, true), "ok");
  EXPECT_EQ(StatusStyle("completed"), Style::kGreen);
  EXPECT_EQ(StatusStyle("blocked"), Style::kRed);
  EXPECT_EQ(StatusStyle("something"), Style::kPlain);
}

}  // namespace
}  // namespace telic::cli
