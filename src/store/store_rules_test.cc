#include "store/store_rules.h"

#include <gtest/gtest.h>

#include <map>

#include "store/task_store.h"

namespace telic::store {
namespace {

Change RulesChange(size_t artifacts, size_t events) {
  Change change;
  change.run.run_id = "run-1";
  for (size_t i = 0; i < artifacts; ++i) {
    ArtifactMeta meta;
    meta.id = "a" + std::to_string(i);
    meta.run_id = "run-1";
    change.artifacts.push_back(MakeArtifact(meta, Json{{"n", i}}));
  }
  for (size_t i = 0; i < events; ++i) {
    TraceEventRecord event;
    event.event_id = "ev-" + std::to_string(i);
    event.summary = "step " + std::to_string(i);
    change.events.push_back(event);
  }
  return change;
}

StoredRunState RulesExisting(int64_t version, int64_t artifacts = 0, int64_t trace_length = 0) {
  StoredRunState state;
  state.version = version;
  state.artifacts = artifacts;
  state.trace_length = trace_length;
  return state;
}

void ExpectRuleError(const Status& status, ErrorCode code, std::string_view message) {
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), code);
  EXPECT_EQ(status.error().message(), message);
}

TEST(StoreRulesTest, RunMustExistOrNotAsTheCallNeeds) {
  Change change = RulesChange(0, 0);
  EXPECT_TRUE(CheckChange("run-1", std::nullopt, StoredRunState{}, change));
  ExpectRuleError(CheckChange("run-1", std::nullopt, RulesExisting(1), change), ErrorCode::kAlreadyExists,
              "Run already exists: run-1");
  ExpectRuleError(CheckChange("run-1", 1, StoredRunState{}, change), ErrorCode::kNotFound, "Run not found: run-1");
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(2), change), ErrorCode::kConflict,
              "Concurrent run update detected; reload and retry with the latest version");
  EXPECT_TRUE(CheckChange("run-1", 2, RulesExisting(2), change));
}

TEST(StoreRulesTest, ArtifactChecksApplyOnlyWhenTheChangeAddsArtifacts) {
  Change none = RulesChange(0, 0);
  none.expected_artifact_count = 5;
  EXPECT_TRUE(CheckChange("run-1", 1, RulesExisting(1, 3), none));

  Change one = RulesChange(1, 0);
  one.expected_artifact_count = 2;
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(1, 3), one), ErrorCode::kConflict, std::string(kConcurrentAppend));
  one.expected_artifact_count = 3;
  EXPECT_TRUE(CheckChange("run-1", 1, RulesExisting(1, 3), one));
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(1, kMaxArtifactsPerRun), RulesChange(1, 0)),
              ErrorCode::kResourceExhausted, "Run artifact limit of 2048 reached");

  Change big = RulesChange(1, 0);
  big.artifacts[0].canonical_body.assign(kMaxArtifactBodyBytes + 1, 'x');
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(1), big), ErrorCode::kResourceExhausted,
              "Artifact exceeds 2097152 byte limit");
}

TEST(StoreRulesTest, TraceChecksApplyOnlyWhenTheChangeAppendsEvents) {
  Change none = RulesChange(0, 0);
  none.expected_trace_length = 9;
  EXPECT_TRUE(CheckChange("run-1", 1, RulesExisting(1, 0, 4), none));
  Change two = RulesChange(0, 2);
  two.expected_trace_length = 3;
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(1, 0, 4), two), ErrorCode::kConflict,
              std::string(kConcurrentTraceAppend));
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(1, 0, kMaxTraceEventsPerRun - 1), RulesChange(0, 2)),
              ErrorCode::kResourceExhausted, "Run trace limit of 10000 reached");
}

TEST(StoreRulesTest, TheVersionIsCheckedBeforeTheLimits) {
  ExpectRuleError(CheckChange("run-1", 1, RulesExisting(2, kMaxArtifactsPerRun), RulesChange(1, 1)), ErrorCode::kConflict,
              "Concurrent run update detected; reload and retry with the latest version");
}

