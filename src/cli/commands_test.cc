// The `telic` command line as RunCli parses it.
#include "cli/commands.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/text.h"
#include "controller/run_service.h"
#include "store/sqlite_store.h"
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

// An unknown command exits 1 as git's does, naming the closest commands.
TEST(RunCliTest, AMisspeltCommandSuggestsTheClosestWithEveryOneRegistered) {
  CliOutcome misspelt = RunTelic({"shwo"});
  EXPECT_EQ(misspelt.code, 1);
  EXPECT_EQ(misspelt.err, "telic: 'shwo' is not a telic command; did you mean 'show'?\nSee 'telic --help'.\n");
  CliOutcome serv = RunTelic({"serv"});
  EXPECT_EQ(serv.code, 1);
  EXPECT_NE(serv.err.find("did you mean 'serve'?"), std::string::npos) << serv.err;
  CliOutcome far = RunTelic({"frobnicate"});
  EXPECT_EQ(far.code, 1);
  EXPECT_EQ(far.err, "telic: 'frobnicate' is not a telic command\nSee 'telic --help'.\n");
  CliOutcome nested = RunTelic({"runs", "dleete", "x"});
  EXPECT_EQ(nested.code, 1);
  EXPECT_NE(nested.err.find("'dleete' is not a telic runs command; did you mean 'delete'?"), std::string::npos)
      << nested.err;
  CliOutcome nothing = RunTelic({});
  EXPECT_EQ(nothing.code, 0);
  EXPECT_EQ(HelpSubcommands(nothing.out).size(), SubcommandNames().size()) << nothing.out;
}

// An unknown option is a usage error (2) naming the command's closest options,
// before any other complaint about the same command line.
TEST(RunCliTest, AMisspeltOptionSuggestsTheCommandsClosestOptions) {
  CliOutcome misspelt = RunTelic({"show", "--jsn", "run-1"});
  EXPECT_EQ(misspelt.code, 2);
  EXPECT_EQ(misspelt.err, "telic show: unknown option '--jsn'; did you mean '--json'?\nSee 'telic show --help'.\n");
  CliOutcome without_run = RunTelic({"show", "--jsn"});  // RUN_ID is missing too: the option is what went wrong
  EXPECT_EQ(without_run.code, 2);
  EXPECT_NE(without_run.err.find("unknown option '--jsn'"), std::string::npos) << without_run.err;
  CliOutcome with_value = RunTelic({"runs", "--limt=5"});
  EXPECT_EQ(with_value.code, 2);
  EXPECT_NE(with_value.err.find("unknown option '--limt'; did you mean '--limit'?"), std::string::npos) << with_value.err;
  CliOutcome top = RunTelic({"--colour", "never"});
  EXPECT_EQ(top.code, 2);
  EXPECT_NE(top.err.find("did you mean '--color'?"), std::string::npos) << top.err;
}

