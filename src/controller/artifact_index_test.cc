// ArtifactIndexCache over a real SQLite store: the cached index of a run is
// extended by exactly what was appended since, including appends made by
// another connection (another instance), and never loses or repeats one.
#include "controller/artifact_index.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::controller {
namespace {

store::StoredArtifact Evidence(const std::string& run_id, int i) {
  std::string id = fmt::format("evidence-{}", i);
  Json body = {{"id", id}, {"runId", run_id}, {"n", i}};
  return store::MakeArtifact({id, run_id, i % 2 ? domain::ArtifactType::kEvidence : domain::ArtifactType::kWorkResult, "1.0", "executor", "", {}, "none",
                              "2026-12-02T00:00:00.000Z"},
                             body);
}

store::RunRecord RunningRun(const std::string& run_id) {
  store::RunRecord run;
  run.run_id = run_id;
  run.requested_mode = domain::Mode::kReportOnly;
  run.status = domain::RunStatus::kRunning;
  run.phase = domain::Phase::kAgent1Frame;
  run.version = 1;
  run.created_at = run.updated_at = "2026-12-02T00:00:00.000Z";
  return run;
}

TEST(ArtifactIndexCacheTest, ExtendsByAppendsFromAnyConnection) {
  testing::TempDir dir;
  auto path = dir.File("telic.sqlite3");
  auto mine = std::move(*store::SqliteStore::Open(path));
  auto other = std::move(*store::SqliteStore::Open(path));  // a second instance on the same ledger
  store::Change create;
  create.run = RunningRun("r1");
  create.artifacts = {Evidence("r1", 0)};
  ASSERT_TRUE(mine->CreateRun(create));
  ArtifactIndexCache cache(*mine);
  auto first = cache.Get("r1");
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_EQ((*first)->list().size(), 1u);

  int64_t version = 1;
  for (int i = 1; i <= 5; ++i) {
    store::Change change;
    change.run = RunningRun("r1");
    change.run.version = version + 1;
    change.artifacts = {Evidence("r1", i)};
    ASSERT_TRUE(other->ApplyChange("r1", version, change));
    ++version;
  }
  auto second = cache.Get("r1");
  ASSERT_TRUE(second);
  ASSERT_EQ((*second)->list().size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*second)->list()[static_cast<size_t>(i)].id, fmt::format("evidence-{}", i));
  EXPECT_EQ((*second)->OfType("Evidence").size(), 3u);
  EXPECT_EQ((*second)->OfType("WorkResult").size(), 3u);
  ASSERT_NE((*second)->Find("evidence-4"), nullptr);
  EXPECT_EQ(domain::Name((*second)->Find("evidence-4")->type), "WorkResult");
  EXPECT_EQ((*second)->Find("nope"), nullptr);
  // The first index handed out is unchanged (readers keep a consistent view).
  EXPECT_EQ((*first)->list().size(), 1u);
  // Nothing new: the same index is returned, no copy.
  auto third = cache.Get("r1");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->get(), second->get());
}

// Appends one artifact per change to r1, from `first` to `last`.
void AppendEvidence(store::Store& store, int first, int last, int64_t& version) {
  for (int i = first; i <= last; ++i) {
    store::Change change;
    change.run = RunningRun("r1");
    change.run.version = version + 1;
    change.artifacts = {Evidence("r1", i)};
    ASSERT_TRUE(store.ApplyChange("r1", version, change));
    ++version;
  }
}

// A ledger in `dir` holding run r1 with artifact evidence-0.
std::unique_ptr<store::SqliteStore> LedgerWithRunR1(testing::TempDir& dir) {
  auto store = std::move(*store::SqliteStore::Open(dir.File("telic.sqlite3")));
  store::Change create;
  create.run = RunningRun("r1");
  create.artifacts = {Evidence("r1", 0)};
  EXPECT_TRUE(store->CreateRun(create));
  return store;
}

// An index only the cache holds takes appends in place (no copy of the whole
// index per appended artifact); one a reader holds is copied, and the
// reader's view stays as it was.
TEST(ArtifactIndexCacheTest, AppendsInPlaceOnlyToAnIndexNoReaderHolds) {
  testing::TempDir dir;
  auto store = LedgerWithRunR1(dir);
  ArtifactIndexCache cache(*store);
  const ArtifactIndex* first = cache.Get("r1")->get();  // not held
  int64_t version = 1;
  AppendEvidence(*store, 1, 2, version);
  auto held = cache.Get("r1");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->get(), first);  // the same index, extended
  ASSERT_EQ((*held)->list().size(), 3u);
  EXPECT_EQ((*held)->OfType("Evidence").size(), 1u);
  EXPECT_EQ((*held)->OfType("WorkResult").size(), 2u);
  ASSERT_NE((*held)->Find("evidence-2"), nullptr);
  EXPECT_EQ((*held)->last_seq(), (*held)->list().back().seq);

  AppendEvidence(*store, 3, 3, version);
  auto next = cache.Get("r1");  // `held` is held: copied
  ASSERT_TRUE(next);
  EXPECT_NE(next->get(), held->get());
  EXPECT_EQ((*held)->list().size(), 3u);
  EXPECT_EQ((*held)->Find("evidence-3"), nullptr);
  EXPECT_EQ((*next)->list().size(), 4u);
}

// Readers scanning the index while appends arrive always see a consistent
// prefix: ids in order, each one once (run under the sanitizers in CI).
TEST(ArtifactIndexCacheTest, ReadersSeeConsistentIndexesWhileAppendsArrive) {
  testing::TempDir dir;
  auto store = LedgerWithRunR1(dir);
  ArtifactIndexCache cache(*store);
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done) {
        auto index = cache.Get("r1");
        if (!index) {
          ++bad;
          continue;
        }
        const auto& list = (*index)->list();
        for (size_t i = 0; i < list.size(); ++i) {
          if (list[i].id != fmt::format("evidence-{}", i) || (*index)->Find(list[i].id) != &list[i]) ++bad;
        }
      }
    });
  }
  int64_t version = 1;
  for (int i = 1; i <= 150; ++i) {
    AppendEvidence(*store, i, i, version);
    ASSERT_TRUE(cache.Get("r1"));
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ((*cache.Get("r1"))->list().size(), 151u);
}

TEST(ArtifactIndexCacheTest, EvictsTheLeastRecentlyUsedRunAndRereadsIt) {
  testing::TempDir dir;
  auto store = std::move(*store::SqliteStore::Open(dir.File("telic.sqlite3")));
  ArtifactIndexCache cache(*store, 2);
  for (const char* id : {"a", "b", "c"}) {
    store::Change create;
    create.run = RunningRun(id);
    create.artifacts = {Evidence(id, 1)};
    ASSERT_TRUE(store->CreateRun(create));
    ASSERT_TRUE(cache.Get(id));
  }
  auto again = cache.Get("a");  // evicted, read again in full
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)->list().size(), 1u);
  EXPECT_EQ((*again)->list()[0].run_id, "a");
}

}  // namespace
}  // namespace telic::controller
