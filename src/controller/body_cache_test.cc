// BodyCache over a real SQLite store: a digest is read and parsed once, the
// budget holds, and what is handed out is the stored body.
#include "controller/body_cache.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/records.h"
#include "store/sqlite_store.h"
#include "testing/store_changes.h"
#include "testing/temp_dir.h"

namespace telic::controller {
namespace {

class BodyCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3"))); }

  // A run "run-1" holding one artifact per body, ids a0, a1, ...; returns
  // their metadata as the store lists it.
  std::vector<store::ArtifactMeta> StoreBodies(const std::vector<Json>& bodies) {
    store::Change change = testing::MinimalRunChange("run-1");
    for (size_t i = 0; i < bodies.size(); ++i) {
      change.artifacts.push_back(store::MakeArtifact(
          {"a" + std::to_string(i), "run-1", domain::ArtifactType::kEvidence, "1.0", "host", "", {}, "none", change.run.created_at},
          bodies[i]));
    }
    EXPECT_TRUE(store_->CreateRun(change));
    return *store_->ListArtifacts("run-1");
  }

  static Json Body(int i, size_t padding = 0) {
    return Json{{"id", "body-" + std::to_string(i)}, {"content", std::string(padding, 'x')}};
  }

  testing::TempDir dir_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST_F(BodyCacheTest, ReadsAndParsesEachDigestOnce) {
  auto metas = StoreBodies({Body(0), Body(1)});
  BodyCache cache;
  auto first = cache.Load(*store_, metas[0]);
  auto again = cache.Load(*store_, metas[0]);
  auto other = cache.Load(*store_, metas[1]);
  ASSERT_TRUE(first && again && other);
  EXPECT_EQ(first->get(), again->get());  // the kept tree itself
  EXPECT_EQ(**first, Body(0));
  EXPECT_EQ(**other, Body(1));
  EXPECT_EQ(cache.loads_from_store(), 2u);
}

TEST_F(BodyCacheTest, ArtifactsWithTheSameBodyShareOneEntry) {
  auto metas = StoreBodies({Body(7), Body(7)});
  ASSERT_EQ(metas[0].sha256, metas[1].sha256);
  BodyCache cache;
  ASSERT_TRUE(cache.Load(*store_, metas[0]));
  auto second = cache.Load(*store_, metas[1]);
  ASSERT_TRUE(second);
  EXPECT_EQ(**second, Body(7));
  EXPECT_EQ(cache.loads_from_store(), 1u);
}

TEST_F(BodyCacheTest, KeepsWithinItsBudgetAndDropsTheLeastRecentlyUsed) {
  std::vector<Json> bodies;
  for (int i = 0; i < 6; ++i) bodies.push_back(Body(i, 200));
  auto metas = StoreBodies(bodies);
  const size_t one = CanonicalJson(bodies[0]).size();
  BodyCache cache(4 * one + one / 2);  // room for four, not five
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(cache.Load(*store_, metas[static_cast<size_t>(i)]));
  ASSERT_TRUE(cache.Load(*store_, metas[0]));  // 0 is now the most recent; 1 the least
  EXPECT_EQ(cache.loads_from_store(), 4u);
  ASSERT_TRUE(cache.Load(*store_, metas[4]));  // evicts 1
  EXPECT_LE(cache.kept_bytes(), 4 * one + one / 2);
  ASSERT_TRUE(cache.Load(*store_, metas[0]));
  EXPECT_EQ(cache.loads_from_store(), 5u);  // 0 was kept
  auto reread = cache.Load(*store_, metas[1]);
  ASSERT_TRUE(reread);
  EXPECT_EQ(**reread, bodies[1]);
  EXPECT_EQ(cache.loads_from_store(), 6u);  // 1 had been dropped
}

TEST_F(BodyCacheTest, ABodyLargerThanAQuarterOfTheBudgetIsServedButNotKept) {
  auto metas = StoreBodies({Body(0, 2000)});
  BodyCache cache(4000);
  auto first = cache.Load(*store_, metas[0]);
  auto second = cache.Load(*store_, metas[0]);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(**second, Body(0, 2000));
  EXPECT_EQ(cache.loads_from_store(), 2u);
  EXPECT_EQ(cache.kept_bytes(), 0u);
}

TEST_F(BodyCacheTest, ABodyPutFromMemoryIsServedWithoutAStoreRead) {
  auto metas = StoreBodies({Body(0)});
  BodyCache cache;
  auto tree = std::make_shared<const Json>(Body(0));
  cache.Put(metas[0].sha256, tree, CanonicalJson(Body(0)).size());
  auto loaded = cache.Load(*store_, metas[0]);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->get(), tree.get());
  EXPECT_EQ(cache.loads_from_store(), 0u);
}

TEST_F(BodyCacheTest, ClearDropsEveryKeptBody) {
  auto metas = StoreBodies({Body(0), Body(1)});
  BodyCache cache;
  ASSERT_TRUE(cache.Load(*store_, metas[0]) && cache.Load(*store_, metas[1]));
  cache.Clear();
  EXPECT_EQ(cache.kept_bytes(), 0u);
  ASSERT_TRUE(cache.Load(*store_, metas[0]));
  EXPECT_EQ(cache.loads_from_store(), 3u);
}

TEST_F(BodyCacheTest, AnArtifactTheStoreDoesNotHoldIsNotFound) {
  StoreBodies({Body(0)});
  store::ArtifactMeta missing;
  missing.run_id = "run-1";
  missing.id = "nope";
  missing.sha256 = "sha256:" + std::string(64, '0');
  BodyCache cache;
  auto loaded = cache.Load(*store_, missing);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code(), ErrorCode::kNotFound);
}

TEST_F(BodyCacheTest, ConcurrentLoadsAllSeeTheStoredBodies) {
  std::vector<Json> bodies;
  for (int i = 0; i < 16; ++i) bodies.push_back(Body(i, 100));
  auto metas = StoreBodies(bodies);
  BodyCache cache(8 * (CanonicalJson(bodies[0]).size() + 1));  // half of them fit: eviction under contention
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (size_t t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < 400; ++i) {
        size_t k = (i * 7 + t) % metas.size();
        auto loaded = cache.Load(*store_, metas[k]);
        if (!loaded || **loaded != bodies[k]) ++wrong[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int count : wrong) EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace telic::controller
