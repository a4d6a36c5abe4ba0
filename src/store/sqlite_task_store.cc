#include "store/sqlite_task_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include <fmt/format.h>

#include "base/json_parse.h"

namespace telic::store {
namespace {

// Graph tables have their own migration list and version key
// (telic_meta 'graph_schema_version'); never edit a released entry.
const char* const kGraphMigrations[] = {
    // 1: tasks (record as canonical JSON plus indexed columns), append-only
    // events, stories, single-use approvals.
    R"sql(
CREATE TABLE graph_tasks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL UNIQUE,
  run_id TEXT,
  parent_task_id TEXT,
  state TEXT NOT NULL CHECK (state IN ('pending','ready','running','completed','failed','cancelled')),
  version INTEGER NOT NULL CHECK (version >= 1),
  body_json TEXT NOT NULL
);
CREATE INDEX graph_tasks_by_run ON graph_tasks (run_id, seq);
CREATE TABLE graph_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  subject_id TEXT NOT NULL,
  run_id TEXT,
  kind TEXT NOT NULL,
  actor TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX graph_events_by_subject ON graph_events (subject_id, seq);
CREATE TABLE graph_stories (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  story_id TEXT NOT NULL UNIQUE,
  run_id TEXT,
  arbitration_task_id TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  body_json TEXT NOT NULL
);
CREATE INDEX graph_stories_by_arbitration ON graph_stories (arbitration_task_id);
CREATE TABLE graph_approvals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  approval_id TEXT NOT NULL UNIQUE,
  task_id TEXT NOT NULL,
  binding_sha256 TEXT NOT NULL,
  used_at TEXT,
  body_json TEXT NOT NULL
);
CREATE INDEX graph_approvals_by_task ON graph_approvals (task_id, seq);
CREATE TRIGGER graph_events_immutable BEFORE UPDATE ON graph_events BEGIN SELECT RAISE(ABORT, 'task events are immutable'); END;
CREATE TRIGGER graph_events_append_only BEFORE DELETE ON graph_events BEGIN SELECT RAISE(ABORT, 'task events are append-only'); END;
CREATE TRIGGER graph_approvals_append_only BEFORE DELETE ON graph_approvals BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
CREATE TRIGGER graph_approvals_single_use BEFORE UPDATE ON graph_approvals
  WHEN OLD.used_at IS NOT NULL OR NEW.used_at IS NULL OR NEW.body_json IS NOT OLD.body_json
    OR NEW.binding_sha256 IS NOT OLD.binding_sha256 OR NEW.task_id IS NOT OLD.task_id OR NEW.approval_id IS NOT OLD.approval_id
  BEGIN SELECT RAISE(ABORT, 'an approval can only be marked used, once'); END;
CREATE TRIGGER graph_tasks_kept BEFORE DELETE ON graph_tasks BEGIN SELECT RAISE(ABORT, 'tasks are never deleted'); END;
)sql",
    // 2 (issue 22, retention): a run's graph rows may be deleted only with
    // the run, while the run store's run_deletion_marker names it (see the
    // run schema's migration 5); every other DELETE is still refused.
    R"sql(
DROP TRIGGER graph_events_append_only;
CREATE TRIGGER graph_events_append_only BEFORE DELETE ON graph_events
  WHEN OLD.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'task events are append-only'); END;
DROP TRIGGER graph_approvals_append_only;
CREATE TRIGGER graph_approvals_append_only BEFORE DELETE ON graph_approvals
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker m JOIN graph_tasks t ON t.run_id = m.run_id WHERE t.task_id = OLD.task_id)
  BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
DROP TRIGGER graph_tasks_kept;
CREATE TRIGGER graph_tasks_kept BEFORE DELETE ON graph_tasks
  WHEN OLD.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'tasks are never deleted'); END;
CREATE TRIGGER graph_stories_kept BEFORE DELETE ON graph_stories
  WHEN OLD.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'stories are never deleted'); END;
)sql",
};

constexpr int kGraphSchemaVersion = static_cast<int>(sizeof(kGraphMigrations) / sizeof(kGraphMigrations[0]));

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::optional<std::string>& v) {
    if (v) return Bind(i, std::string_view(*v));
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
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
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

Error SqlError(sqlite3* db, std::string_view what) {
  int rc = sqlite3_extended_errcode(db) & 0xFF;
  ErrorCode code = rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? ErrorCode::kUnavailable : ErrorCode::kInternal;
  return Error(code, fmt::format("SQLite {} failed: {}", what, sqlite3_errmsg(db)));
}

Status Exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    Error error = SqlError(db, message ? message : "exec");
    sqlite3_free(message);
    return std::unexpected(error);
  }
  return Ok();
}

