// SqliteTaskStore: coexistence with the run schema in one ledger, version
// compare-and-set, append-only events, single-use approvals.
#include "store/sqlite_task_store.h"

#include <sqlite3.h>

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

TaskRecord MakeTask(const std::string& id) {
  TaskRecord t;
  t.task_id = id;
  t.name = id;
  t.instructions = "do " + id;
  t.created_at = t.updated_at = "2026-12-02T00:00:00.000Z";
  return t;
}

int Exec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return rc;
}

// covers DAG-018 (graph tables beside the run schema, which keeps its version)
TEST(SqliteTaskStore, SharesTheLedgerWithTheRunStoreInEitherOrder) {
  for (bool runs_first : {true, false}) {
    testing::TempDir dir;
    std::string path = dir.File("telic.sqlite3");
    std::unique_ptr<SqliteStore> runs;
    std::unique_ptr<SqliteTaskStore> tasks;
    if (runs_first) runs = std::move(*SqliteStore::Open(path));
    auto opened = SqliteTaskStore::Open(path);
    ASSERT_TRUE(opened) << opened.error().message();
    tasks = std::move(*opened);
    if (!runs_first) {
      auto r = SqliteStore::Open(path);
      ASSERT_TRUE(r) << r.error().message();
      runs = std::move(*r);
    }
    ASSERT_TRUE(runs->CheckIntegrity());
    TaskChange change;
    change.inserted_tasks.push_back(MakeTask("t1"));
    ASSERT_TRUE(tasks->Apply(change));
    tasks.reset();
    runs.reset();
    ASSERT_TRUE(SqliteStore::Open(path));  // reopen: both schema versions current
    auto again = SqliteTaskStore::Open(path);
    ASSERT_TRUE(again);
    EXPECT_EQ((*again)->GetTask("t1")->name, "t1");
  }
}

TEST(SqliteTaskStore, RefusesForeignAndNewerDatabases) {
  testing::TempDir dir;
  std::string foreign = dir.File("foreign.sqlite3");
  ASSERT_EQ(Exec(foreign, "CREATE TABLE notes (x TEXT)"), SQLITE_OK);
  auto refused = SqliteTaskStore::Open(foreign);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("not written by telic"), std::string::npos);
  std::string newer = dir.File("newer.sqlite3");
  ASSERT_TRUE(SqliteTaskStore::Open(newer));
  ASSERT_EQ(Exec(newer, "UPDATE telic_meta SET value = '99' WHERE key = 'graph_schema_version'"), SQLITE_OK);
  auto too_new = SqliteTaskStore::Open(newer);
  ASSERT_FALSE(too_new);
  EXPECT_NE(too_new.error().message().find("upgrade telic"), std::string::npos);
}

// OpenOnFirstUse (telic serve): nothing is opened or written until the first
// call; that call returns what Open would have refused with (every call
// does, until the cause is gone), and a usable ledger works as with Open.
TEST(SqliteTaskStore, OpenOnFirstUseConnectsAtTheFirstCallAndReportsOpenErrorsThere) {
  testing::TempDir dir;
  std::string path = dir.File("telic.sqlite3");
  auto runs = std::move(*SqliteStore::Open(path));
  auto lazy = SqliteTaskStore::OpenOnFirstUse(path);
  sqlite3* probe = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &probe), SQLITE_OK);
  sqlite3_stmt* count = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(probe, "SELECT count(*) FROM sqlite_master WHERE name = 'graph_tasks'", -1, &count, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(count, 0), 0) << "the graph schema was created before any call";
  sqlite3_finalize(count);
  sqlite3_close(probe);
  TaskChange change;
  change.inserted_tasks.push_back(MakeTask("t1"));
  ASSERT_TRUE(lazy->Apply(change));
  EXPECT_EQ(lazy->GetTask("t1")->name, "t1");

  ASSERT_EQ(Exec(path, "UPDATE telic_meta SET value = '99' WHERE key = 'graph_schema_version'"), SQLITE_OK);
  auto newer = SqliteTaskStore::OpenOnFirstUse(path);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto read = newer->ListTasks(std::nullopt);
    ASSERT_FALSE(read);
    EXPECT_NE(read.error().message().find("upgrade telic"), std::string::npos) << read.error().message();
  }
  EXPECT_TRUE(runs->ListRuns(1)) << "the run store is untouched by the task store's refusal";

  auto missing = SqliteTaskStore::OpenOnFirstUse(dir.File("no-such-dir/telic.sqlite3"));
  auto failed = missing->GetTask("t1");
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message().find("cannot open ledger"), std::string::npos) << failed.error().message();
}

