// Group commit in the SQLite store (issue 18 target 4): writers that arrive
// while a commit is under way share the next transaction and its one fsync;
// each change is still checked on its own, a failing one is undone alone, and
// no writer returns before the commit that holds its change.
// Behaviour only: commits are counted, nothing is timed.
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "testing/killed_writer.h"
#include "testing/store_changes.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

// Holds the first group's commit until `release` is called; counts groups
// and remembers their sizes.
class CommitGate {
 public:
  explicit CommitGate(SqliteStore& store) {
    store.set_before_commit_for_test([this](size_t size) {
      std::unique_lock lock(mutex_);
      sizes_.push_back(size);
      changed_.notify_all();
      if (sizes_.size() == 1) changed_.wait(lock, [&] { return released_; });
    });
  }
  void WaitForFirstGroup() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !sizes_.empty(); });
  }
  void Release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  std::vector<size_t> sizes() {
    std::lock_guard lock(mutex_);
    return sizes_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<size_t> sizes_;
  bool released_ = false;
};

// Open files of this process whose path names one of SQLite's temporary
// files ("etilqs_..."; unlinked as soon as opened, still open here).
std::vector<std::string> OpenSqliteTemporaryFiles() {
  std::vector<std::string> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    std::error_code unreadable;
    const std::string target = std::filesystem::read_symlink(entry.path(), unreadable).string();
    if (!unreadable && target.find("etilqs_") != std::string::npos) found.push_back(target);
  }
  return found;
}

// A change that rewrites many pages: a run with `count` artifacts of ~4 KiB.
Change LargeRunChange(const std::string& id, int count) {
  Change change = testing::MinimalRunChange(id);
  for (int i = 0; i < count; ++i) {
    const std::string artifact_id = fmt::format("{}-a{}", id, i);
    change.artifacts.push_back(MakeArtifact({artifact_id, id, domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none",
                                             change.run.created_at},
                                            Json{{"id", artifact_id}, {"text", std::string(4000, 'x')}}));
  }
  return change;
}

void WaitForQueued(SqliteStore& store, size_t n) {
  while (store.queued_writes() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(SqliteGroupCommitTest, WritersQueuedDuringACommitShareOneTransaction) {
  testing::TempDir dir;
  auto store = std::move(*SqliteStore::Open((dir.path() / "telic.sqlite3").string()));
  CommitGate gate(*store);
  const int64_t before = store->commit_count();

  std::vector<Status> results(16);
  std::vector<std::thread> writers;
  writers.emplace_back([&] { results[0] = store->CreateRun(testing::MinimalRunChange("run-00")); });
  gate.WaitForFirstGroup();  // run-00's group is held just before its COMMIT
  for (int i = 1; i < 16; ++i) {
    writers.emplace_back(
        [&, i] { results[i] = store->CreateRun(testing::MinimalRunChange(fmt::format("run-{:02d}", i))); });
  }
  WaitForQueued(*store, 15);
  EXPECT_EQ(store->commit_count(), before) << "nothing is committed while the first group is held";
  gate.Release();
  for (auto& writer : writers) writer.join();

  for (int i = 0; i < 16; ++i) EXPECT_TRUE(results[i].has_value()) << i << ": " << results[i].error().message();
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 15}));
  EXPECT_EQ(store->commit_count() - before, 2) << "16 acknowledged writes, two commits";
  // Joining the queue wakes nobody; the first group's end wakes the writer
  // at the head of the queue (who leads the 15), the second group's end its
  // 14 other writers: 15 wakeups, a few more only if the system wakes a
  // thread spuriously. Waking every waiter on each change cost ~130 here.
  EXPECT_GE(store->writer_wakeups(), 15);
  EXPECT_LE(store->writer_wakeups(), 20);
  for (int i = 0; i < 16; ++i) {
    auto run = store->GetRun(fmt::format("run-{:02d}", i));
    ASSERT_TRUE(run.has_value()) << i;
    auto trace = store->GetTrace(run->run_id, 0, 10);
    ASSERT_TRUE(trace.has_value());
    EXPECT_EQ(trace->events.size(), 1u);
  }
  // A fresh connection (another process would see the same) reads all 16.
  auto other = std::move(*SqliteStore::Open((dir.path() / "telic.sqlite3").string()));
  auto runs = other->ListRuns(100);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(runs->size(), 16u);
}