class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status Begin() {
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

Result<int64_t> QueryInt(sqlite3* db, const char* sql, std::string_view arg) {
  Stmt s(db, sql);
  if (!s.ok()) return std::unexpected(SqlError(db, "prepare"));
  s.Bind(1, arg);
  int rc = s.Step();
  if (rc == SQLITE_ROW) return s.Int(0);
  if (rc == SQLITE_DONE) return int64_t{-1};
  return std::unexpected(SqlError(db, "query"));
}

}  // namespace

int SqliteGraphSchemaVersion() { return kGraphSchemaVersion; }

Result<std::unique_ptr<SqliteTaskStore>> SqliteTaskStore::Open(const std::string& path) {
  std::unique_ptr<SqliteTaskStore> store(new SqliteTaskStore(path));
  std::lock_guard lock(store->mutex_);
  TELIC_RETURN_IF_ERROR(store->ConnectLocked());
  return store;
}

std::unique_ptr<SqliteTaskStore> SqliteTaskStore::OpenOnFirstUse(const std::string& path) {
  return std::unique_ptr<SqliteTaskStore>(new SqliteTaskStore(path));
}

Status SqliteTaskStore::ConnectLocked() {
  if (db_) return Ok();
  // Create the file owner-only only when it does not exist yet. An existing
  // ledger is never opened with a raw descriptor: this process may already
  // hold it open through SqliteStore, and closing any descriptor of the file
  // would drop that connection's POSIX locks (sqlite.org/howtocorrupt.html).
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    ::close(fd);
  } else if (errno != EEXIST) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open ledger {}: {}", path_, strerror(errno)));
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open ledger {}: {}", path_, message));
  }
  sqlite3_busy_timeout(db, 5000);
  Status ready = Exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  if (ready) ready = MigrateLocked(db);
  if (!ready) {
    sqlite3_close(db);  // the next call tries again
    return ready;
  }
  db_ = db;
  return Ok();
}

SqliteTaskStore::~SqliteTaskStore() { sqlite3_close(db_); }

Status SqliteTaskStore::MigrateLocked(sqlite3* db) {
  auto current = QueryInt(db, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "graph_schema_version");
  if (current && *current == kGraphSchemaVersion) return Ok();
  Transaction tx(db);
  TELIC_RETURN_IF_ERROR(tx.Begin());
  TELIC_ASSIGN_OR_RETURN(int64_t has_meta, QueryInt(db, "SELECT count(*) FROM sqlite_master WHERE name = ?", "telic_meta"));
  if (has_meta == 0) {
    Stmt tables(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    if (tables.Step() != SQLITE_ROW) return std::unexpected(SqlError(db, "schema read"));
    if (tables.Int(0) > 0) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the ledger has tables but no telic schema version; it was not written by telic");
    }
    TELIC_RETURN_IF_ERROR(Exec(db, "CREATE TABLE telic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT"));
  }
  TELIC_ASSIGN_OR_RETURN(int64_t version,
                         QueryInt(db, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "graph_schema_version"));
  if (version > kGraphSchemaVersion) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the ledger has task graph schema version {} but this telic supports up to {}; upgrade telic",
                            version, kGraphSchemaVersion));
  }
  for (int64_t next = std::max<int64_t>(version, 0); next < kGraphSchemaVersion; ++next) {
    TELIC_RETURN_IF_ERROR(Exec(db, kGraphMigrations[next]));
  }
  Stmt s(db, "INSERT INTO telic_meta (key, value) VALUES ('graph_schema_version', ?) "
              "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  s.Bind(1, std::to_string(kGraphSchemaVersion));
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "graph migration"));
  return tx.Commit();
}

Status SqliteTaskStore::Apply(const TaskChange& change) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.Begin());
  TELIC_RETURN_IF_ERROR(ApplyLocked(change));
  return tx.Commit();
}

