// Store contract tests, one parameterised suite run against every backend:
// SQLite (embedded) and PostgreSQL (a real server, see testing/postgres_server.h).
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/ids.h"
#include "base/sha256.h"
#include "store/background_open.h"
#include "store/open_store.h"
#include "store/task_store.h"
#include "store/pg_store.h"
#include "store/sqlite_store.h"
#include "testing/killed_writer.h"
#include "testing/postgres_server.h"
#include "testing/temp_dir.h"
#include "testing/trace_hash_oracle.h"

namespace telic::store {
namespace {

// kSqliteOpenedInBackground: the SQLite store behind BackgroundOpenedStore
// (what `telic serve` uses), so every forwarded call meets the same contract.
enum class Backend { kSqlite, kPostgres, kSqliteOpenedInBackground };

RunRecord MakeRun(const std::string& id) {
  RunRecord run;
  run.run_id = id;
  run.repository_root = "/repo";
  run.requested_mode = domain::Mode::kReportOnly;
  run.status = domain::RunStatus::kRunning;
  run.phase = domain::Phase::kContextGrounding;
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
  change.artifacts.push_back(MakeArtifact({"req", id, domain::ArtifactType::kUserMessage, "1.0", "user", "", {}, "none", "t"},
                                          Json{{"content", "exact request"}}));
  change.events.push_back(MakeEvent(id + "-e1", "run_started"));
  return change;
}

// The change that moves run `id` from `version` to version + 1, with one
// artifact and two events named after `writer`.
Change AdvanceChange(const std::string& id, int64_t version, const std::string& writer) {
  Change change;
  change.run = MakeRun(id);
  change.run.version = version + 1;
  change.run.phase = domain::AllPhases()[static_cast<size_t>(version + 1) % domain::AllPhases().size()];
  std::string tag = writer + "-v" + std::to_string(version);
  change.artifacts.push_back(
      MakeArtifact({"a-" + std::to_string(version), id, domain::ArtifactType::kContextDocument, "1.0", writer, "", {}, "none", "t"}, Json{{"by", tag}}));
  change.events = {MakeEvent(tag + "-x", "advanced"), MakeEvent(tag + "-y", "advanced")};
  change.events[0].summary = tag;
  return change;
}

// Checks that a run's trace is gapless from 1 and hash-chained; returns it.
std::vector<TraceEventRecord> CheckedTrace(Store& store, const std::string& run_id) {
  std::vector<TraceEventRecord> events;
  int64_t after = 0;
  std::string prev;
  while (true) {
    auto page = store.GetTrace(run_id, after, 500);
    EXPECT_TRUE(page) << page.error().message();
    if (!page) return events;
    for (const auto& e : page->events) {
      EXPECT_EQ(e.sequence, after + 1) << "gap or duplicate in the trace";
      EXPECT_EQ(e.prev_hash, prev);
      EXPECT_EQ(e.hash, ComputeTraceEventHash(e));
      prev = e.hash;
      after = e.sequence;
      events.push_back(e);
    }
    if (!page->has_more) return events;
  }
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      TELIC_SHARED_POSTGRES_OR_SKIP(server);
      location_ = server.NewSchemaUrl();
    } else {
      location_ = dir_.File("telic.sqlite3");
    }
    auto opened = Open();
    ASSERT_TRUE(opened) << opened.error().message();
    store_ = std::move(*opened);
  }

  // Opens another store on the same database (a second connection/instance).
  Result<std::unique_ptr<Store>> Open() {
    if (GetParam() != Backend::kSqliteOpenedInBackground) return OpenStore(location_);
    // The open's error reaches the caller once the open has finished.
    auto store = std::make_unique<BackgroundOpenedStore>([location = location_] { return OpenStore(location); });
    if (auto opened = store->Opened(); !opened) return std::unexpected(opened.error());
    return std::unique_ptr<Store>(std::move(store));
  }

  // Runs SQL directly, bypassing telic; "" on success, else the error.
  std::string RawExec(const std::string& sql) {
    if (GetParam() == Backend::kPostgres) return testing::PostgresServer::Exec(location_, sql);
    sqlite3* db = nullptr;
    std::string error;
    if (sqlite3_open(location_.c_str(), &db) != SQLITE_OK) return "cannot open";
    sqlite3_busy_timeout(db, 5000);
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) error = message ? message : "failed";
    sqlite3_free(message);
    sqlite3_close(db);
    return error;
  }

  testing::TempDir dir_;
  std::string location_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, CreateRunStoresRunArtifactsAndEventsAtomically) {
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

// The combined read (one round trip on PostgreSQL) answers what GetRun and
// ListArtifactsAfter answer, at every cursor, and kNotFound for no run.
TEST_P(StoreTest, RunAndArtifactsAfterAnswersAsTheTwoReadsDo) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  ASSERT_TRUE(store_->ApplyChange("r1", 1, AdvanceChange("r1", 1, "a")));
  ASSERT_TRUE(store_->ApplyChange("r1", 2, AdvanceChange("r1", 2, "b")));
  ASSERT_TRUE(store_->CreateRun(NewRunChange("other")));
  auto all = *store_->ListArtifactsAfter("r1", 0);
  ASSERT_EQ(all.size(), 3u);
  for (int64_t after : {int64_t{0}, all[0].seq, all[1].seq, all[2].seq}) {
    auto read = store_->GetRunAndArtifactsAfter("r1", after);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(read->run, *store_->GetRun("r1"));
    EXPECT_EQ(read->appended, *store_->ListArtifactsAfter("r1", after)) << "after " << after;
  }
  EXPECT_TRUE(store_->GetRunAndArtifactsAfter("r1", all[2].seq)->appended.empty());
  auto missing = store_->GetRunAndArtifactsAfter("no-such-run", 0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message(), "Run not found: no-such-run");
}

TEST_P(StoreTest, RecordsRoundTripExactly) {
  Change change = NewRunChange("r1");
  change.run.prior_run_id = "00000000-0000-4000-8000-000000000001";
  change.run.resume_phase = domain::Phase::kAgent1Frame;
  change.run.outcome_hint = domain::RunStatus::kPartial;
  change.run.escalation_count = 2;
  change.run.extra = Json{{"b", 1}, {"a", "\u00e9\u2603 \"q\"\n"}};
  change.events[0].input_refs = {"artifact://r1/req"};
  change.events[0].permission_decision = Json{{"allowed", false}, {"layer", "mode"}};
  change.events[0].budget_snapshot = Json{{"promptRevisionsRemaining", 1}};
  change.artifacts[0] = MakeArtifact({"req", "r1", domain::ArtifactType::kUserMessage, "1.0", "user", "", {"x://1", "y://2"}, "none", "t"},
                                     Json{{"content", std::string("NUL \0 and \U0001F600", 14)}});
  ASSERT_TRUE(store_->CreateRun(change));
  auto run = store_->GetRun("r1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->prior_run_id, change.run.prior_run_id);
  EXPECT_EQ(run->resume_phase, change.run.resume_phase);
  EXPECT_EQ(run->outcome_hint, change.run.outcome_hint);
  EXPECT_EQ(run->escalation_count, 2);
  EXPECT_EQ(run->extra, change.run.extra);
  auto artifact = store_->GetArtifact("r1", "req");
  ASSERT_TRUE(artifact);
  EXPECT_EQ(artifact->canonical_body, change.artifacts[0].canonical_body);
  EXPECT_EQ(artifact->meta.source_refs, (std::vector<std::string>{"x://1", "y://2"}));
  auto trace = store_->GetTrace("r1", 0, 10);
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->events[0].permission_decision, change.events[0].permission_decision);
  EXPECT_EQ(trace->events[0].input_refs, change.events[0].input_refs);
  EXPECT_EQ(trace->events[0].budget_snapshot, change.events[0].budget_snapshot);
}

// The hash input exactly as it was before trace events carried redactions
// (built here by hand, not by TraceEventHashInput).
std::string PreRedactionHash(const TraceEventRecord& e) {
  return Sha256Ref(testing::TraceEventHashInputOfTree(e, /*with_redactions=*/false));
}

const Json kRedactions = Json::array({{{"field", "summary"}, {"category", "credential"}},
                                      {{"field", "inputRefs[0]"}, {"category", "secret"}}});

TEST_P(StoreTest, TraceEventRedactionsRoundTripAndAreCoveredByTheHash) {
  Change change = NewRunChange("r1");
  change.events[0].redactions = kRedactions;
  change.events.push_back(MakeEvent("r1-e2", "plain"));
  ASSERT_TRUE(store_->CreateRun(change));
  auto events = CheckedTrace(*store_, "r1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].redactions, kRedactions);
  TraceEventRecord unredacted = events[0];
  unredacted.redactions = Json::array();
  EXPECT_NE(events[0].hash, ComputeTraceEventHash(unredacted)) << "the redactions must be hashed";
  EXPECT_EQ(events[1].redactions, Json::array());
  auto reopened = Open();
  ASSERT_TRUE(reopened) << reopened.error().message();
  auto again = CheckedTrace(**reopened, "r1");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].redactions, kRedactions);
  EXPECT_EQ(again[0].hash, events[0].hash);
}

