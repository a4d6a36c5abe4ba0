#include "store/sqlite_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "store/checkpoint_cycle.h"

namespace telic::store {
namespace {

// Each entry upgrades the schema by one version; never edit a released entry.
const char* const kMigrations[] = {
    // 1: runs, content-addressed blobs, artifacts, hash-chained trace events.
    R"sql(
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  schema_version TEXT NOT NULL,
  repository_root TEXT NOT NULL,
  requested_mode TEXT NOT NULL,
  topology TEXT NOT NULL,
  escalation_count INTEGER NOT NULL CHECK (escalation_count >= 0),
  prior_run_id TEXT,
  status TEXT NOT NULL,
  phase TEXT NOT NULL,
  resume_phase TEXT,
  version INTEGER NOT NULL CHECK (version >= 1),
  prompt_revisions_remaining INTEGER NOT NULL CHECK (prompt_revisions_remaining >= 0),
  remediations_remaining INTEGER NOT NULL CHECK (remediations_remaining >= 0),
  outcome_hint TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  extra_json TEXT NOT NULL
) STRICT;
CREATE INDEX runs_by_update ON runs (updated_at DESC, run_id);
CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,
  body TEXT NOT NULL
) STRICT;
CREATE TABLE artifacts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  artifact_id TEXT NOT NULL,
  type TEXT NOT NULL,
  schema_version TEXT NOT NULL,
  producer TEXT NOT NULL,
  sha256 TEXT NOT NULL REFERENCES blobs (sha256),
  source_refs_json TEXT NOT NULL,
  redaction TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, artifact_id)
);
CREATE TABLE trace_events (
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  event_id TEXT NOT NULL UNIQUE,
  timestamp TEXT NOT NULL,
  actor TEXT NOT NULL,
  phase TEXT NOT NULL,
  event_type TEXT NOT NULL,
  input_refs_json TEXT NOT NULL,
  output_refs_json TEXT NOT NULL,
  permission_decision_json TEXT,
  summary TEXT NOT NULL,
  budget_snapshot_json TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (run_id, sequence)
) STRICT;
CREATE TRIGGER blobs_immutable BEFORE UPDATE ON blobs BEGIN SELECT RAISE(ABORT, 'blobs are immutable'); END;
CREATE TRIGGER blobs_append_only BEFORE DELETE ON blobs BEGIN SELECT RAISE(ABORT, 'blobs are append-only'); END;
CREATE TRIGGER artifacts_immutable BEFORE UPDATE ON artifacts BEGIN SELECT RAISE(ABORT, 'artifacts are immutable'); END;
CREATE TRIGGER artifacts_append_only BEFORE DELETE ON artifacts BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
CREATE TRIGGER trace_immutable BEFORE UPDATE ON trace_events BEGIN SELECT RAISE(ABORT, 'trace events are immutable'); END;
CREATE TRIGGER trace_append_only BEFORE DELETE ON trace_events BEGIN SELECT RAISE(ABORT, 'trace events are append-only'); END;
)sql",
    // 2: a run's artifacts in insertion order without a sort or a scan of
    // other runs (ListArtifactsAfter reads only what follows a known seq).
    R"sql(
CREATE INDEX artifacts_by_run_seq ON artifacts (run_id, seq);
)sql",
    // 3: what was redacted from each trace event (TraceEventRecord::redactions,
    // canonical JSON). Events stored before it read as [], and their hashes
    // never covered the field, so the chain verifies unchanged.
    R"sql(
ALTER TABLE trace_events ADD COLUMN redactions_json TEXT NOT NULL DEFAULT '[]';
)sql",
    // 4: QueryRuns pages in creation order, alone or within one status or
    // mode, by walking an index from the cursor (no sort, no full scan).
    R"sql(
CREATE INDEX runs_by_creation ON runs (created_at DESC, run_id);
CREATE INDEX runs_by_status_creation ON runs (status, created_at DESC, run_id);
CREATE INDEX runs_by_mode_creation ON runs (requested_mode, created_at DESC, run_id);
)sql",
    // 5 (issue 22, retention): tombstones of deleted runs, and the one route
    // by which a run's rows may be deleted. The delete guards on blobs,
    // artifacts and trace events are recreated with one exception: the run
    // named in run_deletion_marker, a row that can only be inserted right
    // after that run's tombstone (Store::DeleteRun inserts and removes it in
    // its transaction). Updates stay refused; an ordinary DELETE still fails.
    R"sql(
CREATE TABLE IF NOT EXISTS run_tombstones (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  final_trace_hash TEXT NOT NULL,
  trace_events INTEGER NOT NULL,
  artifacts INTEGER NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT NOT NULL,
  deleted_by TEXT NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_tombstones_by_run ON run_tombstones (run_id);
DROP TRIGGER IF EXISTS run_tombstones_immutable;
CREATE TRIGGER run_tombstones_immutable BEFORE UPDATE ON run_tombstones BEGIN SELECT RAISE(ABORT, 'run tombstones are immutable'); END;
DROP TRIGGER IF EXISTS run_tombstones_append_only;
CREATE TRIGGER run_tombstones_append_only BEFORE DELETE ON run_tombstones BEGIN SELECT RAISE(ABORT, 'run tombstones are append-only'); END;
CREATE TABLE IF NOT EXISTS run_deletion_marker (
  run_id TEXT PRIMARY KEY,
  tombstone_seq INTEGER NOT NULL
) STRICT;
DROP TRIGGER IF EXISTS run_deletion_needs_tombstone;
CREATE TRIGGER run_deletion_needs_tombstone BEFORE INSERT ON run_deletion_marker
  WHEN EXISTS (SELECT 1 FROM run_deletion_marker)
    OR NEW.tombstone_seq IS NOT (SELECT max(seq) FROM run_tombstones)
    OR NOT EXISTS (SELECT 1 FROM run_tombstones WHERE seq = NEW.tombstone_seq AND run_id = NEW.run_id)
  BEGIN SELECT RAISE(ABORT, 'a run is deleted only right after its tombstone is recorded'); END;
DROP TRIGGER IF EXISTS run_deletion_marker_fixed;
CREATE TRIGGER run_deletion_marker_fixed BEFORE UPDATE ON run_deletion_marker BEGIN SELECT RAISE(ABORT, 'the deletion marker is fixed'); END;
CREATE INDEX IF NOT EXISTS artifacts_by_sha256 ON artifacts (sha256);
DROP TRIGGER IF EXISTS blobs_append_only;
CREATE TRIGGER blobs_append_only BEFORE DELETE ON blobs
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker) OR EXISTS (SELECT 1 FROM artifacts WHERE sha256 = OLD.sha256)
  BEGIN SELECT RAISE(ABORT, 'blobs are append-only'); END;
