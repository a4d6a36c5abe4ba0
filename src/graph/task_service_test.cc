// TaskService over both task stores (SQLite, and PostgreSQL when a server is
// available; see src/testing/postgres_server.h): spawning within limits, gating,
// cascade-fail in one transaction, verdicts and arbitration, reports and
// their decisions applied, retries, approvals.
#include "graph/task_service.h"

#include <map>

#include <gtest/gtest.h>

#include "store/pg_store.h"
#include "store/pg_task_store.h"
#include "store/sqlite_store.h"
#include "store/store_wrapper.h"
#include "store/sqlite_task_store.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"

namespace telic::graph {
namespace {

using store::TaskRecord;

enum class Backend { kSqlite, kPostgres };

class TaskServiceTest : public ::testing::TestWithParam<Backend> {
 protected:
  TaskServiceTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      TELIC_SHARED_POSTGRES_OR_SKIP(server);
      auto pg = store::PgStore::Open(server.NewSchemaUrl());
      ASSERT_TRUE(pg) << pg.error().message();
      pg_ = std::move(*pg);
      store_ = std::make_unique<store::PgTaskStore>(*pg_);
    } else {
      auto opened = store::SqliteTaskStore::Open(dir_.File("telic.sqlite3"));
      ASSERT_TRUE(opened) << opened.error().message();
      store_ = std::move(*opened);
    }
    service_ = std::make_unique<TaskService>(*store_, clock_, ids_);
  }

  TaskRecord Create(const std::string& name, std::vector<std::string> deps = {}, int retries = 0,
                    store::SubagentLimits limits = {}) {
    CreateTaskRequest r;
    r.name = name;
    r.instructions = "do " + name;
    r.depends_on = std::move(deps);
    r.retries_allowed = retries;
    r.subagents = limits;
    auto t = service_->CreateTask(r);
    EXPECT_TRUE(t) << t.error().message();
    return *t;
  }
  TaskRecord Get(const std::string& id) { return *store_->GetTask(id); }
  std::vector<std::string> DispatchNames(int workers) {
    auto d = service_->Dispatch(std::nullopt, workers);
    EXPECT_TRUE(d) << d.error().message();
    std::vector<std::string> names;
    for (const auto& t : d->dispatched) names.push_back(t.name);
    return names;
  }
  TaskRecord Running(const std::string& name, store::SubagentLimits limits = {}, int retries = 0) {
    TaskRecord t = Create(name, {}, retries, limits);
    DispatchNames(16);
    return Get(t.task_id);
  }
  Result<TaskRecord> Spawn(const TaskRecord& parent, const std::string& name, std::vector<std::string> deps = {}) {
    SpawnRequest r;
    r.parent_task_id = parent.task_id;
    r.name = name;
    r.instructions = "do " + name;
    r.depends_on = std::move(deps);
    return service_->SpawnSubtask(r);
  }
  std::vector<std::string> EventKinds(const std::string& id) {
    std::vector<std::string> kinds;
    auto events = store_->ListEvents(id);
    for (const auto& e : *events) kinds.push_back(e.kind);
    return kinds;
  }
  static reports::Report Upward(reports::UpwardStatus status, double confidence, std::vector<std::string> blockers = {}) {
    reports::UpwardReport r;
    r.status = status;
    r.confidence = confidence;
    r.blockers = std::move(blockers);
    return r;
  }
  void Complete(const TaskRecord& t) {
    auto outcome = service_->SubmitReport(t.task_id, Upward(reports::UpwardStatus::kCompleted, 0.9), false);
    ASSERT_TRUE(outcome) << outcome.error().message();
    auto v = service_->RecordVerification({t.task_id, true, {"ctest ok"}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt});
    ASSERT_TRUE(v) << v.error().message();
    ASSERT_EQ(domain::Name(v->task.state), "completed");
  }

  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::PgStore> pg_;  // owns the pool of a PostgreSQL task store
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<TaskService> service_;
};

const store::SubagentLimits kSpawn{true, 3, 2};

// covers DAG-001, DAG-002, DAG-003, DAG-004, DAG-006, DAG-007
TEST_P(TaskServiceTest, SpawnSubtaskRecordsParentAndDependsOnInOrder) {
  TaskRecord parent = Running("parent", kSpawn);
  auto a = Spawn(parent, "a");
  ASSERT_TRUE(a) << a.error().message();
  auto b = Spawn(parent, "b");
  ASSERT_TRUE(b);
  auto c = Spawn(parent, "c", {b->task_id, a->task_id});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->depends_on, (std::vector<std::string>{b->task_id, a->task_id}));
  EXPECT_EQ(c->parent_task_id, parent.task_id);
  EXPECT_EQ(c->priority, "normal");
  EXPECT_EQ(domain::Name(c->state), "pending");
  EXPECT_NE(c->task_id, a->task_id);
  EXPECT_EQ(domain::Name(a->state), "ready");  // pending with every dependency met (D13)
  EXPECT_EQ(Get(parent.task_id).children, 3);
  EXPECT_EQ(EventKinds(c->task_id), std::vector<std::string>{"subtask_spawned"});
}

// covers DAG-005, DAG-034
TEST_P(TaskServiceTest, SpawnWithoutDependsOnIsIndependent) {
  TaskRecord parent = Running("parent", kSpawn);
  auto a = Spawn(parent, "a");
  auto b = Spawn(parent, "b");
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(b->depends_on.empty());
  EXPECT_EQ(DispatchNames(3), (std::vector<std::string>{"a", "b"}));  // parallel with each other
}