// Each change of a group runs in a savepoint, whose statement journal SQLite
// moves to a temporary file once it passes 64 KiB: a file created, written
// and unlinked on every group commit of real-sized changes. The ledger's
// connection keeps it in memory (temp_store=MEMORY).
TEST(SqliteGroupCommitTest, SavepointJournalsOfAGroupStayInMemory) {
  testing::TempDir dir;
  auto store = std::move(*SqliteStore::Open((dir.path() / "telic.sqlite3").string()));
  ASSERT_TRUE(store->CreateRun(LargeRunChange("before", 40)).has_value());
  // The first group is held before its COMMIT until the others are queued;
  // every group notes SQLite's open temporary files just before its COMMIT.
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<size_t> sizes;
  std::vector<std::vector<std::string>> open_at_commit;
  bool released = false;
  store->set_before_commit_for_test([&](size_t size) {
    std::unique_lock lock(mutex);
    sizes.push_back(size);
    open_at_commit.push_back(OpenSqliteTemporaryFiles());
    changed.notify_all();
    if (sizes.size() == 1) changed.wait(lock, [&] { return released; });
  });
  Status held;
  std::thread holder([&] { held = store->CreateRun(testing::MinimalRunChange("held")); });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return !sizes.empty(); });
  }
  std::vector<Status> results(4);
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&, i] { results[i] = store->CreateRun(LargeRunChange(fmt::format("large-{}", i), 40)); });
  }
  WaitForQueued(*store, 4);
  {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
  holder.join();
  for (auto& writer : writers) writer.join();
  ASSERT_TRUE(held.has_value());
  for (const Status& result : results) EXPECT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 4})) << "four large changes in one group, each in a savepoint";
  for (const auto& files : open_at_commit) EXPECT_TRUE(files.empty()) << files.front();
}

TEST(SqliteGroupCommitTest, AFailingChangeIsUndoneAloneAndTheRestOfItsGroupCommits) {
  testing::TempDir dir;
  auto store = std::move(*SqliteStore::Open((dir.path() / "telic.sqlite3").string()));
  Change taken = testing::MinimalRunChange("taken");
  taken.artifacts.push_back(MakeArtifact({"a1", "taken", domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none",
                                          taken.run.created_at},
                                         Json{{"id", "a1"}}));
  ASSERT_TRUE(store->CreateRun(taken).has_value());
  CommitGate gate(*store);

  // Queued behind a held group, in this order: a duplicate run; version
  // 1 -> 2 and 2 -> 3 of one run (the second sees the first, uncommitted);
  // a stale version; a change that updates the run (3 -> 4) and then fails
  // on a taken artifact id, so its savepoint must undo the update; then
  // 3 -> 4 again, which applies only if that undo happened; a fresh run.
  auto bump = [&](int64_t to) {
    Change change = testing::MinimalRunChange("taken");
    change.events[0].event_id = fmt::format("taken-bump-{}", to);
    change.run.version = to;
    change.run.phase = domain::Phase::kAgent1Frame;
    return change;
  };
  Change partial = bump(4);
  partial.artifacts.push_back(taken.artifacts[0]);

  Status held, duplicate, first, second, stale, undone, after_undo, fresh;
  std::thread holder([&] { held = store->CreateRun(testing::MinimalRunChange("held")); });
  gate.WaitForFirstGroup();
  std::vector<std::thread> writers;
  auto queue = [&](size_t n, auto body) {  // queued before the next one starts: a known order
    writers.emplace_back(body);
    WaitForQueued(*store, n);
  };
  queue(1, [&] { duplicate = store->CreateRun(testing::MinimalRunChange("taken")); });
  queue(2, [&] { first = store->ApplyChange("taken", 1, bump(2)); });
  queue(3, [&] { second = store->ApplyChange("taken", 2, bump(3)); });
  queue(4, [&] { stale = store->ApplyChange("taken", 1, bump(9)); });
  queue(5, [&] { undone = store->ApplyChange("taken", 3, partial); });
  queue(6, [&] { after_undo = store->ApplyChange("taken", 3, bump(4)); });
  queue(7, [&] { fresh = store->CreateRun(testing::MinimalRunChange("fresh")); });
  gate.Release();
  holder.join();
  for (auto& writer : writers) writer.join();

  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 7}));
  EXPECT_TRUE(held.has_value());
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_EQ(duplicate.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_TRUE(first.has_value());
  EXPECT_TRUE(second.has_value());
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code(), ErrorCode::kConflict);
  ASSERT_FALSE(undone.has_value());
  EXPECT_EQ(undone.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_TRUE(after_undo.has_value()) << after_undo.error().message();
  EXPECT_TRUE(fresh.has_value());

  EXPECT_EQ(store->GetRun("taken")->version, 4);
  auto trace = store->GetTrace("taken", 0, 10);
  ASSERT_TRUE(trace.has_value());
  std::vector<std::string> ids;
  for (const auto& event : trace->events) ids.push_back(event.event_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"taken-e1", "taken-bump-2", "taken-bump-3", "taken-bump-4"}));
  auto artifacts = store->ListArtifacts("taken");
  ASSERT_TRUE(artifacts.has_value());
  EXPECT_EQ(artifacts->size(), 1u);
  EXPECT_TRUE(store->GetRun("fresh").has_value());
  EXPECT_TRUE(store->CheckIntegrity().has_value());
}