DROP TRIGGER IF EXISTS artifacts_append_only;
CREATE TRIGGER artifacts_append_only BEFORE DELETE ON artifacts
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
DROP TRIGGER IF EXISTS trace_append_only;
CREATE TRIGGER trace_append_only BEFORE DELETE ON trace_events
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'trace events are append-only'); END;
DROP TRIGGER IF EXISTS runs_kept;
CREATE TRIGGER runs_kept BEFORE DELETE ON runs
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'runs are deleted only through telic runs delete'); END;
)sql",
    // 6: the W3C trace context of the request that caused each trace event
    // (TraceEventRecord::traceparent/tracestate; NULL when none was sent).
    // Outside the hash, so every chain verifies unchanged.
    R"sql(
ALTER TABLE trace_events ADD COLUMN traceparent TEXT;
ALTER TABLE trace_events ADD COLUMN tracestate TEXT;
)sql",
    // 7: the refused-call log beside each run (RefusedCall): outside the
    // run's version and hash chain, append-only, deleted with its run.
    R"sql(
CREATE TABLE IF NOT EXISTS refused_calls (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at TEXT NOT NULL,
  tool TEXT NOT NULL,
  code TEXT NOT NULL,
  error TEXT NOT NULL,
  issues_json TEXT NOT NULL,
  run_version INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT;
DROP TRIGGER IF EXISTS refused_calls_immutable;
CREATE TRIGGER refused_calls_immutable BEFORE UPDATE ON refused_calls BEGIN SELECT RAISE(ABORT, 'refused calls are immutable'); END;
DROP TRIGGER IF EXISTS refused_calls_append_only;
CREATE TRIGGER refused_calls_append_only BEFORE DELETE ON refused_calls
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'refused calls are append-only'); END;
)sql",
};

constexpr int kSchemaVersion = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));
// How long any step waits for another connection's lock before giving up.
constexpr int kBusyTimeoutMs = 5000;
// At most this many queued changes share one transaction (group commit).
constexpr size_t kMaxGroupSize = 64;

}  // namespace

// A connection's prepared statements, kept for its lifetime (issue 18: the
// hot paths ran the SQL parser on every call). Used only under the store's
// mutex, like the connection itself.
class StmtCache {
 public:
  explicit StmtCache(sqlite3* db) : db_(db) {}
  ~StmtCache() {
    for (auto& [sql, entry] : entries_) sqlite3_finalize(entry.stmt);
  }
  StmtCache(const StmtCache&) = delete;
  StmtCache& operator=(const StmtCache&) = delete;

  sqlite3* db() const { return db_; }
  // The cached statement for `sql`, reset and marked busy; nullptr (with
  // *rc set) when it does not prepare, or when it is already busy (a nested
  // use of the same SQL: the caller prepares its own).
  sqlite3_stmt* Acquire(const std::string& sql, int* rc) {
    auto it = entries_.find(sql);
    if (it == entries_.end()) {
      sqlite3_stmt* stmt = nullptr;
      *rc = sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
      if (*rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return nullptr;
      }
      it = entries_.emplace(sql, Entry{stmt, false}).first;
    }
    *rc = SQLITE_OK;
    if (it->second.busy) return nullptr;
    it->second.busy = true;
    return it->second.stmt;
  }
  // Resets a statement from Acquire (ending any read it holds) for the next use.
  void Release(sqlite3_stmt* stmt) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (auto& [sql, entry] : entries_) {
      if (entry.stmt == stmt) {
        entry.busy = false;
        return;
      }
    }
  }

 private:
  struct Entry {
    sqlite3_stmt* stmt;
    bool busy;
  };
  sqlite3* db_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// The WAL checkpointer: the write connection's automatic checkpoint (which
// runs inside the COMMIT that crosses 1,000 WAL pages, with two fsyncs and
// the copy of every page) is replaced by PASSIVE checkpoints on a thread
// with its own connection, started when a commit leaves kCheckpointPages
// more frames in the WAL. A checkpoint only copies committed pages into the
// database file; durability of a commit is its WAL fsync, unchanged.
//
// A checkpoint cycle ends with the WAL complete, so that it is reused from
// its start (D-P16). SQLite reuses the WAL only when a write transaction
// begins with every frame already copied; a background pass never leaves it
// so while commits keep arriving (they append during the pass), and the WAL
// would grow by every commit's pages for the life of the process. So the
// cycle goes on after its first pass: further background passes while the
// frames not yet copied are more than kTailPages, then the writer copies that
// last tail itself, in the commit that finds it small (as SQLite's automatic
// checkpoint does, but for at most ~kTailPages pages instead of 1,000).
class Checkpointer {
 public:
  // Four times SQLite's default (D-P13): a page that several commits rewrite
  // (an index's last leaf, a run's random-keyed index leaves) is copied to
  // the database once per checkpoint, so fewer checkpoints copy fewer pages.
  // The WAL file then holds up to ~16 MiB between checkpoints.
  static constexpr int kCheckpointPages = 4000;
  // The largest tail the writer copies in its commit (about a dozen
  // start_runs' pages; a few milliseconds, once per cycle).
  static constexpr int kTailPages = 256;
  // Background passes per cycle before the writer copies whatever is left,
  // so that the WAL is bounded even when writes outrun the passes.
  static constexpr int kMaxPassesPerCycle = 4;

