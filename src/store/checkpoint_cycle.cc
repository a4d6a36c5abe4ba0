#include "store/checkpoint_cycle.h"

namespace telic::store {

CheckpointCycle::Step CheckpointCycle::AfterCommit(int wal_pages, bool pass_pending, int copied) {
  // Frames only grow within one generation of the WAL: fewer than at the last
  // commit means that a writer (maybe another process's) reused it.
  const bool reused = wal_pages < last_wal_pages_;
  const int before_this_commit = reused ? 0 : last_wal_pages_;
  last_wal_pages_ = wal_pages;
  frames_written_ += wal_pages - before_this_commit;
  if (reused) {
    ++reuses_;
    requested_at_ = 0;
    in_cycle_ = false;
  }
  if (!in_cycle_) {
    if (wal_pages - requested_at_ < cycle_pages_) return Step::kNone;
    requested_at_ = wal_pages;
    in_cycle_ = true;
    passes_ = 1;
    return Step::kStartCycle;
  }
  if (pass_pending) return Step::kNone;
  // Only frames from before this commit count: the tail takes this commit's
  // own too, however many (a large group or artifact), or no commit larger
  // than tail_pages_ could ever end a cycle.
  if (before_this_commit - copied > tail_pages_ && passes_ < max_passes_) {
    ++passes_;
    return Step::kAskForPass;
  }
  return Step::kCopyTail;
}

}  // namespace telic::store
