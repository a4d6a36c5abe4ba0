#include "cli/completion.h"

#include <cctype>
#include <functional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace telic::cli {
namespace {

// `text` as one single-quoted shell word (bash and zsh read it alike).
std::string Quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The choices of an IsMember check: its description is "{a,b,c}".
std::vector<std::string> Choices(CLI::Option& option) {
  std::vector<std::string> values;
  for (int i = 0;; ++i) {
    CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    std::string description = validator->get_description();
    if (description.size() < 2 || description.front() != '{' || description.back() != '}') continue;
    for (std::string& value : CLI::detail::split(description.substr(1, description.size() - 2), ',')) {
      if (!value.empty()) values.push_back(value);
    }
  }
  return values;
}

CompletionOption OptionOf(CLI::Option& option) {
  CompletionOption out;
  for (const std::string& name : option.get_lnames()) out.names.push_back("--" + name);
  for (const std::string& name : option.get_snames()) out.names.push_back("-" + name);
  out.help = option.get_description();
  out.takes_value = option.get_expected_max() > 0;  // flags expect 0 values
  if (out.takes_value) out.values = Choices(option);
  return out;
}

void Collect(CLI::App& app, const std::string& path, std::vector<CompletionCommand>& tree) {
  CompletionCommand command;
  command.path = path;
  for (CLI::Option* option : app.get_options()) {
    if (option->nonpositional()) command.options.push_back(OptionOf(*option));
  }
  std::vector<CLI::App*> subs = app.get_subcommands([](CLI::App* sub) { return !sub->get_name().empty(); });
  for (CLI::App* sub : subs) command.subcommands.emplace_back(sub->get_name(), sub->get_description());
  tree.push_back(std::move(command));
  for (CLI::App* sub : subs) Collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), tree);
}

// Case patterns joined by "|"; none: the empty word, which "<path>:<word>" never is.
std::string Alternatives(const std::vector<std::string>& patterns) {
  return patterns.empty() ? "''" : fmt::format("{}", fmt::join(patterns, "|"));
}

// The case patterns "<path>:<name>" of every nested command, so a loop over
// the typed words can follow the command path.
std::string PathPatterns(const std::vector<CompletionCommand>& tree) {
  std::vector<std::string> patterns;
  for (const auto& command : tree) {
    for (const auto& [name, help] : command.subcommands) patterns.push_back(Quoted(command.path + ":" + name));
  }
  return Alternatives(patterns);
}

// The case patterns "<path>:<option>" of every option that takes a value.
std::string ValueOptionPatterns(const std::vector<CompletionCommand>& tree) {
  std::vector<std::string> patterns;
  for (const auto& command : tree) {
    for (const auto& option : command.options) {
      if (!option.takes_value) continue;
      for (const auto& name : option.names) patterns.push_back(Quoted(command.path + ":" + name));
    }
  }
  return Alternatives(patterns);
}

// Case arms "<path>:<option>) <emit> <choices>;;" for options with choices.
std::string ChoiceArms(const std::vector<CompletionCommand>& tree, const std::string& indent,
                       const std::function<std::string(const std::vector<std::string>&)>& emit) {
  std::string out;
  for (const auto& command : tree) {
    for (const auto& option : command.options) {
      if (option.values.empty()) continue;
      for (const auto& name : option.names) {
        out += fmt::format("{}{}) {} ;;\n", indent, Quoted(command.path + ":" + name), emit(option.values));
      }
    }
  }
  return out;
}

std::string Words(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const auto& word : words) quoted.push_back(Quoted(word));
  return fmt::format("{}", fmt::join(quoted, " "));
}

std::string ShellName(const std::string& program) {
  std::string name;
  for (char c : program) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return "_" + name;
}

// The loop both shells share: follows the command path through the typed
// words before the current one, skipping the values of options.
std::string PathLoop(const std::vector<CompletionCommand>& tree, const std::string& fn, const std::string& first,
                     const std::string& words) {
  return fmt::format(
      "  local cmdpath='' word skip=0 i\n"
      "  for (( i = {first}; i < {current}; i++ )); do\n"
      "    word=\"${{{words}[i]}}\"\n"
      "    if (( skip )); then skip=0; continue; fi\n"
      "    if {fn}_takes_value \"$cmdpath\" \"$word\"; then skip=1; continue; fi\n"
      "    case \"$cmdpath:$word\" in\n"
      "      {paths}) cmdpath=\"${{cmdpath:+$cmdpath }}$word\" ;;\n"
      "    esac\n"
      "  done\n",
      fmt::arg("first", first), fmt::arg("current", words == "COMP_WORDS" ? "COMP_CWORD" : "CURRENT"),
      fmt::arg("words", words), fmt::arg("fn", fn), fmt::arg("paths", PathPatterns(tree)));
}

std::string TakesValueFunction(const std::vector<CompletionCommand>& tree, const std::string& fn) {
  return fmt::format("{}_takes_value() {{\n  case \"$1:$2\" in\n    {}) return 0 ;;\n  esac\n  return 1\n}}\n", fn,
                     ValueOptionPatterns(tree));
}

}  // namespace

