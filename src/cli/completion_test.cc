#include "cli/completion.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "cli/command_table.h"

namespace telic::cli {
namespace {

const CompletionCommand* Find(const std::vector<CompletionCommand>& tree, const std::string& path) {
  auto it = std::find_if(tree.begin(), tree.end(), [&](const CompletionCommand& c) { return c.path == path; });
  return it == tree.end() ? nullptr : &*it;
}

const CompletionOption* FindOption(const CompletionCommand& command, const std::string& name) {
  for (const auto& option : command.options) {
    if (std::find(option.names.begin(), option.names.end(), name) != option.names.end()) return &option;
  }
  return nullptr;
}

// A small app: one command with a flag, an option with choices and a nested command.
class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto* show = app_.add_subcommand("show", "show a thing");
    show->add_flag("--json", flag_, "as JSON");
    show->add_option("--status", value_, "by status")->check(CLI::IsMember({"running", "done"}));
    show->add_option("RUN", value_);
    show->add_subcommand("more", "nested: it's more");
  }
  CLI::App app_{"test", "prog"};
  bool flag_ = false;
  std::string value_;
};

TEST_F(CompletionTest, TheTreeHoldsEveryCommandOptionAndChoice) {
  auto tree = CompletionTree(app_);
  ASSERT_NE(Find(tree, ""), nullptr);
  ASSERT_NE(Find(tree, "show"), nullptr);
  ASSERT_NE(Find(tree, "show more"), nullptr);
  const CompletionCommand& show = *Find(tree, "show");
  ASSERT_EQ(show.subcommands.size(), 1u);
  EXPECT_EQ(show.subcommands[0].first, "more");
  const CompletionOption* json = FindOption(show, "--json");
  ASSERT_NE(json, nullptr);
  EXPECT_FALSE(json->takes_value);
  const CompletionOption* status = FindOption(show, "--status");
  ASSERT_NE(status, nullptr);
  EXPECT_TRUE(status->takes_value);
  EXPECT_EQ(status->values, (std::vector<std::string>{"running", "done"}));
  EXPECT_EQ(FindOption(show, "RUN"), nullptr) << "positionals are not options";
}

TEST_F(CompletionTest, TheScriptsNameEveryCommandAndOption) {
  auto tree = CompletionTree(app_);
  std::string bash = BashCompletion(tree, "prog");
  EXPECT_NE(bash.find("complete -o default -F _prog prog"), std::string::npos) << bash;
  EXPECT_NE(bash.find("'show:more'"), std::string::npos) << bash;        // the command path
  EXPECT_NE(bash.find("'show:--status'"), std::string::npos) << bash;    // takes a value
  EXPECT_EQ(bash.find("'show:--json'"), std::string::npos) << bash;      // a flag does not
  EXPECT_NE(bash.find("'running' 'done'"), std::string::npos) << bash;   // the choices
  std::string zsh = ZshCompletion(tree, "prog");
  EXPECT_TRUE(zsh.starts_with("#compdef prog\n")) << zsh;
  EXPECT_NE(zsh.find("compdef _prog prog"), std::string::npos) << zsh;
  EXPECT_NE(zsh.find("'more:nested: it'\\''s more'"), std::string::npos) << zsh;  // quoted help
  EXPECT_NE(zsh.find("compadd -- 'running' 'done'"), std::string::npos) << zsh;
}

// The real parser: every command of the table completes, with its options.
TEST(CompletionOfTelicTest, EveryCommandOfTheTableIsInTheTree) {
  auto parser = BuildParser(nullptr);
  auto tree = CompletionTree(*parser->app);
  const CompletionCommand* top = Find(tree, "");
  ASSERT_NE(top, nullptr);
  for (const Command& command : Commands()) {
    EXPECT_TRUE(std::any_of(top->subcommands.begin(), top->subcommands.end(),
                            [&](const auto& sub) { return sub.first == command.name && sub.second == command.help; }))
        << command.name;
    const CompletionCommand* own = Find(tree, std::string(command.name));
    ASSERT_NE(own, nullptr) << command.name;
    EXPECT_NE(FindOption(*own, "--color"), nullptr) << command.name;
  }
  ASSERT_NE(Find(tree, "runs delete"), nullptr);
  ASSERT_NE(Find(tree, "report parse"), nullptr);
  const CompletionOption* status = FindOption(*Find(tree, "runs"), "--status");
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::find(status->values.begin(), status->values.end(), "completed"), status->values.end());
  const CompletionOption* color = FindOption(*top, "--color");
  ASSERT_NE(color, nullptr);
  EXPECT_EQ(color->values, (std::vector<std::string>{"auto", "always", "never"}));
}

}  // namespace
}  // namespace telic::cli