// covers DAG-007 (Open: unknown, non-sibling ids, D11)
TEST_P(TaskServiceTest, DependsOnMayNameOnlySpawnedSiblings) {
  TaskRecord p1 = Running("p1", kSpawn);
  TaskRecord p2 = Running("p2", kSpawn);
  auto a = Spawn(p1, "a");
  ASSERT_TRUE(a);
  auto unknown = Spawn(p1, "x", {"no-such-task"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown task no-such-task"), std::string::npos);
  auto cousin = Spawn(p2, "y", {a->task_id});
  ASSERT_FALSE(cousin);
  EXPECT_NE(cousin.error().message().find("only siblings"), std::string::npos);
  auto parent_dep = Spawn(p1, "z", {p1.task_id});
  ASSERT_FALSE(parent_dep);
  auto twice = Spawn(p1, "w", {a->task_id, a->task_id});
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message().find("more than once"), std::string::npos);
  EXPECT_EQ(Get(p1.task_id).children, 1);  // rejected spawns change nothing
}

// covers DAG-001 (spawn limits: spawn, maximumChildren, maximumDepth)
TEST_P(TaskServiceTest, SpawnLimitsAreEnforced) {
  TaskRecord no_spawn = Running("no-spawn");
  auto denied = Spawn(no_spawn, "x");
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message().find("spawn: false"), std::string::npos);

  TaskRecord two = Running("two", {true, 2, 1});
  ASSERT_TRUE(Spawn(two, "a"));
  ASSERT_TRUE(Spawn(two, "b"));
  auto third = Spawn(two, "c");
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(third.error().message().find("maximumChildren is 2"), std::string::npos);

  // Depth: the child of a depth-1 permission may not spawn again.
  auto children = service_->Dispatch(std::nullopt, 16);
  ASSERT_TRUE(children);
  TaskRecord a = Get(children->dispatched.front().task_id);
  EXPECT_EQ(a.depth, 1);
  EXPECT_EQ(a.subagents.maximum_depth, 0);
  auto deeper = Spawn(a, "grandchild");
  ASSERT_FALSE(deeper);
  EXPECT_EQ(deeper.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(deeper.error().message().find("maximumDepth"), std::string::npos);

  TaskRecord deep = Running("deep", {true, 2, 2});
  auto child = Spawn(deep, "child");
  ASSERT_TRUE(child);
  DispatchNames(16);
  auto grandchild = Spawn(Get(child->task_id), "grandchild");
  ASSERT_TRUE(grandchild) << grandchild.error().message();
  EXPECT_EQ(grandchild->depth, 2);
  DispatchNames(16);
  auto too_deep = Spawn(Get(grandchild->task_id), "too-deep");
  ASSERT_FALSE(too_deep);
  EXPECT_NE(too_deep.error().message().find("maximumDepth"), std::string::npos);

  TaskRecord idle = Create("not-running", {}, 0, kSpawn);
  auto from_pending = Spawn(idle, "x");
  ASSERT_FALSE(from_pending);
  EXPECT_EQ(from_pending.error().code(), ErrorCode::kFailedPrecondition);
}

// covers DAG-008, DAG-009
TEST_P(TaskServiceTest, DispatchGatesOnCompletedDependencies) {
  TaskRecord a = Create("a");
  TaskRecord b = Create("b", {a.task_id});
  Create("c", {a.task_id, b.task_id});
  EXPECT_EQ(domain::Name(b.state), "pending");
  EXPECT_EQ(DispatchNames(4), std::vector<std::string>{"a"});
  EXPECT_TRUE(DispatchNames(4).empty());
  Complete(Get(a.task_id));
  EXPECT_EQ(domain::Name(Get(b.task_id).state), "ready");
  EXPECT_EQ(DispatchNames(4), std::vector<std::string>{"b"});
  Complete(Get(b.task_id));
  EXPECT_EQ(DispatchNames(4), std::vector<std::string>{"c"});
}

// covers DAG-008 (the serial v1 path: limit 1)
TEST_P(TaskServiceTest, DispatchRespectsMaxParallelWorkers) {
  for (const char* n : {"a", "b", "c"}) Create(n);
  EXPECT_EQ(DispatchNames(1), std::vector<std::string>{"a"});
  EXPECT_TRUE(DispatchNames(1).empty());
  EXPECT_EQ(DispatchNames(2), std::vector<std::string>{"b"});
  auto bad = service_->Dispatch(std::nullopt, 0);
  EXPECT_FALSE(bad);
}

// covers DAG-010 (chain and diamond, transitive, naming the failed dependency, one transaction)
TEST_P(TaskServiceTest, CascadeFailThroughChainsAndDiamonds) {
  TaskRecord top = Create("top");
  TaskRecord left = Create("left", {top.task_id});
  TaskRecord right = Create("right", {top.task_id});
  TaskRecord bottom = Create("bottom", {left.task_id, right.task_id});
  TaskRecord tail = Create("tail", {bottom.task_id});
  TaskRecord other = Create("other");
  DispatchNames(1);  // top runs
  auto failed = service_->ResolveTask({top.task_id, "fail", "the approach is wrong", 0, {}});
  ASSERT_TRUE(failed) << failed.error().message();
  EXPECT_EQ(failed->cascaded.size(), 4u);
  EXPECT_EQ(domain::Name(Get(left.task_id).state), "failed");
  EXPECT_EQ(Get(left.task_id).failed_dependency, top.task_id);
  EXPECT_NE(Get(left.task_id).failure_reason->find("dependency " + top.task_id + " (top) failed"), std::string::npos);
  TaskRecord b = Get(bottom.task_id);
  EXPECT_EQ(domain::Name(b.state), "failed");
  EXPECT_TRUE(b.failed_dependency == left.task_id || b.failed_dependency == right.task_id);
  TaskRecord t = Get(tail.task_id);
  EXPECT_EQ(t.failed_dependency, bottom.task_id);
  EXPECT_NE(t.failure_reason->find("cascade from " + top.task_id), std::string::npos);
  EXPECT_EQ(domain::Name(Get(other.task_id).state), "ready");
  int cascade_events = 0;
  for (const auto& id : {left.task_id, right.task_id, bottom.task_id, tail.task_id}) {
    for (const auto& kind : EventKinds(id)) cascade_events += kind == "task_cascade_failed";
  }
  EXPECT_EQ(cascade_events, 4);  // bottom failed once, not twice
  // A new dependent of a failed task fails at creation, naming it.
  TaskRecord late = Create("late", {tail.task_id});
  EXPECT_EQ(domain::Name(late.state), "failed");
  EXPECT_EQ(late.failed_dependency, tail.task_id);
}

// covers DAG-010 (Open: cancel cascades too, D12)
TEST_P(TaskServiceTest, CancelCascadesToDependents) {
  TaskRecord a = Create("a");
  TaskRecord b = Create("b", {a.task_id});
  auto cancelled = service_->ResolveTask({a.task_id, "cancel", "not needed", 0, {}});
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(domain::Name(Get(a.task_id).state), "cancelled");
  EXPECT_EQ(domain::Name(Get(b.task_id).state), "failed");
  EXPECT_NE(Get(b.task_id).failure_reason->find("was cancelled"), std::string::npos);
}

// covers DAG-010 (atomicity: a conflicting writer leaves nothing half-applied)
TEST_P(TaskServiceTest, CascadeIsOneTransaction) {
  TaskRecord a = Create("a");
  TaskRecord b = Create("b", {a.task_id});
  TaskRecord c = Create("c", {b.task_id});
  // Another writer bumps c between our read and our write: the whole cascade is refused.
  store::TaskChange bump;
  TaskRecord c2 = Get(c.task_id);
  c2.version += 1;
  bump.updated_tasks.push_back(c2);
  store::TaskChange stale;
  TaskRecord a_failed = Get(a.task_id);
  a_failed.state = domain::TaskState::kFailed;
  a_failed.version += 1;
  TaskRecord b_failed = Get(b.task_id);
  b_failed.state = domain::TaskState::kFailed;
  b_failed.version += 1;
  TaskRecord c_failed = Get(c.task_id);
  c_failed.state = domain::TaskState::kFailed;
  c_failed.version += 1;
  stale.updated_tasks = {a_failed, b_failed, c_failed};
  ASSERT_TRUE(store_->Apply(bump));
  auto result = store_->Apply(stale);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(domain::Name(Get(a.task_id).state), "ready");
  EXPECT_EQ(domain::Name(Get(b.task_id).state), "pending");
}

// covers DAG-011, DAG-012, DAG-013, DAG-014, DAG-015, DAG-016, DAG-018
TEST_P(TaskServiceTest, ReportVerdictRecordsOneEventOnTheTasksOwnId) {
  TaskRecord parent = Running("parent", kSpawn);
  auto arb = Spawn(parent, "arbitration");
  DispatchNames(16);
  for (bool approved : {true, false}) {
    auto event = service_->ReportVerdict(arb->task_id, approved, "criteria 1-3 met; 4 is \"partial\"\nsee log");
    ASSERT_TRUE(event) << event.error().message();
    EXPECT_EQ(event->kind, "verdict_reported");
    EXPECT_EQ(event->subject_id, arb->task_id);
    EXPECT_EQ(event->actor, "agent");
    EXPECT_EQ(event->payload, (Json{{"approved", approved}, {"reasoning", "criteria 1-3 met; 4 is \"partial\"\nsee log"}}));
  }
  auto stored = *store_->ListEvents(arb->task_id);
  int verdicts = 0;
  for (const auto& e : stored) verdicts += e.kind == "verdict_reported";
  EXPECT_EQ(verdicts, 2);
  auto parent_events = store_->ListEvents(parent.task_id);
  for (const auto& e : *parent_events) EXPECT_NE(e.kind, "verdict_reported");
}

// covers DAG-017
TEST_P(TaskServiceTest, ReportVerdictFailureIsReturned) {
  auto missing = service_->ReportVerdict("no-such-task", true, "ok");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  TaskRecord idle = Create("idle");
  auto not_running = service_->ReportVerdict(idle.task_id, true, "ok");
  ASSERT_FALSE(not_running);
  EXPECT_EQ(not_running.error().code(), ErrorCode::kFailedPrecondition);
}

class ArbitrationTest : public TaskServiceTest {
 protected:
  // A story with two evaluators and a running arbitration task.
  void SetUpStory() {
    TaskRecord lead = Running("lead", {true, 4, 1});
    evaluator_ = *Spawn(lead, "evaluator");
    arbitration_ = *Spawn(lead, "arbitration", {evaluator_.task_id});
    auto story = service_->CreateStory(std::nullopt, "story", arbitration_.task_id, {evaluator_.task_id});
    ASSERT_TRUE(story) << story.error().message();
    story_ = *story;
    EXPECT_EQ(story_.status, "VALIDATING");
    DispatchNames(16);
    Complete(Get(evaluator_.task_id));
    DispatchNames(16);
    ASSERT_EQ(domain::Name(Get(arbitration_.task_id).state), "running");
  }
  Json Decided() {
    auto events = store_->ListEvents(story_.story_id);
    for (const auto& e : *events) {
      if (e.kind == "arbitration_decided") return e.payload;
    }
    return nullptr;
  }
  TaskRecord evaluator_, arbitration_;
  store::StoryRecord story_;
};

// covers DAG-020, DAG-021, DAG-027
TEST_P(ArbitrationTest, RejectingVerdictSetsNeedsFix) {
  SetUpStory();
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, false, "tests missing"));
  Complete(Get(arbitration_.task_id));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "NEEDS_FIX");
  Json payload = Decided();
  EXPECT_EQ(payload["task_id"], arbitration_.task_id);
  EXPECT_EQ(payload["approved"], false);
  EXPECT_TRUE(payload.contains("summary"));
}

