// CheckpointCycle (D-P16) driven commit by commit, with the background passes
// and the tail simulated: which step each commit takes, deterministically.
#include "store/checkpoint_cycle.h"

#include <vector>

#include <gtest/gtest.h>

namespace telic::store {
namespace {

using Step = CheckpointCycle::Step;

// A WAL as the cycle sees it: frames appended by commits, frames copied by
// background passes (each copying everything that was there when it began,
// `copy_rate` frames in the time of one commit, so it ends 1 + n / copy_rate
// commits later) and by tails (which copy everything), and SQLite's reuse
// (the next write after every frame was copied starts again from frame 0).
class SimulatedWal {
 public:
  // `passes_end_between_commits`: a pass that ends does so before the next
  // commit begins, so it can leave the WAL complete and SQLite reuses it in
  // the middle of a cycle (else it ends while that commit appends).
  SimulatedWal(int cycle_pages, int copy_rate, bool passes_end_between_commits = false)
      : cycle_(cycle_pages, 256, 4), copy_rate_(copy_rate), between_(passes_end_between_commits) {}

  // One commit of `frames` frames; returns the step it took.
  Step Commit(int frames) {
    if (between_) FinishPass();
    if (copied_ == frames_ && frames_ > 0) frames_ = copied_ = 0;  // SQLite reuses the WAL
    frames_ += frames;
    if (!between_) FinishPass();
    Step step = cycle_.AfterCommit(frames_, pass_left_ > 0, copied_);
    steps_.push_back(step);
    if (step == Step::kStartCycle) copied_ = 0;
    if (step == Step::kStartCycle || step == Step::kAskForPass) {
      pass_target_ = frames_;  // what is there when the pass begins
      pass_left_ = 1 + (frames_ - copied_) / copy_rate_;
    }
    if (step == Step::kCopyTail) {
      copied_ = frames_;
      cycle_.TailCopied(true);
    }
    peak_ = frames_ > peak_ ? frames_ : peak_;
    return step;
  }
  void FinishPass() {
    if (pass_left_ > 0 && --pass_left_ == 0) copied_ = pass_target_;
  }
  int Count(Step step) const {
    int n = 0;
    for (Step s : steps_) n += s == step;
    return n;
  }
  const CheckpointCycle& cycle() const { return cycle_; }
  const std::vector<Step>& steps() const { return steps_; }
  int peak() const { return peak_; }

