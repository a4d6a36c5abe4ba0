// PgStore's retention (issue 22: DeleteRun, tombstones), its refused-call
// log and its context cost: the rows kept beside a run and the one route
// that deletes them.
#include "store/pg_store.h"

#include <algorithm>

#include <fmt/format.h>

#include "store/pg_connection.h"
#include "store/pg_task_store.h"
#include "store/record_codec.h"
#include "store/store_rules.h"

namespace telic::store {

namespace {

// Serialises run deletions across instances (pg_advisory_xact_lock key): a
// deletion marker may only follow the newest tombstone.
constexpr const char* kDeletionLockKey = "7310455081224577026";

// Deletes the context cost rows of run `id`, when the database has the table.
std::expected<void, PgFailure> DeleteContextCostRows(PGconn* conn, const std::string& id) {
  auto exists = Run(conn, "SELECT to_regclass('context_costs') IS NOT NULL");
  if (!exists) return std::unexpected(exists.error());
  if (Text(exists->get(), 0, 0) != "t") return {};
  auto deleted = Run(conn, "DELETE FROM context_costs WHERE run_id = $1", Params().Add(id));
  if (!deleted) return std::unexpected(deleted.error());
  return {};
}

// The body of DeleteRun's transaction (see Store::DeleteRun).
Attempt DeleteInTransaction(PGconn* conn, const std::string& id, int64_t expected_version,
                            const DeletionRequest& request, RunTombstone& tombstone) {
  PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kDeletionLockKey)));
  PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kPgGraphLockKey)));
  PG_TRY(run, Run(conn, "SELECT version, status, created_at FROM runs WHERE run_id = $1 FOR UPDATE", Params().Add(id)));
  if (pq::ntuples(run.get()) == 0) return std::unexpected(Because(RunNotFound(id)));
  if (Int(run.get(), 0, 0) != expected_version) return std::unexpected(Because(RunVersionConflict()));
  tombstone = RunTombstone{};
  tombstone.run_id = id;
  tombstone.status = Text(run.get(), 0, 1);
  tombstone.created_at = Text(run.get(), 0, 2);
  PG_TRY(last, Run(conn, "SELECT sequence, hash FROM trace_events WHERE run_id = $1 ORDER BY sequence DESC LIMIT 1",
                   Params().Add(id)));
  if (pq::ntuples(last.get()) > 0) {
    tombstone.trace_events = Int(last.get(), 0, 0);
    tombstone.final_trace_hash = Text(last.get(), 0, 1);
  }
  PG_TRY(count, Run(conn, "SELECT count(*) FROM artifacts WHERE run_id = $1", Params().Add(id)));
  tombstone.artifacts = Int(count.get(), 0, 0);
  tombstone.deleted_at = request.deleted_at;
  tombstone.deleted_by = request.deleted_by;
  tombstone.reason = request.reason;
  Params p;
  p.Add(id).Add(tombstone.final_trace_hash).Add(tombstone.trace_events).Add(tombstone.artifacts).Add(tombstone.status);
  p.Add(tombstone.created_at).Add(tombstone.deleted_at).Add(tombstone.deleted_by).Add(tombstone.reason);
  PG_TRY(inserted, Run(conn,
                       "INSERT INTO run_tombstones (run_id, final_trace_hash, trace_events, artifacts, status, "
                       "created_at, deleted_at, deleted_by, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
                       "RETURNING seq",
                       p));
  tombstone.seq = Int(inserted.get(), 0, 0);
  PG_DO(Run(conn, "INSERT INTO run_deletion_marker (run_id, tombstone_seq) VALUES ($1, $2)",
            Params().Add(id).Add(tombstone.seq)));
  for (const char* sql : {
           "DELETE FROM graph_approvals WHERE task_id IN (SELECT task_id FROM graph_tasks WHERE run_id = $1)",
           "DELETE FROM graph_events WHERE run_id = $1",
           "DELETE FROM graph_stories WHERE run_id = $1",
           "DELETE FROM graph_tasks WHERE run_id = $1",
       }) {
    PG_DO(Run(conn, sql, Params().Add(id)));
  }
  PG_TRY(digests, Run(conn, "DELETE FROM artifacts WHERE run_id = $1 RETURNING sha256", Params().Add(id)));
  std::vector<std::string> shas;
  for (int i = 0; i < pq::ntuples(digests.get()); ++i) shas.push_back(Text(digests.get(), i, 0));
  std::sort(shas.begin(), shas.end());
  shas.erase(std::unique(shas.begin(), shas.end()), shas.end());
  for (const std::string& sha : shas) {
    PG_DO(Run(conn, "DELETE FROM blobs WHERE sha256 = $1 AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = $1)",
              Params().Add(sha)));
  }
  PG_DO(Run(conn, "DELETE FROM trace_events WHERE run_id = $1", Params().Add(id)));
  PG_DO(Run(conn, "DELETE FROM refused_calls WHERE run_id = $1", Params().Add(id)));
  PG_DO(DeleteContextCostRows(conn, id));
  PG_DO(Run(conn, "DELETE FROM runs WHERE run_id = $1", Params().Add(id)));
  PG_DO(Run(conn, "DELETE FROM run_deletion_marker WHERE run_id = $1", Params().Add(id)));
  return {};
}

}  // namespace

Result<RunTombstone> PgStore::DeleteRun(std::string_view run_id, int64_t expected_version,
                                        const DeletionRequest& request) {
  RunTombstone tombstone;
  std::string id(run_id);
  TELIC_RETURN_IF_ERROR(InTransaction([this] { return Acquire(); }, [&](PGconn* conn) {
    return DeleteInTransaction(conn, id, expected_version, request, tombstone);
  }));
  return tombstone;
}