// covers DAG-022
TEST_P(ArbitrationTest, ApprovingVerdictSetsReviewReady) {
  SetUpStory();
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, true, "good"));
  Complete(Get(arbitration_.task_id));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "REVIEW_READY");
  EXPECT_EQ(Decided()["approved"], true);
}

// covers DAG-028, DAG-030, DAG-031, DAG-026, DAG-034
TEST_P(ArbitrationTest, NoVerdictRoutesToReviewReadyWithoutApprovedField) {
  SetUpStory();
  // A rejecting free-text summary is not a verdict.
  auto outcome = service_->SubmitReport(arbitration_.task_id,
                                        *reports::ParseReportText("upward-report:\n  status: completed\n  confidence: 0.9\n"
                                                                  "  blockers: []\n  escalation-required: false\n"
                                                                  "  evidence-anchors: []\n"
                                                                  "  planned-actions-pending-approval: []\n"
                                                                  "  notes: REJECTED - the work is not acceptable\n"),
                                        false);
  ASSERT_TRUE(outcome) << outcome.error().message();
  ASSERT_TRUE(service_->RecordVerification({arbitration_.task_id, true, {}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt}));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "REVIEW_READY");
  Json payload = Decided();
  EXPECT_FALSE(payload.contains("approved"));
  EXPECT_EQ(payload["summary"], "REJECTED - the work is not acceptable");
}

