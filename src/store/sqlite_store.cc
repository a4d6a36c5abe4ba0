#include "store/sqlite_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "store/record_codec.h"
#include "store/sqlite_checkpointer.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_schema.h"
#include "store/store_rules.h"

namespace telic::store {
namespace {

// At most this many queued changes share one transaction (group commit).
constexpr size_t kMaxGroupSize = 64;

// "?, ?, ..." for `count` parameters.
std::string Placeholders(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

// What CheckChange needs of the run, read inside the write transaction.
Result<StoredRunState> ReadRunState(StmtCache& stmts, std::string_view run_id, const Change& change) {
  StoredRunState state;
  TELIC_ASSIGN_OR_RETURN(int64_t version, QueryInt(stmts, "SELECT version FROM runs WHERE run_id = ?", run_id));
  if (version < 0) return state;  // no run: nothing of it is stored yet
  state.version = version;
  if (!change.artifacts.empty()) {
    TELIC_ASSIGN_OR_RETURN(state.artifacts, QueryInt(stmts, "SELECT count(*) FROM artifacts WHERE run_id = ?", run_id));
  }
  if (!change.events.empty()) {
    Stmt last(stmts, "SELECT sequence, hash FROM trace_events WHERE run_id = ? ORDER BY sequence DESC LIMIT 1");
    last.Bind(1, run_id);
    int rc = last.Step();
    if (rc == SQLITE_ROW) {
      state.trace_length = last.Int(0);
      state.trace_hash = last.Text(1);
    } else if (rc != SQLITE_DONE) {
      return std::unexpected(SqlError(stmts.db(), "trace read"));
    }
  }
  return state;
}

Status WriteRunRow(StmtCache& stmts, std::string_view run_id, std::optional<int64_t> expected_version,
                   const RunRecord& run) {
  if (expected_version) {
    static const std::string update =
        fmt::format("UPDATE runs SET ({}) = ({}) WHERE run_id = ?{} AND version = ?{}", RunColumns(),
                    Placeholders(kRunColumnCount), kRunColumnCount + 1, kRunColumnCount + 2);
    Stmt s(stmts, update);
    SqliteBinder bind(s);
    EncodeRun(run, bind);
    s.Bind(kRunColumnCount + 1, run_id).Bind(kRunColumnCount + 2, *expected_version);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(stmts.db(), "run update"));
    return Ok();
  }
  static const std::string insert =
      fmt::format("INSERT INTO runs ({}) VALUES ({})", RunColumns(), Placeholders(kRunColumnCount));
  Stmt s(stmts, insert);
  SqliteBinder bind(s);
  EncodeRun(run, bind);
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(stmts.db(), "run insert"));
  return Ok();
}

Status InsertArtifact(StmtCache& cache, const StoredArtifact& a) {
  sqlite3* db = cache.db();
  Stmt exists(cache, "SELECT 1 FROM artifacts WHERE run_id = ? AND artifact_id = ?");
  exists.Bind(1, a.meta.run_id).Bind(2, a.meta.id);
  if (exists.Step() == SQLITE_ROW) return std::unexpected(ArtifactAlreadyExists(a.meta.id));
  static const std::string insert =
      fmt::format("INSERT INTO artifacts ({}, body) VALUES ({})", ArtifactColumns(), Placeholders(kArtifactColumnCount + 1));
  Stmt s(cache, insert);
  SqliteBinder bind(s);
  EncodeArtifactMeta(a.meta, bind);
  s.Bind(kArtifactColumnCount + 1, a.canonical_body);
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "artifact insert"));
  return Ok();
}

// Seals `events` onto the run's stored trace (SealEvents) and inserts them.
Status AppendEvents(StmtCache& cache, std::string_view run_id, const std::vector<TraceEventRecord>& events,
                    const StoredRunState& stored) {
  if (events.empty()) return Ok();
  TELIC_ASSIGN_OR_RETURN(std::vector<TraceEventRecord> sealed,
                         SealEvents(run_id, events, stored.trace_length, stored.trace_hash));
  static const std::string insert =
      fmt::format("INSERT INTO trace_events ({}) VALUES ({})", EventColumns(), Placeholders(kEventColumnCount));
  for (const TraceEventRecord& e : sealed) {
    Stmt s(cache, insert);
    SqliteBinder bind(s);
    EncodeEvent(e, bind);
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(cache.db(), "trace insert"));
  }
  return Ok();
}

// Reads every row of `s` with `decode`, or the error of the first that fails.
template <typename T, typename Decode>
Result<std::vector<T>> ReadAll(Stmt& s, sqlite3* db, std::string_view what, Decode decode) {
  std::vector<T> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(T item, decode(SqliteRow(s)));
    out.push_back(std::move(item));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db, what));
  return out;
}

}  // namespace

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
  sqlite3_busy_timeout(db, kSqliteBusyTimeoutMs);
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
  sqlite3_busy_timeout(read_db_, kSqliteBusyTimeoutMs);
  read_stmts_ = std::make_unique<StmtCache>(read_db_);
  return Ok();
}

SqliteStore::SqliteStore(sqlite3* db) : db_(db), stmts_(std::make_unique<StmtCache>(db)) {}

