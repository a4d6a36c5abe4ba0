// Shell completion scripts (`telic completion bash|zsh`) derived from the
// parser itself: every command, nested command and option the CLI11 app
// defines, so a new command completes without a change here.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace telic::cli {

// One option of a command as completion sees it.
struct CompletionOption {
  std::vector<std::string> names;  // "--repo", "-o"
  std::string help;
  bool takes_value = false;
  std::vector<std::string> values;  // the choices of an option checked by CLI::IsMember, else empty
};

// One command: "" for the program itself, "runs", "runs delete", ...
struct CompletionCommand {
  std::string path;
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, help
  std::vector<CompletionOption> options;
};

// Every command of `app` (itself first), depth first in definition order.
std::vector<CompletionCommand> CompletionTree(CLI::App& app);

// A bash script defining and registering _telic for `program`: words after
// the command path complete to its subcommands and options; an option's
// choices after the option; anything else falls back to file names.
std::string BashCompletion(const std::vector<CompletionCommand>& tree, const std::string& program);

// The zsh equivalent (#compdef), with each name's help as its description.
std::string ZshCompletion(const std::vector<CompletionCommand>& tree, const std::string& program);

}  // namespace telic::cli