// covers DAG-023
TEST_P(ArbitrationTest, OnlyTheArbitrationTasksVerdictsCount) {
  TaskRecord lead = Running("lead", {true, 4, 1});
  TaskRecord evaluator = *Spawn(lead, "evaluator");
  TaskRecord arbitration = *Spawn(lead, "arbitration", {evaluator.task_id});
  story_ = *service_->CreateStory(std::nullopt, "story", arbitration.task_id, {evaluator.task_id});
  DispatchNames(16);
  ASSERT_TRUE(service_->ReportVerdict(evaluator.task_id, false, "evaluator rejects"));
  Complete(Get(evaluator.task_id));
  DispatchNames(16);
  Complete(Get(arbitration.task_id));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "REVIEW_READY");
}

// covers DAG-024, DAG-025
TEST_P(ArbitrationTest, LastReadableVerdictDecides) {
  SetUpStory();
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, true, "first look fine"));
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, false, "on reflection, no"));
  // An unreadable verdict payload after them is ignored.
  store::TaskChange junk;
  store::TaskEventRecord bad;
  bad.event_id = "junk-1";
  bad.subject_id = arbitration_.task_id;
  bad.kind = "verdict_reported";
  bad.actor = "agent";
  bad.payload = Json{{"approved", "yes"}};
  bad.created_at = "t";
  junk.events.push_back(bad);
  ASSERT_TRUE(store_->Apply(junk));
  Complete(Get(arbitration_.task_id));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "NEEDS_FIX");
}

// covers DAG-020, DAG-033
TEST_P(ArbitrationTest, OnlyValidatingStoriesAreFinalisedAndStatusCanBeSetByHand) {
  SetUpStory();
  ASSERT_TRUE(service_->SetStoryStatus(story_.story_id, "NEEDS_FIX"));
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, true, "ok"));
  Complete(Get(arbitration_.task_id));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "NEEDS_FIX");  // not VALIDATING: unchanged
  EXPECT_TRUE(Decided().is_null());
  auto manual = service_->SetStoryStatus(story_.story_id, "REVIEW_READY");
  ASSERT_TRUE(manual);
  EXPECT_EQ(manual->status, "REVIEW_READY");
  EXPECT_FALSE(service_->SetStoryStatus(story_.story_id, "DONE"));
}

// A TaskStore that can fail event listing or the arbitration write.
class FaultyTaskStore final : public store::TaskStoreWrapper {
 public:
  using TaskStoreWrapper::TaskStoreWrapper;
  bool fail_list_events = false;
  bool fail_arbitration_write = false;
  Status Apply(const store::TaskChange& change) override {
    if (fail_arbitration_write) {
      for (const auto& e : change.events) {
        if (e.kind == "arbitration_decided") return Fail(ErrorCode::kUnavailable, "injected write failure");
      }
    }
    return TaskStoreWrapper::Apply(change);
  }
  Result<std::vector<store::TaskEventRecord>> ListEvents(std::string_view id) override {
    if (fail_list_events) return Fail(ErrorCode::kUnavailable, "injected read failure");
    return TaskStoreWrapper::ListEvents(id);
  }
};

// covers DAG-032, DAG-031
TEST_P(ArbitrationTest, UnreadableEventsReadAsNoVerdict) {
  SetUpStory();
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, false, "reject"));
  ASSERT_TRUE(service_->SubmitReport(arbitration_.task_id, Upward(reports::UpwardStatus::kCompleted, 0.9), false));
  FaultyTaskStore faulty(*store_);
  faulty.fail_list_events = true;
  TaskService service(faulty, clock_, ids_);
  ASSERT_TRUE(service.RecordVerification({arbitration_.task_id, true, {}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt}));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "REVIEW_READY");
  EXPECT_FALSE(Decided().contains("approved"));
}

// covers DAG-029 (D20: the decision event and the status change are one transaction)
TEST_P(ArbitrationTest, FailedDecisionWriteStoresNothingAndCanBeRetried) {
  SetUpStory();
  ASSERT_TRUE(service_->ReportVerdict(arbitration_.task_id, false, "reject"));
  ASSERT_TRUE(service_->SubmitReport(arbitration_.task_id, Upward(reports::UpwardStatus::kCompleted, 0.9), false));
  FaultyTaskStore faulty(*store_);
  faulty.fail_arbitration_write = true;
  TaskService service(faulty, clock_, ids_);
  auto failed = service.RecordVerification({arbitration_.task_id, true, {}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "VALIDATING");
  EXPECT_EQ(domain::Name(Get(arbitration_.task_id).state), "running");
  EXPECT_TRUE(Decided().is_null());
  ASSERT_TRUE(service_->RecordVerification({arbitration_.task_id, true, {}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt}));
  EXPECT_EQ(store_->GetStory(story_.story_id)->status, "NEEDS_FIX");
}

// covers RPT-021, RPT-031
TEST_P(TaskServiceTest, ConfidentCompletionWaitsForTheVerifier) {
  TaskRecord a = Running("a");
  TaskRecord b = Create("b", {a.task_id});
  auto outcome = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kCompleted, 0.7), false);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->decision.rule, "upward.completed_confident");
  EXPECT_EQ(domain::Name(outcome->transition.task.state), "running");
  EXPECT_EQ(outcome->transition.task.hold, "awaiting_verification");
  EXPECT_EQ(domain::Name(Get(b.task_id).state), "pending");  // not accepted yet
  auto second = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kCompleted, 0.9), false);
  ASSERT_FALSE(second);  // no second report (and no LLM re-review) while the verifier is pending
  EXPECT_EQ(second.error().code(), ErrorCode::kFailedPrecondition);
  auto v = service_->RecordVerification({a.task_id, true, {"ctest: 40 passed"}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt});
  ASSERT_TRUE(v);
  EXPECT_EQ(domain::Name(v->task.state), "completed");
  // A host's report of the verifier is recorded as claimed (issue 38).
  auto events = store_->ListEvents(a.task_id);  // kept: a range over *temporary would dangle
  ASSERT_TRUE(events);
  for (const auto& e : *events) {
    if (e.kind == "verification_recorded") {
      EXPECT_EQ(e.payload.value("provenance", ""), "claimed");
    }
  }
  ASSERT_EQ(v->now_ready.size(), 1u);
  EXPECT_EQ(v->now_ready[0].task_id, b.task_id);
}

