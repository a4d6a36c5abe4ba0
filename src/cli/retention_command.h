// Retention commands (issue 22): `telic runs delete RUN... [--force]`,
// `telic runs prune --older-than D [--status S]... [--keep N] [--dry-run]`,
// `telic runs deleted` (the tombstones), and the prune `telic serve` runs on
// start when the state directory's config.json has a retention policy.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "controller/run_service.h"

namespace telic::cli {

struct RetentionCommands {
  CLI::App* remove = nullptr;   // runs delete
  CLI::App* prune = nullptr;    // runs prune
  CLI::App* deleted = nullptr;  // runs deleted
  std::vector<std::string> run_ids;
  bool force = false;
  std::string older_than;
  std::vector<std::string> statuses;
  int keep = 0;
  bool dry_run = false;
  bool vacuum = false;
  int limit = 20;

  bool Selected() const { return *remove || *prune || *deleted; }
};

// Adds delete, prune and deleted under `runs`; the returned object holds the
// parsed options (keep it alive until the command ran).
std::unique_ptr<RetentionCommands> AddRetentionCommands(CLI::App* runs);

// Runs the selected retention command against the open ledger. Exit 0 on
// success, 1 with "telic: <message>" on stderr.
int RunRetentionCommand(const RetentionCommands& commands, controller::RunService& service, bool json,
                        std::ostream& out, std::ostream& err);

// `telic serve` on start: applies <state_dir>/config.json's retention policy
// (reason "retention", deleted by "telic serve"), one line on `log` when it
// deleted anything. Errors: a malformed config (the server must not start
// with a policy it cannot read) or a store failure.
Status PruneOnStart(const std::string& state_dir, controller::RunService& service, std::ostream& log);

}  // namespace telic::cli