TEST_P(StoreTest, EventsWithoutRedactionsKeepTheHashTheyHadBeforeTheField) {
  Change change = NewRunChange("r1");
  change.events[0].permission_decision = Json{{"allowed", true}};
  ASSERT_TRUE(store_->CreateRun(change));
  ASSERT_TRUE(store_->ApplyChange("r1", 1, AdvanceChange("r1", 1, "w")));
  auto events = CheckedTrace(*store_, "r1");
  ASSERT_EQ(events.size(), 3u);
  for (const auto& e : events) {
    EXPECT_EQ(e.redactions, Json::array());
    EXPECT_EQ(e.hash, PreRedactionHash(e)) << e.event_id;
  }
}

TEST_P(StoreTest, NonArrayRedactionsAreRefused) {
  Change change = NewRunChange("r1");
  change.events[0].redactions = Json{{"field", "summary"}};
  auto created = store_->CreateRun(change);
  ASSERT_FALSE(created);
  EXPECT_FALSE(store_->GetRun("r1"));
}

// SQLite only: the blobs table a ledger had before schema version 8, filled
// from the artifacts' bodies, so that migrations from an older version run
// again over the current tables (PostgreSQL keeps blobs: nothing to add).
std::string SqliteBlobsAsBefore8(Backend backend) {
  if (backend == Backend::kPostgres) return "";
  return "CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT; "
         "INSERT INTO blobs SELECT DISTINCT sha256, body FROM artifacts; ";
}

// A ledger written before trace events had redactions (the column dropped and
// the schema version set back one, as the previous release left it) is
// migrated on open: its events read as [], keep their hashes and verify, its
// artifacts read back byte for byte, and new events with redactions extend
// the same chain. covers TEL-255 (stored artifacts stay readable through an
// explicit migration)
TEST_P(StoreTest, ALedgerFromBeforeRedactionsMigratesAndKeepsVerifying) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("old")));
  ASSERT_TRUE(store_->ApplyChange("old", 1, AdvanceChange("old", 1, "w")));
  auto before = CheckedTrace(*store_, "old");
  auto artifacts_before = store_->ListArtifactsAfter("old", 0);
  ASSERT_TRUE(artifacts_before) << artifacts_before.error().message();
  ASSERT_EQ(artifacts_before->size(), 2u);
  std::vector<StoredArtifact> stored_before;
  for (const ArtifactMeta& meta : *artifacts_before) stored_before.push_back(*store_->GetArtifact("old", meta.id));
  store_.reset();
  // The schema as it was before the redactions migration: without that
  // column and without the run paging indexes and trace context columns
  // added after it. (The versions before it; the migrations after the paging
  // indexes are re-runnable or add what this rollback dropped, so they apply
  // again over what it left.)
  int previous = GetParam() == Backend::kPostgres ? 3 : 2;
  ASSERT_EQ(RawExec(SqliteBlobsAsBefore8(GetParam()) +
                    "DROP INDEX runs_by_creation; DROP INDEX runs_by_status_creation; DROP INDEX runs_by_mode_creation; "
                    "ALTER TABLE trace_events DROP COLUMN redactions_json; "
                    "ALTER TABLE trace_events DROP COLUMN traceparent; ALTER TABLE trace_events DROP COLUMN tracestate; "
                    "UPDATE telic_meta SET value = '" + std::to_string(previous) + "' WHERE key = 'schema_version'"),
            "");
  auto reopened = Open();
  ASSERT_TRUE(reopened) << reopened.error().message();
  auto after = CheckedTrace(**reopened, "old");
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].hash, before[i].hash);
    EXPECT_EQ(after[i].hash, PreRedactionHash(after[i]));
    EXPECT_EQ(after[i].redactions, Json::array());
  }
  for (const StoredArtifact& artifact : stored_before) {
    auto read = (*reopened)->GetArtifact("old", artifact.meta.id);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(read->meta.sha256, artifact.meta.sha256);
    EXPECT_EQ(read->meta.type, artifact.meta.type);
    EXPECT_EQ(read->canonical_body, artifact.canonical_body);
  }
  Change next = AdvanceChange("old", 2, "w");
  next.events[1].redactions = kRedactions;
  ASSERT_TRUE((*reopened)->ApplyChange("old", 2, next));
  auto extended = CheckedTrace(**reopened, "old");
  ASSERT_EQ(extended.size(), before.size() + 2);
  EXPECT_EQ(extended.back().redactions, kRedactions);
  EXPECT_NE(RawExec("UPDATE trace_events SET redactions_json = '[]'"), "") << "trace rows stay immutable";
  RunQuery query;
  query.limit = 1;
  auto page = (*reopened)->QueryRuns(query);
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_EQ(page->runs.size(), 1u) << "the paging indexes were created by the migration";
}

constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// The W3C trace context of the request that caused an event round-trips on
// every backend, outside the hash: the chain is what it would be without it.
TEST_P(StoreTest, TraceContextRoundTripsOutsideTheHash) {  // issue 20 item 6
  Change change = NewRunChange("r1");
  change.events[0].traceparent = kTraceparent;
  change.events[0].tracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
  change.events.push_back(MakeEvent("r1-e2", "plain"));
  ASSERT_TRUE(store_->CreateRun(change));
  auto events = CheckedTrace(*store_, "r1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].traceparent, kTraceparent);
  EXPECT_EQ(events[0].tracestate, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_FALSE(events[1].traceparent.has_value());
  EXPECT_FALSE(events[1].tracestate.has_value());
  EXPECT_EQ(TraceEventHashInput(events[0]).find("traceparent"), std::string::npos);
  TraceEventRecord without = events[0];
  without.traceparent.reset();
  without.tracestate.reset();
  EXPECT_EQ(events[0].hash, ComputeTraceEventHash(without));
  auto reopened = Open();
  ASSERT_TRUE(reopened) << reopened.error().message();
  auto again = CheckedTrace(**reopened, "r1");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].traceparent, kTraceparent);
  EXPECT_EQ(again[0].hash, events[0].hash);
}

// A ledger from before the trace context columns migrates on open: its events
// read without a trace context and keep their hashes; new events carry one.
TEST_P(StoreTest, ALedgerFromBeforeTraceContextMigratesAndKeepsVerifying) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("old")));
  auto before = CheckedTrace(*store_, "old");
  store_.reset();
  // The schema version just before the trace-context migration (SQLite's
  // 6th, PostgreSQL's 7th); the migrations after it are re-runnable.
  int previous = GetParam() == Backend::kPostgres ? 6 : 5;
  ASSERT_EQ(RawExec(SqliteBlobsAsBefore8(GetParam()) +
                    "ALTER TABLE trace_events DROP COLUMN traceparent; ALTER TABLE trace_events DROP COLUMN tracestate; "
                    "UPDATE telic_meta SET value = '" + std::to_string(previous) + "' WHERE key = 'schema_version'"),
            "");
  auto reopened = Open();
  ASSERT_TRUE(reopened) << reopened.error().message();
  auto after = CheckedTrace(**reopened, "old");
  ASSERT_EQ(after.size(), before.size());
  EXPECT_EQ(after[0].hash, before[0].hash);
  EXPECT_FALSE(after[0].traceparent.has_value());
  Change next = AdvanceChange("old", 1, "w");
  next.events[0].traceparent = kTraceparent;
  ASSERT_TRUE((*reopened)->ApplyChange("old", 1, next));
  auto extended = CheckedTrace(**reopened, "old");
  ASSERT_EQ(extended.size(), before.size() + 2);
  EXPECT_EQ(extended[before.size()].traceparent, kTraceparent);
  EXPECT_FALSE(extended.back().traceparent.has_value());
  EXPECT_NE(RawExec("UPDATE trace_events SET traceparent = NULL"), "") << "trace rows stay immutable";
}

TEST_P(StoreTest, CreatingAnExistingRunFailsAndChangesNothing) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  auto again = store_->CreateRun(NewRunChange("r1"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(store_->GetTrace("r1", 0, 10)->events.size(), 1u);
}

TEST_P(StoreTest, ApplyChangeIsCompareAndSetOnVersion) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  Change change;
  change.run = MakeRun("r1");
  change.run.version = 2;
  change.run.phase = domain::Phase::kAgent1Frame;
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

// covers TEL-184: an append that does not bump the version (a DENY record) is ordered by the
// trace length instead: a writer that read an older trace stores nothing.
TEST_P(StoreTest, ExpectedTraceLengthRefusesAnAppendToAMovedTrace) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  Change change;
  change.run = MakeRun("r1");  // version 1, unchanged
  change.events.push_back(MakeEvent("deny-1", "permission_checked"));
  change.expected_trace_length = 1;
  ASSERT_TRUE(store_->ApplyChange("r1", 1, change));
  Change twin = change;
  twin.events = {MakeEvent("deny-2", "permission_checked")};
  auto lost = store_->ApplyChange("r1", 1, twin);  // still expects 1 event
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(lost.error().message(), kConcurrentTraceAppend);
  EXPECT_EQ(store_->GetRun("r1")->version, 1);
  EXPECT_EQ(CheckedTrace(*store_, "r1").size(), 2u);
  twin.expected_trace_length = 2;
  ASSERT_TRUE(store_->ApplyChange("r1", 1, twin));
  EXPECT_EQ(CheckedTrace(*store_, "r1").size(), 3u);
}