// covers RPT-011, RPT-012, RPT-022, RPT-031
TEST_P(TaskServiceTest, LowConfidenceNeedsVerifierAndAblation) {
  TaskRecord a = Running("a");
  auto outcome = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kCompleted, 0.4), std::nullopt);
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->decision.ablation_required);
  auto no_ablation = service_->RecordVerification({a.task_id, true, {}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt});
  ASSERT_FALSE(no_ablation);
  EXPECT_NE(no_ablation.error().message().find("ablation"), std::string::npos);
  EXPECT_TRUE(service_->RecordVerification({a.task_id, true, {}, false, true, store::Provenance::kClaimed, std::nullopt}));
}

// covers RPT-013, RPT-023, RPT-014, RPT-016, RPT-029 (retries exhausted)
TEST_P(TaskServiceTest, FailedReportsRedispatchWithinBudgetThenFailForGood) {
  TaskRecord a = Running("a", {}, 1);
  TaskRecord b = Create("b", {a.task_id});
  auto first = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kFailed, 0.2, {"src/x.cc:4 error"}), false);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->decision.rule, "upward.failed_retry");
  EXPECT_EQ(domain::Name(first->transition.task.state), "ready");
  EXPECT_EQ(first->transition.task.retries_used, 1);
  auto redispatched = service_->Dispatch(std::nullopt, 1);
  ASSERT_TRUE(redispatched);
  ASSERT_EQ(redispatched->dispatched.size(), 1u);
  EXPECT_EQ(redispatched->dispatched[0].brief["keyTasks"], Json::array({"src/x.cc:4 error"}));
  EXPECT_EQ(redispatched->dispatched[0].attempts, 2);
  auto second = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kFailed, 0.2, {"src/x.cc:4 error"}), false);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->decision.rule, "upward.failed_retries_exhausted");
  EXPECT_EQ(second->decision.action, reports::Action::kEscalateToUser);
  EXPECT_EQ(domain::Name(second->transition.task.state), "failed");
  ASSERT_EQ(second->transition.cascaded.size(), 1u);
  EXPECT_EQ(domain::Name(Get(b.task_id).state), "failed");
  // The user may not re-dispatch a failed task, and no retry runs past the budget.
  EXPECT_FALSE(service_->ResolveTask({a.task_id, "redispatch", "try again", 0, {}}));
}

// covers RPT-024, RPT-029, RPT-030
TEST_P(TaskServiceTest, EscalatedTasksWaitForTheUser) {
  TaskRecord a = Running("a");
  auto outcome = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kDeniedByAuthority, 0.9, {"rm denied"}), false);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->transition.task.hold, "awaiting_user");
  EXPECT_FALSE(service_->Dispatch(std::nullopt, 4)->dispatched.size());
  auto past_budget = service_->ResolveTask({a.task_id, "redispatch", "go", 0, {}});
  ASSERT_FALSE(past_budget);
  EXPECT_NE(past_budget.error().message().find("additional_retries"), std::string::npos);
  auto granted = service_->ResolveTask({a.task_id, "redispatch", "I widened the shell allowlist", 1, {"retry rm"}});
  ASSERT_TRUE(granted) << granted.error().message();
  EXPECT_EQ(domain::Name(granted->task.state), "ready");
  EXPECT_EQ(granted->task.retries_allowed, 1);
}

// covers RPT-026, RPT-061
TEST_P(TaskServiceTest, BlockedIsSurfacedNotRedispatched) {
  TaskRecord a = Running("a", {}, 3);
  auto outcome = service_->SubmitReport(a.task_id, Upward(reports::UpwardStatus::kBlocked, 0.5, {"CI down"}), false);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->decision.action, reports::Action::kSurfaceBlocker);
  EXPECT_EQ(domain::Name(outcome->transition.task.state), "running");
  EXPECT_EQ(outcome->transition.task.hold, "awaiting_user");
  EXPECT_EQ(outcome->transition.task.retries_used, 0);
}