  // Replaces `writer`'s automatic checkpoint. The checkpointer's connection
  // and thread are started by the first commit that asks for a checkpoint, so
  // a process that never fills the WAL (a short command, a server that only
  // reads) opens neither. When that connection cannot be opened, the writer
  // checkpoints itself in its commit, as SQLite's automatic checkpoint does.
  // `cycle_pages` replaces kCheckpointPages (tests, to see many cycles).
  static std::unique_ptr<Checkpointer> Install(const std::string& path, sqlite3* writer,
                                               int cycle_pages = kCheckpointPages) {
    auto checkpointer = std::unique_ptr<Checkpointer>(new Checkpointer(path, writer, cycle_pages));
    sqlite3_wal_hook(writer, &Checkpointer::OnCommit, checkpointer.get());  // replaces the automatic checkpoint
    return checkpointer;
  }
  ~Checkpointer() {
    sqlite3_wal_autocheckpoint(writer_, kCheckpointPages);  // removes OnCommit
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        stop_ = true;
      }
      wake_.notify_all();
      thread_.join();
    }
    sqlite3_close(db_);
  }
  int64_t runs() const { return runs_.load(); }
  // CheckpointCycle's counters (tests; the writer updates them under the store's mutex).
  int64_t wal_reuses() const { return cycle_.reuses(); }
  int64_t frames_written() const { return cycle_.frames_written(); }

 private:
  Checkpointer(std::string path, sqlite3* writer, int cycle_pages)
      : path_(std::move(path)), writer_(writer), cycle_(cycle_pages, kTailPages, kMaxPassesPerCycle) {}

  // On the writer's thread (from OnCommit): opens the checkpointer's
  // connection and starts its thread. False when the connection cannot be opened.
  bool Start() {
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK ||
        sqlite3_exec(db_, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr) != SQLITE_OK) {
      sqlite3_close(db_);
      db_ = nullptr;
      return false;
    }
    sqlite3_busy_timeout(db_, 5000);
    // The thread starts with every signal blocked (it inherits the mask), so
    // a SIGTERM meant for the server's signal thread is never delivered here.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    thread_ = std::thread([this] { Run(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return true;
  }

  // sqlite3_wal_hook: called on the writer's thread after each commit (under
  // the store's connection mutex, so no other write of this process runs).
  // `wal_pages` counts every frame in the WAL, copied or not, until a writer
  // reuses the WAL after a complete checkpoint. What to do after each commit
  // is CheckpointCycle's decision; this carries it out.
  static int OnCommit(void* self, sqlite3* writer, const char* schema, int wal_pages) {
    auto* checkpointer = static_cast<Checkpointer*>(self);
    checkpointer->AfterCommit(writer, schema, wal_pages);
    return SQLITE_OK;
  }
  void AfterCommit(sqlite3* writer, const char* schema, int wal_pages) {
    bool pass_pending = false;
    int copied = 0;
    {
      std::lock_guard lock(mutex_);
      pass_pending = due_ || passing_;
      copied = copied_;
    }
    switch (cycle_.AfterCommit(wal_pages, pass_pending, copied)) {
      case CheckpointCycle::Step::kNone:
        return;
      case CheckpointCycle::Step::kStartCycle:
        if (!thread_.joinable() && !failed_ && !Start()) failed_ = true;
        if (failed_) {
          // What SQLite's own automatic checkpoint (a WAL hook too) does, in
          // the commit, at this hook's threshold: all of it, here.
          sqlite3_wal_checkpoint_v2(writer, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
          cycle_.TailCopied(true);
          return;
        }
        {
          std::lock_guard lock(mutex_);
          copied_ = 0;  // nothing of this cycle is known copied before its first pass
        }
        RequestPass();
        return;
      case CheckpointCycle::Step::kAskForPass:
        RequestPass();
        return;
      case CheckpointCycle::Step::kCopyTail: {
        int log = 0;
        int rc = sqlite3_wal_checkpoint_v2(writer, schema, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
        // Every frame in the database file: the next write transaction that
        // no reader of an older snapshot holds back reuses the WAL. Else a
        // reader still uses frames the tail could not copy (or another
        // process's checkpoint held the lock): the next commit tries again.
        cycle_.TailCopied(rc == SQLITE_OK && copied == log);
        if (rc == SQLITE_OK && copied != log) {
          std::lock_guard lock(mutex_);
          copied_ = copied;
        }
        return;
      }
    }
  }
  void RequestPass() {
    {
      std::lock_guard lock(mutex_);
      due_ = true;
    }
    wake_.notify_one();
  }
  void Run() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stop_ || due_; });
      if (stop_) return;
      due_ = false;
      passing_ = true;
      lock.unlock();
      int log = 0, copied = 0;
      int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
      runs_.fetch_add(1);
      lock.lock();
      passing_ = false;
      if (rc == SQLITE_OK) copied_ = copied;
    }
  }

  std::string path_;
  sqlite3* db_ = nullptr;  // opened by Start()
  sqlite3* writer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool due_ = false;        // a background pass is asked for (under mutex_)
  bool passing_ = false;    // a background pass is running (under mutex_)
  int copied_ = 0;          // frames the last pass or tail left copied (under mutex_)
  bool failed_ = false;     // writer side only: Start() could not open the connection
  CheckpointCycle cycle_;   // writer side only
  std::atomic<int64_t> runs_{0};
  std::thread thread_;  // started by Start() (writer side only)
};

namespace {

// A prepared statement: finalised on scope exit, or, when it came from a
// StmtCache, reset and returned to it.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  Stmt(StmtCache& cache, const std::string& sql) : db_(cache.db()) {
    stmt_ = cache.Acquire(sql, &rc_);
    if (stmt_) {
      cache_ = &cache;
    } else if (rc_ == SQLITE_OK) {
      rc_ = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr);  // busy in an outer scope
    }
  }
  ~Stmt() {
    if (cache_) {
      cache_->Release(stmt_);
    } else {
      sqlite3_finalize(stmt_);
    }
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::optional<std::string>& v) {
    if (v) return Bind(i, std::string_view(*v));
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int col) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  std::optional<std::string> OptText(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return Text(col);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  StmtCache* cache_ = nullptr;
  int rc_;
};

Error SqlError(sqlite3* db, std::string_view what) {
  int rc = sqlite3_extended_errcode(db);
  ErrorCode code = (rc & 0xFF) == SQLITE_BUSY || (rc & 0xFF) == SQLITE_LOCKED ? ErrorCode::kUnavailable
                                                                               : ErrorCode::kInternal;
  return Error(code, fmt::format("SQLite {} failed: {}", what, sqlite3_errmsg(db)));
}

Status Exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return std::unexpected(SqlError(db, "statement"));
  return Ok();
}

// Switches the ledger to WAL (a no-op when it already is), waiting up to
// kBusyTimeoutMs for other connections. The wait is ours, not the busy
// handler's: converting a rollback-journal file upgrades the read lock the
// pragma already holds, and SQLite answers SQLITE_BUSY at once for such an
// upgrade rather than call the busy handler (two upgraders waiting on each
// other would deadlock). So concurrent first opens of a fresh ledger collide
// here; each retries with a growing, jittered pause until one has converted
// it and the rest find it in WAL.
Status EnableWal(sqlite3* db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  std::minstd_rand jitter(static_cast<unsigned>(::getpid()) ^ static_cast<unsigned>(reinterpret_cast<uintptr_t>(db)));
  std::string mode;
  for (int attempt = 0;; ++attempt) {
    {
      Stmt s(db, "PRAGMA journal_mode=WAL");
      if (!s.ok()) return std::unexpected(SqlError(db, "journal_mode=WAL"));
      int rc = s.Step();
      if (rc == SQLITE_ROW) {
        mode = s.Text(0);  // the mode in force afterwards: "wal", or the old one if it could not change
        if (mode == "wal") return Ok();
      } else if ((rc & 0xFF) != SQLITE_BUSY && (rc & 0xFF) != SQLITE_LOCKED) {
        return std::unexpected(SqlError(db, "journal_mode=WAL"));
      }
    }  // the statement is finalised: this connection holds no lock while it waits
    if (std::chrono::steady_clock::now() >= deadline) {
      return Fail(ErrorCode::kUnavailable,
                  mode.empty() ? fmt::format("SQLite journal_mode=WAL failed: the ledger stayed locked for {} ms",
                                             kBusyTimeoutMs)
                               : fmt::format("SQLite journal_mode=WAL failed: the journal mode stayed {}", mode));
    }
    int pause_ms = std::min(1 << std::min(attempt, 5), 32);
    std::this_thread::sleep_for(std::chrono::microseconds(pause_ms * 1000 + static_cast<int>(jitter() % 1000)));
  }
}

