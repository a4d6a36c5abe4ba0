// SqliteStore's retention (issue 22: DeleteRun, tombstones, space
// reclamation), its refused-call log and its context cost: the rows kept
// beside a run and the one route that deletes them.
#include "store/sqlite_store.h"

#include <algorithm>

#include <fmt/format.h>

#include "store/record_codec.h"
#include "store/sqlite_connection.h"
#include "store/store_rules.h"

namespace telic::store {

namespace {

// Runs one statement with `run_id` bound to every parameter.
Status ExecForRun(sqlite3* db, const char* sql, std::string_view run_id, std::string_view what) {
  Stmt s(db, sql);
  if (!s.ok()) return std::unexpected(SqlError(db, what));
  s.Bind(1, run_id);
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, what));
  return Ok();
}

// Deletes the context cost rows of `run_id`, when the ledger has the table.
Status DeleteContextCostRows(sqlite3* db, std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(int64_t has_costs, QueryInt(db, "SELECT count(*) FROM sqlite_master WHERE name = ?", "context_costs"));
  if (has_costs == 0) return Ok();
  return ExecForRun(db, "DELETE FROM context_costs WHERE run_id = ?1", run_id, "context cost delete");
}

// Deletes the rows of `run_id` (whose marker is in place): task graph rows
// when the ledger has them, artifacts (with their bodies), trace, run.
Status DeleteRunRows(sqlite3* db, std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(int64_t has_graph, QueryInt(db, "SELECT count(*) FROM sqlite_master WHERE name = ?", "graph_tasks"));
  if (has_graph > 0) {
    TELIC_RETURN_IF_ERROR(ExecForRun(
        db, "DELETE FROM graph_approvals WHERE task_id IN (SELECT task_id FROM graph_tasks WHERE run_id = ?1)", run_id,
        "approval delete"));
    TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM graph_events WHERE run_id = ?1", run_id, "task event delete"));
    TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM graph_stories WHERE run_id = ?1", run_id, "story delete"));
    TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM graph_tasks WHERE run_id = ?1", run_id, "task delete"));
  }
  TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM artifacts WHERE run_id = ?1", run_id, "artifact delete"));
  TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM trace_events WHERE run_id = ?1", run_id, "trace delete"));
  TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM refused_calls WHERE run_id = ?1", run_id, "refused call delete"));
  TELIC_RETURN_IF_ERROR(DeleteContextCostRows(db, run_id));
  TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM runs WHERE run_id = ?1", run_id, "run delete"));
  return ExecForRun(db, "DELETE FROM run_deletion_marker WHERE run_id = ?1", run_id, "deletion marker delete");
}

}  // namespace

Result<RunTombstone> SqliteStore::DeleteRun(std::string_view run_id, int64_t expected_version,
                                            const DeletionRequest& request) {
  RunTombstone tombstone;
  {
    std::lock_guard lock(mutex_);
    Transaction tx(db_);
    TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
    Stmt run(db_, "SELECT version, status, created_at FROM runs WHERE run_id = ?");
    run.Bind(1, run_id);
    int rc = run.Step();
    if (rc == SQLITE_DONE) return std::unexpected(RunNotFound(run_id));
    if (rc != SQLITE_ROW) return std::unexpected(SqlError(db_, "run read"));
    if (run.Int(0) != expected_version) return std::unexpected(RunVersionConflict());
    tombstone.run_id = std::string(run_id);
    tombstone.status = run.Text(1);
    tombstone.created_at = run.Text(2);
    Stmt last(db_, "SELECT sequence, hash FROM trace_events WHERE run_id = ? ORDER BY sequence DESC LIMIT 1");
    last.Bind(1, run_id);
    if (last.Step() == SQLITE_ROW) {
      tombstone.trace_events = last.Int(0);
      tombstone.final_trace_hash = last.Text(1);
    }
    TELIC_ASSIGN_OR_RETURN(tombstone.artifacts, QueryInt(db_, "SELECT count(*) FROM artifacts WHERE run_id = ?", run_id));
    tombstone.deleted_at = request.deleted_at;
    tombstone.deleted_by = request.deleted_by;
    tombstone.reason = request.reason;
    Stmt insert(db_, "INSERT INTO run_tombstones (run_id, final_trace_hash, trace_events, artifacts, status, created_at, "
                     "deleted_at, deleted_by, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.Bind(1, tombstone.run_id).Bind(2, tombstone.final_trace_hash).Bind(3, tombstone.trace_events);
    insert.Bind(4, tombstone.artifacts).Bind(5, tombstone.status).Bind(6, tombstone.created_at);
    insert.Bind(7, tombstone.deleted_at).Bind(8, tombstone.deleted_by).Bind(9, tombstone.reason);
    if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "tombstone insert"));
    tombstone.seq = sqlite3_last_insert_rowid(db_);
    Stmt marker(db_, "INSERT INTO run_deletion_marker (run_id, tombstone_seq) VALUES (?, ?)");
    marker.Bind(1, run_id).Bind(2, tombstone.seq);
    if (marker.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "deletion marker insert"));
    TELIC_RETURN_IF_ERROR(DeleteRunRows(db_, run_id));
    TELIC_RETURN_IF_ERROR(tx.Commit());
  }
  // The run is gone whatever happens here: reclaiming space is best effort.
  if (auto mode = AutoVacuumMode(); mode && *mode == "incremental") (void)ReclaimFreePages();
  return tombstone;
}