// covers RPT-057, RPT-059, RPT-060
TEST_P(TaskServiceTest, EnvelopeStatusesApplyTheirMeaning) {
  TaskRecord a = Running("a", {}, 1);
  reports::ExecutionEnvelope concerns;
  concerns.status = reports::ExecutionStatus::kDoneWithConcerns;
  concerns.task = "t";
  concerns.concerns = {"slow"};
  concerns.next_owner = "invoking agent";
  ASSERT_TRUE(service_->SubmitReport(a.task_id, concerns, false));
  auto unweighed = service_->RecordVerification({a.task_id, true, {}, false, std::nullopt, store::Provenance::kClaimed, std::nullopt});
  ASSERT_FALSE(unweighed);
  EXPECT_NE(unweighed.error().message().find("concern"), std::string::npos);
  ASSERT_TRUE(service_->RecordVerification({a.task_id, true, {}, true, std::nullopt, store::Provenance::kClaimed, std::nullopt}));

  TaskRecord r = Running("reviewer", {}, 1);
  reports::ReviewEnvelope needs_work;
  needs_work.status = reports::ReviewStatus::kNeedsWork;
  needs_work.findings = {*reports::ParseFinding("a.cc:1 - fix")};
  needs_work.next_owner = "developer";
  auto routed = service_->SubmitReport(r.task_id, needs_work, false);
  ASSERT_TRUE(routed);
  EXPECT_EQ(routed->decision.action, reports::Action::kRouteFindings);
  EXPECT_EQ(domain::Name(routed->transition.task.state), "completed");

  TaskRecord c = Running("context", {}, 1);
  reports::ReviewEnvelope context;
  context.status = reports::ReviewStatus::kNeedsContext;
  context.blockers = {"docs/spec.md"};
  context.next_owner = "invoking agent";
  auto supplied = service_->SubmitReport(c.task_id, context, false);
  ASSERT_TRUE(supplied);
  EXPECT_EQ(domain::Name(supplied->transition.task.state), "ready");
  EXPECT_EQ(supplied->transition.task.brief["missingContext"], Json::array({"docs/spec.md"}));
}

// covers TEL-186 on the task graph: names, instructions, report text,
// approval actions and verdict reasons are stored and returned redacted,
// while approvals still bind to the exact raw action.
TEST_P(TaskServiceTest, CallerTextIsStoredRedactedAndApprovalsBindToTheRawAction) {
  const std::string token = "ghp_" + std::string("Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0");
  const std::string action = "curl -H 'Authorization: Bearer sk-live-0a1b2c3d4e5f6g7h8i9j' https://deploy.test";
  TaskRecord a = Running("push with GITHUB_TOKEN=" + token);
  reports::UpwardReport r;
  r.status = reports::UpwardStatus::kCompleted;
  r.confidence = 0.9;
  r.planned_actions_pending_approval = {action};
  auto outcome = service_->SubmitReport(a.task_id, r, false);
  ASSERT_TRUE(outcome) << outcome.error().message();
  auto approved = service_->ApproveAction(a.task_id, action, "yes, password=hunter2hunter2");
  ASSERT_TRUE(approved) << approved.error().message();
  EXPECT_TRUE(service_->UseApproval(a.task_id, action));  // the raw action's digest still matches
  DispatchNames(16);  // the approved task runs again; its verdict carries a reason
  auto verdict = service_->ReportVerdict(a.task_id, false, "leaked AKIAIOSFODNN7EXAMPLE in the log");
  ASSERT_TRUE(verdict) << verdict.error().message();
  EXPECT_EQ(store::TaskEventToJson(*verdict).dump().find("AKIAIOSFODNN7EXAMPLE"), std::string::npos);

  std::string everything = store::TaskToJson(Get(a.task_id)).dump() + store::ApprovalToJson(approved->first).dump();
  auto events = store_->ListEvents(a.task_id);
  auto approvals = store_->ListApprovals(a.task_id);
  ASSERT_TRUE(events && approvals);
  for (const auto& e : *events) everything += store::TaskEventToJson(e).dump();
  for (const auto& ap : *approvals) everything += store::ApprovalToJson(ap).dump();
  for (const std::string& secret : {token, std::string("sk-live-0a1b2c3d4e5f6g7h8i9j"), std::string("hunter2hunter2"),
                                   std::string("AKIAIOSFODNN7EXAMPLE")}) {
    EXPECT_EQ(everything.find(secret), std::string::npos) << secret << " in " << everything;
  }
  EXPECT_NE(everything.find("push with GITHUB_TOKEN=[REDACTED:credential]"), std::string::npos);
  EXPECT_NE(everything.find(reports::ActionDigest(action)), std::string::npos);
}

// covers RPT-019, RPT-020, RPT-030 (approval reuse refused)
TEST_P(TaskServiceTest, ApprovalsAreBoundToTheExactActionAndSingleUse) {
  TaskRecord a = Running("a");
  reports::UpwardReport r;
  r.status = reports::UpwardStatus::kCompleted;
  r.confidence = 0.9;
  r.planned_actions_pending_approval = {"delete file src/old.cc", "rename API Foo across 12 callers"};
  auto outcome = service_->SubmitReport(a.task_id, r, false);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->transition.task.hold, "awaiting_approval");
  auto changed = service_->ApproveAction(a.task_id, "delete file src/old.cc ", "yes");
  ASSERT_FALSE(changed);  // one byte different: not a pending action
  auto first = service_->ApproveAction(a.task_id, "delete file src/old.cc", "yes, delete it");
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->second.hold, "awaiting_approval");  // one action still unapproved
  EXPECT_EQ(first->first.action_sha256, reports::ActionDigest("delete file src/old.cc"));
  EXPECT_EQ(first->first.binding_sha256,
            reports::ApprovalBinding(a.task_id, first->first.action_sha256, reports::kApprovalPolicyVersion));
  EXPECT_EQ(service_->ApproveAction(a.task_id, "delete file src/old.cc", "again").error().code(), ErrorCode::kAlreadyExists);
  auto second = service_->ApproveAction(a.task_id, "rename API Foo across 12 callers", "ok");
  ASSERT_TRUE(second);
  EXPECT_EQ(domain::Name(second->second.state), "ready");  // dispatched again to execute them
  EXPECT_EQ(second->second.retries_used, 0);  // a continuation, not a retry
  auto use = service_->UseApproval(a.task_id, "delete file src/old.cc");
  ASSERT_TRUE(use) << use.error().message();
  EXPECT_TRUE(use->used_at);
  auto reuse = service_->UseApproval(a.task_id, "delete file src/old.cc");
  ASSERT_FALSE(reuse);
  EXPECT_EQ(reuse.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(reuse.error().message().find("already used"), std::string::npos);
  auto other = service_->UseApproval(a.task_id, "delete file src/other.cc");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), ErrorCode::kPermissionDenied);
  // A new policy version does not honour approvals granted under the old one.
  TaskService next(*store_, clock_, ids_, nullptr, "telic-approval/2");
  auto stale = next.UseApproval(a.task_id, "rename API Foo across 12 callers");
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().message().find("policy version"), std::string::npos);
  EXPECT_TRUE(service_->UseApproval(a.task_id, "rename API Foo across 12 callers"));
}