std::string ToJson(const std::vector<std::string>& items) { return CanonicalJson(Json(items)); }


const char kRunColumns[] =
    "run_id, schema_version, repository_root, requested_mode, topology, escalation_count, prior_run_id, "
    "status, phase, resume_phase, version, prompt_revisions_remaining, remediations_remaining, "
    "outcome_hint, created_at, updated_at, extra_json";

Result<RunRecord> ReadRun(const Stmt& s) {
  RunRecord r;
  r.run_id = s.Text(0);
  r.schema_version = s.Text(1);
  r.repository_root = s.Text(2);
  TELIC_ASSIGN_OR_RETURN(r.requested_mode, DecodeWordColumn("runs", r.run_id, "requested_mode", s.Text(3), domain::ParseMode));
  TELIC_ASSIGN_OR_RETURN(r.topology, DecodeWordColumn("runs", r.run_id, "topology", s.Text(4), domain::ParseTopology));
  r.escalation_count = static_cast<int>(s.Int(5));
  r.prior_run_id = s.OptText(6);
  TELIC_ASSIGN_OR_RETURN(r.status, DecodeWordColumn("runs", r.run_id, "status", s.Text(7), domain::ParseRunStatus));
  TELIC_ASSIGN_OR_RETURN(r.phase, DecodeWordColumn("runs", r.run_id, "phase", s.Text(8), domain::ParsePhase));
  if (std::optional<std::string> resume = s.OptText(9)) {
    TELIC_ASSIGN_OR_RETURN(r.resume_phase, DecodeWordColumn("runs", r.run_id, "resume_phase", *resume, domain::ParsePhase));
  }
  r.version = s.Int(10);
  r.prompt_revisions_remaining = static_cast<int>(s.Int(11));
  r.remediations_remaining = static_cast<int>(s.Int(12));
  if (std::optional<std::string> hint = s.OptText(13)) {
    TELIC_ASSIGN_OR_RETURN(r.outcome_hint, DecodeWordColumn("runs", r.run_id, "outcome_hint", *hint, domain::ParseRunStatus));
  }
  r.created_at = s.Text(14);
  r.updated_at = s.Text(15);
  TELIC_ASSIGN_OR_RETURN(r.extra, DecodeJsonColumn("runs", r.run_id, "extra_json", s.Text(16)));
  return r;
}

void BindRun(Stmt& s, const RunRecord& r) {
  s.Bind(1, r.run_id).Bind(2, r.schema_version).Bind(3, r.repository_root).Bind(4, domain::Name(r.requested_mode));
  s.Bind(5, domain::Name(r.topology)).Bind(6, int64_t{r.escalation_count}).Bind(7, r.prior_run_id);
  s.Bind(8, domain::Name(r.status)).Bind(9, domain::Name(r.phase)).Bind(10, OptionalName(r.resume_phase));
  s.Bind(11, r.version);
  s.Bind(12, int64_t{r.prompt_revisions_remaining}).Bind(13, int64_t{r.remediations_remaining});
  s.Bind(14, OptionalName(r.outcome_hint)).Bind(15, r.created_at).Bind(16, r.updated_at).Bind(17, CanonicalJson(r.extra));
}

// Rolls back an open transaction unless Commit() was reached.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status BeginImmediate() {
    TELIC_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
    open_ = true;
    return Ok();
  }
  Status Commit() {
    TELIC_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
    open_ = false;
    return Ok();
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};

// The first column of the first row of `s` with `arg` bound to ?1; -1 when
// there is no row.
Result<int64_t> StepInt(Stmt& s, sqlite3* db, std::string_view arg) {
  if (!s.ok()) return std::unexpected(SqlError(db, "prepare"));
  s.Bind(1, arg);
  int rc = s.Step();
  if (rc == SQLITE_ROW) return s.Int(0);
  if (rc == SQLITE_DONE) return int64_t{-1};
  return std::unexpected(SqlError(db, "query"));
}

Result<int64_t> QueryInt(StmtCache& cache, const char* sql, std::string_view arg) {
  Stmt s(cache, sql);
  return StepInt(s, cache.db(), arg);
}

// The same query prepared for this call only (for rare paths such as run
// deletion that do not hold a statement cache).
Result<int64_t> QueryInt(sqlite3* db, const char* sql, std::string_view arg) {
  Stmt s(db, sql);
  return StepInt(s, db, arg);
}


Status InsertArtifact(StmtCache& cache, const StoredArtifact& a) {
  sqlite3* db = cache.db();
  if (a.canonical_body.size() > kMaxArtifactBodyBytes) {
    return Fail(ErrorCode::kResourceExhausted, fmt::format("Artifact exceeds {} byte limit", kMaxArtifactBodyBytes));
  }
  Stmt blob(cache, "INSERT INTO blobs (sha256, body) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING");
  blob.Bind(1, a.meta.sha256).Bind(2, a.canonical_body);
  if (blob.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "blob insert"));
  Stmt exists(cache, "SELECT 1 FROM artifacts WHERE run_id = ? AND artifact_id = ?");
  exists.Bind(1, a.meta.run_id).Bind(2, a.meta.id);
  if (exists.Step() == SQLITE_ROW) {
    return Fail(ErrorCode::kAlreadyExists, "Artifact already exists in this run: " + a.meta.id);
  }
  Stmt s(cache,
         "INSERT INTO artifacts (run_id, artifact_id, type, schema_version, producer, sha256, "
         "source_refs_json, redaction, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.Bind(1, a.meta.run_id).Bind(2, a.meta.id).Bind(3, domain::Name(a.meta.type)).Bind(4, a.meta.schema_version);
  s.Bind(5, a.meta.producer).Bind(6, a.meta.sha256).Bind(7, ToJson(a.meta.source_refs));
  s.Bind(8, a.meta.redaction).Bind(9, a.meta.created_at);
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "artifact insert"));
  return Ok();
}