Result<std::vector<RunTombstone>> PgStore::ListTombstones(int limit) {
  TELIC_RETURN_IF_ERROR(CheckTombstonePageSize(limit));
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "tombstone list",
                                                      fmt::format("SELECT {} FROM run_tombstones ORDER BY seq DESC "
                                                                  "LIMIT $1",
                                                                  TombstoneColumns()),
                                                      Params().Add(int64_t{limit})));
  std::vector<RunTombstone> list;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(RunTombstone tombstone, DecodeTombstone(PgRow(rows.get(), i)));
    list.push_back(std::move(tombstone));
  }
  return list;
}

Result<int64_t> PgStore::RecordRefusedCall(const RefusedCall& call) {
  int64_t seq = 0;
  TELIC_RETURN_IF_ERROR(InTransaction([this] { return Acquire(); }, [&](PGconn* conn) -> Attempt {
    // One writer per run's log at a time, across instances: seq stays dense.
    PG_DO(Run(conn, "SELECT pg_advisory_xact_lock(hashtextextended($1, 8))", Params().Add(call.run_id)));
    Params p;
    p.Add(call.run_id).Add(call.at).Add(call.tool).Add(call.code).Add(call.error).Add(CanonicalJson(call.issues));
    p.Add(call.run_version).Add(kMaxRefusedCallsPerRun);
    PG_TRY(inserted, Run(conn,
                         "INSERT INTO refused_calls (run_id, seq, at, tool, code, error, issues_json, run_version) "
                         "SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4, $5, $6, $7 FROM refused_calls WHERE run_id = $1 "
                         "HAVING count(*) < $8 RETURNING seq",
                         p));
    seq = pq::ntuples(inserted.get()) == 1 ? Int(inserted.get(), 0, 0) : 0;
    return {};
  }));
  return seq;
}

Result<std::vector<RefusedCall>> PgStore::ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "refused call list",
                                                      fmt::format("SELECT {} FROM refused_calls WHERE run_id = $1 AND seq > $2 "
                                                                  "ORDER BY seq LIMIT $3",
                                                                  kRefusedCallColumns),
                                                      Params().Add(run_id).Add(after_seq).Add(int64_t{limit})));
  std::vector<RefusedCall> calls;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(RefusedCall call, DecodeRefusedCall(run_id, PgRow(rows.get(), i)));
    calls.push_back(std::move(call));
  }
  return calls;
}


// ---------------------------------------------------------------- context cost (issue 39)

namespace {

// Created on the first write (under the deletion lock, so that creators and
// DeleteRun never race): a database of an older telic reads unchanged.
constexpr const char* kContextCostTable =
    "CREATE TABLE IF NOT EXISTS context_costs (run_id TEXT COLLATE \"C\" NOT NULL, tool TEXT COLLATE \"C\" NOT NULL, "
    "calls BIGINT NOT NULL, bytes BIGINT NOT NULL, PRIMARY KEY (run_id, tool))";

}  // namespace

Status PgStore::WriteContextCosts(const HeldContextCosts::ByRun& by_run) {
  return InTransaction([this] { return Acquire(); }, [&](PGconn* conn) -> Attempt {
    PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kDeletionLockKey)));
    PG_DO(Run(conn, kContextCostTable));
    for (const auto& [run_id, costs] : by_run) {
      for (const ContextCost& cost : costs) {
        PG_DO(Run(conn,
                  "INSERT INTO context_costs (run_id, tool, calls, bytes) SELECT $1::text, $2::text, $3::bigint, "
                  "$4::bigint WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $1::text) ON CONFLICT (run_id, tool) DO "
                  "UPDATE SET calls = context_costs.calls + excluded.calls, bytes = context_costs.bytes + excluded.bytes",
                  Params().Add(run_id).Add(cost.tool).Add(cost.calls).Add(cost.bytes)));
      }
    }
    return {};
  });
}

Status PgStore::AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
  if (costs.empty()) return Ok();
  HeldContextCosts::ByRun one;
  one.emplace(std::string(run_id), costs);
  return WriteContextCosts(one);
}

void PgStore::DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) {
  held_costs_.Add(run_id, costs);
  if (held_costs_.Due()) (void)FlushContextCosts();  // a statistic: a failed write loses only these counts
}

Status PgStore::FlushContextCosts() {
  HeldContextCosts::ByRun held = held_costs_.TakeAll();
  if (held.empty()) return Ok();
  return WriteContextCosts(held);
}

Result<std::vector<ContextCost>> PgStore::GetContextCost(std::string_view run_id) {
  std::vector<ContextCost> costs;
  TELIC_ASSIGN_OR_RETURN(auto exists, ReadWithReconnect([this] { return Acquire(); }, "context cost read",
                                                        "SELECT to_regclass('context_costs') IS NOT NULL"));
  if (Text(exists.get(), 0, 0) == "t") {
    TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "context cost read",
                                                        "SELECT tool, calls, bytes FROM context_costs WHERE run_id = $1",
                                                        Params().Add(std::string(run_id))));
    for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
      costs.push_back(ContextCost{Text(rows.get(), i, 0), Int(rows.get(), i, 1), Int(rows.get(), i, 2)});
    }
  }
  held_costs_.AddHeldTo(run_id, costs);
  std::sort(costs.begin(), costs.end(), [](const ContextCost& a, const ContextCost& b) { return a.tool < b.tool; });
  return costs;
}

}  // namespace telic::store
