// Store contract tests on the SQLite implementation.
#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

RunRecord MakeRun(const std::string& id) {
  RunRecord run;
  run.run_id = id;
  run.repository_root = "/repo";
  run.requested_mode = "report_only";
  run.status = "running";
  run.phase = "context_grounding";
  run.created_at = run.updated_at = "2026-12-02T00:00:00.000Z";
  return run;
}

TraceEventRecord MakeEvent(const std::string& id, const std::string& type) {
  TraceEventRecord e;
  e.event_id = id;
  e.timestamp = "2026-12-02T00:00:00.000Z";
  e.actor = "controller";
  e.phase = "context_grounding";
  e.event_type = type;
  e.summary = type;
  return e;
}

Change NewRunChange(const std::string& id) {
  Change change;
  change.run = MakeRun(id);
  change.artifacts.push_back(MakeArtifact({"req", id, "UserMessage", "1.0", "user", "", {}, "none", "t"},
                                          Json{{"content", "exact request"}}));
  change.events.push_back(MakeEvent(id + "-e1", "run_started"));
  return change;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteStore::Open(dir_.File("telic.sqlite3"));
    ASSERT_TRUE(opened) << opened.error().message();
    store_ = std::move(*opened);
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreTest, CreateRunStoresRunArtifactsAndEventsAtomically) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  auto run = store_->GetRun("r1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->version, 1);
  auto artifacts = store_->ListArtifacts("r1");
  ASSERT_TRUE(artifacts);
  ASSERT_EQ(artifacts->size(), 1u);
  auto artifact = store_->GetArtifact("r1", "req");
  ASSERT_TRUE(artifact);
  EXPECT_EQ(artifact->canonical_body, R"({"content":"exact request"})");
  EXPECT_EQ(artifact->meta.sha256, Sha256Ref(artifact->canonical_body));
  auto trace = store_->GetTrace("r1", 0, 10);
  ASSERT_TRUE(trace);
  ASSERT_EQ(trace->events.size(), 1u);
  EXPECT_EQ(trace->events[0].sequence, 1);
  EXPECT_EQ(trace->events[0].prev_hash, "");
  EXPECT_EQ(trace->events[0].hash, ComputeTraceEventHash(trace->events[0]));
}

TEST_F(SqliteStoreTest, CreatingAnExistingRunFailsAndChangesNothing) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  auto again = store_->CreateRun(NewRunChange("r1"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(store_->GetTrace("r1", 0, 10)->events.size(), 1u);
}

TEST_F(SqliteStoreTest, ApplyChangeIsCompareAndSetOnVersion) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  Change change;
  change.run = MakeRun("r1");
  change.run.version = 2;
  change.run.phase = "agent_1_frame";
  change.events.push_back(MakeEvent("e2", "phase_submitted"));
  ASSERT_TRUE(store_->ApplyChange("r1", 1, change));
  // A second writer holding the old version loses cleanly and stores nothing.
  Change stale = change;
  stale.events = {MakeEvent("e3", "phase_submitted")};
  auto lost = store_->ApplyChange("r1", 1, stale);
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(store_->GetRun("r1")->version, 2);
  EXPECT_EQ(store_->GetTrace("r1", 0, 10)->events.size(), 2u);
}

TEST_F(SqliteStoreTest, ApplyChangeToUnknownRunIsNotFound) {
  Change change;
  change.run = MakeRun("nope");
  auto result = store_->ApplyChange("nope", 1, change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(result.error().message(), "Run not found: nope");
}

// covers TEL-012
TEST_F(SqliteStoreTest, DuplicateArtifactIdRollsBackTheWholeChange) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  Change change;
  change.run = MakeRun("r1");
  change.run.version = 2;
  change.artifacts.push_back(MakeArtifact({"req", "r1", "UserMessage", "1.0", "user", "", {}, "none", "t"}, Json{{"x", 1}}));
  change.events.push_back(MakeEvent("e2", "phase_submitted"));
  auto result = store_->ApplyChange("r1", 1, change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(result.error().message(), "Artifact already exists in this run: req");
  EXPECT_EQ(store_->GetRun("r1")->version, 1);
  EXPECT_EQ(store_->GetTrace("r1", 0, 10)->events.size(), 1u);
}

TEST_F(SqliteStoreTest, TraceSequencesAreContiguousAndHashChained) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  for (int v = 1; v <= 5; ++v) {
    Change change;
    change.run = MakeRun("r1");
    change.run.version = v + 1;
    change.events = {MakeEvent("a" + std::to_string(v), "x"), MakeEvent("b" + std::to_string(v), "y")};
    ASSERT_TRUE(store_->ApplyChange("r1", v, change));
  }
  auto page = store_->GetTrace("r1", 0, 100);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->events.size(), 11u);
  std::string prev;
  for (size_t i = 0; i < page->events.size(); ++i) {
    EXPECT_EQ(page->events[i].sequence, static_cast<int64_t>(i + 1));
    EXPECT_EQ(page->events[i].prev_hash, prev);
    EXPECT_EQ(page->events[i].hash, ComputeTraceEventHash(page->events[i]));
    prev = page->events[i].hash;
  }
}