// covers TEL-184: writers on separate connections that all hold version 1 and the same trace
// length: exactly one appends, every other one is refused and stores nothing.
TEST_P(StoreTest, RacingSameVersionAppendersOneWinsPerTraceLength) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("deny")));
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 4; ++i) {
    auto opened = Open();
    ASSERT_TRUE(opened) << opened.error().message();
    stores.push_back(std::move(*opened));
  }
  std::atomic<int> stored{0};
  std::atomic<int> refused{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (size_t w = 0; w < stores.size(); ++w) {
    threads.emplace_back([&, w] {
      Change change;
      change.run = MakeRun("deny");
      change.events.push_back(MakeEvent("deny-w" + std::to_string(w), "permission_checked"));
      change.expected_trace_length = 1;
      auto applied = stores[w]->ApplyChange("deny", 1, change);
      if (applied) {
        stored++;
      } else if (applied.error().message() == kConcurrentTraceAppend) {
        refused++;
      } else {
        std::lock_guard lock(mutex);
        failures.push_back(applied.error().message());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, std::vector<std::string>{});
  EXPECT_EQ(stored.load(), 1);
  EXPECT_EQ(refused.load(), 3);
  EXPECT_EQ(CheckedTrace(*store_, "deny").size(), 2u);
}

TEST_P(StoreTest, ApplyChangeToUnknownRunIsNotFound) {
  Change change;
  change.run = MakeRun("nope");
  auto result = store_->ApplyChange("nope", 1, change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(result.error().message(), "Run not found: nope");
}

// covers TEL-012
TEST_P(StoreTest, DuplicateArtifactIdRollsBackTheWholeChange) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  Change change;
  change.run = MakeRun("r1");
  change.run.version = 2;
  change.artifacts.push_back(MakeArtifact({"req", "r1", domain::ArtifactType::kUserMessage, "1.0", "user", "", {}, "none", "t"}, Json{{"x", 1}}));
  change.events.push_back(MakeEvent("e2", "phase_submitted"));
  auto result = store_->ApplyChange("r1", 1, change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(result.error().message(), "Artifact already exists in this run: req");
  EXPECT_EQ(store_->GetRun("r1")->version, 1);
  EXPECT_EQ(store_->GetTrace("r1", 0, 10)->events.size(), 1u);
}

TEST_P(StoreTest, TraceSequencesAreContiguousAndHashChained) {
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

// The hash chain is a function of the events alone: both backends store the
// very same hashes for the same changes.
TEST_P(StoreTest, HashChainIsTheSameOnEveryBackend) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  ASSERT_TRUE(store_->ApplyChange("r1", 1, AdvanceChange("r1", 1, "w")));
  auto events = CheckedTrace(*store_, "r1");
  ASSERT_EQ(events.size(), 3u);
  // Computed independently of any store from the same inputs.
  std::string prev;
  std::vector<TraceEventRecord> expected = {NewRunChange("r1").events[0], AdvanceChange("r1", 1, "w").events[0],
                                            AdvanceChange("r1", 1, "w").events[1]};
  for (size_t i = 0; i < expected.size(); ++i) {
    expected[i].run_id = "r1";
    expected[i].sequence = static_cast<int64_t>(i + 1);
    expected[i].prev_hash = prev;
    prev = ComputeTraceEventHash(expected[i]);
    EXPECT_EQ(events[i].hash, prev);
  }
}

TEST_P(StoreTest, ManyEventsInOneChangeStayGaplessAndChained) {
  Change change = NewRunChange("r1");
  for (int i = 0; i < 1200; ++i) change.events.push_back(MakeEvent("bulk-" + std::to_string(i), "x"));
  ASSERT_TRUE(store_->CreateRun(change));
  ASSERT_TRUE(store_->ApplyChange("r1", 1, AdvanceChange("r1", 1, "w")));
  EXPECT_EQ(CheckedTrace(*store_, "r1").size(), 1203u);
}

TEST_P(StoreTest, TracePagingUsesAnExclusiveCursorAndReportsHasMore) {
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

TEST_P(StoreTest, ArtifactLookupsAreRunScoped) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r2")));
  auto other = store_->GetArtifact("r3", "req");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message(), "Artifact not found: req");
}

TEST_P(StoreTest, ListRunsIsNewestFirst) {
  for (std::string id : {"b", "a", "c", "B"}) {
    Change change = NewRunChange(id);
    change.run.updated_at = id == "c" ? "2026-12-03T00:00:00.000Z" : "2026-12-02T00:00:00.000Z";
    change.events[0].event_id = id + "-event";
    ASSERT_TRUE(store_->CreateRun(change));
  }
  auto runs = store_->ListRuns(10);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 4u);
  // Ties are ordered bytewise ("B" < "a"), the same on every backend.
  EXPECT_EQ((*runs)[0].run_id, "c");
  EXPECT_EQ((*runs)[1].run_id, "B");
  EXPECT_EQ((*runs)[2].run_id, "a");
  EXPECT_EQ((*runs)[3].run_id, "b");
  EXPECT_EQ(store_->ListRuns(1)->size(), 1u);
}

// Creates `count` runs "run-000".."run-NNN": created_at cycles through 7
// timestamps (so ties are common), status through every kRunStatuses value
// and requested_mode through two modes.
void CreateManyRuns(Store& store, int count) {
  for (int i = 0; i < count; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "run-%03d", i);
    Change change = NewRunChange(id);
    change.run.created_at = change.run.updated_at = "2026-12-0" + std::to_string(1 + i % 7) + "T00:00:00.000Z";
    change.run.status = domain::AllRunStatuses()[static_cast<size_t>(i) % domain::AllRunStatuses().size()];
    change.run.requested_mode = i % 2 ? domain::Mode::kAnalyzeAndFix : domain::Mode::kReportOnly;
    ASSERT_TRUE(store.CreateRun(change)) << id;
  }
}

// Follows `next` from the first page; the run ids in order, or a failure.
std::vector<std::string> AllPages(Store& store, RunQuery query, int* pages = nullptr) {
  std::vector<std::string> ids;
  for (int n = 1;; ++n) {
    auto page = store.QueryRuns(query);
    EXPECT_TRUE(page) << page.error().message();
    if (!page) return ids;
    EXPECT_LE(page->runs.size(), static_cast<size_t>(query.limit));
    for (const auto& run : page->runs) ids.push_back(run.run_id);
    if (!page->next) {
      if (pages) *pages = n;
      return ids;
    }
    EXPECT_EQ(*page->next, ids.back());
    query.before = page->next;
  }
}

// The order QueryRuns promises, computed here from every run.
std::vector<std::string> ExpectedOrder(Store& store, const RunQuery& filter) {
  auto all = store.ListRuns(100000);
  EXPECT_TRUE(all);
  std::vector<RunRecord> runs;
  for (const auto& run : *all) {
    if (filter.status && run.status != *filter.status) continue;
    if (filter.mode && run.requested_mode != *filter.mode) continue;
    runs.push_back(run);
  }
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    return a.created_at != b.created_at ? a.created_at > b.created_at : a.run_id < b.run_id;
  });
  std::vector<std::string> ids;
  for (const auto& run : runs) ids.push_back(run.run_id);
  return ids;
}

// Issue 21 item 3: more runs than one page, every run exactly once, in
// creation order with ties by id, alone and filtered.
TEST_P(StoreTest, QueryRunsPagesEveryRunOnceNewestCreatedFirst) {
  CreateManyRuns(*store_, 250);
  RunQuery query;
  query.limit = 100;
  int pages = 0;
  auto ids = AllPages(*store_, query, &pages);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(ids.size(), 250u);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 250u);
  EXPECT_EQ(ids, ExpectedOrder(*store_, query));
  // Page sizes that divide the count exactly end without an empty page.
  query.limit = 50;
  EXPECT_EQ(AllPages(*store_, query, &pages), ids);
  EXPECT_EQ(pages, 5);
  query.limit = 1;
  EXPECT_EQ(AllPages(*store_, query).size(), 250u);

  for (auto status : domain::AllRunStatuses()) {
    RunQuery by_status;
    by_status.limit = 7;
    by_status.status = status;
    auto filtered = AllPages(*store_, by_status);
    EXPECT_FALSE(filtered.empty()) << domain::Name(status);
    EXPECT_EQ(filtered, ExpectedOrder(*store_, by_status)) << domain::Name(status);
  }
  RunQuery both;
  both.limit = 9;
  both.status = domain::RunStatus::kPartial;
  both.mode = domain::Mode::kAnalyzeAndFix;
  auto filtered = AllPages(*store_, both);
  EXPECT_FALSE(filtered.empty());
  EXPECT_EQ(filtered, ExpectedOrder(*store_, both));
  both.mode = domain::Mode::kFixOnly;  // no such run
  auto none = store_->QueryRuns(both);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->runs.empty());
  EXPECT_FALSE(none->next);
}

