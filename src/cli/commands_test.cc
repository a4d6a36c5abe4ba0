// The `telic` command line as RunCli parses it.
#include "cli/commands.h"

#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace telic::cli {
namespace {

struct CliOutcome {
  int code;
  std::string out;
  std::string err;
};

// Runs RunCli on `args` (argv[0] is "telic") with std::cout and std::cerr captured.
CliOutcome RunTelic(std::vector<std::string> args) {
  args.insert(args.begin(), "telic");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  int code = RunCli(static_cast<int>(args.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code, out.str(), err.str()};
}

// The subcommand names of the help's SUBCOMMANDS section.
std::set<std::string> HelpSubcommands(const std::string& help) {
  std::set<std::string> names;
  std::istringstream lines(help);
  bool in_section = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("SUBCOMMANDS:") || line.starts_with("Subcommands:")) {
      in_section = true;
    } else if (in_section && line.starts_with("  ") && line.size() > 2 && line[2] != ' ') {
      names.insert(line.substr(2, line.find(' ', 2) - 2));
    } else if (in_section && !line.empty() && line[0] != ' ') {
      in_section = false;
    }
  }
  return names;
}

TEST(RunCliTest, SubcommandNamesAreExactlyTheHelpsSubcommands) {
  CliOutcome help = RunTelic({"--help"});
  ASSERT_EQ(help.code, 0) << help.err;
  std::set<std::string> listed = HelpSubcommands(help.out);
  std::set<std::string> named(SubcommandNames().begin(), SubcommandNames().end());
  EXPECT_EQ(listed, named) << help.out;
}

// With argv[1] naming a subcommand only that one is registered; its help,
// parse errors and its own work are unchanged.
TEST(RunCliTest, ANamedSubcommandParsesAsWithEveryOneRegistered) {
  CliOutcome schema_help = RunTelic({"schema", "--help"});
  EXPECT_EQ(schema_help.code, 0);
  EXPECT_NE(schema_help.out.find("--list"), std::string::npos) << schema_help.out;
  EXPECT_NE(schema_help.out.find("--repo"), std::string::npos) << schema_help.out;

  CliOutcome list = RunTelic({"schema", "--list"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("ContextManifest"), std::string::npos) << list.out;

  CliOutcome missing = RunTelic({"show"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("RUN_ID is required"), std::string::npos) << missing.err;

  CliOutcome unknown_option = RunTelic({"validate", "--no-such-option", "file.json"});
  EXPECT_EQ(unknown_option.code, 2);
  EXPECT_NE(unknown_option.err.find("--no-such-option"), std::string::npos) << unknown_option.err;

  // Another subcommand's name after the first is an argument, not a command.
  CliOutcome two = RunTelic({"doctor", "serve"});
  EXPECT_EQ(two.code, 2);
}

// The dispatch after the parse reads only the registered subcommands: the
// one pair that shares code (install and uninstall) runs with either alone.
TEST(RunCliTest, InstallAndUninstallEachRunWithOnlyThemselvesRegistered) {
  testing::TempDir repo;
  CliOutcome installed = RunTelic({"install", "cursor", "--repo", repo.path().string(), "--json"});
  EXPECT_EQ(installed.code, 0) << installed.err << installed.out;
  CliOutcome removed = RunTelic({"uninstall", "cursor", "--repo", repo.path().string(), "--json"});
  EXPECT_EQ(removed.code, 0) << removed.err << removed.out;
}

TEST(RunCliTest, AMisspeltSubcommandIsAUsageErrorWithEveryOneRegistered) {
  CliOutcome misspelt = RunTelic({"serv"});
  EXPECT_EQ(misspelt.code, 2);
  EXPECT_NE(misspelt.err.find("serv"), std::string::npos) << misspelt.err;
  CliOutcome nothing = RunTelic({});
  EXPECT_EQ(nothing.code, 0);
  EXPECT_EQ(HelpSubcommands(nothing.out).size(), SubcommandNames().size()) << nothing.out;
}

}  // namespace
}  // namespace telic::cli