 private:
  CheckpointCycle cycle_;
  int copy_rate_;
  bool between_;
  int frames_ = 0, copied_ = 0, pass_target_ = 0, pass_left_ = 0, peak_ = 0;
  std::vector<Step> steps_;
};

TEST(CheckpointCycleTest, NothingHappensBeforeACycleIsDue) {
  CheckpointCycle cycle(1000, 256, 4);
  EXPECT_EQ(cycle.AfterCommit(21, false, 0), Step::kNone);
  EXPECT_EQ(cycle.AfterCommit(999, false, 0), Step::kNone);
  EXPECT_EQ(cycle.AfterCommit(1000, false, 0), Step::kStartCycle);
  EXPECT_EQ(cycle.frames_written(), 1000);
}

TEST(CheckpointCycleTest, APendingPassIsWaitedFor) {
  CheckpointCycle cycle(100, 256, 4);
  ASSERT_EQ(cycle.AfterCommit(100, false, 0), Step::kStartCycle);
  EXPECT_EQ(cycle.AfterCommit(121, true, 0), Step::kNone);
  EXPECT_EQ(cycle.AfterCommit(142, true, 0), Step::kNone);
  // The pass copied the first 100: 21 + 21 from before this commit are left.
  EXPECT_EQ(cycle.AfterCommit(163, false, 100), Step::kCopyTail);
}

TEST(CheckpointCycleTest, MorePassesWhileMoreThanTheTailIsLeft) {
  CheckpointCycle cycle(1000, 256, 4);
  ASSERT_EQ(cycle.AfterCommit(1000, false, 0), Step::kStartCycle);
  EXPECT_EQ(cycle.AfterCommit(1400, true, 0), Step::kNone);            // the first pass runs
  EXPECT_EQ(cycle.AfterCommit(1420, false, 1000), Step::kAskForPass);  // 400 left from before this commit
  EXPECT_EQ(cycle.AfterCommit(1440, false, 1420), Step::kCopyTail);    // none left from before
}

// Passes asked for in each cycle after its first, up to each tail.
std::vector<int> PassesBeforeEachTail(const std::vector<Step>& steps) {
  std::vector<int> passes;
  int asked = 0;
  for (Step step : steps) {
    if (step == Step::kStartCycle) asked = 0;
    if (step == Step::kAskForPass) ++asked;
    if (step == Step::kCopyTail) passes.push_back(asked);
  }
  return passes;
}

// Found in review: with the commit's own frames counted, a commit larger than
// the tail could never copy it; no cycle ended (before the cap of four
// passes, which came with the fix).
TEST(CheckpointCycleTest, ACommitLargerThanTheTailStillCopiesIt) {
  SimulatedWal wal(1000, 1000);  // a pass copies 1,000 frames in the time of one 300-frame commit
  for (int i = 0; i < 60; ++i) wal.Commit(300);
  const std::vector<int> passes = PassesBeforeEachTail(wal.steps());
  ASSERT_GE(passes.size(), 5u);
  for (int asked : passes) EXPECT_LE(asked, 1) << "a tail waited for passes that a large commit never ends";
  EXPECT_EQ(wal.cycle().reuses(), static_cast<int64_t>(passes.size()));
}

TEST(CheckpointCycleTest, SmallCommitsEndEachCycleWithATail) {
  SimulatedWal wal(4000, 200);  // copying is ~10x as fast as appending 21-frame commits
  for (int i = 0; i < 2000; ++i) wal.Commit(21);
  const std::vector<int> passes = PassesBeforeEachTail(wal.steps());
  EXPECT_GE(passes.size(), 8u);
  for (int asked : passes) EXPECT_LE(asked, 1);
  EXPECT_EQ(wal.cycle().reuses(), static_cast<int64_t>(passes.size()));
  EXPECT_LE(wal.peak(), 4000 + 2 * 21 * 21 + 256);
  EXPECT_EQ(wal.cycle().frames_written(), 2000 * 21);
}

// Writes that outrun every pass (each pass takes so long that more than the
// tail piles up meanwhile): after four passes the writer copies the rest.
TEST(CheckpointCycleTest, WritesThatOutrunThePassesEndTheCycleAfterFourPasses) {
  SimulatedWal wal(1000, 40);  // 50-frame commits arrive faster than a pass copies
  for (int i = 0; i < 1200; ++i) wal.Commit(50);
  const std::vector<int> passes = PassesBeforeEachTail(wal.steps());
  ASSERT_GE(passes.size(), 3u);
  for (int asked : passes) EXPECT_EQ(asked, 3) << "the tail came before the fourth pass";
  EXPECT_EQ(wal.cycle().reuses(), static_cast<int64_t>(passes.size()));
  // Bounded: each of the four passes takes 1 + its backlog / 40 commits of
  // 50 frames, so the WAL at most about quadruples a pass's backlog and the
  // peak stays near 9,000 frames (without the cap it grows without end).
  EXPECT_LE(wal.peak(), 10000);
}

// A pass that ends between two commits and leaves every frame copied lets
// SQLite reuse the WAL in the middle of a cycle, with no tail: the cycle
// starts again from the reused WAL, and what the last pass copied does not
// carry over into the next cycle's decisions.
TEST(CheckpointCycleTest, APassThatCompletesTheWalLetsItBeReusedMidCycle) {
  SimulatedWal wal(1000, 100000, /*passes_end_between_commits=*/true);
  for (int i = 0; i < 500; ++i) wal.Commit(21);
  EXPECT_GE(wal.cycle().reuses(), 8);
  EXPECT_EQ(wal.Count(Step::kCopyTail), 0);
  EXPECT_LE(wal.peak(), 1000 + 2 * 21);
  EXPECT_EQ(wal.cycle().frames_written(), 500 * 21);
}

TEST(CheckpointCycleTest, AnIncompleteTailIsCopiedAgainAtTheNextCommit) {
  CheckpointCycle cycle(100, 256, 4);
  ASSERT_EQ(cycle.AfterCommit(100, false, 0), Step::kStartCycle);
  ASSERT_EQ(cycle.AfterCommit(121, false, 100), Step::kCopyTail);
  cycle.TailCopied(false);  // a reader held frames back
  EXPECT_EQ(cycle.AfterCommit(142, false, 110), Step::kCopyTail);
  cycle.TailCopied(true);
  EXPECT_EQ(cycle.AfterCommit(163, false, 142), Step::kNone);  // the cycle ended; the next is 100 frames on
}

TEST(CheckpointCycleTest, AReusedWalIsCountedAndStartsTheCountAgain) {
  CheckpointCycle cycle(100, 256, 4);
  ASSERT_EQ(cycle.AfterCommit(100, false, 0), Step::kStartCycle);
  EXPECT_EQ(cycle.AfterCommit(21, false, 100), Step::kNone);  // reused (fewer frames): no cycle due
  EXPECT_EQ(cycle.reuses(), 1);
  EXPECT_EQ(cycle.AfterCommit(99, false, 0), Step::kNone);
  EXPECT_EQ(cycle.AfterCommit(100, false, 0), Step::kStartCycle);
  EXPECT_EQ(cycle.frames_written(), 100 + 21 + 78 + 1);
}

}  // namespace
}  // namespace telic::store
