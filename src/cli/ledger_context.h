// Where a command's state lives (--repo, --db and the environment) and the
// open ledger with its run service and task graph.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"
#include "cli/graph_commands.h"
#include "controller/run_service.h"
#include "store/state_dir.h"
#include "store/store.h"

namespace telic::cli {

// The options that say where the ledger is, and --json.
struct LedgerFlags {
  std::string repo;
  std::string db;  // a SQLite file path, or a postgresql:// URL
  bool json = false;
};

// Adds --repo, --db and (with `json`) --json to `command`, bound to `flags`.
void AddLedgerFlags(CLI::App& command, LedgerFlags& flags, bool json = true);

// `value` as one shell word (quoted when it holds anything but [A-Za-z0-9._:/=@+-]).
std::string ShellWord(const std::string& value);

// The --repo and --db the user gave, as shell words to append to a hint
// ("" when neither was given; a PostgreSQL URL's password is kept out).
std::string LocationArguments(const LedgerFlags& flags);

// Everything a command needs: where state lives, the open store, the service.
struct Context {
  store::StateLocation location;
  std::unique_ptr<store::Store> store;
  SystemClock clock;
  RandomIdSource ids;
  std::unique_ptr<controller::RunService> service;
  std::unique_ptr<GraphContext> graph;  // the task graph in the same ledger
};

std::string CurrentDirectory();

// Resolves the state location from --repo / --db and the environment. The
// repository root must be a directory and an existing SQLite ledger a
// regular file (a FIFO or device there would block or read forever).
Result<store::StateLocation> Locate(const LedgerFlags& flags);

// Whether the location's ledger exists (a PostgreSQL ledger always does).
bool LedgerExists(const store::StateLocation& location);

// The run service over context.store, its grounder, the task graph beside
// it and the listener that mirrors accepted changes into the graph.
// `serving`: for `telic serve`, whose task graph store connects on first use.
Status WireContext(Context& context, bool serving);

// Resolves the state location; with `create`, prepares the default state
// directory; with `create` false, a missing SQLite ledger is kNotFound
// "No Telic ledger exists at <ledger file>".
Result<std::unique_ptr<Context>> LocateContext(const LedgerFlags& flags, bool create);

// Opens the store. With `create` false, a missing ledger is an error.
Result<std::unique_ptr<Context>> OpenContext(const LedgerFlags& flags, bool create, bool serving = false);

}  // namespace telic::cli
