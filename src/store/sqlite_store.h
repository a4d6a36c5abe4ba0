// The embedded SQLite store: WAL, synchronous=FULL, one BEGIN IMMEDIATE
// transaction per change, version compare-and-set, busy timeout 5 s (the
// switch to WAL, which SQLite does not wait for, is retried for as long).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/store.h"

struct sqlite3;

namespace telic::store {

// The newest schema version this build writes; see kMigrations in the .cc.
int SqliteSchemaVersion();

class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) the database at `path` and applies pending
  // migrations; any number of processes may open one ledger at once. Fails
  // with kFailedPrecondition when the file was written by a newer telic or is
  // not a telic database, kUnavailable when it stayed locked for 5 s.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;

  Status CreateRun(const Change& change) override;
  Status ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) override;
  Result<RunRecord> GetRun(std::string_view run_id) override;
  Result<std::vector<RunRecord>> ListRuns(int limit) override;
  Result<RunPage> QueryRuns(const RunQuery& query) override;
  Result<std::vector<ArtifactMeta>> ListArtifactsAfter(std::string_view run_id, int64_t after_seq) override;
  Result<StoredArtifact> GetArtifact(std::string_view run_id, std::string_view artifact_id) override;
  Result<TracePage> GetTrace(std::string_view run_id, int64_t after_sequence, int limit) override;

  Result<RunTombstone> DeleteRun(std::string_view run_id, int64_t expected_version,
                                 const DeletionRequest& request) override;
  Result<std::vector<RunTombstone>> ListTombstones(int limit) override;

  // PRAGMA integrity_check; Ok when SQLite answers "ok".
  Status CheckIntegrity();

  // PRAGMA auto_vacuum: "none", "full" or "incremental". Ledgers created by
  // this telic are incremental; older ones stay "none" until converted.
  Result<std::string> AutoVacuumMode();
  // With incremental auto_vacuum, returns every free page to the file system
  // (PRAGMA incremental_vacuum, then a truncating WAL checkpoint when no
  // reader holds it). With "none" the free pages are only reused.
  Status ReclaimFreePages();
  // Switches an existing ledger to incremental auto_vacuum: the one VACUUM
  // that rewrites the whole file (it needs exclusive access for a while).
  Status ConvertToIncrementalVacuum();

 private:
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  Status Migrate();
  Status WriteChange(std::string_view run_id, std::optional<int64_t> expected_version, const Change& change);

  sqlite3* db_;
  std::mutex mutex_;  // one connection, serialised; each process opens its own
};

}  // namespace telic::store