TEST(RunCliTest, ColorTakesOnlyAutoAlwaysOrNever) {
  CliOutcome bad = RunTelic({"schema", "--list", "--color", "sometimes"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--color"), std::string::npos) << bad.err;
  CliOutcome good = RunTelic({"--color=never", "schema", "--list"});
  EXPECT_EQ(good.code, 0) << good.err;
}

// Sets an environment variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A SQLite ledger with runs started through the run service.
class CliLedgerTest : public ::testing::Test {
 protected:
  CliLedgerTest() : clock_(1764662400000) {}
  void SetUp() override {
    db_ = dir_.File("telic.sqlite3");
    store_ = std::move(*store::SqliteStore::Open(db_));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
  }
  std::string Start(const std::string& request) {
    clock_.Set(clock_.NowMillis() + 1000);
    controller::StartRunRequest r;
    r.original_request = request;
    r.mode = "report_only";
    auto started = service_->StartRun(r);
    EXPECT_TRUE(started) << started.error().message();
    return started->run.run_id;
  }
  CliOutcome Telic(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_);
    return RunTelic(std::move(args));
  }

  testing::TempDir dir_;
  std::string db_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  ScopedEnv no_columns_{"COLUMNS", nullptr};
};

TEST_F(CliLedgerTest, RunsAndShowPrintTheRequest) {
  std::string run = Start("Fix the greeting in src/greet.py.");
  CliOutcome runs = Telic({"runs"});
  ASSERT_EQ(runs.code, 0) << runs.err;
  EXPECT_NE(runs.out.find("REQUEST"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("Fix the greeting in src/greet.py."), std::string::npos) << runs.out;
  CliOutcome show = Telic({"show", run});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("request    Fix the greeting in src/greet.py.\n"), std::string::npos) << show.out;
  // The phase as NextAction and the viewer name it, not the run record's internal name.
  EXPECT_NE(show.out.find("phase      context_discovery\n"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("context_grounding"), std::string::npos) << show.out;
}

TEST_F(CliLedgerTest, AUniqueRunIdPrefixWorksAndAnAmbiguousOneListsTheRuns) {
  std::string first = Start("first request");
  CliOutcome show = Telic({"show", "0000"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("run        " + first), std::string::npos) << show.out;
  std::string second = Start("second request");
  for (const char* command : {"show", "status", "trace", "verify", "replay", "export", "tasks"}) {
    CliOutcome ambiguous = Telic({command, "0000"});
    EXPECT_EQ(ambiguous.code, 1) << command;
    EXPECT_NE(ambiguous.err.find("telic: Run id prefix '0000' is ambiguous: 2 runs match\n"), std::string::npos)
        << command << ": " << ambiguous.err;
    EXPECT_NE(ambiguous.err.find("  " + first + "  running"), std::string::npos) << ambiguous.err;
    EXPECT_NE(ambiguous.err.find("  " + second + "  running"), std::string::npos) << ambiguous.err;
  }
  // The whole id still works; an artifact id prefix is resolved the same way.
  EXPECT_EQ(Telic({"trace", second}).code, 0);
  EXPECT_EQ(Telic({"artifact", second, second}).code, 0);  // the RunEnvelope's id is the run's
  CliOutcome artifact = Telic({"artifact", "artifact://" + second + "/0000"});
  EXPECT_EQ(artifact.code, 1);
  EXPECT_NE(artifact.err.find("telic: Artifact id prefix '0000' is ambiguous: 2 artifacts match\n"), std::string::npos)
      << artifact.err;
}

TEST_F(CliLedgerTest, ColourIsAddedOnlyWhenAskedFor) {
  Start("a request");
  EXPECT_EQ(Telic({"runs"}).out.find("\x1b["), std::string::npos);  // not a terminal: no colour
  EXPECT_NE(Telic({"runs", "--color", "always"}).out.find("\x1b[36mrunning\x1b[0m"), std::string::npos);
  EXPECT_EQ(Telic({"runs", "--color", "never"}).out.find("\x1b["), std::string::npos);
  ScopedEnv no_color("NO_COLOR", "1");
  EXPECT_NE(Telic({"runs", "--color", "always"}).out.find("\x1b["), std::string::npos) << "--color=always wins";
}

TEST_F(CliLedgerTest, TablesFitTheWidthOfColumns) {
  Start(std::string("A long request ") + std::string(200, 'x'));
  for (const char* command : {"runs", "trace", "show"}) {
    ScopedEnv columns("COLUMNS", "80");
    std::vector<std::string> args = {command};
    if (std::string(command) != "runs") args.push_back("0000");
    CliOutcome out = Telic(args);
    ASSERT_EQ(out.code, 0) << out.err;
    std::istringstream lines(out.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("repository") || line.starts_with("see also")) continue;  // a path is never cut
      EXPECT_LE(Utf16Length(line), 80u) << command << ": " << line;
    }
  }
  CliOutcome wide = Telic({"runs"});  // no width known: the full table
  EXPECT_NE(wide.out.find("TOPOLOGY"), std::string::npos);
  EXPECT_NE(wide.out.find("00000000-0000-4000-8000-"), std::string::npos);
}

TEST_F(CliLedgerTest, TraceShowsTimesRelativeToTheFirstEventByDefault) {
  std::string run = Start("a request");
  CliOutcome trace = Telic({"trace", run});
  ASSERT_EQ(trace.code, 0) << trace.err;
  EXPECT_NE(trace.out.find("+0 ms"), std::string::npos) << trace.out;
  EXPECT_EQ(trace.out.find("2025-12-02T"), std::string::npos) << trace.out;
  CliOutcome full = Telic({"trace", run, "--time", "full"});
  EXPECT_NE(full.out.find("2025-12-02T"), std::string::npos) << full.out;
}

TEST_F(CliLedgerTest, TheNextHintKeepsTheLedgerTheUserNamed) {
  for (int i = 0; i < 3; ++i) Start("request " + std::to_string(i));
  CliOutcome page = Telic({"runs", "--limit", "2"});
  ASSERT_EQ(page.code, 0) << page.err;
  EXPECT_NE(page.out.find("next: telic runs --limit 2 --db " + db_ + " --before "), std::string::npos) << page.out;
}

TEST(RunCliEmptyTest, RunsWithoutALedgerIsAnEmptyListAndAMissingDbIsNamedByItsFile) {
  testing::TempDir repo, state;
  ScopedEnv state_dir("TELIC_STATE_DIR", state.File("state").c_str());
  CliOutcome empty = RunTelic({"runs", "--repo", repo.path().string()});
  EXPECT_EQ(empty.code, 0) << empty.err;
  EXPECT_NE(empty.out.find("No runs yet (no ledger at " + state.File("state") + "/telic.sqlite3)."), std::string::npos)
      << empty.out;
  CliOutcome json = RunTelic({"runs", "--repo", repo.path().string(), "--json"});
  EXPECT_EQ(json.code, 0);
  EXPECT_EQ(json.out, "{\"nextCursor\":null,\"runs\":[]}\n");
  EXPECT_FALSE(std::filesystem::exists(state.File("state"))) << "listing creates nothing";
  CliOutcome tasks = RunTelic({"tasks", "--repo", repo.path().string()});
  EXPECT_EQ(tasks.code, 0) << tasks.err;
  EXPECT_EQ(tasks.out, "No tasks yet (no ledger at " + state.File("state") + "/telic.sqlite3).\n");
  CliOutcome deleted = RunTelic({"runs", "deleted", "--repo", repo.path().string(), "--json"});
  EXPECT_EQ(deleted.code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "{\"tombstones\":[]}\n");
  std::string missing = repo.File("no-such.sqlite3");
  CliOutcome named = RunTelic({"runs", "--repo", repo.path().string(), "--db", missing});
  EXPECT_EQ(named.code, 1);
  EXPECT_EQ(named.err, "telic: No Telic ledger exists at " + missing + "\n");
}

TEST(RunCliDoctorTest, DoctorSpeaksToAPersonAndKeepsItsJson) {
  testing::TempDir repo, state;
  ScopedEnv state_dir("TELIC_STATE_DIR", state.File("state").c_str());
  CliOutcome human = RunTelic({"doctor", "--repo", repo.path().string()});
  EXPECT_NE(human.out.find("\xE2\x9C\x93 repository  " + std::filesystem::canonical(repo.path()).string()),
            std::string::npos) << human.out;
  EXPECT_NE(human.out.find("- ledger      none yet at"), std::string::npos) << human.out;
  EXPECT_EQ(human.out.find('{'), std::string::npos) << "no JSON: " << human.out;
  CliOutcome json = RunTelic({"doctor", "--repo", repo.path().string(), "--json"});
  Json report = Json::parse(json.out);
  EXPECT_EQ(report["checks"]["repository"]["root"], std::filesystem::canonical(repo.path()).string());
  EXPECT_EQ(human.code, json.code);
}

}  // namespace
}  // namespace telic::cli
