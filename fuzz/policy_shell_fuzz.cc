// Fuzzes the exact-command check of shell.execute (src/policy/shell_command.h).
// Invariants:
//   - an accepted command passes an independent reference check: printable
//     ASCII only, single spaces between words, none of the shell's operator,
//     quoting, expansion or comment characters, no leading assignment or
//     keyword, at most 2048 bytes;
//   - the engine allows the command exactly when it is accepted and
//     allowlisted byte for byte (never for a different allowlist entry);
//   - a shell.inspect target is allowed only if it is one of the six.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/engine.h"
#include "policy/shell_command.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

bool ReferenceAccepts(std::string_view command) {
  if (command.empty() || command.size() > 2048) return false;
  if (command.front() == ' ' || command.back() == ' ' || command.find("  ") != std::string_view::npos) return false;
  for (char c : command) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F) return false;
    if (std::string_view(";&|<>()$`'\"\\*?[]{}!^").find(c) != std::string_view::npos) return false;
  }
  size_t word = 0;
  while (word < command.size()) {
    char first = command[word];
    if (first == '#' || first == '~' || first == '=') return false;
    word = command.find(' ', word);
    if (word == std::string_view::npos) break;
    ++word;
  }
  std::string_view head = command.substr(0, command.find(' '));
  size_t eq = head.find('=');
  if (eq != std::string_view::npos && eq > 0) {
    bool name = true;
    for (size_t i = 0; i < eq; ++i) {
      char c = head[i];
      bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9') ||
                (c == '+' && i == eq - 1 && i > 0);
      name = name && ok;
    }
    if (name) return false;
  }
  for (std::string_view keyword : {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while",
                                   "until", "do", "done", "in", "function", "time", "coproc", "[[", "]]", "!", "{",
                                   "}", "eval", "exec", "source", ".", "trap", "alias"}) {
    if (head == keyword) return false;
  }
  return command != "authorized" && command != "**";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace telic::policy;
  const std::string command(reinterpret_cast<const char*>(data), size);
  const bool accepted = CheckExactCommand(command).has_value();
  if (accepted) Check(ReferenceAccepts(command));

  Check(CommandAllowed(command, {command}) == accepted);
  Check(!CommandAllowed(command, {command + " x"}));
  RepoRoot root;
  Layer exact{"fuzz", {{"shell", {{"executeAllowlist", {command}}}}}, nullptr};
  Check(Authorize({"shell.execute", command, {}, {}}, {exact}, root).allowed == accepted);
  Layer everything{"fuzz", {{"shell", {{"executeAllowlist", {"**"}}}}}, nullptr};
  Check(Authorize({"shell.execute", command, {}, {}}, {everything}, root).allowed == accepted);
  Layer other{"fuzz", {{"shell", {{"executeAllowlist", {"npm test"}}}}}, nullptr};
  Check(!Authorize({"shell.execute", command, {}, {}}, {other}, root).allowed || command == "npm test");
  Layer denied{"fuzz", {{"shell", {{"executeAllowlist", {"**"}}}}}, {{"shell", {{"executeAllowlist", {command}}}}}};
  Check(!Authorize({"shell.execute", command, {}, {}}, {denied}, root).allowed);

  Layer inspect{"fuzz", {{"shell", {{"inspect", true}}}}, nullptr};
  const bool typed = command == "git.status" || command == "git.diff" || command == "git.log" ||
                     command == "network.listen" || command == "process.list" || command == "runtime.logs";
  Check(Authorize({"shell.inspect", command, {}, {}}, {inspect}, root).allowed == typed);
  return 0;
}