// Issue 19 (telic ui): the runs page filters by topology and by the text of
// the original request, case-insensitively for ASCII; a clarification
// answer (a UserMessage with source refs) is not the request.
TEST_P(StoreTest, QueryRunsFiltersByTopologyAndRequestText) {
  const char* requests[] = {"Fix the Greeting in src/greet.py", "report the \"quoted\" <b>farewell</b>",
                            "plan the GREETING change", "unrelated"};
  for (int i = 0; i < 12; ++i) {
    std::string id = "q-" + std::to_string(10 + i);
    Change change = NewRunChange(id);
    change.artifacts[0] = MakeArtifact({"req", id, domain::ArtifactType::kUserMessage, "1.0", "user", "", {}, "none", "t"},
                                       Json{{"content", requests[i % 4]}, {"id", "req"}});
    change.artifacts.push_back(MakeArtifact({"answer", id, domain::ArtifactType::kUserMessage, "1.0", "user", "", {"artifact://" + id + "/c"},
                                             "none", "t"},
                                            Json{{"content", "answer-greeting-" + id}}));
    change.run.topology = i % 3 == 0 ? domain::Topology::kMicro : i % 3 == 1 ? domain::Topology::kStandard : domain::Topology::kForensic;
    change.run.created_at = change.run.updated_at = "2026-12-02T00:00:" + std::to_string(10 + i) + ".000Z";
    ASSERT_TRUE(store_->CreateRun(change)) << id;
  }
  auto ids_of = [&](RunQuery query) {
    query.limit = 2;
    return AllPages(*store_, query);
  };
  RunQuery greeting;
  greeting.request_contains = "greeting";
  // Runs 0, 2, 4, 6, 8, 10 (requests 0 and 2), newest first; never by the answer's text.
  EXPECT_EQ(ids_of(greeting), (std::vector<std::string>{"q-20", "q-18", "q-16", "q-14", "q-12", "q-10"}));
  RunQuery markup;
  markup.request_contains = "\"QUOTED\" <B>";
  EXPECT_EQ(ids_of(markup), (std::vector<std::string>{"q-19", "q-15", "q-11"}));
  RunQuery answers;
  answers.request_contains = "answer-greeting";
  EXPECT_TRUE(ids_of(answers).empty());
  RunQuery micro;
  micro.topology = domain::Topology::kMicro;
  EXPECT_EQ(ids_of(micro), (std::vector<std::string>{"q-19", "q-16", "q-13", "q-10"}));
  RunQuery both = greeting;
  both.topology = domain::Topology::kMicro;
  EXPECT_EQ(ids_of(both), (std::vector<std::string>{"q-16", "q-10"}));
}

// Issue 42 (the viewer's search box and pager): `search` matches a run id
// prefix or the request's text, ASCII letters without case; `with_total`
// counts every match whatever the cursor.
TEST_P(StoreTest, QueryRunsSearchesIdPrefixOrRequestAndCountsMatches) {
  const char* requests[] = {"Fix the greeting", "abc in the request", "nothing here"};
  for (int i = 0; i < 9; ++i) {
    std::string id = (i < 3 ? "abc" : i < 6 ? "abd" : "xyz") + std::string("-run-") + std::to_string(i);
    Change change = NewRunChange(id);
    change.artifacts[0] = MakeArtifact({"req", id, domain::ArtifactType::kUserMessage, "1.0", "user", "", {}, "none", "t"},
                                       Json{{"content", requests[i % 3]}, {"id", "req"}});
    change.run.created_at = change.run.updated_at = "2026-12-02T00:00:1" + std::to_string(i) + ".000Z";
    ASSERT_TRUE(store_->CreateRun(change)) << id;
  }
  RunQuery by_prefix;
  by_prefix.search = "ABC";  // ids abc-run-0..2, and requests naming "abc" (runs 1, 4, 7)
  by_prefix.limit = 2;
  by_prefix.with_total = true;
  auto first = store_->QueryRuns(by_prefix);
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_TRUE(first->total.has_value());
  EXPECT_EQ(*first->total, 5);
  EXPECT_EQ(AllPages(*store_, by_prefix), (std::vector<std::string>{"xyz-run-7", "abd-run-4", "abc-run-2", "abc-run-1",
                                                                     "abc-run-0"}));
  by_prefix.before = first->next;
  auto second = store_->QueryRuns(by_prefix);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second->total, 5);  // the cursor does not change the count
  RunQuery exact;
  exact.search = "abd-run-5";
  exact.with_total = true;
  auto one = store_->QueryRuns(exact);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->runs.size(), 1u);
  EXPECT_EQ(one->runs[0].run_id, "abd-run-5");
  EXPECT_EQ(*one->total, 1);
  RunQuery filtered;
  filtered.search = "greeting";
  filtered.status = domain::RunStatus::kCancelled;
  filtered.with_total = true;
  auto none = store_->QueryRuns(filtered);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->runs.empty());
  EXPECT_EQ(*none->total, 0);
  RunQuery plain;
  auto no_total = store_->QueryRuns(plain);
  ASSERT_TRUE(no_total);
  EXPECT_FALSE(no_total->total.has_value());
}

// Issue 42: refused calls are kept beside the run, numbered per run, capped,
// outside its version and trace, and deleted with it.
TEST_P(StoreTest, RefusedCallsAreKeptBesideTheRunAndGoWithIt) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("refused-a")));
  ASSERT_TRUE(store_->CreateRun(NewRunChange("refused-b")));
  auto before = store_->GetRun("refused-a");
  auto trace_before = store_->GetTrace("refused-a", 0, 100);
  ASSERT_TRUE(before && trace_before);
  RefusedCall call;
  call.run_id = "refused-a";
  call.at = "2026-12-07T10:00:00.000Z";
  call.tool = "telic_submit_artifact";
  call.code = "invalid_argument";
  call.error = "Artifact body must include canonical id and runId fields";
  call.issues = Json::array({Json{{"pointer", "/body/id"}, {"code", "invalid_type"}, {"message", "expected string"}}});
  call.run_version = 1;
  for (int i = 1; i <= 3; ++i) {
    auto seq = store_->RecordRefusedCall(call);
    ASSERT_TRUE(seq) << seq.error().message();
    EXPECT_EQ(*seq, i);
  }
  call.run_id = "refused-b";
  EXPECT_EQ(store_->RecordRefusedCall(call).value_or(-1), 1);  // numbered per run
  auto listed = store_->ListRefusedCalls("refused-a", 0, 100);
  ASSERT_TRUE(listed) << listed.error().message();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].tool, "telic_submit_artifact");
  EXPECT_EQ((*listed)[0].issues, call.issues);
  EXPECT_EQ((*listed)[2].seq, 3);
  auto after = store_->ListRefusedCalls("refused-a", 2, 100);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].seq, 3);
  // The run itself did not move.
  auto run = store_->GetRun("refused-a");
  auto trace = store_->GetTrace("refused-a", 0, 100);
  ASSERT_TRUE(run && trace);
  EXPECT_EQ(run->version, before->version);
  EXPECT_EQ(trace->events.size(), trace_before->events.size());
  // Deleting the run deletes its log; the other run's stays.
  DeletionRequest request{"2026-12-07T11:00:00.000Z", "test", "delete"};
  ASSERT_TRUE(store_->DeleteRun("refused-a", before->version, request));
  auto gone = store_->ListRefusedCalls("refused-a", 0, 100);
  ASSERT_TRUE(gone);
  EXPECT_TRUE(gone->empty());
  auto kept = store_->ListRefusedCalls("refused-b", 0, 100);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->size(), 1u);
}

TEST_P(StoreTest, QueryRunsCursorsSurviveUpdatesBetweenPages) {
  CreateManyRuns(*store_, 30);
  RunQuery query;
  query.limit = 10;
  auto expected = ExpectedOrder(*store_, query);
  auto first = store_->QueryRuns(query);
  ASSERT_TRUE(first && first->next);
  // A run of the first page and one of a later page move on, and a new run
  // is created: the pages that follow still hold each older run once.
  for (const std::string& id : {expected[0], expected[25]}) {
    Change change;
    auto before = store_->GetRun(id);
    ASSERT_TRUE(before);
    change.run = *before;
    change.run.version = before->version + 1;
    change.run.updated_at = "2027-01-01T00:00:00.000Z";
    ASSERT_TRUE(store_->ApplyChange(id, before->version, change)) << id;
  }
  Change late = NewRunChange("run-late");
  late.run.created_at = late.run.updated_at = "2027-01-01T00:00:00.000Z";
  ASSERT_TRUE(store_->CreateRun(late));
  std::vector<std::string> ids;
  for (const auto& run : first->runs) ids.push_back(run.run_id);
  query.before = first->next;
  auto rest = AllPages(*store_, query);
  ids.insert(ids.end(), rest.begin(), rest.end());
  EXPECT_EQ(ids, expected);
}