std::vector<CompletionCommand> CompletionTree(CLI::App& app) {
  std::vector<CompletionCommand> tree;
  Collect(app, "", tree);
  return tree;
}

std::string BashCompletion(const std::vector<CompletionCommand>& tree, const std::string& program) {
  const std::string fn = ShellName(program);
  std::string out = fmt::format(
      "# bash completion for {0}, generated by `{0} completion bash`.\n"
      "# Load it now:   source <({0} completion bash)\n"
      "# For good:      {0} completion bash > ~/.local/share/bash-completion/completions/{0}\n",
      program);
  out += TakesValueFunction(tree, fn);
  out += fn + "() {\n";
  out += "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=''\n";
  out += "  (( COMP_CWORD > 0 )) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n";
  out += "  # --option=value: bash splits at '=' (COMP_WORDBREAKS).\n";
  out += "  if [[ $cur == '=' ]]; then cur=''; elif [[ $prev == '=' ]] && (( COMP_CWORD > 1 )); then "
         "prev=\"${COMP_WORDS[COMP_CWORD-2]}\"; fi\n";
  out += PathLoop(tree, fn, "1", "COMP_WORDS");
  out += "  COMPREPLY=()\n";
  out += "  if " + fn + "_takes_value \"$cmdpath\" \"$prev\"; then\n";
  out += "    case \"$cmdpath:$prev\" in\n";
  out += ChoiceArms(tree, "      ", [](const std::vector<std::string>& values) {
    return "COMPREPLY=( $(compgen -W \"" + Words(values) + "\" -- \"$cur\") )";
  });
  out += "    esac\n    return 0\n  fi\n";
  out += "  local commands='' options=''\n  case \"$cmdpath\" in\n";
  for (const auto& command : tree) {
    std::vector<std::string> names, options;
    for (const auto& [name, help] : command.subcommands) names.push_back(name);
    for (const auto& option : command.options) options.insert(options.end(), option.names.begin(), option.names.end());
    out += fmt::format("    {}) commands={}; options={} ;;\n", Quoted(command.path), Quoted(fmt::format("{}", fmt::join(names, " "))),
                       Quoted(fmt::format("{}", fmt::join(options, " "))));
  }
  out += "  esac\n";
  out += "  if [[ $cur == -* ]]; then\n";
  out += "    COMPREPLY=( $(compgen -W \"$options\" -- \"$cur\") )\n";
  out += "  else\n";
  out += "    COMPREPLY=( $(compgen -W \"$commands\" -- \"$cur\") )\n";
  out += "  fi\n";
  out += "  return 0\n}\n";
  out += fmt::format("complete -o default -F {} {}\n", fn, program);
  return out;
}

std::string ZshCompletion(const std::vector<CompletionCommand>& tree, const std::string& program) {
  const std::string fn = ShellName(program);
  // _describe reads "name:description"; a colon in the name needs a backslash.
  auto described = [](const std::string& name, const std::string& help) {
    std::string escaped;
    for (char c : name) escaped += c == ':' ? std::string("\\:") : std::string(1, c);
    return Quoted(help.empty() ? escaped : escaped + ":" + help);
  };
  std::string out = fmt::format(
      "#compdef {0}\n"
      "# zsh completion for {0}, generated by `{0} completion zsh`.\n"
      "# Load it now:   source <({0} completion zsh)\n"
      "# For good:      {0} completion zsh > \"${{fpath[1]}}/_{0}\"  (then restart zsh)\n"
      "compdef {1} {0}\n",
      program, fn);
  out += TakesValueFunction(tree, fn);
  out += fn + "() {\n";
  out += PathLoop(tree, fn, "2", "words");
  out += "  local prev=\"${words[CURRENT-1]}\" cur=\"${words[CURRENT]}\"\n";
  out += "  if " + fn + "_takes_value \"$cmdpath\" \"$prev\"; then\n";
  out += "    case \"$cmdpath:$prev\" in\n";
  out += ChoiceArms(tree, "      ", [](const std::vector<std::string>& values) { return "compadd -- " + Words(values); });
  out += "      *) _files ;;\n    esac\n    return\n  fi\n";
  out += "  local -a commands options\n  case \"$cmdpath\" in\n";
  for (const auto& command : tree) {
    std::vector<std::string> commands, options;
    for (const auto& [name, help] : command.subcommands) commands.push_back(described(name, help));
    for (const auto& option : command.options) {
      for (const auto& name : option.names) options.push_back(described(name, option.help));
    }
    out += fmt::format("    {})\n      commands=({})\n      options=({}) ;;\n", Quoted(command.path),
                       fmt::join(commands, " "), fmt::join(options, " "));
  }
  out += "  esac\n";
  out += "  if [[ $cur == -* ]]; then\n";
  out += "    _describe -t options 'option' options\n";
  out += "  elif (( ${#commands} )); then\n";
  out += "    _describe -t commands 'command' commands\n";
  out += "  else\n";
  out += "    _files\n";
  out += "  fi\n}\n";
  out += fmt::format("if [[ \"${{funcstack[1]}}\" == \"{0}\" ]]; then\n  {0} \"$@\"\nfi\n", fn);
  return out;
}

}  // namespace telic::cli
