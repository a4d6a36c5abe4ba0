// What the CLI's human output may assume about the terminal it writes to:
// whether to colour (ANSI SGR) and how many columns a line may take.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/state_dir.h"

namespace telic::cli {

enum class ColorChoice { kAuto, kAlways, kNever };

// "auto" | "always" | "never"; kInvalidArgument otherwise.
Result<ColorChoice> ParseColorChoice(std::string_view text);

// The names ParseColorChoice accepts, for --color's check and completion.
inline constexpr std::string_view kColorChoices[] = {"auto", "always", "never"};

// The output settings of one command.
struct Terminal {
  bool color = false;
  // The columns a line may take; 0 when unknown (output to a pipe or file
  // without COLUMNS): tables keep their full, script-friendly layout.
  size_t width = 0;
};

// The facts DecideTerminal reads: the environment and what stdout is.
struct TerminalFacts {
  store::Environment env;
  bool stdout_is_tty = false;
  std::optional<size_t> tty_columns;  // the window's width (TIOCGWINSZ) when stdout is a terminal
};

// The settings for `choice` given `facts`. Colour: always / never as told;
// auto colours only a terminal, and not when NO_COLOR is set to anything
// non-empty (no-color.org) or TERM is "dumb". Width: COLUMNS when it is a
// number from 20 to 1000, else the terminal's width, else 0.
Terminal DecideTerminal(ColorChoice choice, const TerminalFacts& facts);

// The facts of this process (environment, isatty(1), ioctl TIOCGWINSZ).
TerminalFacts CurrentTerminalFacts();

// The styles the CLI paints with.
enum class Style { kPlain, kBold, kDim, kGreen, kYellow, kRed, kCyan };

// `text` wrapped in the SGR sequence of `style` (and a reset) when `color`;
// `text` unchanged otherwise. `text` must already be terminal-safe
// (TerminalText): painting adds only the escape sequences.
std::string Paint(std::string_view text, Style style, bool color);

// The style of a run status: completed green; partial and
// awaiting_clarification yellow; blocked red; cancelled dim; running cyan;
// anything else plain.
Style StatusStyle(std::string_view status);

}  // namespace telic::cli