TEST_P(TaskServiceTest, ImportWorkPlanRejectsCyclesAndMapsDependencies) {
  Json plan = {{"nodes",
                {{{"id", "build"}, {"objective", "build it"}, {"logicalRole", "implementer"}, {"dependsOn", Json::array()},
                  {"permissions", {{"subagents", {{"spawn", true}, {"maximumChildren", 2}, {"maximumDepth", 1}}}}}},
                 {{"id", "test"}, {"objective", "test it"}, {"logicalRole", "verifier"}, {"dependsOn", {"build"}}}}}};
  auto tasks = service_->ImportWorkPlan("run-1", plan, 1);
  ASSERT_TRUE(tasks) << tasks.error().message();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[1].depends_on, std::vector<std::string>{(*tasks)[0].task_id});
  EXPECT_TRUE((*tasks)[0].subagents.spawn);
  Json cyclic = {{"nodes",
                  {{{"id", "a"}, {"dependsOn", {"b"}}}, {{"id", "b"}, {"dependsOn", {"a"}}}}}};
  auto rejected = service_->ImportWorkPlan("run-1", cyclic, 0);
  ASSERT_FALSE(rejected);
  EXPECT_NE(rejected.error().message().find("cycle"), std::string::npos);
  EXPECT_EQ(service_->ListTasks(std::string("run-1"))->tasks.size(), 2u);
}

// A run in its executor phase, as the controller would have stored it.
store::RunRecord ExecutingRun(const std::string& run_id) {
  store::RunRecord run;
  run.run_id = run_id;
  run.requested_mode = domain::Mode::kAnalyzeOnly;
  run.status = domain::RunStatus::kRunning;
  run.phase = domain::Phase::kAgent4Execute;
  run.version = 1;
  run.created_at = run.updated_at = "2026-12-02T00:00:00.000Z";
  return run;
}

store::StoredArtifact ArtifactOf(const store::RunRecord& run, const std::string& id, const std::string& type,
                                 const Json& body) {
  return store::MakeArtifact({id, run.run_id, *domain::ArtifactTypeNamed(type), "1.0", "agent", "", {}, "none", run.created_at}, body);
}

// covers DAG-008 DAG-010: a run's accepted WorkPlans and WorkResults drive its graph; syncing is idempotent,
// a second sync on a stale scope is refused and retried, and an ended run cancels (not fails) its open tasks.
TEST_P(TaskServiceTest, SyncRunMirrorsTheRunIdempotently) {
  auto runs = store::SqliteStore::Open(dir_.File("runs.sqlite3"));
  ASSERT_TRUE(runs) << runs.error().message();
  store::RunRecord run = ExecutingRun("run-sync");
  auto artifact = [&](const std::string& id, const std::string& type, const Json& body) {
    return ArtifactOf(run, id, type, body);
  };
  Json plan = {{"id", "plan-1"},
               {"nodes", {{{"id", "a"}, {"dependsOn", Json::array()}}, {{"id", "b"}, {"dependsOn", {"a"}}},
                          {{"id", "c"}, {"dependsOn", {"b"}}}}}};
  store::Change create;
  create.run = run;
  create.artifacts = {artifact("plan-1", "WorkPlan", plan),
                      artifact("result-a", "WorkResult",
                               {{"workPlanRef", "artifact://run-sync/plan-1"}, {"nodeId", "a"}, {"status", "completed"}})};
  ASSERT_TRUE((*runs)->CreateRun(create));
  TaskService with_runs(*store_, clock_, ids_, runs->get());
  auto first = with_runs.SyncRun(run.run_id);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->completed, 1);
  EXPECT_EQ(first->imported, 3);
  auto again = with_runs.SyncRun(run.run_id);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->imported + again->completed + again->failed + again->cancelled, 0);
  auto names = [&] {
    std::map<std::string, std::string> out;
    auto list = service_->ListTasks(run.run_id);
    for (const auto& t : list->tasks) out[t.name] = domain::Name(t.state);
    return out;
  };
  EXPECT_EQ(names(), (std::map<std::string, std::string>{{"plan-1/a", "completed"}, {"plan-1/b", "ready"},
                                                         {"plan-1/c", "pending"}}));
  store::RunRecord ended = run;
  ended.status = domain::RunStatus::kCancelled;
  ended.version = 2;
  store::Change cancel;
  cancel.run = ended;
  ASSERT_TRUE((*runs)->ApplyChange(run.run_id, 1, cancel));
  auto closed = with_runs.SyncRun(run.run_id);
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->cancelled, 2);
  EXPECT_EQ(names(), (std::map<std::string, std::string>{{"plan-1/a", "completed"}, {"plan-1/b", "cancelled"},
                                                         {"plan-1/c", "cancelled"}}));
}

// A run store that counts body reads (GetArtifact) and passes everything on.
class BodyReadCountingStore final : public store::StoreWrapper {
 public:
  explicit BodyReadCountingStore(store::Store& inner) : StoreWrapper(&inner) {}
  Result<store::StoredArtifact> GetArtifact(std::string_view run_id, std::string_view artifact_id) override {
    ++body_reads;
    return StoreWrapper::GetArtifact(run_id, artifact_id);
  }
  int body_reads = 0;
};