TEST(SqliteTaskStore, CompareAndSetAndAtomicity) {
  testing::TempDir dir;
  auto store = std::move(*SqliteTaskStore::Open(dir.File("telic.sqlite3")));
  TaskChange create;
  create.inserted_tasks = {MakeTask("a"), MakeTask("b")};
  ASSERT_TRUE(store->Apply(create));
  EXPECT_EQ(store->Apply(create).error().code(), ErrorCode::kAlreadyExists);
  TaskRecord a = *store->GetTask("a");
  a.state = domain::TaskState::kReady;
  a.version = 2;
  TaskChange update;
  update.updated_tasks.push_back(a);
  ASSERT_TRUE(store->Apply(update));
  // The same update again is stale.
  EXPECT_EQ(store->Apply(update).error().code(), ErrorCode::kConflict);
  // A stale read check refuses the whole change, events included.
  TaskChange guarded;
  TaskRecord b = *store->GetTask("b");
  b.version = 2;
  b.state = domain::TaskState::kFailed;
  guarded.updated_tasks.push_back(b);
  guarded.reads.emplace_back("a", 1);
  TaskEventRecord e;
  e.event_id = "e1";
  e.subject_id = "b";
  e.kind = "task_failed";
  e.actor = "system";
  guarded.events.push_back(e);
  EXPECT_EQ(store->Apply(guarded).error().code(), ErrorCode::kConflict);
  EXPECT_EQ(store->GetTask("b")->state, domain::TaskState::kPending);
  EXPECT_TRUE(store->ListEvents("b")->empty());
  EXPECT_EQ(store->ListTasks(std::nullopt)->size(), 2u);
  EXPECT_TRUE(store->ListTasks(std::string("run-x"))->empty());
}

// covers DAG-012 (events are append-only)
TEST(SqliteTaskStore, EventsAreAppendOnlyAndApprovalsSingleUse) {
  testing::TempDir dir;
  std::string path = dir.File("telic.sqlite3");
  auto store = std::move(*SqliteTaskStore::Open(path));
  TaskChange change;
  TaskEventRecord e;
  e.event_id = "e1";
  e.subject_id = "t";
  e.kind = "verdict_reported";
  e.actor = "agent";
  e.payload = {{"approved", true}, {"reasoning", "ok"}};
  change.events.push_back(e);
  ApprovalRecord a;
  a.approval_id = "ap1";
  a.task_id = "t";
  a.action = "delete x";
  a.binding_sha256 = "sha256:b";
  change.inserted_approvals.push_back(a);
  ASSERT_TRUE(store->Apply(change));
  EXPECT_NE(Exec(path, "UPDATE graph_events SET kind = 'x'"), SQLITE_OK);
  EXPECT_NE(Exec(path, "DELETE FROM graph_events"), SQLITE_OK);
  EXPECT_NE(Exec(path, "DELETE FROM graph_approvals"), SQLITE_OK);
  TaskChange use;
  use.now = "2026-12-02T00:00:01.000Z";
  use.used_approvals.push_back("ap1");
  ASSERT_TRUE(store->Apply(use));
  auto again = store->Apply(use);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(Exec(path, "UPDATE graph_approvals SET used_at = NULL"), SQLITE_OK);
  EXPECT_EQ(store->ListApprovals("t")->front().used_at, "2026-12-02T00:00:01.000Z");
  EXPECT_EQ(store->ListEvents("t")->front().payload["reasoning"], "ok");
}

TEST(SqliteTaskStore, TaskLimitPerScope) {
  testing::TempDir dir;
  auto store = std::move(*SqliteTaskStore::Open(dir.File("telic.sqlite3")));
  TaskChange change;
  for (size_t i = 0; i <= kMaxTasksPerScope; ++i) change.inserted_tasks.push_back(MakeTask("t" + std::to_string(i)));
  auto result = store->Apply(change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(store->ListTasks(std::nullopt)->empty());
}

}  // namespace
}  // namespace telic::store
