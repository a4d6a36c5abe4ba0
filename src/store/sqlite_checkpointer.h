// The SQLite store's WAL checkpointer (see the class comment).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "store/checkpoint_cycle.h"

struct sqlite3;

namespace telic::store {

// The WAL checkpointer: the write connection's automatic checkpoint (which
// runs inside the COMMIT that crosses 1,000 WAL pages, with two fsyncs and
// the copy of every page) is replaced by PASSIVE checkpoints on a thread
// with its own connection, started when a commit leaves kCheckpointPages
// more frames in the WAL. A checkpoint only copies committed pages into the
// database file; durability of a commit is its WAL fsync, unchanged.
//
// A checkpoint cycle ends with the WAL complete, so that it is reused from
// its start (D-P16). SQLite reuses the WAL only when a write transaction
// begins with every frame already copied; a background pass never leaves it
// so while commits keep arriving (they append during the pass), and the WAL
// would grow by every commit's pages for the life of the process. So the
// cycle goes on after its first pass: further background passes while the
// frames not yet copied are more than kTailPages, then the writer copies that
// last tail itself, in the commit that finds it small (as SQLite's automatic
// checkpoint does, but for at most ~kTailPages pages instead of 1,000).
class Checkpointer {
 public:
  // Four times SQLite's default (D-P13): a page that several commits rewrite
  // (an index's last leaf, a run's random-keyed index leaves) is copied to
  // the database once per checkpoint, so fewer checkpoints copy fewer pages.
  // The WAL file then holds up to ~16 MiB between checkpoints.
  static constexpr int kCheckpointPages = 4000;
  // The largest tail the writer copies in its commit (about a dozen
  // start_runs' pages; a few milliseconds, once per cycle).
  static constexpr int kTailPages = 256;
  // Background passes per cycle before the writer copies whatever is left,
  // so that the WAL is bounded even when writes outrun the passes.
  static constexpr int kMaxPassesPerCycle = 4;

  // Replaces `writer`'s automatic checkpoint. The checkpointer's connection
  // and thread are started by the first commit that asks for a checkpoint, so
  // a process that never fills the WAL (a short command, a server that only
  // reads) opens neither. When that connection cannot be opened, the writer
  // checkpoints itself in its commit, as SQLite's automatic checkpoint does.
  // `cycle_pages` replaces kCheckpointPages (tests, to see many cycles).
  static std::unique_ptr<Checkpointer> Install(const std::string& path, sqlite3* writer,
                                               int cycle_pages = kCheckpointPages);
  ~Checkpointer();
  int64_t runs() const { return runs_.load(); }
  // CheckpointCycle's counters (tests; the writer updates them under the store's mutex).
  int64_t wal_reuses() const { return cycle_.reuses(); }
  int64_t frames_written() const { return cycle_.frames_written(); }

 private:
  Checkpointer(std::string path, sqlite3* writer, int cycle_pages)
      : path_(std::move(path)), writer_(writer), cycle_(cycle_pages, kTailPages, kMaxPassesPerCycle) {}

  // On the writer's thread (from OnCommit): opens the checkpointer's
  // connection and starts its thread. False when the connection cannot be opened.
  bool Start();

  // sqlite3_wal_hook: called on the writer's thread after each commit (under
  // the store's connection mutex, so no other write of this process runs).
  // `wal_pages` counts every frame in the WAL, copied or not, until a writer
  // reuses the WAL after a complete checkpoint. What to do after each commit
  // is CheckpointCycle's decision; this carries it out.
  static int OnCommit(void* self, sqlite3* writer, const char* schema, int wal_pages);
  void AfterCommit(sqlite3* writer, const char* schema, int wal_pages);
  void RequestPass();
  void Run();

  std::string path_;
  sqlite3* db_ = nullptr;  // opened by Start()
  sqlite3* writer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool due_ = false;        // a background pass is asked for (under mutex_)
  bool passing_ = false;    // a background pass is running (under mutex_)
  int copied_ = 0;          // frames the last pass or tail left copied (under mutex_)
  bool failed_ = false;     // writer side only: Start() could not open the connection
  CheckpointCycle cycle_;   // writer side only
  std::atomic<int64_t> runs_{0};
  std::thread thread_;  // started by Start() (writer side only)
};

}  // namespace telic::store