Status AppendEvents(StmtCache& cache, std::string_view run_id, const std::vector<TraceEventRecord>& events,
                    std::optional<int64_t> expected_length) {
  if (events.empty()) return Ok();
  sqlite3* db = cache.db();
  Stmt last(cache, "SELECT sequence, hash FROM trace_events WHERE run_id = ? ORDER BY sequence DESC LIMIT 1");
  last.Bind(1, run_id);
  int64_t sequence = 0;
  std::string prev_hash;
  if (last.Step() == SQLITE_ROW) {
    sequence = last.Int(0);
    prev_hash = last.Text(1);
  }
  if (expected_length && sequence != *expected_length) {
    return Fail(ErrorCode::kConflict, std::string(kConcurrentTraceAppend));
  }
  if (sequence + static_cast<int64_t>(events.size()) > kMaxTraceEventsPerRun) {
    return Fail(ErrorCode::kResourceExhausted, fmt::format("Run trace limit of {} reached", kMaxTraceEventsPerRun));
  }
  for (TraceEventRecord e : events) {
    if (!e.redactions.is_array()) return Fail(ErrorCode::kInternal, "trace event redactions must be a JSON array");
    e.run_id = std::string(run_id);
    e.sequence = ++sequence;
    e.prev_hash = prev_hash;
    RedactTraceEvent(e);  // nothing caller-supplied is stored unredacted
    e.hash = ComputeTraceEventHash(e);
    prev_hash = e.hash;
    Stmt s(cache,
           "INSERT INTO trace_events (run_id, sequence, event_id, timestamp, actor, phase, event_type, "
           "input_refs_json, output_refs_json, permission_decision_json, summary, budget_snapshot_json, "
           "redactions_json, prev_hash, hash, traceparent, tracestate) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.Bind(1, e.run_id).Bind(2, e.sequence).Bind(3, e.event_id).Bind(4, e.timestamp).Bind(5, e.actor);
    s.Bind(6, e.phase).Bind(7, e.event_type).Bind(8, ToJson(e.input_refs)).Bind(9, ToJson(e.output_refs));
    std::optional<std::string> decision;
    if (e.permission_decision) decision = CanonicalJson(*e.permission_decision);
    s.Bind(10, decision).Bind(11, e.summary).Bind(12, CanonicalJson(e.budget_snapshot));
    s.Bind(13, CanonicalJson(e.redactions)).Bind(14, e.prev_hash).Bind(15, e.hash);
    s.Bind(16, e.traceparent).Bind(17, e.tracestate);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "trace insert"));
  }
  return Ok();
}

Result<TraceEventRecord> ReadEvent(const Stmt& s) {
  TraceEventRecord e;
  e.run_id = s.Text(0);
  e.sequence = s.Int(1);
  e.event_id = s.Text(2);
  e.timestamp = s.Text(3);
  e.actor = s.Text(4);
  e.phase = s.Text(5);
  e.event_type = s.Text(6);
  const std::string key = fmt::format("{}/{}", e.run_id, e.sequence);
  TELIC_ASSIGN_OR_RETURN(e.input_refs, DecodeListColumn("trace_events", key, "input_refs_json", s.Text(7)));
  TELIC_ASSIGN_OR_RETURN(e.output_refs, DecodeListColumn("trace_events", key, "output_refs_json", s.Text(8)));
  if (auto d = s.OptText(9)) {
    TELIC_ASSIGN_OR_RETURN(e.permission_decision, DecodeJsonColumn("trace_events", key, "permission_decision_json", *d));
  }
  e.summary = s.Text(10);
  TELIC_ASSIGN_OR_RETURN(e.budget_snapshot, DecodeJsonColumn("trace_events", key, "budget_snapshot_json", s.Text(11)));
  TELIC_ASSIGN_OR_RETURN(e.redactions, DecodeJsonColumn("trace_events", key, "redactions_json", s.Text(12)));
  e.prev_hash = s.Text(13);
  e.hash = s.Text(14);
  e.traceparent = s.OptText(15);
  e.tracestate = s.OptText(16);
  return e;
}

Result<ArtifactMeta> ReadArtifactMeta(const Stmt& s) {
  ArtifactMeta m;
  m.run_id = s.Text(0);
  m.id = s.Text(1);
  TELIC_ASSIGN_OR_RETURN(m.type, DecodeWordColumn("artifacts", m.run_id + "/" + m.id, "type", s.Text(2),
                                                  domain::ParseArtifactType));
  m.schema_version = s.Text(3);
  m.producer = s.Text(4);
  m.sha256 = s.Text(5);
  TELIC_ASSIGN_OR_RETURN(m.source_refs, DecodeListColumn("artifacts", m.run_id + "/" + m.id, "source_refs_json", s.Text(6)));
  m.redaction = s.Text(7);
  m.created_at = s.Text(8);
  return m;
}

const char kArtifactColumns[] =
    "run_id, artifact_id, type, schema_version, producer, sha256, source_refs_json, redaction, created_at";

}  // namespace

int SqliteSchemaVersion() { return kSchemaVersion; }

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  // Create the file owner-only before SQLite touches it; -wal/-shm inherit the mode.
  // O_NONBLOCK: a FIFO never blocks the open; only a regular file is a ledger
  // (SQLite would block reading a FIFO, or "write" to /dev/zero).
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open ledger {}: {}", path, strerror(errno)));
  struct stat st;
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  if (!regular) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open ledger {}: not a regular file", path));
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open ledger {}: {}", path, message));
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
  // First, so that every later step (the migration check, BEGIN IMMEDIATE,
  // each read and write) waits for other connections' locks.
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // A new ledger frees deleted runs' pages with incremental vacuum. Set
  // before the switch to WAL, which writes the header of an empty file and
  // fixes its auto_vacuum mode. Only on an empty file: on a ledger that has
  // pages it changes nothing (see ConvertToIncrementalVacuum) but still
  // rewrites page 1, a commit with two fsyncs on every start-up.
  TELIC_ASSIGN_OR_RETURN(int64_t pages, QueryInt(db, "PRAGMA page_count", ""));
  if (pages == 0) TELIC_RETURN_IF_ERROR(Exec(db, "PRAGMA auto_vacuum=INCREMENTAL"));
  TELIC_RETURN_IF_ERROR(EnableWal(db));
  TELIC_RETURN_IF_ERROR(Exec(db, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"));
  TELIC_RETURN_IF_ERROR(store->Migrate());
  // temp_store=MEMORY, after the migrations (an index built over a large
  // ledger may still sort in a temporary file): a group commit puts each
  // change in a savepoint (CommitGroup), and SQLite moves a savepoint's
  // statement journal to a temporary file once it passes 64 KiB, which a
  // 21-page change does: a file created, written and unlinked in /var/tmp on
  // every group commit (docs/DECISIONS.md D-P7). In memory it is at most kMaxGroupSize
  // changes' pages, freed at the commit; nothing durable depends on it (the
  // WAL is the ledger's journal).
  TELIC_RETURN_IF_ERROR(Exec(db, "PRAGMA temp_store=MEMORY"));
  // The read connection and the checkpointer's are opened when first needed:
  // a process that only writes, or only starts (`telic serve` answering
  // initialize, a short CLI command), parses the schema once, not three times.
  store->path_ = path;
  store->checkpointer_ = Checkpointer::Install(path, db);
  return store;
}

Result<std::unique_lock<std::mutex>> SqliteStore::LockReader() {
  std::unique_lock lock(read_mutex_);
  if (read_db_ == nullptr) TELIC_RETURN_IF_ERROR(OpenReadConnection(path_));
  return lock;
}

// Reads use their own connection: in WAL mode a reader sees every committed
// transaction and never waits for a writer, so a read is not queued behind a
// group's COMMIT and its fsync (issue 18 target 4). Every read was already
// its own transaction (nothing reads inside a write transaction), so what a
// read returns is unchanged.
Status SqliteStore::OpenReadConnection(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &read_db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string message = read_db_ ? sqlite3_errmsg(read_db_) : "out of memory";
    sqlite3_close(read_db_);
    read_db_ = nullptr;  // the next read tries again
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open ledger {} for reading: {}", path, message));
  }
  sqlite3_busy_timeout(read_db_, kBusyTimeoutMs);
  read_stmts_ = std::make_unique<StmtCache>(read_db_);
  return Ok();
}

