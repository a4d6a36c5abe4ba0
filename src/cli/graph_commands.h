// The task-graph commands: `telic report parse FILE [--json]` and
// `telic tasks [RUN] [--json]`, plus opening the task store beside a ledger.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "graph/task_service.h"
#include "store/task_store.h"

namespace telic::cli {

struct GraphContext {
  std::unique_ptr<store::TaskStore> store;
  std::unique_ptr<graph::TaskService> service;
};

// Opens the task graph beside `runs` (the SQLite ledger at `ledger_path`, or
// the same PostgreSQL database as `runs`); with `connect_on_first_use`, a
// SQLite task store connects on its first call (store::OpenTaskStore).
Result<std::unique_ptr<GraphContext>> OpenGraph(const std::string& ledger_path, store::Store& runs, Clock& clock,
                                                IdSource& ids, bool connect_on_first_use = false);

struct GraphCommands {
  CLI::App* report_parse = nullptr;
  std::string file;
  std::string run_id;
  int retries_allowed = 0;
  int retries_used = 0;
  std::string new_mechanism = "unknown";  // yes | no | unknown
};

// Adds `parse` under the `report` command `report`, bound to `commands`
// (keep it alive until the command ran).
void DefineReportCommands(CLI::App& report, GraphCommands& commands);

// Adds `tasks`' optional RUN_ID to its command `tasks`, bound to `commands`.
void DefineTasksOptions(CLI::App& tasks, GraphCommands& commands);

// `telic report parse`: prints the parsed report and its decision; exit 1
// with the precise error when the report is rejected.
int RunReportParse(const GraphCommands& commands, bool json);

// `telic tasks`: the graph as a tree (states, dependencies), or JSON.
int RunTasks(graph::TaskService& service, const std::optional<std::string>& run_id, bool json);

// The tree text for a list of tasks (exposed for tests).
std::string FormatTaskTree(const graph::TaskList& list);

}  // namespace telic::cli