SqliteStore::~SqliteStore() {
  (void)FlushContextCosts();  // a statistic: a failed write loses only these counts
  checkpointer_.reset();
  read_stmts_.reset();
  sqlite3_close(read_db_);
  stmts_.reset();
  sqlite3_close(db_);
}

Status SqliteStore::Migrate() {
  std::lock_guard lock(mutex_);
  return MigrateRunSchema(db_, *stmts_);
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
  WriteDeferredCostsOf(group);
  if (before_commit_for_test_) before_commit_for_test_(group.size());
  if (auto committed = tx.Commit(); !committed) return fail_all(committed.error());
  commits_.fetch_add(1);
}

Status SqliteStore::ApplyInTransaction(std::string_view run_id, std::optional<int64_t> expected_version,
                                       const Change& change) {
  TELIC_ASSIGN_OR_RETURN(StoredRunState stored, ReadRunState(*stmts_, run_id, change));
  TELIC_RETURN_IF_ERROR(CheckChange(run_id, expected_version, stored, change));
  TELIC_RETURN_IF_ERROR(WriteRunRow(*stmts_, run_id, expected_version, change.run));
  for (const StoredArtifact& a : change.artifacts) TELIC_RETURN_IF_ERROR(InsertArtifact(*stmts_, a));
  return AppendEvents(*stmts_, run_id, change.events, stored);
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
  Stmt s(*read_stmts_, fmt::format("SELECT {} FROM runs WHERE run_id = ?", RunColumns()));
  s.Bind(1, run_id);
  int rc = s.Step();
  if (rc == SQLITE_ROW) return DecodeRun(SqliteRow(s));
  if (rc == SQLITE_DONE) return std::unexpected(RunNotFound(run_id));
  return std::unexpected(SqlError(read_db_, "run read"));
}

Result<std::vector<RunRecord>> SqliteStore::ListRuns(int limit) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {} FROM runs ORDER BY updated_at DESC, run_id ASC LIMIT ?", RunColumns()));
  s.Bind(1, int64_t{limit});
  return ReadAll<RunRecord>(s, read_db_, "run list", [](const SqliteRow& row) { return DecodeRun(row); });
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
      "EXISTS (SELECT 1 FROM artifacts a WHERE a.run_id = runs.run_id"
      " AND a.type = 'UserMessage' AND a.source_refs_json = '[]'"
      " AND instr(lower(json_extract(a.body, '$.content')), lower({0})) > 0)";
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
                                   RunColumns(), cursor, filters));
  if (!s.ok()) return std::unexpected(SqlError(read_db_, "run query"));
  if (query.before) s.Bind(1, cursor_created_at).Bind(2, *query.before);
  bind_filters(s);
  s.Bind(5, int64_t{query.limit} + 1);
  RunPage page;
  TELIC_ASSIGN_OR_RETURN(page.runs,
                         ReadAll<RunRecord>(s, read_db_, "run query", [](const SqliteRow& row) { return DecodeRun(row); }));
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
  Stmt s(*read_stmts_,
         fmt::format("SELECT {}, seq FROM artifacts WHERE run_id = ? AND seq > ? ORDER BY seq", ArtifactColumns()));
  s.Bind(1, run_id).Bind(2, after_seq);
  return ReadAll<ArtifactMeta>(s, read_db_, "artifact list", [](const SqliteRow& row) -> Result<ArtifactMeta> {
    TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, DecodeArtifactMeta(row));
    TELIC_ASSIGN_OR_RETURN(meta.seq, DecodeIntColumn(row, kArtifactColumnCount, "artifacts", meta.run_id + "/" + meta.id, "seq"));
    return meta;
  });
}

Result<StoredArtifact> SqliteStore::GetArtifact(std::string_view run_id, std::string_view artifact_id) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {}, body FROM artifacts WHERE run_id = ? AND artifact_id = ?",
                          ArtifactColumns()));
  s.Bind(1, run_id).Bind(2, artifact_id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::unexpected(ArtifactNotFound(artifact_id));
  if (rc != SQLITE_ROW) return std::unexpected(SqlError(read_db_, "artifact read"));
  TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, DecodeArtifactMeta(SqliteRow(s)));
  return VerifiedArtifact(StoredArtifact{std::move(meta), s.Text(kArtifactColumnCount)});
}

Result<TracePage> SqliteStore::GetTrace(std::string_view run_id, int64_t after_sequence, int limit) {
  TELIC_ASSIGN_OR_RETURN(auto reader, LockReader());
  Stmt s(*read_stmts_, fmt::format("SELECT {} FROM trace_events WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                                   EventColumns()));
  s.Bind(1, run_id).Bind(2, after_sequence).Bind(3, int64_t{limit} + 1);
  TracePage page;
  TELIC_ASSIGN_OR_RETURN(page.events, ReadAll<TraceEventRecord>(s, read_db_, "trace read",
                                                                [](const SqliteRow& row) { return DecodeEvent(row); }));
  if (page.events.size() > static_cast<size_t>(limit)) {
    page.has_more = true;
    page.events.pop_back();
  }
  return page;
}

}  // namespace telic::store
