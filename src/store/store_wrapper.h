// Forwarding stores: a Store and a TaskStore that pass every call to another
// one, so a decorator or a test's fault injector overrides only the calls it
// changes (LevelDB's EnvWrapper). A new Store method is added here once, and
// every wrapper forwards it.
#pragma once

#include "store/store.h"
#include "store/task_store.h"

namespace telic::store {

// Forwards every Store call to Target(). Target() is `target` by default; a
// wrapper whose store is not ready when it is built (BackgroundOpenedStore)
// overrides it, and its error is then each call's result.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(Store* target = nullptr) : target_(target) {}

  Status CreateRun(const Change& change) override;
  Status ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) override;
  Result<RunRecord> GetRun(std::string_view run_id) override;
  Result<std::vector<RunRecord>> ListRuns(int limit) override;
  Result<RunPage> QueryRuns(const RunQuery& query) override;
  Result<std::vector<ArtifactMeta>> ListArtifactsAfter(std::string_view run_id, int64_t after_seq) override;
  Result<RunAndArtifacts> GetRunAndArtifactsAfter(std::string_view run_id, int64_t after_seq) override;
  Result<StoredArtifact> GetArtifact(std::string_view run_id, std::string_view artifact_id) override;
  Result<TracePage> GetTrace(std::string_view run_id, int64_t after_sequence, int limit) override;
  Result<RunTombstone> DeleteRun(std::string_view run_id, int64_t expected_version,
                                 const DeletionRequest& request) override;
  Result<std::vector<RunTombstone>> ListTombstones(int limit) override;
  Result<int64_t> RecordRefusedCall(const RefusedCall& call) override;
  Result<std::vector<RefusedCall>> ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) override;
  Status AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) override;
  void DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) override;
  Status FlushContextCosts() override;
  Result<std::vector<ContextCost>> GetContextCost(std::string_view run_id) override;

 protected:
  // The store calls go to; kInternal when the wrapper was built without one.
  [[nodiscard]] virtual Result<Store*> Target();

 private:
  Store* target_;
};

// Forwards every TaskStore call to `target`.
class TaskStoreWrapper : public TaskStore {
 public:
  explicit TaskStoreWrapper(TaskStore& target) : target_(target) {}

  Status Apply(const TaskChange& change) override { return target_.Apply(change); }
  Result<TaskRecord> GetTask(std::string_view task_id) override { return target_.GetTask(task_id); }
  Result<std::vector<TaskRecord>> ListTasks(const std::optional<std::string>& run_id) override {
    return target_.ListTasks(run_id);
  }
  Result<std::vector<TaskEventRecord>> ListEvents(std::string_view subject_id) override {
    return target_.ListEvents(subject_id);
  }
  Result<StoryRecord> GetStory(std::string_view story_id) override { return target_.GetStory(story_id); }
  Result<std::vector<StoryRecord>> ListStories(const std::optional<std::string>& run_id) override {
    return target_.ListStories(run_id);
  }
  Result<std::vector<StoryRecord>> StoriesArbitratedBy(std::string_view task_id) override {
    return target_.StoriesArbitratedBy(task_id);
  }
  Result<std::vector<ApprovalRecord>> ListApprovals(std::string_view task_id) override {
    return target_.ListApprovals(task_id);
  }

 private:
  TaskStore& target_;
};

}  // namespace telic::store