SqliteStore::SqliteStore(sqlite3* db) : db_(db), stmts_(std::make_unique<StmtCache>(db)) {}

SqliteStore::~SqliteStore() {
  checkpointer_.reset();
  read_stmts_.reset();
  sqlite3_close(read_db_);
  stmts_.reset();
  sqlite3_close(db_);
}

Status SqliteStore::Migrate() {
  std::lock_guard lock(mutex_);
  // Fast path: a current ledger is opened without taking the write lock.
  auto current = QueryInt(*stmts_, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "schema_version");
  if (current && *current == kSchemaVersion) return Ok();
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  TELIC_RETURN_IF_ERROR(Exec(db_, "CREATE TABLE IF NOT EXISTS telic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT"));
  TELIC_ASSIGN_OR_RETURN(int64_t has_runs,
                         QueryInt(*stmts_, "SELECT count(*) FROM sqlite_master WHERE name = ?", "runs"));
  TELIC_ASSIGN_OR_RETURN(int64_t version,
                         QueryInt(*stmts_, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "schema_version"));
  if (version < 0 && has_runs > 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "the ledger has tables but no telic schema version; it was not written by telic");
  }
  if (version > kSchemaVersion) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the ledger has schema version {} but this telic supports up to {}; upgrade telic",
                            version, kSchemaVersion));
  }
  // Another process migrated it while this one waited for the lock: nothing
  // to write (the rollback undoes only a no-op CREATE TABLE IF NOT EXISTS).
  if (version == kSchemaVersion) return Ok();
  for (int64_t next = std::max<int64_t>(version, 0); next < kSchemaVersion; ++next) {
    TELIC_RETURN_IF_ERROR(Exec(db_, kMigrations[next]));
  }
  Stmt s(db_, "INSERT INTO telic_meta (key, value) VALUES ('schema_version', ?) "
              "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  s.Bind(1, std::to_string(kSchemaVersion));
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "migration"));
  return tx.Commit();
}

// One writer's change waiting for a group commit. The leader fills `result`
// while it applies the group (before COMMIT); the writer may read it only
// once `done` is set, which the leader does under queue_mutex_ after the
// group's COMMIT returned (or failed): no write is acknowledged before its
// commit is durable. `wake` is the writer's own: the leader signals it when
// `done` is set, or when the writer heads the queue as the leader finishes.
struct SqliteStore::PendingWrite {
  std::string_view run_id;
  std::optional<int64_t> expected_version;
  const Change* change;
  std::optional<Status> result;
  bool done = false;  // guarded by queue_mutex_
  std::condition_variable wake;
};

Status SqliteStore::WriteChange(std::string_view run_id, std::optional<int64_t> expected_version,
                                const Change& change) {
  PendingWrite me{run_id, expected_version, &change, std::nullopt, false, {}};
  std::unique_lock queue_lock(queue_mutex_);
  // Joining the queue wakes nobody: a waiting writer waits for its group's
  // COMMIT or for the leader to finish, and joining changes neither.
  queue_.push_back(&me);
  while (!me.done) {
    if (leader_active_) {
      me.wake.wait(queue_lock);
      wakeups_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // Lead: take every queued change (this one among them) as one group.
    size_t take = std::min(queue_.size(), kMaxGroupSize);
    std::vector<PendingWrite*> group(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
    leader_active_ = true;
    committing_ = &group;
    queue_lock.unlock();
    CommitGroup(group);
    queue_lock.lock();
    committing_ = nullptr;
    for (PendingWrite* w : group) {
      w->done = true;
      if (w != &me) w->wake.notify_one();
    }
    leader_active_ = false;
    // The writer that joined first since leads the next group.
    if (!queue_.empty()) queue_.front()->wake.notify_one();
  }
  return std::move(*me.result);
}

void SqliteStore::CommitGroup(const std::vector<PendingWrite*>& group) {
  std::lock_guard lock(mutex_);
  auto fail_all = [&](const Error& error) {
    for (PendingWrite* w : group) w->result = std::unexpected(error);
  };
  Transaction tx(db_);
  if (auto begun = tx.BeginImmediate(); !begun) return fail_all(begun.error());
  const bool isolate = group.size() > 1;
  for (PendingWrite* w : group) {
    if (isolate) {
      if (auto saved = Exec(db_, "SAVEPOINT telic_change"); !saved) return fail_all(saved.error());
    }
    // Never throws out of here: the other writers of the group wait for it.
    w->result = [&]() -> Status {
      try {
        return ApplyInTransaction(w->run_id, w->expected_version, *w->change);
      } catch (const std::exception& ex) {
        return Fail(ErrorCode::kInternal, fmt::format("internal error: {}", ex.what()));
      }
    }();
    if (!isolate) {
      if (!*w->result) return;  // the Transaction rolls it back
      continue;
    }
    if (!*w->result) {
      // Undo only this change; the others in the group stay.
      (void)Exec(db_, "ROLLBACK TO telic_change");
    }
    (void)Exec(db_, "RELEASE telic_change");
    if (sqlite3_get_autocommit(db_)) {
      // An I/O or memory error rolled back the whole transaction: nothing
      // of this group is stored, so none of it may be acknowledged.
      return fail_all(w->result && !*w->result ? w->result->error()
                                               : SqlError(db_, "group transaction"));
    }
  }
  if (before_commit_for_test_) before_commit_for_test_(group.size());
  if (auto committed = tx.Commit(); !committed) return fail_all(committed.error());
  commits_.fetch_add(1);
}

Status SqliteStore::ApplyInTransaction(std::string_view run_id, std::optional<int64_t> expected_version,
                                       const Change& change) {
  TELIC_ASSIGN_OR_RETURN(int64_t stored, QueryInt(*stmts_, "SELECT version FROM runs WHERE run_id = ?", run_id));
  if (!expected_version && stored >= 0) {
    return Fail(ErrorCode::kAlreadyExists, fmt::format("Run already exists: {}", run_id));
  }
  if (expected_version) {
    if (stored < 0) return Fail(ErrorCode::kNotFound, fmt::format("Run not found: {}", run_id));
    if (stored != *expected_version) {
      return Fail(ErrorCode::kConflict, "Concurrent run update detected; reload and retry with the latest version");
    }
    Stmt s(*stmts_, fmt::format("UPDATE runs SET ({}) = (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                            "WHERE run_id = ?18 AND version = ?19",
                            kRunColumns));
    BindRun(s, change.run);
    s.Bind(18, run_id).Bind(19, *expected_version);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "run update"));
  } else {
    Stmt s(*stmts_, fmt::format("INSERT INTO runs ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            kRunColumns));
    BindRun(s, change.run);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "run insert"));
  }
  if (!change.artifacts.empty()) {
    TELIC_ASSIGN_OR_RETURN(int64_t count, QueryInt(*stmts_, "SELECT count(*) FROM artifacts WHERE run_id = ?", run_id));
    if (change.expected_artifact_count && count != *change.expected_artifact_count) {
      return Fail(ErrorCode::kConflict, std::string(kConcurrentAppend));
    }
    if (count + static_cast<int64_t>(change.artifacts.size()) > static_cast<int64_t>(kMaxArtifactsPerRun)) {
      return Fail(ErrorCode::kResourceExhausted, fmt::format("Run artifact limit of {} reached", kMaxArtifactsPerRun));
    }
  }
  for (const StoredArtifact& a : change.artifacts) TELIC_RETURN_IF_ERROR(InsertArtifact(*stmts_, a));
  return AppendEvents(*stmts_, run_id, change.events, change.expected_trace_length);
}