// Each sync reads only the WorkPlans and WorkResults appended since the last one, and a result appended
// later still completes its task.
TEST_P(TaskServiceTest, SyncRunReadsOnlyArtifactsAppendedSinceTheLastSync) {
  auto runs = store::SqliteStore::Open(dir_.File("runs.sqlite3"));
  ASSERT_TRUE(runs) << runs.error().message();
  BodyReadCountingStore counting(**runs);
  store::RunRecord run = ExecutingRun("run-cursor");
  auto artifact = [&](const std::string& id, const std::string& type, const Json& body) {
    return ArtifactOf(run, id, type, body);
  };
  auto result = [&](const std::string& id, const std::string& node) {
    return artifact(id, "WorkResult",
                    {{"workPlanRef", "artifact://run-cursor/plan-1"}, {"nodeId", node}, {"status", "completed"}});
  };
  Json plan = {{"id", "plan-1"},
               {"nodes", {{{"id", "a"}, {"dependsOn", Json::array()}}, {{"id", "b"}, {"dependsOn", {"a"}}}}}};
  store::Change create;
  create.run = run;
  create.artifacts = {artifact("plan-1", "WorkPlan", plan), result("result-a", "a")};
  ASSERT_TRUE(counting.CreateRun(create));
  TaskService service(*store_, clock_, ids_, &counting);
  auto first = service.SyncRun(run.run_id);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->imported, 2);
  EXPECT_EQ(first->completed, 1);
  EXPECT_EQ(counting.body_reads, 2);
  auto idle = service.SyncRun(run.run_id);
  ASSERT_TRUE(idle);
  EXPECT_EQ(counting.body_reads, 2);  // nothing new: no body read
  store::Change more;
  more.run = run;
  more.run.version = 2;
  more.artifacts = {result("result-b", "b")};
  ASSERT_TRUE(counting.ApplyChange(run.run_id, 1, more));
  auto second = service.SyncRun(run.run_id);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->completed, 1);
  EXPECT_EQ(counting.body_reads, 3);  // only result-b
  // Another service (another process) starts from the beginning and finds nothing left to do.
  TaskService fresh(*store_, clock_, ids_, &counting);
  auto replayed = fresh.SyncRun(run.run_id);
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->imported + replayed->completed + replayed->failed + replayed->cancelled, 0);
  EXPECT_EQ(counting.body_reads, 6);
  auto listed = service_->ListTasks(run.run_id);  // kept: a range-for over a temporary's member would dangle
  ASSERT_TRUE(listed) << listed.error().message();
  for (const auto& t : listed->tasks) EXPECT_EQ(domain::Name(t.state), "completed") << t.name;
}

// An import decided on a scope that changed before commit is refused, never duplicated.
TEST_P(TaskServiceTest, ScopeGuardRefusesAChangeDecidedOnAStaleScope) {
  TaskRecord existing = Create("existing");
  store::TaskChange change;
  change.expected_scope = store::TaskChange::ScopeGuard{std::nullopt, 0};  // decided when the graph was empty
  TaskRecord t;
  t.task_id = "late";
  t.name = "late";
  t.instructions = "x";
  t.created_at = t.updated_at = "2026-12-02T00:00:00.000Z";
  change.inserted_tasks.push_back(t);
  auto refused = store_->Apply(change);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kConflict);
  change.expected_scope->tasks = 1;
  EXPECT_TRUE(store_->Apply(change));
  EXPECT_EQ(service_->ListTasks(std::nullopt)->tasks.size(), 2u);
  (void)existing;
}

TEST_P(TaskServiceTest, TasksOfARunNeedAnOpenRun) {
  auto runs = store::SqliteStore::Open(dir_.File("telic.sqlite3"));
  ASSERT_TRUE(runs) << runs.error().message();
  TaskService with_runs(*store_, clock_, ids_, runs->get());
  CreateTaskRequest r;
  r.run_id = "no-such-run";
  r.name = "x";
  r.instructions = "y";
  auto missing = with_runs.CreateTask(r);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

// covers issue 38 item 6: under require_observed a host's passing verification is refused; telic's check and an
// honest failure are recorded.
TEST_P(TaskServiceTest, RequireObservedRunsTakeOnlyTelicsPassingVerification) {
  auto runs = store::SqliteStore::Open(dir_.File("observed.sqlite3"));
  ASSERT_TRUE(runs) << runs.error().message();
  store::RunRecord run = ExecutingRun("run-strict");
  run.extra = {{"observation", {{"policy", "require_observed"}, {"shared", true}}}};
  store::Change create;
  create.run = run;
  ASSERT_TRUE((*runs)->CreateRun(create));
  TaskService with_runs(*store_, clock_, ids_, runs->get());
  auto awaiting = [&](const std::string& name) {
    CreateTaskRequest r;
    r.run_id = run.run_id;
    r.name = name;
    r.instructions = "do " + name;
    r.retries_allowed = 1;
    auto task = with_runs.CreateTask(r);
    EXPECT_TRUE(task) << task.error().message();
    EXPECT_TRUE(with_runs.Dispatch(run.run_id, 8));
    auto outcome = with_runs.SubmitReport(task->task_id, Upward(reports::UpwardStatus::kCompleted, 0.9), false);
    EXPECT_TRUE(outcome) << outcome.error().message();
    return task->task_id;
  };
  std::string claimed = awaiting("claimed");
  auto refused = with_runs.RecordVerification({claimed, true, {"ctest ok"}, false, std::nullopt,
                                               store::Provenance::kClaimed, std::nullopt});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("telic_run_check"), std::string::npos) << refused.error().message();
  EXPECT_EQ(with_runs.GetTask(claimed)->task.hold, std::optional<std::string>("awaiting_verification"));
  auto failure = with_runs.RecordVerification({claimed, false, {"ctest: 1 failed"}, false, std::nullopt,
                                               store::Provenance::kClaimed, std::nullopt});
  ASSERT_TRUE(failure) << failure.error().message();
  EXPECT_EQ(failure->action, "redispatch");
  std::string observed = awaiting("observed");
  auto accepted = with_runs.RecordVerification({observed, true, {"artifact://run-strict/check-1"}, false, std::nullopt,
                                                store::Provenance::kObserved, "artifact://run-strict/check-1"});
  ASSERT_TRUE(accepted) << accepted.error().message();
  EXPECT_EQ(domain::Name(accepted->task.state), "completed");
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}
INSTANTIATE_TEST_SUITE_P(Backends, TaskServiceTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, ArbitrationTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

}  // namespace
}  // namespace telic::graph