Status SqliteTaskStore::ApplyLocked(const TaskChange& change) {
  if (!change.reads.empty()) {
    Stmt read(db_, "SELECT version FROM graph_tasks WHERE task_id = ?");
    for (const auto& [id, version] : change.reads) {
      read.Reset();
      read.Bind(1, id);
      int rc = read.Step();
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "task read check"));
      if (rc == SQLITE_DONE || read.Int(0) != version) {
        return Fail(ErrorCode::kConflict, fmt::format("Concurrent task update detected on {}; reload and retry", id));
      }
    }
  }
  if (change.expected_scope) {
    Stmt count(db_, "SELECT count(*) FROM graph_tasks WHERE run_id IS ?");
    count.Bind(1, change.expected_scope->run_id);
    if (count.Step() != SQLITE_ROW) return std::unexpected(SqlError(db_, "task count"));
    if (count.Int(0) != change.expected_scope->tasks) return Fail(ErrorCode::kConflict, kConcurrentScopeChange);
  }
  if (!change.inserted_tasks.empty()) {
    std::map<std::optional<std::string>, int64_t> added;
    for (const auto& t : change.inserted_tasks) ++added[t.run_id];
    Stmt count(db_, "SELECT count(*) FROM graph_tasks WHERE run_id IS ?");
    for (const auto& [run, n] : added) {
      count.Reset();
      count.Bind(1, run);
      if (count.Step() != SQLITE_ROW) return std::unexpected(SqlError(db_, "task count"));
      if (count.Int(0) + n > static_cast<int64_t>(kMaxTasksPerScope)) {
        return Fail(ErrorCode::kResourceExhausted, fmt::format("Task graph limit of {} tasks reached", kMaxTasksPerScope));
      }
    }
    Stmt insert(db_, "INSERT INTO graph_tasks (task_id, run_id, parent_task_id, state, version, body_json) "
                     "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO NOTHING");
    for (const auto& t : change.inserted_tasks) {
      insert.Reset();
      insert.Bind(1, t.task_id).Bind(2, t.run_id).Bind(3, t.parent_task_id).Bind(4, domain::Name(t.state)).Bind(5, t.version);
      insert.Bind(6, StoredTaskBody(t));
      if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "task insert"));
      if (sqlite3_changes(db_) != 1) return Fail(ErrorCode::kAlreadyExists, fmt::format("Task already exists: {}", t.task_id));
    }
  }
  if (!change.updated_tasks.empty()) {
    Stmt update(db_, "UPDATE graph_tasks SET state = ?, version = ?, body_json = ? WHERE task_id = ? AND version = ?");
    for (const auto& t : change.updated_tasks) {
      update.Reset();
      update.Bind(1, domain::Name(t.state)).Bind(2, t.version).Bind(3, StoredTaskBody(t)).Bind(4, t.task_id).Bind(5, t.version - 1);
      if (update.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "task update"));
      if (sqlite3_changes(db_) != 1) {
        return Fail(ErrorCode::kConflict, fmt::format("Concurrent task update detected on {}; reload and retry", t.task_id));
      }
    }
  }
  for (const auto& s : change.inserted_stories) {
    Stmt insert(db_, "INSERT INTO graph_stories (story_id, run_id, arbitration_task_id, version, body_json) "
                     "VALUES (?, ?, ?, ?, ?) ON CONFLICT (story_id) DO NOTHING");
    insert.Bind(1, s.story_id).Bind(2, s.run_id).Bind(3, s.arbitration_task_id).Bind(4, s.version);
    insert.Bind(5, CanonicalJson(StoryToJson(s)));
    if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "story insert"));
    if (sqlite3_changes(db_) != 1) return Fail(ErrorCode::kAlreadyExists, fmt::format("Story already exists: {}", s.story_id));
  }
  for (const auto& s : change.updated_stories) {
    Stmt update(db_, "UPDATE graph_stories SET version = ?, body_json = ? WHERE story_id = ? AND version = ?");
    update.Bind(1, s.version).Bind(2, CanonicalJson(StoryToJson(s))).Bind(3, s.story_id).Bind(4, s.version - 1);
    if (update.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "story update"));
    if (sqlite3_changes(db_) != 1) {
      return Fail(ErrorCode::kConflict, fmt::format("Concurrent story update detected on {}; reload and retry", s.story_id));
    }
  }
  for (const auto& a : change.inserted_approvals) {
    Stmt insert(db_, "INSERT INTO graph_approvals (approval_id, task_id, binding_sha256, used_at, body_json) "
                     "VALUES (?, ?, ?, NULL, ?)");
    insert.Bind(1, a.approval_id).Bind(2, a.task_id).Bind(3, a.binding_sha256).Bind(4, StoredApprovalBody(a));
    if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "approval insert"));
  }
  for (const auto& id : change.used_approvals) {
    Stmt use(db_, "UPDATE graph_approvals SET used_at = ? WHERE approval_id = ? AND used_at IS NULL");
    use.Bind(1, change.now).Bind(2, id);
    if (use.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "approval use"));
    if (sqlite3_changes(db_) != 1) return Fail(ErrorCode::kFailedPrecondition, "Approval already used; a new approval is required");
  }
  if (!change.events.empty()) {
    Stmt insert(db_, "INSERT INTO graph_events (event_id, subject_id, run_id, kind, actor, payload_json, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const auto& e : change.events) {
      insert.Reset();
      insert.Bind(1, e.event_id).Bind(2, e.subject_id).Bind(3, e.run_id).Bind(4, e.kind).Bind(5, e.actor);
      insert.Bind(6, StoredEventPayload(e)).Bind(7, e.created_at);
      if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "task event insert"));
    }
  }
  return Ok();
}