int64_t SqliteStore::background_checkpoints() const { return checkpointer_ ? checkpointer_->runs() : 0; }

int64_t SqliteStore::wal_reuses() const { return checkpointer_ ? checkpointer_->wal_reuses() : 0; }

int64_t SqliteStore::wal_frames_written() const { return checkpointer_ ? checkpointer_->frames_written() : 0; }

void SqliteStore::set_checkpoint_cycle_pages_for_test(int pages) {
  std::lock_guard lock(mutex_);
  checkpointer_.reset();
  checkpointer_ = Checkpointer::Install(path_, db_, std::max(pages, 1));
}

void SqliteStore::WakeWaitingWritersForTest() {
  std::lock_guard lock(queue_mutex_);
  for (PendingWrite* w : queue_) w->wake.notify_one();
  if (committing_) {
    for (PendingWrite* w : *committing_) w->wake.notify_one();
  }
}

size_t SqliteStore::queued_writes() {
  std::lock_guard lock(queue_mutex_);
  return queue_.size();
}

Status SqliteStore::CreateRun(const Change& change) { return WriteChange(change.run.run_id, std::nullopt, change); }

Status SqliteStore::ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) {
  if (change.run.run_id != run_id) return Fail(ErrorCode::kInternal, "change targets another run");
  return WriteChange(run_id, expected_version, change);
}

Result<RunRecord> SqliteStore::GetRun(std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {} FROM runs WHERE run_id = ?", kRunColumns));
  s.Bind(1, run_id);
  int rc = s.Step();
  if (rc == SQLITE_ROW) return ReadRun(s);
  if (rc == SQLITE_DONE) return Fail(ErrorCode::kNotFound, fmt::format("Run not found: {}", run_id));
  return std::unexpected(SqlError(read_db_, "run read"));
}

Result<std::vector<RunRecord>> SqliteStore::ListRuns(int limit) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {} FROM runs ORDER BY updated_at DESC, run_id ASC LIMIT ?", kRunColumns));
  s.Bind(1, int64_t{limit});
  std::vector<RunRecord> runs;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(RunRecord run, ReadRun(s));
    runs.push_back(std::move(run));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(read_db_, "run list"));
  return runs;
}

Result<RunPage> SqliteStore::QueryRuns(const RunQuery& query) {
  TELIC_RETURN_IF_ERROR(CheckRunQuery(query));
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  // Numbered parameters: the ones a query leaves out are simply not bound.
  std::string cursor;
  std::string cursor_created_at;
  if (query.before) {
    Stmt at(*read_stmts_, "SELECT created_at FROM runs WHERE run_id = ?");
    at.Bind(1, *query.before);
    int rc = at.Step();
    if (rc == SQLITE_DONE) return std::unexpected(UnknownRunCursor(*query.before));
    if (rc != SQLITE_ROW) return std::unexpected(SqlError(read_db_, "run cursor read"));
    cursor_created_at = at.Text(0);
    // A range on created_at (walks the index from the cursor), then the run_id tie-break.
    cursor = " AND created_at <= ?1 AND (created_at < ?1 OR run_id > ?2)";
  }
  std::string filters;
  if (query.status) filters += " AND status = ?3";
  if (query.mode) filters += " AND requested_mode = ?4";
  if (query.topology) filters += " AND topology = ?6";
  constexpr std::string_view kRequestHas =
      "EXISTS (SELECT 1 FROM artifacts a JOIN blobs b ON b.sha256 = a.sha256 WHERE a.run_id = runs.run_id"
      " AND a.type = 'UserMessage' AND a.source_refs_json = '[]'"
      " AND instr(lower(json_extract(b.body, '$.content')), lower({0})) > 0)";
  if (query.request_contains) filters += " AND " + fmt::format(fmt::runtime(kRequestHas), "?7");
  if (query.search) {
    filters += " AND (lower(substr(run_id, 1, length(?8))) = lower(?8) OR " + fmt::format(fmt::runtime(kRequestHas), "?8") + ")";
  }
  auto bind_filters = [&](Stmt& s) {
    if (query.status) s.Bind(3, domain::Name(*query.status));
    if (query.mode) s.Bind(4, domain::Name(*query.mode));
    if (query.topology) s.Bind(6, domain::Name(*query.topology));
    if (query.request_contains) s.Bind(7, *query.request_contains);
    if (query.search) s.Bind(8, *query.search);
  };
  Stmt s(*read_stmts_, fmt::format("SELECT {} FROM runs WHERE 1{}{} ORDER BY created_at DESC, run_id ASC LIMIT ?5",
                                   kRunColumns, cursor, filters));
  if (!s.ok()) return std::unexpected(SqlError(read_db_, "run query"));
  if (query.before) s.Bind(1, cursor_created_at).Bind(2, *query.before);
  bind_filters(s);
  s.Bind(5, int64_t{query.limit} + 1);
  RunPage page;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(RunRecord run, ReadRun(s));
    page.runs.push_back(std::move(run));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(read_db_, "run query"));
  if (page.runs.size() > static_cast<size_t>(query.limit)) {
    page.runs.pop_back();
    page.next = page.runs.back().run_id;
  }
  if (query.with_total) {
    Stmt count(*read_stmts_, "SELECT count(*) FROM runs WHERE 1" + filters);
    if (!count.ok()) return std::unexpected(SqlError(read_db_, "run count"));
    bind_filters(count);
    if (count.Step() != SQLITE_ROW) return std::unexpected(SqlError(read_db_, "run count"));
    page.total = count.Int(0);
  }
  return page;
}