Result<std::vector<RunTombstone>> SqliteStore::ListTombstones(int limit) {
  TELIC_RETURN_IF_ERROR(CheckTombstonePageSize(limit));
  std::lock_guard lock(mutex_);
  Stmt s(db_, fmt::format("SELECT {} FROM run_tombstones ORDER BY seq DESC LIMIT ?", TombstoneColumns()).c_str());
  s.Bind(1, int64_t{limit});
  std::vector<RunTombstone> list;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(RunTombstone tombstone, DecodeTombstone(SqliteRow(s)));
    list.push_back(std::move(tombstone));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "tombstone list"));
  return list;
}

Result<int64_t> SqliteStore::RecordRefusedCall(const RefusedCall& call) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  Stmt insert(db_,
              "INSERT INTO refused_calls (run_id, seq, at, tool, code, error, issues_json, run_version) "
              "SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 FROM refused_calls WHERE run_id = ?1 "
              "HAVING count(*) < ?8 RETURNING seq");
  insert.Bind(1, call.run_id).Bind(2, call.at).Bind(3, call.tool).Bind(4, call.code).Bind(5, call.error);
  insert.Bind(6, CanonicalJson(call.issues)).Bind(7, call.run_version).Bind(8, kMaxRefusedCallsPerRun);
  int rc = insert.Step();
  int64_t seq = rc == SQLITE_ROW ? insert.Int(0) : 0;
  if (rc == SQLITE_ROW) rc = insert.Step();
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "refused call insert"));
  TELIC_RETURN_IF_ERROR(tx.Commit());
  return seq;
}

Result<std::vector<RefusedCall>> SqliteStore::ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_,
         fmt::format("SELECT {} FROM refused_calls WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                     kRefusedCallColumns));
  s.Bind(1, run_id).Bind(2, after_seq).Bind(3, int64_t{limit});
  std::vector<RefusedCall> calls;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(RefusedCall call, DecodeRefusedCall(run_id, SqliteRow(s)));
    calls.push_back(std::move(call));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(read_db_, "refused call list"));
  return calls;
}

Result<std::string> SqliteStore::AutoVacuumMode() {
  std::lock_guard lock(mutex_);
  Stmt s(db_, "PRAGMA auto_vacuum");
  if (s.Step() != SQLITE_ROW) return std::unexpected(SqlError(db_, "auto_vacuum read"));
  switch (s.Int(0)) {
    case 1: return std::string("full");
    case 2: return std::string("incremental");
    default: return std::string("none");
  }
}

Status SqliteStore::ReclaimFreePages() {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(Exec(db_, "PRAGMA incremental_vacuum"));
  // The file shrinks once the WAL is checkpointed; readers may keep it from
  // truncating now, and that is fine (a later checkpoint does it).
  return Exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)");
}

Status SqliteStore::ConvertToIncrementalVacuum() {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(Exec(db_, "PRAGMA auto_vacuum=INCREMENTAL"));
  TELIC_RETURN_IF_ERROR(Exec(db_, "VACUUM"));
  return Exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)");
}

Status SqliteStore::CheckIntegrity() {
  std::lock_guard lock(mutex_);
  Stmt s(db_, "PRAGMA integrity_check");
  if (s.Step() != SQLITE_ROW) return std::unexpected(SqlError(db_, "integrity check"));
  std::string answer = s.Text(0);
  if (answer != "ok") return Fail(ErrorCode::kDataLoss, "SQLite integrity check: " + answer);
  return Ok();
}

