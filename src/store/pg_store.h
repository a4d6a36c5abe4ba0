// The shared PostgreSQL store (libpq): several telic instances on one
// database. Same contract as SqliteStore: one transaction per change, the run
// row locked (SELECT ... FOR UPDATE) while its version is compared and set,
// gapless hash-chained trace sequences, append-only blobs/artifacts/trace.
#pragma once

#include <memory>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "store/fair_pool.h"
#include "store/held_costs.h"
#include "store/pg_schema.h"
#include "store/store.h"

struct pg_conn;

namespace telic::store {


// True for "postgresql://..." and "postgres://..." connection URLs.
bool IsPostgresUrl(std::string_view text);

// The URL without user, password and query (safe to print or log).
std::string RedactPostgresUrl(std::string_view url);

class PgStore final : public Store {
 public:
  // Connects to `url` (a libpq connection URL or key=value string), applies
  // pending migrations under an advisory lock, and keeps up to `pool_size`
  // connections (opened on demand). Fails with kFailedPrecondition when the
  // database holds a newer telic schema or tables telic did not write, and
  // kUnavailable when the server cannot be reached.
  static Result<std::unique_ptr<PgStore>> Open(const std::string& url, int pool_size = 4);
  ~PgStore() override;

  Status CreateRun(const Change& change) override;
  Status ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) override;
  Result<RunRecord> GetRun(std::string_view run_id) override;
  Result<std::vector<RunRecord>> ListRuns(int limit) override;
  Result<RunPage> QueryRuns(const RunQuery& query) override;
  // The number of runs QueryRuns' filters match (cursor and limit ignored).
  Result<int64_t> CountRuns(const RunQuery& query);
  Result<std::vector<ArtifactMeta>> ListArtifactsAfter(std::string_view run_id, int64_t after_seq) override;
  // The two reads pipelined on one connection: one round trip.
  Result<RunAndArtifacts> GetRunAndArtifactsAfter(std::string_view run_id, int64_t after_seq) override;
  Result<StoredArtifact> GetArtifact(std::string_view run_id, std::string_view artifact_id) override;
  Result<TracePage> GetTrace(std::string_view run_id, int64_t after_sequence, int limit) override;

  Result<RunTombstone> DeleteRun(std::string_view run_id, int64_t expected_version,
                                 const DeletionRequest& request) override;
  Result<std::vector<RunTombstone>> ListTombstones(int limit) override;
  Result<int64_t> RecordRefusedCall(const RefusedCall& call) override;
  Result<std::vector<RefusedCall>> ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) override;
  Status AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) override;
  // Held until HeldContextCosts::Due (then every run's in one transaction),
  // or FlushContextCosts; the destructor flushes.
  void DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) override;
  Status FlushContextCosts() override;
  Result<std::vector<ContextCost>> GetContextCost(std::string_view run_id) override;

  // A round trip to the server (readiness).
  Status Ping();

  // Runs `sql` (no parameters) on a pooled connection and returns the first
  // column of its first row, "" when it has none: for tests and diagnostics
  // that look at a connection's own session (pg_prepared_statements).
  Result<std::string> QueryOnPooledConnection(const std::string& sql);

  class Lease;

 private:
  friend class PgTaskStore;
  PgStore(std::string url, int pool_size) : url_(std::move(url)), pool_(pool_size) {}
  Result<Lease> Acquire();
  void Release(pg_conn* conn);
  Status Migrate();
  Status WriteChange(std::string_view run_id, std::optional<int64_t> expected_version, const Change& change);

  // Adds every run's costs in `by_run` in one transaction, under the deletion lock.
  Status WriteContextCosts(const HeldContextCosts::ByRun& by_run);

  std::string url_;
  FairPool<pg_conn> pool_;  // first come first served (fair_pool.h)
  HeldContextCosts held_costs_;  // DeferContextCost's
};

// A pooled connection, returned to the pool when the lease ends. A
// connection left broken or inside a transaction is closed instead.
class PgStore::Lease {
 public:
  Lease(PgStore* store, pg_conn* conn) : store_(store), conn_(conn) {}
  Lease(Lease&& other) noexcept : store_(other.store_), conn_(std::exchange(other.conn_, nullptr)) {}
  Lease& operator=(Lease&&) = delete;
  ~Lease() {
    if (conn_) store_->Release(conn_);
  }
  pg_conn* get() const { return conn_; }

 private:
  PgStore* store_;
  pg_conn* conn_;
};

}  // namespace telic::store