TEST_P(StoreTest, QueryRunsRefusesBadLimitsAndUnknownCursors) {
  CreateManyRuns(*store_, 3);
  for (int limit : {0, -1, kMaxRunPageSize + 1}) {
    RunQuery query;
    query.limit = limit;
    auto page = store_->QueryRuns(query);
    ASSERT_FALSE(page) << limit;
    EXPECT_EQ(page.error().code(), ErrorCode::kInvalidArgument);
  }
  RunQuery query;
  query.before = "run-404' OR '1'='1";
  auto page = store_->QueryRuns(query);
  ASSERT_FALSE(page);
  EXPECT_EQ(page.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(page.error().message().find("Unknown cursor"), std::string::npos);
  query.before = "run-000";  // the oldest created: nothing follows it
  auto last = store_->QueryRuns(query);
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->runs.empty());
  EXPECT_FALSE(last->next);
}

// covers TEL-007, TEL-256
TEST_P(StoreTest, ArtifactsAndTraceRowsCannotBeUpdatedOrDeleted) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  std::vector<std::string> statements = {"UPDATE artifacts SET type = 'X'", "DELETE FROM artifacts",
                                         "UPDATE trace_events SET summary = 'x'", "DELETE FROM trace_events",
                                         "UPDATE trace_events SET redactions_json = '[{}]'"};
  if (GetParam() == Backend::kPostgres) {
    statements.insert(statements.end(), {"UPDATE blobs SET body = '{}'", "DELETE FROM blobs", "TRUNCATE artifacts CASCADE",
                                         "TRUNCATE trace_events", "TRUNCATE blobs CASCADE"});
  } else {
    statements.push_back("UPDATE artifacts SET body = '{}'");  // SQLite keeps the body in the artifact row
  }
  for (const auto& sql : statements) EXPECT_NE(RawExec(sql), "") << sql;
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  EXPECT_EQ(CheckedTrace(**reopened, "r1").size(), 1u);
  EXPECT_TRUE((*reopened)->GetArtifact("r1", "req"));
}

// covers TEL-013
TEST_P(StoreTest, TamperedBlobFailsTheIntegrityCheckOnRead) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  std::string forge = GetParam() == Backend::kPostgres
                          ? "ALTER TABLE blobs DISABLE TRIGGER USER; UPDATE blobs SET body = '{\"content\":\"forged\"}'"
                          : "DROP TRIGGER artifacts_immutable; UPDATE artifacts SET body = '{\"content\":\"forged\"}'";
  ASSERT_EQ(RawExec(forge), "");
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  auto artifact = (*reopened)->GetArtifact("r1", "req");
  ASSERT_FALSE(artifact);
  EXPECT_EQ(artifact.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(artifact.error().message().find("Artifact integrity check failed"), std::string::npos);
}

// covers issue 41 item 1: a row whose JSON column is corrupt reads back as data_loss naming the table, the
// key and the column, on every backend: an error result, never an exception.
TEST_P(StoreTest, CorruptJsonColumnsReadAsDataLossWithTableAndKey) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  std::string unguard = GetParam() == Backend::kPostgres
                            ? "ALTER TABLE trace_events DISABLE TRIGGER USER; ALTER TABLE artifacts DISABLE TRIGGER USER; "
                            : "DROP TRIGGER trace_immutable; DROP TRIGGER artifacts_immutable; ";
  ASSERT_EQ(RawExec(unguard + "UPDATE runs SET extra_json = '{\"cut\": '; "
                              "UPDATE trace_events SET budget_snapshot_json = 'not json'; "
                              "UPDATE artifacts SET source_refs_json = '[1, 2]'"),
            "");
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  auto expect_loss = [](const auto& result, const std::string& where) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss) << result.error().message();
    EXPECT_NE(result.error().message().find(where), std::string::npos) << result.error().message();
  };
  expect_loss((*reopened)->GetRun("r1"), "runs row r1: extra_json is not readable");
  expect_loss((*reopened)->ListRuns(10), "runs row r1: extra_json");
  expect_loss((*reopened)->GetTrace("r1", 0, 10), "trace_events row r1/1: budget_snapshot_json is not readable");
  expect_loss((*reopened)->ListArtifacts("r1"), "artifacts row r1/req: source_refs_json is not a list of strings");
}

// covers issue 41 item 2: a vocabulary column (a run's status, phase, mode,
// topology, resume phase or outcome hint, an artifact's type) holding a word
// outside its vocabulary reads back as data_loss naming the table, the key
// and the column, on every backend.
TEST_P(StoreTest, UnknownVocabularyWordsReadAsDataLossWithTableAndKey) {
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"status", "finished"}, {"phase", "agent_9_dream"}, {"requested_mode", "implement"},
      {"topology", "huge"},   {"resume_phase", "later"},  {"outcome_hint", "fine"}};
  std::string sql = GetParam() == Backend::kPostgres ? "ALTER TABLE artifacts DISABLE TRIGGER USER; "
                                                     : "DROP TRIGGER artifacts_immutable; ";
  for (const auto& [column, word] : columns) {
    ASSERT_TRUE(store_->CreateRun(NewRunChange("r-" + column)));
    sql += "UPDATE runs SET " + column + " = '" + word + "' WHERE run_id = 'r-" + column + "'; ";
  }
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r-type")));
  sql += "UPDATE artifacts SET type = 'Memo' WHERE run_id = 'r-type'";
  store_.reset();
  ASSERT_EQ(RawExec(sql), "");
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  for (const auto& [column, word] : columns) {
    auto run = (*reopened)->GetRun("r-" + column);
    ASSERT_FALSE(run) << column;
    EXPECT_EQ(run.error().code(), ErrorCode::kDataLoss) << run.error().message();
    EXPECT_NE(run.error().message().find("runs row r-" + column + ": " + column + " is not readable"),
              std::string::npos)
        << run.error().message();
  }
  auto artifacts = (*reopened)->ListArtifacts("r-type");
  ASSERT_FALSE(artifacts);
  EXPECT_EQ(artifacts.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(artifacts.error().message().find("artifacts row r-type/req: type is not readable"), std::string::npos)
      << artifacts.error().message();
}

