#include "cli/retention_command.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/text.h"
#include "cli/format.h"
#include "controller/retention.h"
#include "store/sqlite_store.h"
#include "store/state_config.h"

namespace telic::cli {
namespace {

store::DeletionRequest Request(controller::RunService& service, std::string reason) {
  return {FormatIsoMillis(service.clock().NowMillis()), controller::CurrentUserAtHost(), std::move(reason)};
}

void PrintTombstones(const std::vector<store::RunTombstone>& tombstones, bool json, std::ostream& out,
                     std::string_view key) {
  if (json) {
    Json list = Json::array();
    for (const auto& t : tombstones) list.push_back(controller::TombstoneToJson(t));
    out << Json{{std::string(key), list}}.dump() << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : tombstones) {
    rows.push_back({t.run_id, t.status, std::to_string(t.trace_events), t.final_trace_hash.substr(0, 19), t.deleted_at,
                    t.deleted_by, t.reason});
  }
  out << FormatTable({"RUN", "STATUS", "EVENTS", "FINAL TRACE HASH", "DELETED", "BY", "REASON"}, rows);
}

// After deleting: returns free pages to the file system on an incremental
// SQLite ledger; converts an older ledger with --vacuum, else says how.
Status ReclaimSpace(store::Store& store, bool vacuum, bool json, std::ostream& err) {
  auto* sqlite = dynamic_cast<store::SqliteStore*>(&store);
  if (!sqlite) return Ok();  // PostgreSQL: autovacuum reclaims the rows' space
  TELIC_ASSIGN_OR_RETURN(std::string mode, sqlite->AutoVacuumMode());
  if (mode == "incremental") return sqlite->ReclaimFreePages();
  if (vacuum) return sqlite->ConvertToIncrementalVacuum();
  if (!json) {
    err << "telic: note: this ledger predates incremental vacuum; freed pages are reused but the file does not "
           "shrink until it is converted once with --vacuum\n";
  }
  return Ok();
}

int Delete(const RetentionCommands& c, controller::RunService& service, bool json, std::ostream& out,
           std::ostream& err) {
  std::vector<std::string> ids;
  for (const auto& id : c.run_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  auto tombstones = controller::DeleteRuns(service, ids, c.force, Request(service, "delete"));
  if (!tombstones) return ReportFailure(err, tombstones.error());
  PrintTombstones(*tombstones, json, out, "deleted");
  if (auto reclaimed = ReclaimSpace(service.store(), c.vacuum, json, err); !reclaimed) {
    return ReportFailure(err, reclaimed.error());
  }
  return 0;
}

int Prune(const RetentionCommands& c, controller::RunService& service, bool json, std::ostream& out,
          std::ostream& err) {
  store::RetentionPolicy policy;
  auto older = store::ParseDuration(c.older_than);
  if (!older) return ReportFailure(err, older.error());
  policy.older_than_ms = *older;
  policy.statuses = c.statuses;
  policy.keep = c.keep;
  if (auto checked = store::CheckPruneStatuses(policy.statuses); !checked) return ReportFailure(err, checked.error());
  if (c.dry_run) {
    auto runs = controller::SelectPrunable(service.store(), policy, service.clock().NowMillis());
    if (!runs) return ReportFailure(err, runs.error());
    if (json) {
      Json list = Json::array();
      for (const auto& run : *runs) list.push_back(run.run_id);
      out << Json{{"wouldDelete", list}}.dump() << "\n";
    } else {
      std::vector<std::vector<std::string>> rows;
      for (const auto& run : *runs) rows.push_back({run.run_id, std::string(domain::Name(run.status)), run.created_at, run.updated_at});
      out << FormatTable({"WOULD DELETE", "STATUS", "CREATED", "UPDATED"}, rows);
    }
    return 0;
  }
  auto tombstones = controller::PruneRuns(service, policy, Request(service, "prune"));
  if (!tombstones) return ReportFailure(err, tombstones.error());
  PrintTombstones(*tombstones, json, out, "deleted");
  if (auto reclaimed = ReclaimSpace(service.store(), c.vacuum, json, err); !reclaimed) {
    return ReportFailure(err, reclaimed.error());
  }
  return 0;
}

}  // namespace

std::unique_ptr<RetentionCommands> AddRetentionCommands(CLI::App* runs) {
  auto c = std::make_unique<RetentionCommands>();
  c->remove = runs->add_subcommand("delete", "delete runs with their artifacts, trace and task graph; keeps a tombstone");
  c->remove->add_option("RUN_ID", c->run_ids, "the runs to delete")->required();
  c->remove->add_flag("--force", c->force, "also delete live runs: each is cancelled first (its trace says so)");
  c->prune = runs->add_subcommand("prune", "delete ended runs older than a duration (see also config.json retention)");
  c->prune->add_option("--older-than", c->older_than, "last change older than this: <N>s|m|h|d|w, e.g. 30d")->required();
  std::vector<std::string> terminal(std::begin(store::kTerminalStatuses), std::end(store::kTerminalStatuses));
  c->prune->add_option("--status", c->statuses, "only runs with this status (repeatable; default: every ended status)")
      ->check(CLI::IsMember(terminal));
  c->prune->add_option("--keep", c->keep, "never delete the N newest-created runs of the ledger")
      ->check(CLI::Range(0, 1000000));
  c->prune->add_flag("--dry-run", c->dry_run, "list what would be deleted; delete nothing");
  for (auto* sub : {c->remove, c->prune}) {
    sub->add_flag("--vacuum", c->vacuum, "SQLite: convert a ledger older than incremental vacuum (one VACUUM), so the file shrinks");
  }
  c->deleted = runs->add_subcommand("deleted", "list the tombstones of deleted runs, newest first");
  c->deleted->add_option("--limit", c->limit, "at most this many (1-1000, default 20)")->check(CLI::Range(1, 1000));
  return c;
}

int RunRetentionCommand(const RetentionCommands& c, controller::RunService& service, bool json, std::ostream& out,
                        std::ostream& err) {
  if (*c.remove) return Delete(c, service, json, out, err);
  if (*c.prune) return Prune(c, service, json, out, err);
  auto tombstones = service.store().ListTombstones(c.limit);
  if (!tombstones) return ReportFailure(err, tombstones.error());
  PrintTombstones(*tombstones, json, out, "tombstones");
  return 0;
}

Status PruneOnStart(const std::string& state_dir, controller::RunService& service, std::ostream& log) {
  TELIC_ASSIGN_OR_RETURN(std::optional<store::RetentionPolicy> policy, store::ReadRetentionPolicy(state_dir));
  if (!policy) return Ok();
  store::DeletionRequest request{FormatIsoMillis(service.clock().NowMillis()), "telic serve", "retention"};
  TELIC_ASSIGN_OR_RETURN(std::vector<store::RunTombstone> deleted, controller::PruneRuns(service, *policy, request));
  if (!deleted.empty()) {
    log << "telic: retention (config.json) deleted " << deleted.size() << " run" << (deleted.size() == 1 ? "" : "s")
        << "\n";
    TELIC_RETURN_IF_ERROR(ReclaimSpace(service.store(), false, true, log));
  }
  return Ok();
}

}  // namespace telic::cli