// Reads have their own connection: while a group's COMMIT is held, a read
// returns at once (on this thread; it would hang here if it waited for the
// writer) and sees only committed state.
TEST(SqliteGroupCommitTest, ReadsDoNotWaitForACommitAndSeeOnlyCommittedState) {
  testing::TempDir dir;
  auto store = std::move(*SqliteStore::Open((dir.path() / "telic.sqlite3").string()));
  ASSERT_TRUE(store->CreateRun(testing::MinimalRunChange("committed")).has_value());
  CommitGate gate(*store);
  Status held;
  std::thread writer([&] { held = store->CreateRun(testing::MinimalRunChange("held")); });
  gate.WaitForFirstGroup();
  EXPECT_TRUE(store->GetRun("committed").has_value());
  auto unseen = store->GetRun("held");
  ASSERT_FALSE(unseen.has_value());
  EXPECT_EQ(unseen.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store->ListRuns(10)->size(), 1u);
  gate.Release();
  writer.join();
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(store->GetRun("held").has_value()) << "a write that returned is visible to the next read";
  EXPECT_EQ(store->GetTrace("held", 0, 10)->events.size(), 1u);
}

// A writer that is not its group's leader returns only after the group's
// COMMIT, even when it is woken while that COMMIT is held (here: by
// WakeWaitingWritersForTest, as a spurious wakeup would, while a later
// writer joins the queue). Before the fix, such a writer returned as soon
// as the leader had applied its change, so a read right after the
// acknowledgement found no run (HttpTransportTest saw "Run not found").
TEST(SqliteGroupCommitTest, NoWriterReturnsBeforeItsGroupCommitsEvenWhenWokenEarly) {
  testing::TempDir dir;
  auto store = std::move(*SqliteStore::Open((dir.path() / "telic.sqlite3").string()));
  std::mutex mutex;
  std::condition_variable changed;
  int groups = 0;
  bool release_first = false, release_second = false;
  store->set_before_commit_for_test([&](size_t) {
    std::unique_lock lock(mutex);
    int mine = ++groups;
    changed.notify_all();
    if (mine == 1) changed.wait(lock, [&] { return release_first; });
    if (mine == 2) changed.wait(lock, [&] { return release_second; });
  });
  auto wait_for_group = [&](int n) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return groups >= n; });
  };
  auto release = [&](bool& flag) {
    std::lock_guard lock(mutex);
    flag = true;
    changed.notify_all();
  };
  std::atomic<int> returned{0};
  std::vector<std::thread> writers;
  auto write = [&](const char* id) {
    writers.emplace_back([&, id] {
      EXPECT_TRUE(store->CreateRun(testing::MinimalRunChange(id)).has_value()) << id;
      returned++;
    });
  };
  write("first");
  wait_for_group(1);  // "first" is held before its COMMIT
  write("b");
  write("c");
  WaitForQueued(*store, 2);
  release(release_first);
  wait_for_group(2);  // b and c applied in one group, held before its COMMIT
  while (returned.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  write("late");  // joins the queue while b and c wait for their COMMIT
  WaitForQueued(*store, 1);
  store->WakeWaitingWritersForTest();  // b, c and late woken as if spuriously
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // room for a wrong early return
  EXPECT_EQ(returned.load(), 1) << "a writer of the held group returned before its COMMIT";
  EXPECT_FALSE(store->GetRun("b").has_value());
  EXPECT_FALSE(store->GetRun("c").has_value());
  release(release_second);
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(returned.load(), 4);
  for (const char* id : {"first", "b", "c", "late"}) EXPECT_TRUE(store->GetRun(id).has_value()) << id;
}

