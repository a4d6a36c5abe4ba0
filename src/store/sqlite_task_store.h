// SqliteTaskStore: the task graph in the run ledger's SQLite file, in its own
// tables (graph_*) with their own schema version key, so the run schema's
// migrations and version checks are untouched. WAL, synchronous=FULL, one
// BEGIN IMMEDIATE transaction per change; events and approvals append-only.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/task_store.h"

struct sqlite3;

namespace telic::store {

// The newest task graph schema version this build writes (sqlite_schema.cc).
int SqliteGraphSchemaVersion();

class SqliteTaskStore final : public TaskStore {
 public:
  // Opens (creating if needed) the ledger at `path` and applies pending
  // graph migrations. kFailedPrecondition for a newer graph schema or a
  // database that telic did not write.
  static Result<std::unique_ptr<SqliteTaskStore>> Open(const std::string& path);
  // The same, connecting (and migrating) on the first call instead: `telic
  // serve` pays for the connection and its schema parse only in sessions
  // that use the task graph. The first call returns Open's errors (and the
  // next one tries again).
  static std::unique_ptr<SqliteTaskStore> OpenOnFirstUse(const std::string& path);
  ~SqliteTaskStore() override;

  Status Apply(const TaskChange& change) override;
  Result<TaskRecord> GetTask(std::string_view task_id) override;
  Result<std::vector<TaskRecord>> ListTasks(const std::optional<std::string>& run_id) override;
  Result<std::vector<TaskEventRecord>> ListEvents(std::string_view subject_id) override;
  Result<StoryRecord> GetStory(std::string_view story_id) override;
  Result<std::vector<StoryRecord>> ListStories(const std::optional<std::string>& run_id) override;
  Result<std::vector<StoryRecord>> StoriesArbitratedBy(std::string_view task_id) override;
  Result<std::vector<ApprovalRecord>> ListApprovals(std::string_view task_id) override;

 private:
  explicit SqliteTaskStore(std::string path) : path_(std::move(path)) {}
  // Opens db_ and migrates unless it is open; with mutex_ held.
  Status ConnectLocked();
  Status ApplyLocked(const TaskChange& change);

  const std::string path_;
  sqlite3* db_ = nullptr;  // guarded by mutex_; null until ConnectLocked succeeds
  std::mutex mutex_;
};

}  // namespace telic::store
