// The TaskStore interface: the task graph beside the runs. Separate from
// Store so the run store can gain backends independently; SqliteTaskStore
// keeps its tables in the same ledger file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/task_records.h"

namespace telic::store {

// Tasks in one graph scope (a run, or the standalone scope).
inline constexpr size_t kMaxTasksPerScope = 10000;

class TaskStore {
 public:
  virtual ~TaskStore() = default;

  // Applies `change` as one transaction. Errors (nothing stored): kConflict
  // (a compare-and-set or read check failed: another writer came first),
  // kAlreadyExists (an inserted id is taken), kFailedPrecondition (an
  // approval was used already), kResourceExhausted (task limit).
  virtual Status Apply(const TaskChange& change) = 0;

  virtual Result<TaskRecord> GetTask(std::string_view task_id) = 0;

  // Every task of a scope in insertion order; nullopt = standalone tasks.
  virtual Result<std::vector<TaskRecord>> ListTasks(const std::optional<std::string>& run_id) = 0;

  // Events of one task or story, in append order.
  virtual Result<std::vector<TaskEventRecord>> ListEvents(std::string_view subject_id) = 0;

  virtual Result<StoryRecord> GetStory(std::string_view story_id) = 0;
  virtual Result<std::vector<StoryRecord>> ListStories(const std::optional<std::string>& run_id) = 0;
  // Stories whose arbitration task is `task_id`.
  virtual Result<std::vector<StoryRecord>> StoriesArbitratedBy(std::string_view task_id) = 0;

  virtual Result<std::vector<ApprovalRecord>> ListApprovals(std::string_view task_id) = 0;
};

}  // namespace telic::store