TEST_P(StoreTest, BodiesOverTheLimitAreRejected) {
  Change change = NewRunChange("r1");
  std::string big(kMaxArtifactBodyBytes, 'x');
  change.artifacts.push_back(MakeArtifact({"big", "r1", domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none", "t"}, Json{{"c", big}}));
  auto result = store_->CreateRun(change);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_FALSE(store_->GetRun("r1"));
}

TEST_P(StoreTest, ArtifactLimitPerRunIsEnforcedInsideTheTransaction) {
  Change change = NewRunChange("r1");
  for (size_t i = 1; i < kMaxArtifactsPerRun; ++i) {
    change.artifacts.push_back(
        MakeArtifact({"n" + std::to_string(i), "r1", domain::ArtifactType::kContextDocument, "1.0", "w", "", {}, "none", "t"}, Json{{"i", i}}));
  }
  Change too_many = change;
  too_many.run.run_id = "r0";
  for (auto& a : too_many.artifacts) a.meta.run_id = "r0";
  too_many.artifacts.push_back(MakeArtifact({"extra", "r0", domain::ArtifactType::kContextDocument, "1.0", "w", "", {}, "none", "t"}, Json{{"i", -1}}));
  auto refused = store_->CreateRun(too_many);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kResourceExhausted);
  ASSERT_TRUE(store_->CreateRun(change));
  Change one_more = AdvanceChange("r1", 1, "w");
  auto result = store_->ApplyChange("r1", 1, one_more);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(store_->GetRun("r1")->version, 1);
  EXPECT_EQ(store_->ListArtifacts("r1")->size(), kMaxArtifactsPerRun);
}

TEST_P(StoreTest, ReopeningKeepsDataAndTheSchemaVersion) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  store_.reset();
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  EXPECT_TRUE((*reopened)->GetRun("r1"));
  EXPECT_TRUE(CheckStoreReady(**reopened));
  if (GetParam() == Backend::kSqlite) {
    EXPECT_TRUE(dynamic_cast<SqliteStore&>(**reopened).CheckIntegrity());
  }
}

TEST_P(StoreTest, ANewerSchemaVersionIsRefusedWithAClearError) {
  store_.reset();
  ASSERT_EQ(RawExec("UPDATE telic_meta SET value = '999' WHERE key = 'schema_version'"), "");
  auto reopened = Open();
  ASSERT_FALSE(reopened);
  EXPECT_EQ(reopened.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(reopened.error().message().find("upgrade telic"), std::string::npos);
}

// Two instances opening a fresh database at once: migrations run once.
TEST_P(StoreTest, ConcurrentOpensMigrateOnce) {
  location_ = GetParam() == Backend::kPostgres ? testing::PostgresServer::Shared().NewSchemaUrl()
                                               : dir_.File("fresh.sqlite3");
  std::vector<std::thread> threads;
  std::atomic<int> opened{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto store = Open();
      if (store) {
        opened++;
      } else {
        ADD_FAILURE() << store.error().message();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(opened.load(), 4);
}

// Two writers holding the same version: exactly one wins, the other gets a
// clean kConflict and nothing of it is stored. Many rounds, several store
// instances (separate connections) and threads; the trace stays gapless.
// covers TEL-004
TEST_P(StoreTest, RacingWritersAdvanceEachVersionExactlyOnce) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("race")));
  constexpr int kWriters = 6;
  constexpr int64_t kTargetVersion = 60;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 3; ++i) {
    auto opened = Open();
    ASSERT_TRUE(opened) << opened.error().message();
    stores.push_back(std::move(*opened));
  }
  std::mutex mutex;
  std::map<int64_t, std::string> winners;  // version advanced from -> writer
  std::atomic<int> conflicts{0};
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Store& store = *stores[static_cast<size_t>(w) % stores.size()];
      std::string name = "w" + std::to_string(w);
      while (true) {
        auto run = store.GetRun("race");
        if (!run) {
          std::lock_guard lock(mutex);
          failures.push_back(run.error().message());
          return;
        }
        if (run->version >= kTargetVersion) return;
        auto applied = store.ApplyChange("race", run->version, AdvanceChange("race", run->version, name));
        std::lock_guard lock(mutex);
        if (applied) {
          if (!winners.emplace(run->version, name).second) failures.push_back("version advanced twice");
        } else if (applied.error().code() == ErrorCode::kConflict) {
          conflicts++;
        } else {
          failures.push_back(applied.error().message());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, std::vector<std::string>{});
  ASSERT_EQ(winners.size(), static_cast<size_t>(kTargetVersion - 1));
  EXPECT_EQ(store_->GetRun("race")->version, kTargetVersion);
  auto events = CheckedTrace(*store_, "race");
  ASSERT_EQ(events.size(), static_cast<size_t>(1 + 2 * (kTargetVersion - 1)));
  // Every stored change is a winner's, in version order; no loser left a trace.
  for (int64_t v = 1; v < kTargetVersion; ++v) {
    EXPECT_EQ(events[static_cast<size_t>(2 * v - 1)].summary, winners[v] + "-v" + std::to_string(v));
  }
  auto artifacts = store_->ListArtifacts("race");
  ASSERT_TRUE(artifacts);
  ASSERT_EQ(artifacts->size(), static_cast<size_t>(kTargetVersion));
  for (int64_t v = 1; v < kTargetVersion; ++v) {
    const auto& meta = (*artifacts)[static_cast<size_t>(v)];
    EXPECT_EQ(meta.id, "a-" + std::to_string(v));
    EXPECT_EQ(meta.producer, winners[v]);
  }
  std::printf("  %d conflicts among %d writers\n", conflicts.load(), kWriters);
}

TEST_P(StoreTest, RacingCreatorsOfOneRunIdOneWins) {
  std::atomic<int> won{0}, exists{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      auto store = Open();
      ASSERT_TRUE(store);
      Change change = NewRunChange("same");
      change.events[0].event_id = "creator-" + std::to_string(i);
      auto created = (*store)->CreateRun(change);
      if (created) {
        won++;
      } else if (created.error().code() == ErrorCode::kAlreadyExists) {
        exists++;
      } else {
        ADD_FAILURE() << created.error().message();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(exists.load(), 5);
  EXPECT_EQ(CheckedTrace(*store_, "same").size(), 1u);
}

// A writer process SIGKILLed at a random moment loses no acknowledged change
// and leaves no partial one: every stored version has all of its rows.
// covers TEL-012
TEST_P(StoreTest, KilledWriterProcessLosesNoAcknowledgedChange) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("crash")));
  store_.reset();
  std::mt19937 rng(std::random_device{}());
  int64_t acknowledged = 1;
  for (int round = 0; round < 3; ++round) {
    // Anchor on the first acknowledgement, then kill 0-40 ms later.
    testing::KilledWriter writer = testing::RunAndKillWriter(
        [&](const std::function<bool(int64_t)>& report) {
          auto store = Open();
          if (!store) ::_exit(3);
          auto run = (*store)->GetRun("crash");
          if (!run) ::_exit(4);
          for (int64_t v = run->version;; ++v) {
            if (!(*store)->ApplyChange("crash", v, AdvanceChange("crash", v, "child"))) ::_exit(5);
            if (!report(v + 1)) ::_exit(6);
          }
        },
        1, std::chrono::milliseconds(rng() % 40));
    ASSERT_TRUE(writer.started);
    ASSERT_TRUE(writer.killed) << "writer exited early with " << writer.exit_code;
    acknowledged = writer.last_acknowledged;
    auto reopened = Open();
    ASSERT_TRUE(reopened) << reopened.error().message();
    auto run = (*reopened)->GetRun("crash");
    ASSERT_TRUE(run);
    EXPECT_GE(run->version, acknowledged);
    EXPECT_LE(run->version, acknowledged + 1);  // at most the one in flight
    EXPECT_EQ(CheckedTrace(**reopened, "crash").size(), static_cast<size_t>(1 + 2 * (run->version - 1)));
    EXPECT_EQ((*reopened)->ListArtifacts("crash")->size(), static_cast<size_t>(run->version));
  }
}

TEST_P(StoreTest, ADatabaseNotWrittenByTelicIsRefused) {
  store_.reset();
  if (GetParam() == Backend::kPostgres) {
    location_ = testing::PostgresServer::Shared().NewSchemaUrl();
    ASSERT_EQ(RawExec("CREATE TABLE runs (x integer)"), "");
  } else {
    location_ = dir_.File("other.sqlite3");
    ASSERT_EQ(RawExec("CREATE TABLE runs (x)"), "");
  }
  auto opened = Open();
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("not written by telic"), std::string::npos);
}

// ---- Retention (issue 22): DeleteRun and its guards ----

// A run with a task graph: one task of the run with an event and an
// approval, plus a standalone task that deletion must not touch.
void AddGraph(TaskStore& tasks, const std::string& run_id) {
  TaskChange change;
  TaskRecord task;
  task.task_id = run_id + "-task";
  task.run_id = run_id;
  task.name = task.instructions = "t";
  task.created_at = task.updated_at = "2026-12-02T00:00:00.000Z";
  TaskRecord standalone = task;
  standalone.task_id = run_id + "-standalone";
  standalone.run_id.reset();
  change.inserted_tasks = {task, standalone};
  TaskEventRecord event;
  event.event_id = run_id + "-task-created";
  event.subject_id = task.task_id;
  event.run_id = run_id;
  event.kind = "task_created";
  event.actor = "system";
  event.created_at = task.created_at;
  TaskEventRecord standalone_event = event;
  standalone_event.event_id = run_id + "-standalone-created";
  standalone_event.subject_id = standalone.task_id;
  standalone_event.run_id.reset();
  change.events = {event, standalone_event};
  ApprovalRecord approval;
  approval.approval_id = run_id + "-approval";
  approval.task_id = task.task_id;
  approval.action = "rm x";
  approval.binding_sha256 = "sha256:b";
  change.inserted_approvals = {approval};
  StoryRecord story;
  story.story_id = run_id + "-story";
  story.run_id = run_id;
  story.name = "s";
  story.arbitration_task_id = task.task_id;
  story.created_at = story.updated_at = task.created_at;
  change.inserted_stories = {story};
  ASSERT_TRUE(tasks.Apply(change));
}