// ---- Context cost (issue 39): the bytes of a run's tool results, per tool ----

namespace {

// Created on the first write, so a ledger of an older telic opens (and reads,
// read-only too) unchanged: the migration is this one additive table.
constexpr const char* kContextCostTable =
    "CREATE TABLE IF NOT EXISTS context_costs (run_id TEXT NOT NULL, tool TEXT NOT NULL, calls INTEGER NOT NULL, "
    "bytes INTEGER NOT NULL, PRIMARY KEY (run_id, tool)) STRICT, WITHOUT ROWID";

// Adds `costs` to the rows of `run_id` in `db`'s open write transaction.
Status WriteContextCostRows(sqlite3* db, std::string_view run_id, const std::vector<ContextCost>& costs) {
  TELIC_RETURN_IF_ERROR(Exec(db, kContextCostTable));
  for (const ContextCost& cost : costs) {
    Stmt s(db, "INSERT INTO context_costs (run_id, tool, calls, bytes) SELECT ?1, ?2, ?3, ?4 "
               "WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?1) ON CONFLICT (run_id, tool) DO UPDATE SET "
               "calls = calls + excluded.calls, bytes = bytes + excluded.bytes");
    if (!s.ok()) return std::unexpected(SqlError(db, "context cost write"));
    s.Bind(1, run_id).Bind(2, cost.tool).Bind(3, cost.calls).Bind(4, cost.bytes);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "context cost write"));
  }
  return Ok();
}

}  // namespace

Status SqliteStore::AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
  if (costs.empty()) return Ok();
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  TELIC_RETURN_IF_ERROR(WriteContextCostRows(db_, run_id, costs));
  return tx.Commit();
}

void SqliteStore::DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) {
  held_costs_.Add(run_id, costs);
  if (held_costs_.Due()) (void)FlushContextCosts();  // a statistic: a failed write loses only these counts
}

Status SqliteStore::FlushContextCosts() {
  HeldContextCosts::ByRun held = held_costs_.TakeAll();
  if (held.empty()) return Ok();
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  for (const auto& [run_id, costs] : held) TELIC_RETURN_IF_ERROR(WriteContextCostRows(db_, run_id, costs));
  return tx.Commit();
}

void SqliteStore::WriteDeferredCostsOf(const std::vector<PendingWrite*>& group) {
  if (held_costs_.empty()) return;
  std::vector<std::pair<std::string_view, std::vector<ContextCost>>> riding;
  for (const PendingWrite* w : group) {
    if (!w->result || !*w->result) continue;
    if (auto costs = held_costs_.Take(w->run_id)) riding.emplace_back(w->run_id, std::move(*costs));
  }
  if (riding.empty() || !Exec(db_, "SAVEPOINT telic_costs")) return;
  for (const auto& [run_id, costs] : riding) {
    if (WriteContextCostRows(db_, run_id, costs)) continue;
    (void)Exec(db_, "ROLLBACK TO telic_costs");  // a statistic: only these counts are lost
    break;
  }
  (void)Exec(db_, "RELEASE telic_costs");
}

Result<std::vector<ContextCost>> SqliteStore::GetContextCost(std::string_view run_id) {
  std::vector<ContextCost> costs;
  {
    std::lock_guard lock(mutex_);
    TELIC_ASSIGN_OR_RETURN(int64_t has_costs,
                           QueryInt(db_, "SELECT count(*) FROM sqlite_master WHERE name = ?", "context_costs"));
    if (has_costs > 0) {
      Stmt s(db_, "SELECT tool, calls, bytes FROM context_costs WHERE run_id = ?");
      if (!s.ok()) return std::unexpected(SqlError(db_, "context cost read"));
      s.Bind(1, run_id);
      int rc;
      while ((rc = s.Step()) == SQLITE_ROW) costs.push_back(ContextCost{s.Text(0), s.Int(1), s.Int(2)});
      if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "context cost read"));
    }
  }
  held_costs_.AddHeldTo(run_id, costs);
  std::sort(costs.begin(), costs.end(), [](const ContextCost& a, const ContextCost& b) { return a.tool < b.tool; });
  return costs;
}

}  // namespace telic::store
