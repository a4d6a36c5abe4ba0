#include "cli/terminal.h"

#include "domain/vocabulary.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace telic::cli {
namespace {

constexpr size_t kMinColumns = 20;
constexpr size_t kMaxColumns = 1000;

// COLUMNS as a width, when it is a plain number within the accepted range.
std::optional<size_t> ColumnsFromEnvironment(const store::Environment& env) {
  auto it = env.find("COLUMNS");
  if (it == env.end() || it->second.empty()) return std::nullopt;
  size_t value = 0;
  const char* end = it->second.data() + it->second.size();
  auto [ptr, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || ptr != end || value < kMinColumns || value > kMaxColumns) return std::nullopt;
  return value;
}

bool NonEmpty(const store::Environment& env, const char* name) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty();
}

std::string_view Sgr(Style style) {
  switch (style) {
    case Style::kPlain: return "";
    case Style::kBold: return "\x1b[1m";
    case Style::kDim: return "\x1b[2m";
    case Style::kGreen: return "\x1b[32m";
    case Style::kYellow: return "\x1b[33m";
    case Style::kRed: return "\x1b[31m";
    case Style::kCyan: return "\x1b[36m";
  }
  return "";
}

}  // namespace

Result<ColorChoice> ParseColorChoice(std::string_view text) {
  if (text == "auto") return ColorChoice::kAuto;
  if (text == "always") return ColorChoice::kAlways;
  if (text == "never") return ColorChoice::kNever;
  return Fail(ErrorCode::kInvalidArgument, "--color must be auto, always or never");
}

Terminal DecideTerminal(ColorChoice choice, const TerminalFacts& facts) {
  Terminal terminal;
  switch (choice) {
    case ColorChoice::kAlways: terminal.color = true; break;
    case ColorChoice::kNever: terminal.color = false; break;
    case ColorChoice::kAuto: {
      auto term = facts.env.find("TERM");
      bool dumb = term != facts.env.end() && term->second == "dumb";
      terminal.color = facts.stdout_is_tty && !NonEmpty(facts.env, "NO_COLOR") && !dumb;
      break;
    }
  }
  if (auto columns = ColumnsFromEnvironment(facts.env)) {
    terminal.width = *columns;
  } else if (facts.stdout_is_tty && facts.tty_columns && *facts.tty_columns >= kMinColumns) {
    terminal.width = std::min(*facts.tty_columns, kMaxColumns);
  }
  return terminal;
}

TerminalFacts CurrentTerminalFacts() {
  TerminalFacts facts;
  facts.env = store::CurrentEnvironment();
  facts.stdout_is_tty = ::isatty(STDOUT_FILENO) == 1;
  if (facts.stdout_is_tty) {
    struct winsize size {};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) facts.tty_columns = size.ws_col;
  }
  return facts;
}

std::string Paint(std::string_view text, Style style, bool color) {
  std::string_view sgr = Sgr(style);
  if (!color || sgr.empty() || text.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size() + sgr.size() + 4);
  out.append(sgr).append(text).append("\x1b[0m");
  return out;
}

Style StatusStyle(std::string_view status) {
  std::optional<domain::RunStatus> known = domain::RunStatusNamed(status);
  if (!known) return Style::kPlain;
  switch (*known) {
    case domain::RunStatus::kCompleted:
      return Style::kGreen;
    case domain::RunStatus::kPartial:
    case domain::RunStatus::kAwaitingClarification:
      return Style::kYellow;
    case domain::RunStatus::kBlocked:
      return Style::kRed;
    case domain::RunStatus::kCancelled:
      return Style::kDim;
    case domain::RunStatus::kRunning:
      return Style::kCyan;
  }
  return Style::kPlain;
}

}  // namespace telic::cli
