// The decisions of a SQLite WAL checkpoint cycle (D-P16), apart from SQLite
// and threads so that tests can drive them commit by commit.
//
// SQLite reuses the WAL from its start only when a write begins with every
// frame already copied into the database file. A cycle starts every
// `cycle_pages` frames; background passes copy the bulk; once at most
// `tail_pages` frames from before the current commit are left (or after
// `max_passes` passes, when writes outran them), the committing writer copies
// what is left, its own commit's frames included, so that the WAL is complete
// and the next write reuses it.
#pragma once

#include <cstdint>

namespace telic::store {

class CheckpointCycle {
 public:
  enum class Step {
    kNone,        // nothing to do after this commit
    kStartCycle,  // a new cycle: forget what was copied, ask for a background pass
    kAskForPass,  // ask for another background pass
    kCopyTail,    // copy what is left, in this commit; then call TailCopied
  };

  CheckpointCycle(int cycle_pages, int tail_pages, int max_passes)
      : cycle_pages_(cycle_pages), tail_pages_(tail_pages), max_passes_(max_passes) {}

  // After a commit that left `wal_pages` frames in the WAL (SQLite's WAL
  // hook). `pass_pending`: a background pass is asked for or running.
  // `copied`: the frames the last pass or tail of this cycle left copied.
  Step AfterCommit(int wal_pages, bool pass_pending, int copied);
  // The tail ran; `every_frame` when it left every frame copied, which ends
  // the cycle (a reader of an older snapshot may hold frames back: then the
  // next commit copies the tail again).
  void TailCopied(bool every_frame) {
    if (every_frame) in_cycle_ = false;
  }

  // Commits that found the WAL reused from its start since the previous one.
  int64_t reuses() const { return reuses_; }
  // Frames appended by the commits seen, over every reuse of the WAL.
  int64_t frames_written() const { return frames_written_; }

 private:
  const int cycle_pages_;
  const int tail_pages_;
  const int max_passes_;
  bool in_cycle_ = false;  // a cycle started and its tail is not copied yet
  int passes_ = 0;         // background passes the current cycle asked for
  int requested_at_ = 0;   // WAL frames when the current or last cycle started
  int last_wal_pages_ = 0; // WAL frames after the previous commit
  int64_t reuses_ = 0;
  int64_t frames_written_ = 0;
};

}  // namespace telic::store