TEST(StoreRulesTest, SealedEventsContinueTheChainRedacted) {
  Change change = RulesChange(0, 2);
  change.events[1].summary = "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
  auto sealed = SealEvents("run-1", change.events, 4, "sha256:prev");
  ASSERT_TRUE(sealed) << sealed.error().message();
  ASSERT_EQ(sealed->size(), 2u);
  EXPECT_EQ((*sealed)[0].sequence, 5);
  EXPECT_EQ((*sealed)[0].run_id, "run-1");
  EXPECT_EQ((*sealed)[0].prev_hash, "sha256:prev");
  EXPECT_EQ((*sealed)[0].hash, ComputeTraceEventHash((*sealed)[0]));
  EXPECT_EQ((*sealed)[1].sequence, 6);
  EXPECT_EQ((*sealed)[1].prev_hash, (*sealed)[0].hash);
  EXPECT_EQ((*sealed)[1].summary.find("ghp_0123456789"), std::string::npos);
  EXPECT_FALSE((*sealed)[1].redactions.empty());

  change.events[0].redactions = Json::object();
  auto refused = SealEvents("run-1", change.events, 0, "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInternal);
}

TEST(StoreRulesTest, AnArtifactReadBackIsRehashed) {
  ArtifactMeta meta;
  meta.id = "a1";
  StoredArtifact artifact = MakeArtifact(meta, Json{{"k", "v"}});
  EXPECT_TRUE(VerifiedArtifact(artifact));
  artifact.canonical_body = R"({"k":"w"})";
  auto tampered = VerifiedArtifact(artifact);
  ASSERT_FALSE(tampered);
  EXPECT_EQ(tampered.error().code(), ErrorCode::kDataLoss);
  EXPECT_EQ(tampered.error().message(), "Artifact integrity check failed: a1");
}

TEST(StoreRulesTest, TombstonePagesAreBounded) {
  EXPECT_TRUE(CheckTombstonePageSize(1));
  EXPECT_TRUE(CheckTombstonePageSize(kMaxRunPageSize));
  EXPECT_FALSE(CheckTombstonePageSize(0));
  EXPECT_FALSE(CheckTombstonePageSize(kMaxRunPageSize + 1));
}

// Task rows in memory: enough of a backend for the task-change rules.
class RulesTaskRows final : public TaskChangeRows {
 public:
  Result<std::optional<int64_t>> TaskVersion(const std::string& task_id) override {
    auto it = tasks.find(task_id);
    if (it == tasks.end()) return std::optional<int64_t>();
    return std::optional<int64_t>(it->second.version);
  }
  Result<int64_t> CountTasks(const std::optional<std::string>& run_id) override {
    int64_t n = extra_tasks;
    for (const auto& [id, t] : tasks) n += t.run_id == run_id ? 1 : 0;
    return n;
  }
  Result<bool> InsertTask(const TaskRecord& task) override { return tasks.emplace(task.task_id, task).second; }
  Result<bool> UpdateTask(const TaskRecord& task) override {
    auto it = tasks.find(task.task_id);
    if (it == tasks.end() || it->second.version != task.version - 1) return false;
    it->second = task;
    return true;
  }
  Result<bool> InsertStory(const StoryRecord& story) override { return stories.emplace(story.story_id, story).second; }
  Result<bool> UpdateStory(const StoryRecord&) override { return false; }
  Status InsertApproval(const ApprovalRecord& approval) override {
    approvals[approval.approval_id] = false;
    return Ok();
  }
  Result<bool> UseApproval(const std::string& approval_id, const std::string&) override {
    auto it = approvals.find(approval_id);
    if (it == approvals.end() || it->second) return false;
    it->second = true;
    return true;
  }
  Status InsertEvent(const TaskEventRecord& event) override {
    events.push_back(event.event_id);
    return Ok();
  }

  std::map<std::string, TaskRecord> tasks;
  std::map<std::string, StoryRecord> stories;
  std::map<std::string, bool> approvals;
  std::vector<std::string> events;
  int64_t extra_tasks = 0;
};

TaskRecord RulesTask(std::string id, int64_t version = 1) {
  TaskRecord task;
  task.task_id = std::move(id);
  task.run_id = "run-1";
  task.version = version;
  return task;
}

TEST(StoreRulesTest, TaskChangesAreCheckedThenWritten) {
  RulesTaskRows rows;
  TaskChange insert;
  insert.inserted_tasks = {RulesTask("t1")};
  TaskEventRecord event;
  event.event_id = "e1";
  insert.events = {event};
  ASSERT_TRUE(ApplyTaskChange(insert, rows));
  EXPECT_EQ(rows.events, std::vector<std::string>{"e1"});
  ExpectRuleError(ApplyTaskChange(insert, rows), ErrorCode::kAlreadyExists, "Task already exists: t1");

  TaskChange stale;
  stale.reads = {{"t1", 2}};
  ExpectRuleError(ApplyTaskChange(stale, rows), ErrorCode::kConflict,
              "Concurrent task update detected on t1; reload and retry");
  TaskChange moved;
  moved.updated_tasks = {RulesTask("t1", 3)};
  ExpectRuleError(ApplyTaskChange(moved, rows), ErrorCode::kConflict,
              "Concurrent task update detected on t1; reload and retry");

  TaskChange scoped;
  scoped.expected_scope.emplace();
  scoped.expected_scope->run_id = "run-1";
  ExpectRuleError(ApplyTaskChange(scoped, rows), ErrorCode::kConflict, kConcurrentScopeChange);

  rows.extra_tasks = static_cast<int64_t>(kMaxTasksPerScope);
  TaskChange over;
  over.inserted_tasks = {RulesTask("t2")};
  ExpectRuleError(ApplyTaskChange(over, rows), ErrorCode::kResourceExhausted, "Task graph limit of 10000 tasks reached");
}

TEST(StoreRulesTest, AnApprovalIsUsedOnce) {
  RulesTaskRows rows;
  TaskChange grant;
  ApprovalRecord approval;
  approval.approval_id = "ap1";
  grant.inserted_approvals = {approval};
  ASSERT_TRUE(ApplyTaskChange(grant, rows));
  TaskChange use;
  use.used_approvals = {"ap1"};
  ASSERT_TRUE(ApplyTaskChange(use, rows));
  ExpectRuleError(ApplyTaskChange(use, rows), ErrorCode::kFailedPrecondition,
              "Approval already used; a new approval is required");
}

}  // namespace
}  // namespace telic::store