TEST_F(SqliteStoreTest, TracePagingUsesAnExclusiveCursorAndReportsHasMore) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  Change change;
  change.run = MakeRun("r1");
  change.run.version = 2;
  change.events = {MakeEvent("a", "x"), MakeEvent("b", "y")};
  ASSERT_TRUE(store_->ApplyChange("r1", 1, change));
  auto page = store_->GetTrace("r1", 1, 1);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->events.size(), 1u);
  EXPECT_EQ(page->events[0].sequence, 2);
  EXPECT_TRUE(page->has_more);
  EXPECT_FALSE(store_->GetTrace("r1", 2, 1)->has_more);
}

TEST_F(SqliteStoreTest, ArtifactLookupsAreRunScoped) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r2")));
  auto other = store_->GetArtifact("r3", "req");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message(), "Artifact not found: req");
}

TEST_F(SqliteStoreTest, ListRunsIsNewestFirst) {
  for (std::string id : {"b", "a", "c"}) {
    Change change = NewRunChange(id);
    change.run.updated_at = id == "c" ? "2026-12-03T00:00:00.000Z" : "2026-12-02T00:00:00.000Z";
    change.events[0].event_id = id + "-event";
    ASSERT_TRUE(store_->CreateRun(change));
  }
  auto runs = store_->ListRuns(10);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run_id, "c");
  EXPECT_EQ((*runs)[1].run_id, "a");
  EXPECT_EQ((*runs)[2].run_id, "b");
  EXPECT_EQ(store_->ListRuns(1)->size(), 1u);
}

// covers TEL-007, TEL-256
TEST_F(SqliteStoreTest, ArtifactsAndTraceRowsCannotBeUpdatedOrDeleted) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("telic.sqlite3").c_str(), &db), SQLITE_OK);
  for (const char* sql : {"UPDATE artifacts SET type = 'X'", "DELETE FROM artifacts", "UPDATE trace_events SET summary = 'x'",
                          "DELETE FROM trace_events", "UPDATE blobs SET body = '{}'", "DELETE FROM blobs"}) {
    EXPECT_NE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  sqlite3_close(db);
}

// covers TEL-013
TEST_F(SqliteStoreTest, TamperedBlobFailsTheIntegrityCheckOnRead) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("telic.sqlite3").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TRIGGER blobs_immutable; UPDATE blobs SET body = '{\"content\":\"forged\"}'",
                         nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto reopened = SqliteStore::Open(dir_.File("telic.sqlite3"));
  ASSERT_TRUE(reopened);
  auto artifact = (*reopened)->GetArtifact("r1", "req");
  ASSERT_FALSE(artifact);
  EXPECT_EQ(artifact.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(artifact.error().message().find("Artifact integrity check failed"), std::string::npos);
}

TEST_F(SqliteStoreTest, BodiesOverTheLimitAreRejected) {
  Change change = NewRunChange("r1");
  std::string big(kMaxArtifactBodyBytes, 'x');
  change.artifacts.push_back(MakeArtifact({"big", "r1", "Evidence", "1.0", "executor", "", {}, "none", "t"}, Json{{"c", big}}));
  auto result = store_->CreateRun(change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_FALSE(store_->GetRun("r1"));
}

TEST_F(SqliteStoreTest, ReopeningKeepsDataAndTheSchemaVersion) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  auto reopened = SqliteStore::Open(dir_.File("telic.sqlite3"));
  ASSERT_TRUE(reopened);
  EXPECT_TRUE((*reopened)->GetRun("r1"));
  EXPECT_TRUE((*reopened)->CheckIntegrity());
}

TEST_F(SqliteStoreTest, ANewerSchemaVersionIsRefusedWithAClearError) {
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("telic.sqlite3").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE telic_meta SET value = '999' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto reopened = SqliteStore::Open(dir_.File("telic.sqlite3"));
  ASSERT_FALSE(reopened);
  EXPECT_EQ(reopened.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(reopened.error().message().find("upgrade telic"), std::string::npos);
}

TEST(SqliteStoreForeignTest, ADatabaseNotWrittenByTelicIsRefused) {
  testing::TempDir dir;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("other.sqlite3").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE runs (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto opened = SqliteStore::Open(dir.File("other.sqlite3"));
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("not written by telic"), std::string::npos);
}

}  // namespace
}  // namespace telic::store