// covers issue 22 §2 (deletion removes every row of the run, records a tombstone)
TEST_P(StoreTest, DeleteRunRemovesTheRunAndRecordsOneTombstone) {
  auto tasks = OpenTaskStore(*store_, location_);
  ASSERT_TRUE(tasks) << tasks.error().message();
  ASSERT_TRUE(store_->CreateRun(NewRunChange("gone")));
  ASSERT_TRUE(store_->ApplyChange("gone", 1, AdvanceChange("gone", 1, "w")));
  ASSERT_TRUE(store_->CreateRun(NewRunChange("kept")));  // shares the UserMessage body (one blob)
  AddGraph(**tasks, "gone");
  AddGraph(**tasks, "kept");
  std::string final_hash = CheckedTrace(*store_, "gone").back().hash;
  auto tombstone = store_->DeleteRun("gone", 2, {"2026-12-03T00:00:00.000Z", "tester@host", "delete"});
  ASSERT_TRUE(tombstone) << tombstone.error().message();
  EXPECT_EQ(tombstone->run_id, "gone");
  EXPECT_EQ(tombstone->final_trace_hash, final_hash);
  EXPECT_EQ(tombstone->trace_events, 3);
  EXPECT_EQ(tombstone->artifacts, 2);
  EXPECT_EQ(tombstone->status, "running");
  EXPECT_EQ(tombstone->deleted_by, "tester@host");
  EXPECT_EQ(store_->GetRun("gone").error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(store_->GetTrace("gone", 0, 10)->events.empty());
  EXPECT_TRUE(store_->ListArtifacts("gone")->empty());
  EXPECT_TRUE((*tasks)->ListTasks(std::string("gone"))->empty());
  EXPECT_TRUE((*tasks)->ListApprovals("gone-task")->empty());
  EXPECT_TRUE((*tasks)->ListEvents("gone-task")->empty());
  EXPECT_TRUE((*tasks)->ListStories(std::string("gone"))->empty());
  EXPECT_EQ((*tasks)->ListStories(std::string("kept"))->size(), 1u);
  if (GetParam() == Backend::kPostgres) {
    // The blob only "gone" used is gone; the shared one and the other run stay whole.
    // (An INSERT of a blob row succeeds only when no row has that digest.)
    std::string only_gone = MakeArtifact({}, Json{{"by", "w-v1"}}).meta.sha256;
    std::string shared = MakeArtifact({}, Json{{"content", "exact request"}}).meta.sha256;
    EXPECT_EQ(RawExec("INSERT INTO blobs (sha256, body) VALUES ('" + only_gone + "', '{}')"), "");
    EXPECT_NE(RawExec("INSERT INTO blobs (sha256, body) VALUES ('" + shared + "', '{}')"), "");
  }
  EXPECT_TRUE(store_->GetArtifact("kept", "req"));
  EXPECT_EQ(CheckedTrace(*store_, "kept").size(), 1u);
  EXPECT_EQ((*tasks)->ListTasks(std::string("kept"))->size(), 1u);
  EXPECT_EQ((*tasks)->ListApprovals("kept-task")->size(), 1u);
  EXPECT_EQ((*tasks)->ListEvents("gone-standalone")->size(), 1u) << "standalone graph rows are not the run's";
  auto tombstones = store_->ListTombstones(10);
  ASSERT_TRUE(tombstones) << tombstones.error().message();
  ASSERT_EQ(tombstones->size(), 1u);
  EXPECT_EQ(tombstones->front().run_id, "gone");
  EXPECT_EQ(tombstones->front().final_trace_hash, final_hash);
  EXPECT_EQ(tombstones->front().seq, tombstone->seq);
  // The id is free again: a new run (an import, say) may take it.
  EXPECT_TRUE(store_->CreateRun(NewRunChange("gone")));
}

TEST_P(StoreTest, DeleteRunIsCompareAndSetAndChangesNothingOnError) {
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  auto stale = store_->DeleteRun("r1", 7, {"t", "me", "delete"});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), ErrorCode::kConflict);
  auto unknown = store_->DeleteRun("nope", 1, {"t", "me", "delete"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(store_->GetRun("r1"));
  EXPECT_EQ(CheckedTrace(*store_, "r1").size(), 1u);
  EXPECT_TRUE(store_->ListTombstones(10)->empty());
  EXPECT_EQ(store_->ListTombstones(0).error().code(), ErrorCode::kInvalidArgument);
}

// covers issue 22 §2 (the append-only guards hold outside the deletion route)
TEST_P(StoreTest, OrdinaryDeletesStillFailOnEveryGuardedTable) {
  auto tasks = OpenTaskStore(*store_, location_);
  ASSERT_TRUE(tasks) << tasks.error().message();
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r1")));
  AddGraph(**tasks, "r1");
  ASSERT_TRUE(store_->CreateRun(NewRunChange("r2")));
  ASSERT_TRUE(store_->DeleteRun("r2", 1, {"t", "me", "delete"}));
  tasks->reset();
  store_.reset();
  for (const char* sql : {
           "DELETE FROM runs WHERE run_id = 'r1'", "DELETE FROM artifacts WHERE run_id = 'r1'",
           "DELETE FROM trace_events WHERE run_id = 'r1'", "DELETE FROM blobs",
           "DELETE FROM graph_tasks WHERE run_id = 'r1'", "DELETE FROM graph_events WHERE run_id = 'r1'",
           "DELETE FROM graph_approvals", "DELETE FROM graph_stories",
           "DELETE FROM run_tombstones", "UPDATE run_tombstones SET deleted_by = 'x'",
           // a marker without a fresh tombstone of that run, or one reusing r2's
           "INSERT INTO run_deletion_marker (run_id, tombstone_seq) VALUES ('r1', 999)",
           "INSERT INTO run_deletion_marker (run_id, tombstone_seq) SELECT 'r1', max(seq) FROM run_tombstones",
       }) {
    EXPECT_NE(RawExec(sql), "") << sql;
  }
  if (GetParam() == Backend::kPostgres) {
    EXPECT_NE(RawExec("TRUNCATE run_tombstones"), "");
  }
  auto reopened = Open();
  ASSERT_TRUE(reopened);
  EXPECT_EQ(CheckedTrace(**reopened, "r1").size(), 1u);
  EXPECT_TRUE((*reopened)->GetArtifact("r1", "req"));
  EXPECT_EQ((*reopened)->ListTombstones(10)->size(), 1u);
}

// Opening a ledger that exists writes nothing: no commit (and no fsync) per
// start-up. `PRAGMA auto_vacuum` on a ledger with pages rewrote page 1 on
// every open until it was limited to empty files (issue 18 target 3).
TEST(SqliteStoreOpenTest, OpeningAnExistingLedgerWritesNothing) {
  testing::TempDir dir;
  std::string path = dir.File("ledger.sqlite3");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store) << store.error().message();
    ASSERT_TRUE((*store)->CreateRun(NewRunChange("r1")));
  }  // the last connection closes: SQLite checkpoints and removes the WAL
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store) << store.error().message();
  ASSERT_TRUE((*store)->GetRun("r1"));
  struct stat wal {};
  EXPECT_TRUE(::stat((path + "-wal").c_str(), &wal) != 0 || wal.st_size == 0)
      << "the open wrote " << wal.st_size << " bytes to the WAL";
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(*(*store)->AutoVacuumMode(), "incremental");
}

TEST(SqliteRetentionTest, NewLedgersReclaimDeletedPagesAndOldOnesConvertOnce) {
  testing::TempDir dir;
  auto page_count = [](SqliteStore& store, const std::string& path) {
    (void)store;
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &s, nullptr);
    sqlite3_step(s);
    int64_t pages = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return pages;
  };
  auto fill = [](SqliteStore& store, const std::string& id) {
    Change change = NewRunChange(id);
    for (int i = 0; i < 40; ++i) {
      change.artifacts.push_back(MakeArtifact({"big" + std::to_string(i), id, domain::ArtifactType::kContextDocument, "1.0", "w", "", {}, "none", "t"},
                                              Json{{"text", std::string(20000, static_cast<char>('a' + i % 26))},
                                                   {"id", id}, {"i", i}}));
    }
    ASSERT_TRUE(store.CreateRun(change));
  };
  std::string path = dir.File("new.sqlite3");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store) << store.error().message();
  EXPECT_EQ(*(*store)->AutoVacuumMode(), "incremental");
  fill(**store, "big");
  ASSERT_TRUE((*store)->ReclaimFreePages());
  int64_t full = page_count(**store, path);
  ASSERT_TRUE((*store)->DeleteRun("big", 1, {"t", "me", "delete"}));
  EXPECT_LT(page_count(**store, path), full / 4) << "the deleted run's pages went back to the file system";

  // A ledger created before incremental vacuum: pages are only reused until
  // it is converted (one VACUUM), after which deletions shrink it.
  std::string old_path = dir.File("old.sqlite3");
  {
    sqlite3* db = nullptr;
    sqlite3_open(old_path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA auto_vacuum=NONE; CREATE TABLE x (y); DROP TABLE x;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  auto old = SqliteStore::Open(old_path);
  ASSERT_TRUE(old) << old.error().message();
  EXPECT_EQ(*(*old)->AutoVacuumMode(), "none");
  fill(**old, "a");
  ASSERT_TRUE((*old)->DeleteRun("a", 1, {"t", "me", "delete"}));
  int64_t after_delete = page_count(**old, old_path);
  ASSERT_TRUE((*old)->ConvertToIncrementalVacuum());
  EXPECT_EQ(*(*old)->AutoVacuumMode(), "incremental");
  EXPECT_LT(page_count(**old, old_path), after_delete / 4);
  fill(**old, "b");
  int64_t refilled = page_count(**old, old_path);
  ASSERT_TRUE((*old)->DeleteRun("b", 1, {"t", "me", "delete"}));
  EXPECT_LT(page_count(**old, old_path), refilled / 4);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres, Backend::kSqliteOpenedInBackground),
                         [](const ::testing::TestParamInfo<Backend>& info) -> std::string {
                           switch (info.param) {
                             case Backend::kSqlite: return "Sqlite";
                             case Backend::kPostgres: return "Postgres";
                             case Backend::kSqliteOpenedInBackground: return "SqliteOpenedInBackground";
                           }
                           return "unknown";
                         });