Result<std::vector<ArtifactMeta>> SqliteStore::ListArtifactsAfter(std::string_view run_id, int64_t after_seq) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {}, seq FROM artifacts WHERE run_id = ? AND seq > ? ORDER BY seq", kArtifactColumns));
  s.Bind(1, run_id).Bind(2, after_seq);
  std::vector<ArtifactMeta> list;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, ReadArtifactMeta(s));
    list.push_back(std::move(meta));
    list.back().seq = s.Int(9);
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(read_db_, "artifact list"));
  return list;
}

Result<StoredArtifact> SqliteStore::GetArtifact(std::string_view run_id, std::string_view artifact_id) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {}, b.body FROM artifacts a LEFT JOIN blobs b USING (sha256) "
                          "WHERE a.run_id = ? AND a.artifact_id = ?",
                          kArtifactColumns));
  s.Bind(1, run_id).Bind(2, artifact_id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return Fail(ErrorCode::kNotFound, fmt::format("Artifact not found: {}", artifact_id));
  if (rc != SQLITE_ROW) return std::unexpected(SqlError(read_db_, "artifact read"));
  TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, ReadArtifactMeta(s));
  StoredArtifact a{std::move(meta), s.Text(9)};
  if (Sha256Ref(a.canonical_body) != a.meta.sha256) {
    return Fail(ErrorCode::kDataLoss, fmt::format("Artifact integrity check failed: {}", artifact_id));
  }
  return a;
}

Result<TracePage> SqliteStore::GetTrace(std::string_view run_id, int64_t after_sequence, int limit) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_,
         "SELECT run_id, sequence, event_id, timestamp, actor, phase, event_type, input_refs_json, "
         "output_refs_json, permission_decision_json, summary, budget_snapshot_json, redactions_json, prev_hash, hash, "
         "traceparent, tracestate "
         "FROM trace_events WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?");
  s.Bind(1, run_id).Bind(2, after_sequence).Bind(3, int64_t{limit} + 1);
  TracePage page;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(TraceEventRecord event, ReadEvent(s));
    page.events.push_back(std::move(event));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(read_db_, "trace read"));
  if (page.events.size() > static_cast<size_t>(limit)) {
    page.has_more = true;
    page.events.pop_back();
  }
  return page;
}

// ---- Retention (issue 22): DeleteRun, tombstones, space reclamation ----

namespace {

const char kTombstoneColumns[] =
    "seq, run_id, final_trace_hash, trace_events, artifacts, status, created_at, deleted_at, deleted_by, reason";

RunTombstone ReadTombstone(const Stmt& s) {
  return RunTombstone{s.Int(0),  s.Text(1), s.Text(2), s.Int(3), s.Int(4), s.Text(5),
                      s.Text(6), s.Text(7), s.Text(8), s.Text(9)};
}

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
// when the ledger has them, artifacts and the blobs only they used, trace, run.
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
  std::vector<std::string> digests;
  {
    Stmt s(db, "SELECT DISTINCT sha256 FROM artifacts WHERE run_id = ?");
    s.Bind(1, run_id);
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) digests.push_back(s.Text(0));
    if (rc != SQLITE_DONE) return std::unexpected(SqlError(db, "artifact digests read"));
  }
  TELIC_RETURN_IF_ERROR(ExecForRun(db, "DELETE FROM artifacts WHERE run_id = ?1", run_id, "artifact delete"));
  for (const std::string& digest : digests) {
    Stmt s(db, "DELETE FROM blobs WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)");
    s.Bind(1, digest);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "blob delete"));
  }
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
    if (rc == SQLITE_DONE) return Fail(ErrorCode::kNotFound, fmt::format("Run not found: {}", run_id));
    if (rc != SQLITE_ROW) return std::unexpected(SqlError(db_, "run read"));
    if (run.Int(0) != expected_version) {
      return Fail(ErrorCode::kConflict, "Concurrent run update detected; reload and retry with the latest version");
    }
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
  if (limit < 1 || limit > kMaxRunPageSize) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("Tombstone page size must be between 1 and {}", kMaxRunPageSize));
  }
  std::lock_guard lock(mutex_);
  Stmt s(db_, fmt::format("SELECT {} FROM run_tombstones ORDER BY seq DESC LIMIT ?", kTombstoneColumns).c_str());
  s.Bind(1, int64_t{limit});
  std::vector<RunTombstone> list;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) list.push_back(ReadTombstone(s));
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
         "SELECT seq, at, tool, code, error, issues_json, run_version FROM refused_calls WHERE run_id = ? AND seq > ? "
         "ORDER BY seq LIMIT ?");
  s.Bind(1, run_id).Bind(2, after_seq).Bind(3, int64_t{limit});
  std::vector<RefusedCall> calls;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    RefusedCall call{s.Int(0), std::string(run_id), s.Text(1), s.Text(2), s.Text(3), s.Text(4), Json::array(), s.Int(6)};
    call.issues = Json::parse(s.Text(5), nullptr, false);
    if (call.issues.is_discarded() || !call.issues.is_array()) {
      return Fail(ErrorCode::kDataLoss, fmt::format("refused_calls row ({}, {}): issues_json is not a JSON array", run_id, call.seq));
    }
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
    "bytes INTEGER NOT NULL, PRIMARY KEY (run_id, tool)) STRICT";

}  // namespace

Status SqliteStore::AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
  if (costs.empty()) return Ok();
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  TELIC_RETURN_IF_ERROR(Exec(db_, kContextCostTable));
  for (const ContextCost& cost : costs) {
    Stmt s(db_, "INSERT INTO context_costs (run_id, tool, calls, bytes) SELECT ?1, ?2, ?3, ?4 "
                "WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?1) ON CONFLICT (run_id, tool) DO UPDATE SET "
                "calls = calls + excluded.calls, bytes = bytes + excluded.bytes");
    if (!s.ok()) return std::unexpected(SqlError(db_, "context cost write"));
    s.Bind(1, run_id).Bind(2, cost.tool).Bind(3, cost.calls).Bind(4, cost.bytes);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "context cost write"));
  }
  return tx.Commit();
}

Result<std::vector<ContextCost>> SqliteStore::GetContextCost(std::string_view run_id) {
  std::lock_guard lock(mutex_);
  std::vector<ContextCost> costs;
  TELIC_ASSIGN_OR_RETURN(int64_t has_costs,
                         QueryInt(db_, "SELECT count(*) FROM sqlite_master WHERE name = ?", "context_costs"));
  if (has_costs == 0) return costs;
  Stmt s(db_, "SELECT tool, calls, bytes FROM context_costs WHERE run_id = ? ORDER BY tool");
  if (!s.ok()) return std::unexpected(SqlError(db_, "context cost read"));
  s.Bind(1, run_id);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) costs.push_back(ContextCost{s.Text(0), s.Int(1), s.Int(2)});
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "context cost read"));
  return costs;
}

}  // namespace telic::store