// The WAL is checkpointed by the store's background thread, not inside a
// writer's COMMIT (issue 18 target 2): after more than 4,000 WAL pages of
// writes (D-P13) a background checkpoint has run, and everything reads back.
// A new run with one Evidence artifact of `padding` bytes (a few pages).
Change PaddedRunChange(int i, size_t padding) {
  Change change = testing::MinimalRunChange(fmt::format("run-{:05d}", i));
  change.artifacts.push_back(MakeArtifact({"a", change.run.run_id, domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none",
                                           change.run.created_at},
                                          Json{{"padding", std::string(padding, 'x')}, {"n", i}}));
  return change;
}

TEST(SqliteGroupCommitTest, TheWalIsCheckpointedInTheBackground) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "telic.sqlite3").string();
  auto store = std::move(*SqliteStore::Open(path));
  EXPECT_EQ(store->background_checkpoints(), 0);
  int created = 0;
  for (; created < 2000 && store->background_checkpoints() == 0; ++created) {
    ASSERT_TRUE(store->CreateRun(PaddedRunChange(created, 3000)).has_value());
  }
  for (int i = 0; i < 500 && store->background_checkpoints() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(store->background_checkpoints(), 0) << "after " << created << " runs";
  auto runs = store->ListRuns(kMaxRunPageSize);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(runs->size(), static_cast<size_t>(created));
  EXPECT_TRUE(store->CheckIntegrity().has_value());
  store.reset();
  auto reopened = std::move(*SqliteStore::Open(path));
  EXPECT_EQ(reopened->ListRuns(kMaxRunPageSize)->size(), static_cast<size_t>(created));
}

// The WAL's checkpoint sequence number (its header, bytes 12-15, big-endian):
// SQLite adds one each time a writer reuses the WAL from its start.
uint32_t WalCheckpointSequence(const std::string& wal_path) {
  std::ifstream in(wal_path, std::ios::binary);
  unsigned char header[16] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  if (in.gcount() != static_cast<std::streamsize>(sizeof header)) return 0;
  return (uint32_t{header[12]} << 24) | (uint32_t{header[13]} << 16) | (uint32_t{header[14]} << 8) | header[15];
}

// The WAL file's size against what its reuse bounds it by: without reuse it
// holds every frame the store appended (a 24-byte header and a page each).
void ExpectTheWalWasReused(const SqliteStore& store, const std::string& wal_path) {
  const uint64_t appended = static_cast<uint64_t>(store.wal_frames_written()) * (4096 + 24);
  EXPECT_GE(store.wal_reuses(), 2);
  EXPECT_GE(WalCheckpointSequence(wal_path), 2u) << "the WAL was never reused from its start";
  EXPECT_LT(std::filesystem::file_size(wal_path), appended / 2) << "of " << appended << " bytes appended";
}


