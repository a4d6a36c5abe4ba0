// The command table and the parser built from it.
#include "cli/command_table.h"

#include <set>

#include <gtest/gtest.h>

namespace telic::cli {
namespace {

TEST(CommandTableTest, NamesAreUniqueAndEachHasOneLineOfHelp) {
  std::set<std::string_view> names;
  for (const Command& command : Commands()) {
    EXPECT_TRUE(names.insert(command.name).second) << command.name;
    EXPECT_FALSE(command.help.empty()) << command.name;
    EXPECT_EQ(command.help.find('\n'), std::string_view::npos) << command.name;
    EXPECT_NE(command.define, nullptr) << command.name;
    EXPECT_EQ(FindCommand(command.name), &command);
  }
  EXPECT_EQ(FindCommand("shwo"), nullptr);
}

TEST(CommandTableTest, TheParserDefinesEveryCommandOfTheTableWithItsHelp) {
  auto parser = BuildParser(nullptr);
  ASSERT_EQ(parser->defined.size(), Commands().size());
  for (size_t i = 0; i < Commands().size(); ++i) {
    const auto& defined = parser->defined[i];
    EXPECT_EQ(defined.command, &Commands()[i]);
    EXPECT_EQ(defined.sub->get_name(), Commands()[i].name);
    EXPECT_EQ(defined.sub->get_description(), Commands()[i].help);
    EXPECT_TRUE(static_cast<bool>(defined.handler)) << defined.sub->get_name();
  }
  std::string help = parser->app->help();
  for (const Command& command : Commands()) EXPECT_NE(help.find("  " + std::string(command.name) + " "), std::string::npos);
}

TEST(CommandTableTest, OnlyTheNamedCommandIsDefinedWhenOneIsNamed) {
  auto parser = BuildParser(FindCommand("show"));
  ASSERT_EQ(parser->defined.size(), 1u);
  EXPECT_EQ(parser->defined[0].sub->get_name(), "show");
  EXPECT_EQ(parser->app->get_subcommands([](CLI::App*) { return true; }).size(), 1u);
}

// Each command's options are its own: one command's option is unknown to another.
TEST(CommandTableTest, ACommandTakesOnlyItsOwnOptions) {
  auto parser = BuildParser(nullptr);
  CLI::App* runs = parser->app->get_subcommand("runs");
  CLI::App* show = parser->app->get_subcommand("show");
  EXPECT_NO_THROW(runs->get_option("--limit"));
  EXPECT_THROW(show->get_option("--limit"), CLI::OptionNotFound);
  EXPECT_NO_THROW(show->get_option("RUN_ID"));
  EXPECT_THROW(runs->get_option("RUN_ID"), CLI::OptionNotFound);
  // --color is global: every command and nested command takes it.
  EXPECT_NO_THROW(parser->app->get_option("--color"));
  EXPECT_NO_THROW(runs->get_subcommand("delete")->get_option("--color"));
}

TEST(CommandTableTest, ParsingSetsTheChosenCommandAndTheColour) {
  auto parser = BuildParser(nullptr);
  std::vector<std::string> args = {"--color", "never", "tasks", "abc"};
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  parser->app->parse(args);
  EXPECT_EQ(parser->color, "never");
  std::vector<std::string> parsed;
  for (const auto& defined : parser->defined) {
    if (defined.sub->parsed()) parsed.push_back(defined.sub->get_name());
  }
  EXPECT_EQ(parsed, std::vector<std::string>{"tasks"});
}

}  // namespace
}  // namespace telic::cli
