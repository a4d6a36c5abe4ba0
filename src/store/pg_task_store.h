// The PostgreSQL task graph store.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/pg_store.h"
#include "store/task_store.h"

namespace telic::store {

// Serialises task-graph writes across instances (pg_advisory_xact_lock key),
// as the SQLite task store's BEGIN IMMEDIATE does; a run's deletion holds it too.
inline constexpr const char* kPgGraphLockKey = "7310455081224577025";

// The task graph in the same database (tables graph_*, created by the run
// schema's migration 2), sharing `db`'s connection pool, so every instance on
// one PostgreSQL sees one graph. Same contract as SqliteTaskStore: a change is
// one transaction; graph writes are serialised across instances by an
// advisory transaction lock, so read checks and per-scope task counts hold
// until commit; events and approvals are append-only, approvals single-use.
class PgTaskStore final : public TaskStore {
 public:
  explicit PgTaskStore(PgStore& db) : db_(db) {}

  Status Apply(const TaskChange& change) override;
  Result<TaskRecord> GetTask(std::string_view task_id) override;
  Result<std::vector<TaskRecord>> ListTasks(const std::optional<std::string>& run_id) override;
  Result<std::vector<TaskEventRecord>> ListEvents(std::string_view subject_id) override;
  Result<StoryRecord> GetStory(std::string_view story_id) override;
  Result<std::vector<StoryRecord>> ListStories(const std::optional<std::string>& run_id) override;
  Result<std::vector<StoryRecord>> StoriesArbitratedBy(std::string_view task_id) override;
  Result<std::vector<ApprovalRecord>> ListApprovals(std::string_view task_id) override;

 private:
  PgStore& db_;
};

}  // namespace telic::store