// D-P16: background checkpoints alone never leave the WAL complete while
// commits keep arriving, so SQLite never reused it and it grew by every
// commit's pages for the life of the process. Each cycle now ends with the
// writer copying the tail, and the WAL is reused from its start. (Without
// the tail: no cycle completed and the WAL held every frame, 25 -> 51 MB.)
TEST(SqliteGroupCommitTest, TheWalIsReusedFromItsStartAfterEachCheckpointCycle) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "telic.sqlite3").string();
  auto store = std::move(*SqliteStore::Open(path));
  store->set_checkpoint_cycle_pages_for_test(200);
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(store->CreateRun(PaddedRunChange(i, 3000)).has_value());
  ExpectTheWalWasReused(*store, path + "-wal");
  auto runs = store->ListRuns(kMaxRunPageSize);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(runs->size(), 600u);
  EXPECT_TRUE(store->CheckIntegrity().has_value());
  store.reset();
  auto reopened = std::move(*SqliteStore::Open(path));
  EXPECT_EQ(reopened->ListRuns(kMaxRunPageSize)->size(), 600u);
}

// The same with commits of ~300 frames each (a large artifact; a group of
// many writers is as large), more than the tail the writer copies by itself.
// Which step each commit takes is pinned, deterministically, by
// CheckpointCycleTest.ACommitLargerThanTheTailStillCopiesIt; here, on a real
// ledger, the WAL is reused and bounded.
TEST(SqliteGroupCommitTest, CommitsLargerThanTheTailStillLetTheWalBeReused) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "telic.sqlite3").string();
  auto store = std::move(*SqliteStore::Open(path));
  store->set_checkpoint_cycle_pages_for_test(1000);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(store->CreateRun(PaddedRunChange(i, 1200 * 1000)).has_value());
  ExpectTheWalWasReused(*store, path + "-wal");
  EXPECT_TRUE(store->CheckIntegrity().has_value());
}

// D-P16 under SIGKILL: a writer process with a short checkpoint cycle (a
// tail copied and the WAL reused every few commits) is killed at random
// moments; every run it acknowledged is there, whole, and the ledger passes
// SQLite's integrity check (a durability guard: it passed before D-P16 too).
TEST(SqliteGroupCommitTest, AWriterKilledAcrossCheckpointCyclesLosesNoAcknowledgedRun) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "telic.sqlite3").string();
  std::mt19937 rng(std::random_device{}());
  int next = 0;
  for (int round = 0; round < 4; ++round) {
    // Kill after 12-40 acknowledged runs (several cycles of 50 frames at ~6
    // frames a run), then 0-2 ms more, wherever the writer is by then.
    testing::KilledWriter writer = testing::RunAndKillWriter(
        [&](const std::function<bool(int64_t)>& report) {
          auto store = SqliteStore::Open(path);
          if (!store) ::_exit(3);
          (*store)->set_checkpoint_cycle_pages_for_test(50);
          for (int i = next;; ++i) {
            if (!(*store)->CreateRun(PaddedRunChange(i, 3000))) ::_exit(5);
            if (!report(i)) ::_exit(6);
          }
        },
        12 + static_cast<int>(rng() % 29), std::chrono::microseconds(rng() % 2000));
    ASSERT_TRUE(writer.started);
    ASSERT_TRUE(writer.killed) << "writer exited early with " << writer.exit_code;
    const int acknowledged = static_cast<int>(writer.last_acknowledged);
    auto reopened = SqliteStore::Open(path);
    ASSERT_TRUE(reopened) << reopened.error().message();
    for (int i = next; i <= acknowledged; ++i) {
      auto run = (*reopened)->GetRun(fmt::format("run-{:05d}", i));
      ASSERT_TRUE(run) << "acknowledged run " << i << " is missing";
      ASSERT_TRUE((*reopened)->GetArtifact(run->run_id, "a").has_value()) << i;
    }
    EXPECT_TRUE((*reopened)->CheckIntegrity().has_value());
    // The run in flight at the kill may have committed too: go on after it.
    next = acknowledged + 1;
    while ((*reopened)->GetRun(fmt::format("run-{:05d}", next))) ++next;
  }
}

}  // namespace
}  // namespace telic::store
