// The embedded SQLite store: WAL, synchronous=FULL, one BEGIN IMMEDIATE
// transaction per change, version compare-and-set, busy timeout 5 s (the
// switch to WAL, which SQLite does not wait for, is retried for as long).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "store/held_costs.h"
#include "store/store.h"

struct sqlite3;

namespace telic::store {

class StmtCache;
class Checkpointer;

// The newest schema version this build writes; see kMigrations in sqlite_schema.cc.
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
  Result<int64_t> RecordRefusedCall(const RefusedCall& call) override;
  Result<std::vector<RefusedCall>> ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) override;
  Status AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) override;
  // Held until the run's next change commits (written in its transaction),
  // or until HeldContextCosts::Due (then all in one commit), or
  // FlushContextCosts; the destructor flushes.
  void DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) override;
  Status FlushContextCosts() override;
  Result<std::vector<ContextCost>> GetContextCost(std::string_view run_id) override;

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

  // Group commit: writers that arrive while a commit is under way queue;
  // the next leader applies every queued change in one BEGIN IMMEDIATE ..
  // COMMIT (one fsync), each change version-checked on its own and undone
  // alone (a SAVEPOINT) when it fails. No writer returns before the COMMIT
  // of its group did; if that COMMIT fails, every writer of the group gets
  // the error and nothing of the group is stored.
  // Transactions committed so far by this store (one per group).
  int64_t commit_count() const { return commits_.load(); }
  // Called by a group's leader just before COMMIT with the group's size
  // (tests use it to hold a commit while other writers queue).
  void set_before_commit_for_test(std::function<void(size_t)> hook) { before_commit_for_test_ = std::move(hook); }
  // Writers queued and not yet taken by a leader.
  size_t queued_writes();
  // Times a waiting writer was woken so far. A writer waits on its own
  // condition variable and is woken only when its group has committed or
  // when it is first in the queue and the leader has finished: never by
  // another writer joining the queue or by a group it is not part of.
  int64_t writer_wakeups() const { return wakeups_.load(); }
  // Wakes every waiting writer, queued or in the group being committed, as
  // a spurious wakeup would (tests: no writer may return before its group's
  // COMMIT however it is woken).
  void WakeWaitingWritersForTest();
  // WAL checkpoints run so far by the background checkpointer.
  int64_t background_checkpoints() const;
  // Times a commit of this store found the WAL reused from its start, which
  // SQLite does once a checkpoint left every frame copied (D-P16): the WAL
  // then stops growing.
  int64_t wal_reuses() const;
  // (wal_reuses and wal_frames_written read counters the writer updates in
  // its commits without a lock: read them only when no write is in flight,
  // as the tests do after their writes returned.)
  // WAL frames the commits of this store appended so far, over every reuse
  // of the WAL (a WAL that is never reused is this many frames long).
  int64_t wal_frames_written() const;
  // Starts a checkpoint cycle every `pages` (>= 1) WAL frames instead of
  // 4,000 (tests, to see many cycles). Call it before the first write and
  // while no other thread uses the store: it replaces the checkpointer that
  // the two counters above read.
  void set_checkpoint_cycle_pages_for_test(int pages);

 private:
  explicit SqliteStore(sqlite3* db);
  Status Migrate();
  Status OpenReadConnection(const std::string& path);
  // read_mutex_, locked, with the read connection open (opened on first use).
  Result<std::unique_lock<std::mutex>> LockReader();
  struct PendingWrite;
  Status WriteChange(std::string_view run_id, std::optional<int64_t> expected_version, const Change& change);
  void CommitGroup(const std::vector<PendingWrite*>& group);
  Status ApplyInTransaction(std::string_view run_id, std::optional<int64_t> expected_version, const Change& change);
  // In the group's open transaction: adds the held costs of the runs whose
  // change applied; a failed cost write is undone alone and its costs dropped.
  void WriteDeferredCostsOf(const std::vector<PendingWrite*>& group);

  sqlite3* db_;
  std::string path_;  // the ledger file, for the connections opened later
  std::unique_ptr<StmtCache> stmts_;  // db_'s prepared statements (finalised before it closes)
  // The reads' own connection (GetRun, ListRuns, QueryRuns, ListArtifactsAfter,
  // GetArtifact, GetTrace), so they never wait for a commit on db_.
  sqlite3* read_db_ = nullptr;
  std::unique_ptr<StmtCache> read_stmts_;
  std::mutex read_mutex_;
  // Checkpoints the WAL on its own thread and connection, so that no write
  // waits for a checkpoint's copying and fsyncs (issue 18 target 2).
  std::unique_ptr<Checkpointer> checkpointer_;
  std::mutex mutex_;  // one connection, serialised; each process opens its own
  HeldContextCosts held_costs_;  // DeferContextCost's
  // Group commit (see commit_count): queued writers, whether a leader is committing.
  std::mutex queue_mutex_;
  std::deque<PendingWrite*> queue_;
  const std::vector<PendingWrite*>* committing_ = nullptr;  // the leader's group while it commits
  bool leader_active_ = false;
  std::atomic<int64_t> wakeups_{0};
  std::atomic<int64_t> commits_{0};
  std::function<void(size_t)> before_commit_for_test_;
};

}  // namespace telic::store