// Connections cut by the server (a restart, a failover, an idle timeout) are
// replaced: a read reconnects, and a write whose connection died before
// COMMIT is retried once on a fresh one (its transaction died with it).
TEST(PgStoreTest, ReconnectsAfterTheServerDropsItsConnections) {
  TELIC_SHARED_POSTGRES_OR_SKIP(server);
  std::string app = "telic_t_" + RandomHex(6);
  auto store = OpenStore(server.NewSchemaUrl() + "&application_name=" + app);
  ASSERT_TRUE(store) << store.error().message();
  ASSERT_TRUE((*store)->CreateRun(NewRunChange("r1")));
  const std::string terminate =
      "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = '" + app + "'";
  ASSERT_EQ(testing::PostgresServer::Exec(server.Url(), terminate), "");
  auto run = (*store)->GetRun("r1");
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(testing::PostgresServer::Exec(server.Url(), terminate), "");
  auto pipelined = (*store)->GetRunAndArtifactsAfter("r1", 0);  // the pipelined read reconnects too
  ASSERT_TRUE(pipelined) << pipelined.error().message();
  EXPECT_EQ(pipelined->appended.size(), 1u);
  ASSERT_EQ(testing::PostgresServer::Exec(server.Url(), terminate), "");
  auto applied = (*store)->ApplyChange("r1", 1, AdvanceChange("r1", 1, "w"));
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_EQ(CheckedTrace(**store, "r1").size(), 3u);
}

// Statements with parameters run as named prepared statements, prepared once
// per connection (D-P15): after writes and reads the connection's session
// holds them, and more of the same calls prepare nothing new.
TEST(PgStoreTest, ReadsAndWritesRunAsStatementsPreparedOncePerConnection) {
  TELIC_SHARED_POSTGRES_OR_SKIP(server);
  auto store = PgStore::Open(server.NewSchemaUrl(), /*pool_size=*/1);  // one connection: one session to look at
  ASSERT_TRUE(store) << store.error().message();
  const std::string count = "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'telic\\_%'";
  auto calls = [&](const std::string& id) {
    ASSERT_TRUE((*store)->CreateRun(NewRunChange(id)));
    auto applied = (*store)->ApplyChange(id, 1, AdvanceChange(id, 1, "w-" + id));  // event ids are unique per ledger
    ASSERT_TRUE(applied) << applied.error().message();
    ASSERT_TRUE((*store)->GetRun(id));
    ASSERT_TRUE((*store)->GetRunAndArtifactsAfter(id, 0));
  };
  calls("r1");
  auto prepared = (*store)->QueryOnPooledConnection(count);
  ASSERT_TRUE(prepared) << prepared.error().message();
  EXPECT_GE(std::stoi(*prepared), 4) << "writes and reads should be prepared statements";
  calls("r2");
  calls("r3");
  EXPECT_EQ((*store)->QueryOnPooledConnection(count).value_or("?"), *prepared);
  EXPECT_EQ(CheckedTrace(**store, "r3").size(), 3u);
}

// A session that lost the statements telic prepared on it (a pooler in
// transaction mode, a DISCARD; here DEALLOCATE ALL) answers SQLSTATE 26000:
// the call is run again unnamed on that connection, which prepares nothing
// from then on. Each kind of call meets the lost statements first on its
// own connection: a write (a transaction), a pipelined read, a single read.
TEST(PgStoreTest, ASessionThatLostItsPreparedStatementsRunsThemUnnamed) {
  TELIC_SHARED_POSTGRES_OR_SKIP(server);
  const std::string url = server.NewSchemaUrl();
  {
    auto setup = PgStore::Open(url, 1);
    ASSERT_TRUE(setup) << setup.error().message();
    ASSERT_TRUE((*setup)->CreateRun(NewRunChange("r1")));
  }
  const std::string prepared = "SELECT count(*) FROM pg_prepared_statements";
  // A store of one connection that has prepared every statement `call`
  // uses, then lost them all.
  auto store_that_lost_its_statements = [&] {
    auto store = PgStore::Open(url, 1);
    EXPECT_TRUE(store) << store.error().message();
    EXPECT_TRUE((*store)->GetRun("r1"));
    EXPECT_TRUE((*store)->GetRunAndArtifactsAfter("r1", 0));
    EXPECT_TRUE((*store)->CreateRun(NewRunChange("warm-" + RandomHex(4))));
    EXPECT_NE((*store)->QueryOnPooledConnection(prepared).value_or("0"), "0");
    EXPECT_TRUE((*store)->QueryOnPooledConnection("DEALLOCATE ALL"));
    return std::move(*store);
  };
  {
    auto store = store_that_lost_its_statements();
    auto applied = store->ApplyChange("r1", 1, AdvanceChange("r1", 1, "w"));
    ASSERT_TRUE(applied) << applied.error().message();
    EXPECT_EQ(store->QueryOnPooledConnection(prepared).value_or("?"), "0");
  }
  {
    auto store = store_that_lost_its_statements();
    auto read = store->GetRunAndArtifactsAfter("r1", 0);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(read->run.version, 2);
    EXPECT_EQ(store->QueryOnPooledConnection(prepared).value_or("?"), "0");
  }
  {
    auto store = store_that_lost_its_statements();
    auto run = store->GetRun("r1");
    ASSERT_TRUE(run) << run.error().message();
    EXPECT_EQ(run->version, 2);
    ASSERT_TRUE(store->CreateRun(NewRunChange("r2")));
    EXPECT_EQ(store->QueryOnPooledConnection(prepared).value_or("?"), "0");
  }
  auto store = PgStore::Open(url, 1);
  ASSERT_TRUE(store);
  EXPECT_EQ(CheckedTrace(**store, "r1").size(), 3u);
}

// A run write sends its statements and COMMIT in one pipeline. A COMMIT
// that fails (here a deferred constraint trigger refuses the run at commit
// time, as a serialization failure, which telic retries anywhere before
// COMMIT) is reported, never sent again, and nothing of it is stored; the
// pooled connection stays usable.
TEST(PgStoreTest, AWriteWhoseCommitFailsIsReportedOnceAndStoresNothing) {
  TELIC_SHARED_POSTGRES_OR_SKIP(server);
  const std::string url = server.NewSchemaUrl();
  auto store = OpenStore(url);
  ASSERT_TRUE(store) << store.error().message();
  ASSERT_EQ(testing::PostgresServer::Exec(url,
                                          "CREATE SEQUENCE commit_attempts; "
                                          "CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS "
                                          "$$ BEGIN PERFORM nextval('commit_attempts'); "
                                          "RAISE EXCEPTION 'refused at commit' USING ERRCODE = '40001'; END $$; "
                                          "CREATE CONSTRAINT TRIGGER refuse_doomed AFTER INSERT ON runs "
                                          "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
                                          "WHEN (NEW.run_id = 'doomed') EXECUTE FUNCTION refuse_at_commit()"),
            "");
  auto doomed = (*store)->CreateRun(NewRunChange("doomed"));
  ASSERT_FALSE(doomed);
  EXPECT_NE(doomed.error().message().find("commit"), std::string::npos) << doomed.error().message();
  EXPECT_NE(doomed.error().message().find("refused at commit"), std::string::npos) << doomed.error().message();
  // One COMMIT reached the trigger: the write was not sent again.
  EXPECT_EQ(testing::PostgresServer::Exec(url,
                                          "DO $$ BEGIN IF (SELECT last_value FROM commit_attempts) <> 1 THEN "
                                          "RAISE EXCEPTION 'commit attempts: %', (SELECT last_value FROM "
                                          "commit_attempts); END IF; END $$"),
            "");
  EXPECT_EQ((*store)->GetRun("doomed").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(testing::PostgresServer::Exec(url, "DO $$ BEGIN IF EXISTS (SELECT 1 FROM artifacts WHERE run_id = "
                                               "'doomed') OR EXISTS (SELECT 1 FROM trace_events WHERE run_id = "
                                               "'doomed') THEN RAISE EXCEPTION 'rows stored'; END IF; END $$"),
            "");
  ASSERT_TRUE((*store)->CreateRun(NewRunChange("fine")));
  EXPECT_EQ(CheckedTrace(**store, "fine").size(), 1u);
}

TEST(PostgresUrlTest, RecognisesBothSchemesAndRedactsCredentials) {
  EXPECT_TRUE(IsPostgresUrl("postgresql://h/db"));
  EXPECT_TRUE(IsPostgresUrl("postgres://h/db"));
  EXPECT_FALSE(IsPostgresUrl("/var/lib/telic.sqlite3"));
  EXPECT_FALSE(IsPostgresUrl("postgresql:relative"));
  EXPECT_EQ(RedactPostgresUrl("postgresql://user:secret@db.example:5432/telic?sslmode=require"),
            "postgresql://db.example:5432/telic");
  EXPECT_EQ(RedactPostgresUrl("postgres:///telic?host=/tmp/s&password=x"), "postgres:///telic");
}

TEST(PostgresUrlTest, AnUnreachableServerIsUnavailable) {
  auto opened = OpenStore("postgresql:///telic?host=/nonexistent-telic-socket-dir&connect_timeout=2");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(opened.error().message().find("cannot connect to PostgreSQL"), std::string::npos);
}

}  // namespace
}  // namespace telic::store