Result<TaskRecord> SqliteTaskStore::GetTask(std::string_view task_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT seq, body_json FROM graph_tasks WHERE task_id = ?");
  s.Bind(1, task_id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return Fail(ErrorCode::kNotFound, fmt::format("Task not found: {}", task_id));
  if (rc != SQLITE_ROW) return std::unexpected(SqlError(db_, "task read"));
  return TaskFromStored(s.Text(1), s.Int(0));
}

Result<std::vector<TaskRecord>> SqliteTaskStore::ListTasks(const std::optional<std::string>& run_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT seq, body_json FROM graph_tasks WHERE run_id IS ? ORDER BY seq");
  s.Bind(1, run_id);
  std::vector<TaskRecord> tasks;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(TaskRecord task, TaskFromStored(s.Text(1), s.Int(0)));
    tasks.push_back(std::move(task));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "task list"));
  return tasks;
}

Result<std::vector<TaskEventRecord>> SqliteTaskStore::ListEvents(std::string_view subject_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT seq, event_id, subject_id, run_id, kind, actor, payload_json, created_at FROM graph_events "
              "WHERE subject_id = ? ORDER BY seq");
  s.Bind(1, subject_id);
  std::vector<TaskEventRecord> events;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TaskEventRecord e;
    e.seq = s.Int(0);
    e.event_id = s.Text(1);
    e.subject_id = s.Text(2);
    e.run_id = s.OptText(3);
    e.kind = s.Text(4);
    e.actor = s.Text(5);
    e.payload = ParseStoredJson(s.Text(6)).value_or(Json(nullptr));  // unreadable payloads read as null
    e.created_at = s.Text(7);
    events.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "task event list"));
  return events;
}

Result<StoryRecord> SqliteTaskStore::GetStory(std::string_view story_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT body_json FROM graph_stories WHERE story_id = ?");
  s.Bind(1, story_id);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return Fail(ErrorCode::kNotFound, fmt::format("Story not found: {}", story_id));
  if (rc != SQLITE_ROW) return std::unexpected(SqlError(db_, "story read"));
  return StoryFromStored(s.Text(0));
}

Result<std::vector<StoryRecord>> SqliteTaskStore::ListStories(const std::optional<std::string>& run_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT body_json FROM graph_stories WHERE run_id IS ? ORDER BY seq");
  s.Bind(1, run_id);
  std::vector<StoryRecord> stories;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(StoryRecord story, StoryFromStored(s.Text(0)));
    stories.push_back(std::move(story));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "story list"));
  return stories;
}

Result<std::vector<StoryRecord>> SqliteTaskStore::StoriesArbitratedBy(std::string_view task_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT body_json FROM graph_stories WHERE arbitration_task_id = ? ORDER BY seq");
  s.Bind(1, task_id);
  std::vector<StoryRecord> stories;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(StoryRecord story, StoryFromStored(s.Text(0)));
    stories.push_back(std::move(story));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "story lookup"));
  return stories;
}

Result<std::vector<ApprovalRecord>> SqliteTaskStore::ListApprovals(std::string_view task_id) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Stmt s(db_, "SELECT body_json, used_at FROM graph_approvals WHERE task_id = ? ORDER BY seq");
  s.Bind(1, task_id);
  std::vector<ApprovalRecord> approvals;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    TELIC_ASSIGN_OR_RETURN(ApprovalRecord approval, ApprovalFromStored(s.Text(0), s.OptText(1)));
    approvals.push_back(std::move(approval));
  }
  if (rc != SQLITE_DONE) return std::unexpected(SqlError(db_, "approval list"));
  return approvals;
}

}  // namespace telic::store
