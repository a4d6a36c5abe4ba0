#include "cli/commands.h"

#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "cli/command_table.h"
#include "cli/format.h"
#include "cli/suggest.h"
#include "cli/terminal.h"

namespace telic::cli {
namespace {

// The command path of `app` as typed: "telic", "telic runs", "telic runs delete".
std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* up = app.get_parent(); up != nullptr; up = up->get_parent()) path = up->get_name() + " " + path;
  return path;
}

// The option names of `app` ("--json", "-o") and its nested command names.
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<std::string> NestedCommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// The top-level command names of the table (the parser may hold only one).
std::vector<std::string> TableNames() {
  std::vector<std::string> names;
  for (const Command& command : Commands()) names.emplace_back(command.name);
  return names;
}

// Says what was wrong with the first word `app` did not take, with the
// closest known names. An unknown command exits 1 (as git's), an unknown
// option or a stray argument 2 (a usage error).
int ReportUnknownWord(const CLI::App& app, const std::string& word) {
  std::string path = CommandPath(app);
  std::string shown = TerminalText(word);
  if (word.starts_with("-")) {
    std::string name = word.substr(0, word.find('='));
    std::cerr << fmt::format("{}: unknown option '{}'{}\nSee '{} --help'.\n", path, TerminalText(name),
                             DidYouMean(Suggestions(name, OptionNames(app))), path);
    return 2;
  }
  std::vector<std::string> commands = app.get_parent() == nullptr ? TableNames() : NestedCommandNames(app);
  if (!commands.empty()) {
    std::cerr << fmt::format("{}: '{}' is not a {} command{}\nSee '{} --help'.\n", path, shown, path,
                             DidYouMean(Suggestions(word, commands)), path);
    return 1;
  }
  std::cerr << fmt::format("{}: unexpected argument '{}'\nSee '{} --help'.\n", path, shown, path);
  return 2;
}

// The first word CLI11 collected as unknown, along the chain of commands
// that were parsed (the program, its command, a nested command).
std::optional<int> ReportUnknownWords(const CLI::App& app) {
  std::vector<std::string> extras = app.remaining(false);
  if (!extras.empty()) return ReportUnknownWord(app, extras.front());
  for (const CLI::App* sub : app.get_subcommands()) {
    if (auto code = ReportUnknownWords(*sub)) return code;
  }
  return std::nullopt;
}

}  // namespace

std::span<const std::string_view> SubcommandNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const Command& command : Commands()) names.push_back(command.name);
    return names;
  }();
  return kNames;
}

int RunCli(int argc, char** argv) {
  // With argv[1] naming a command, only that one is defined (a start-up
  // cost); otherwise all of them, so the help and errors list them all.
  const Command* only = argc >= 2 && argv[1] != nullptr ? FindCommand(argv[1]) : nullptr;
  std::unique_ptr<Parser> parser = BuildParser(only);
  CLI::App& app = *parser->app;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    bool answered = e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success);  // --help, --version
    if (!answered) {
      if (auto code = ReportUnknownWords(app)) return *code;
    }
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (auto code = ReportUnknownWords(app)) return *code;
  const Invocation invocation(argv[0], ParseColorChoice(parser->color).value_or(ColorChoice::kAuto));
  for (const auto& defined : parser->defined) {
    if (defined.sub->parsed()) return defined.handler(invocation);
  }
  std::cout << app.help();
  return 0;
}

}  // namespace telic::cli
