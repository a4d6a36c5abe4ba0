// `telic`'s commands, defined once: each entry's name, one-line help and
// definer, from which the parser (and so the help and its errors), the
// dispatch and the shell completion all derive.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/terminal.h"

namespace telic::cli {

// What a command's handler gets besides its own options. Each is worked
// out on first use: a hook call (broker-gate) reads neither.
class Invocation {
 public:
  Invocation(std::string argv0, ColorChoice color) : argv0_(std::move(argv0)), color_(color) {}

  // This executable's path (install configures it, demo and doctor use it).
  const std::string& self() const;
  // How stdout shows colour and width (DecideTerminal over this process).
  const Terminal& terminal() const;

 private:
  std::string argv0_;
  ColorChoice color_;
  mutable std::optional<std::string> self_;
  mutable std::optional<Terminal> terminal_;
};

// Runs a command whose options are parsed; returns the exit status
// (0 success, 1 the operation failed, 2 usage error, unless documented).
using Handler = std::function<int(const Invocation&)>;

// One top-level command. `define` adds the command's positionals, options
// and nested commands to its CLI11 command `sub`, bound to state that the
// returned handler owns (no state is shared between commands).
struct Command {
  std::string_view name;
  std::string_view help;
  Handler (*define)(CLI::App& sub);
};

// Every top-level command, in the help's order.
std::span<const Command> Commands();

// The command named `name`, or nullptr.
const Command* FindCommand(std::string_view name);

// A parser built from the table (its options point into it: not movable).
struct Parser {
  Parser() = default;
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  std::unique_ptr<CLI::App> app;
  std::string color = "auto";  // --color, accepted by every command
  struct Defined {
    const Command* command;
    CLI::App* sub;
    Handler handler;
  };
  std::vector<Defined> defined;
};

// The parser of `telic` with the commands of the table, or, when `only` is
// set, with that one command alone: each process runs one command, and
// defining all of them costs every start-up (issue 18 target 3).
std::unique_ptr<Parser> BuildParser(const Command* only);

}  // namespace telic::cli
