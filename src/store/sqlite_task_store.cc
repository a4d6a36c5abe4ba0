#include "store/sqlite_task_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_schema.h"
#include "store/store_rules.h"

namespace telic::store {

namespace {

// The task-change rules' reads and writes on the task store's connection.
class SqliteTaskRows final : public TaskChangeRows {
 public:
  explicit SqliteTaskRows(sqlite3* db) : db_(db) {}

  Result<std::optional<int64_t>> TaskVersion(const std::string& task_id) override {
    Stmt read(db_, "SELECT version FROM graph_tasks WHERE task_id = ?");
    read.Bind(1, task_id);
    int rc = read.Step();
    if (rc == SQLITE_DONE) return std::optional<int64_t>();
    if (rc != SQLITE_ROW) return std::unexpected(SqlError(db_, "task read check"));
    return std::optional<int64_t>(read.Int(0));
  }
  Result<int64_t> CountTasks(const std::optional<std::string>& run_id) override {
    Stmt count(db_, "SELECT count(*) FROM graph_tasks WHERE run_id IS ?");
    count.Bind(1, run_id);
    if (count.Step() != SQLITE_ROW) return std::unexpected(SqlError(db_, "task count"));
    return count.Int(0);
  }
  Result<bool> InsertTask(const TaskRecord& t) override {
    Stmt insert(db_, "INSERT INTO graph_tasks (task_id, run_id, parent_task_id, state, version, body_json) "
                     "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO NOTHING");
    insert.Bind(1, t.task_id).Bind(2, t.run_id).Bind(3, t.parent_task_id).Bind(4, domain::Name(t.state)).Bind(5, t.version);
    insert.Bind(6, StoredTaskBody(t));
    return StepChangedOne(insert, "task insert");
  }
  Result<bool> UpdateTask(const TaskRecord& t) override {
    Stmt update(db_, "UPDATE graph_tasks SET state = ?, version = ?, body_json = ? WHERE task_id = ? AND version = ?");
    update.Bind(1, domain::Name(t.state)).Bind(2, t.version).Bind(3, StoredTaskBody(t)).Bind(4, t.task_id).Bind(5, t.version - 1);
    return StepChangedOne(update, "task update");
  }
  Result<bool> InsertStory(const StoryRecord& s) override {
    Stmt insert(db_, "INSERT INTO graph_stories (story_id, run_id, arbitration_task_id, version, body_json) "
                     "VALUES (?, ?, ?, ?, ?) ON CONFLICT (story_id) DO NOTHING");
    insert.Bind(1, s.story_id).Bind(2, s.run_id).Bind(3, s.arbitration_task_id).Bind(4, s.version);
    insert.Bind(5, CanonicalJson(StoryToJson(s)));
    return StepChangedOne(insert, "story insert");
  }
  Result<bool> UpdateStory(const StoryRecord& s) override {
    Stmt update(db_, "UPDATE graph_stories SET version = ?, body_json = ? WHERE story_id = ? AND version = ?");
    update.Bind(1, s.version).Bind(2, CanonicalJson(StoryToJson(s))).Bind(3, s.story_id).Bind(4, s.version - 1);
    return StepChangedOne(update, "story update");
  }
  Status InsertApproval(const ApprovalRecord& a) override {
    Stmt insert(db_, "INSERT INTO graph_approvals (approval_id, task_id, binding_sha256, used_at, body_json) "
                     "VALUES (?, ?, ?, NULL, ?)");
    insert.Bind(1, a.approval_id).Bind(2, a.task_id).Bind(3, a.binding_sha256).Bind(4, StoredApprovalBody(a));
    if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "approval insert"));
    return Ok();
  }
  Result<bool> UseApproval(const std::string& approval_id, const std::string& now) override {
    Stmt use(db_, "UPDATE graph_approvals SET used_at = ? WHERE approval_id = ? AND used_at IS NULL");
    use.Bind(1, now).Bind(2, approval_id);
    return StepChangedOne(use, "approval use");
  }
  Status InsertEvent(const TaskEventRecord& e) override {
    Stmt insert(db_, "INSERT INTO graph_events (event_id, subject_id, run_id, kind, actor, payload_json, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)");
    insert.Bind(1, e.event_id).Bind(2, e.subject_id).Bind(3, e.run_id).Bind(4, e.kind).Bind(5, e.actor);
    insert.Bind(6, StoredEventPayload(e)).Bind(7, e.created_at);
    if (insert.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, "task event insert"));
    return Ok();
  }

 private:
  // Runs a write; whether it changed exactly one row.
  Result<bool> StepChangedOne(Stmt& s, std::string_view what) {
    if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db_, what));
    return sqlite3_changes(db_) == 1;
  }

  sqlite3* db_;
};

}  // namespace

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
  sqlite3_busy_timeout(db, kSqliteBusyTimeoutMs);
  Status ready = Exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  if (ready) ready = MigrateGraphSchema(db);
  if (!ready) {
    sqlite3_close(db);  // the next call tries again
    return ready;
  }
  db_ = db;
  return Ok();
}

SqliteTaskStore::~SqliteTaskStore() { sqlite3_close(db_); }

Status SqliteTaskStore::Apply(const TaskChange& change) {
  std::lock_guard lock(mutex_);
  TELIC_RETURN_IF_ERROR(ConnectLocked());
  Transaction tx(db_);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  TELIC_RETURN_IF_ERROR(ApplyLocked(change));
  return tx.Commit();
}

Status SqliteTaskStore::ApplyLocked(const TaskChange& change) {
  SqliteTaskRows rows(db_);
  return ApplyTaskChange(change, rows);
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
