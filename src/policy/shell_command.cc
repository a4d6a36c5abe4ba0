#include "policy/shell_command.h"

#include <algorithm>
#include <array>

#include "policy/utf8_scan.h"

namespace telic::policy {
namespace {

constexpr size_t kMaxCommandBytes = 2048;

std::unexpected<Error> Deny(std::string reason) { return Fail(ErrorCode::kPermissionDenied, std::move(reason)); }

std::string Quoted(char c) { return std::string("'") + c + "'"; }

std::string DescribeNonAscii(char32_t cp) {
  std::string name = "non-ASCII character " + CodePointName(cp);
  if (cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F ||
      cp == 0x3000) {
    return name + " (a Unicode space)";
  }
  if (cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
      (cp >= 0x2066 && cp <= 0x2069)) {
    return name + " (a bidirectional control)";
  }
  if ((cp >= 0x200B && cp <= 0x200D) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || cp == 0x00AD ||
      cp == 0x180E) {
    return name + " (an invisible character)";
  }
  if (cp >= 0xFF01 && cp <= 0xFF5E) {
    return name + " (a fullwidth lookalike of '" + static_cast<char>(cp - 0xFEE0) + "')";
  }
  return name + " (only printable ASCII is allowed)";
}

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// A word of the form NAME=... or NAME+=... (a shell variable assignment).
bool IsAssignment(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  std::string_view name = word.substr(0, eq);
  if (name.back() == '+') name.remove_suffix(1);
  if (name.empty() || !IsNameStart(name.front())) return false;
  return std::all_of(name.begin(), name.end(), IsNameChar);
}

constexpr std::array<std::string_view, 22> kReservedWords = {
    "if",    "then",   "else", "elif", "fi",   "case",   "esac",  "for",  "select", "while", "until",
    "do",    "done",   "in",   "function", "time", "coproc", "[[", "]]", "!",     "{",     "}"};
constexpr std::array<std::string_view, 6> kCodeRunners = {"eval", "exec", "source", ".", "trap", "alias"};

Status CheckCharacters(std::string_view command) {
  for (size_t i = 0; i < command.size();) {
    auto u = static_cast<unsigned char>(command[i]);
    if (u >= 0x80) {
      char32_t cp;
      size_t length;
      if (!DecodeUtf8At(command, i, cp, length)) return Deny("invalid UTF-8 in command");
      return Deny(DescribeNonAscii(cp));
    }
    if (u == '\n') return Deny("newline in command (a command separator)");
    if (u == '\r') return Deny("carriage return in command");
    if (u == '\t') return Deny("tab in command (only single spaces may separate words)");
    if (u == 0) return Deny("NUL byte in command");
    if (u < 0x20 || u == 0x7F) return Deny("control character " + CodePointName(u) + " in command");
    ++i;
  }
  return Ok();
}

// The first shell operator or expansion character of `command`, denied with
// its name. Size: one case per shell metacharacter, kept as one table so a
// reader sees every character the shell treats specially in one place.
Status CheckOperators(std::string_view command) {
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    const char next = i + 1 < command.size() ? command[i + 1] : '\0';
    const char prev = i > 0 ? command[i - 1] : '\0';
    const bool word_start = i == 0 || prev == ' ';
    switch (c) {
      case ';':
        return Deny("';' command separator");
      case '&':
        if (next == '&') return Deny("'&&' command list");
        if (next == '>') return Deny("'&>' redirection");
        return Deny("'&' background operator");
      case '|':
        if (next == '|') return Deny("'||' command list");
        return Deny("'|' pipe");
      case '<':
        if (next == '<') return Deny("'<<' here-document");
        if (next == '(') return Deny("'<(' process substitution");
        return Deny("'<' redirection");
      case '>':
        if (next == '(') return Deny("'>(' process substitution");
        return Deny("'>' redirection");
      case '`':
        return Deny("backtick command substitution");
      case '$':
        if (next == '(') return Deny("'$(' command substitution");
        if (next == '{') return Deny("'${' parameter expansion");
        if (next == '[') return Deny("'$[' arithmetic expansion");
        if (next == '\'' || next == '"') return Deny("'$' quoting");
        return Deny("'$' variable expansion");
      case '(':
      case ')':
        return Deny(Quoted(c) + " subshell or grouping");
      case '{':
      case '}':
        return Deny(Quoted(c) + " brace expansion or grouping");
      case '\'':
      case '"':
        return Deny(Quoted(c) + " quote (quotes change word boundaries)");
      case '\\':
        return Deny("backslash escape");
      case '*':
      case '?':
      case '[':
      case ']':
        return Deny("glob character " + Quoted(c));
      case '!':
        return Deny("'!' history expansion or negation");
      case '^':
        return Deny("'^' (a pipe in the Bourne shell)");
      case '#':
        if (word_start) return Deny("'#' comment");
        break;
      case '~':
        if (word_start || prev == '=' || prev == ':') return Deny("'~' tilde expansion");
        break;
      case '=':
        if (word_start) return Deny("'=' at the start of a word (zsh command-path expansion)");
        break;
      default:
        break;
    }
  }
  return Ok();
}

}  // namespace

Status CheckExactCommand(std::string_view command) {
  if (command.empty()) return Deny("empty command");
  if (command.size() > kMaxCommandBytes) return Deny("command longer than 2048 bytes");
  TELIC_RETURN_IF_ERROR(CheckCharacters(command));
  if (command == "authorized") return Deny("'authorized' is a placeholder, not a command");
  TELIC_RETURN_IF_ERROR(CheckOperators(command));
  if (command.front() == ' ') return Deny("leading whitespace in command");
  if (command.back() == ' ') return Deny("trailing whitespace in command");
  if (command.find("  ") != std::string_view::npos) return Deny("run of multiple spaces in command");
  std::string_view first = command.substr(0, command.find(' '));
  if (IsAssignment(first)) return Deny("leading variable assignment '" + std::string(first) + "'");
  if (std::find(kReservedWords.begin(), kReservedWords.end(), first) != kReservedWords.end()) {
    return Deny("shell keyword '" + std::string(first) + "'");
  }
  if (std::find(kCodeRunners.begin(), kCodeRunners.end(), first) != kCodeRunners.end()) {
    return Deny("'" + std::string(first) + "' runs its arguments as shell code");
  }
  return Ok();
}

bool CommandAllowed(std::string_view command, const std::vector<std::string>& allowlist) {
  if (!CheckExactCommand(command)) return false;
  return std::find(allowlist.begin(), allowlist.end(), command) != allowlist.end();
}

const std::vector<std::string>& ShellInspectTargets() {
  static const std::vector<std::string> kTargets = {"git.status",   "git.diff",     "git.log",
                                                    "network.listen", "process.list", "runtime.logs"};
  return kTargets;
}

bool IsShellInspectTarget(std::string_view target) {
  const auto& targets = ShellInspectTargets();
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

Status CheckShellInspectTarget(std::string_view target) {
  if (IsShellInspectTarget(target)) return Ok();
  return Deny("shell.inspect target must be one of git.status, git.diff, git.log, network.listen, process.list, "
              "runtime.logs");
}

}  // namespace telic::policy
