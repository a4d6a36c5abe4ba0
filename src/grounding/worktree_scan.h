// The work-tree column of `telic`'s git status (grounding/worktree_status.h):
// a pool of directory workers lists the work tree, matches each folder's
// names against the (sorted) index, stats tracked files a folder at a time
// (grounding/stat_batch.h), hashes only files whose stat data cannot vouch
// for them, checks submodules' checked-out commits, and lists untracked
// files that no ignore rule matches.
#pragma once

#include <sys/stat.h>

#include <climits>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "grounding/git_index.h"
#include "grounding/git_repo.h"
#include "grounding/stat_batch.h"
#include "grounding/worktree_status.h"

namespace telic::grounding::scan {

constexpr uint32_t kTypeMask = 0170000;
constexpr uint32_t kRegular = 0100000;
constexpr uint32_t kSymlink = 0120000;
constexpr uint32_t kGitlink = 0160000;
constexpr size_t kNone = SIZE_MAX;

// Scanner entries are IndexEntry values with conflict stages folded into
// one entry per path (stage != 0 then marks the conflict).
using Entry = IndexEntry;

struct Settings {
  bool filemode = true;          // core.filemode: the executable bit counts
  bool trustctime = true;        // core.trustctime
  IndexTime index_mtime;         // when the index file was written
};

struct DirTask {
  std::string rel;        // "" for the root, else "a/b/" (with the slash)
  size_t lo = 0, hi = 0;  // the index entries under `rel` (empty: an untracked folder)
};

// Where a directory entry's path sits in the index.
struct Match {
  size_t exact = kNone;   // the entry with exactly this path
  size_t sub_lo = 0;      // entries under path + "/"
  size_t sub_hi = 0;
};

// Lists the work tree with a pool of directory workers (see the top of this file).
class Scanner {
 public:
  Scanner(const std::string& root, const IndexFile& index, const Settings& settings, bool use_io_uring)
      : root_(root), index_(index), settings_(settings), use_io_uring_(use_io_uring), seen_(index.size(), 0) {}

  ~Scanner() { Join(); }

  void Start(unsigned threads);

  void Join();

  // After Join: work-tree records of tracked paths (unsorted).
  std::vector<StatusRecord> TakeRecords();
  std::vector<std::string> TakeUntracked();
  // After Join: whether some worker's stats went through io_uring.
  bool StatsBatched() const;
  // After Join: whether the work tree has a file (or submodule folder) for entry i.
  bool Seen(size_t i) const { return seen_[i] != 0; }

 private:
  // A tracked file of the folder being scanned, waiting for its stat.
  struct PendingFile {
    size_t index;
    std::string name;
  };

  struct Worker {
    std::vector<StatusRecord> records;
    std::vector<std::string> untracked;
    RepoPtr repo;  // this thread's own handle, opened on first use
    std::unique_ptr<StatBatch> stats;  // this thread's own, made on first use
    std::string key;  // scratch for index look-ups
    std::vector<PendingFile> pending;  // scratch, one folder at a time
    std::vector<const char*> names;
    std::vector<NameStat> results;
    bool repo_failed = false;
  };

  void Push(DirTask task);

  void Loop(Worker& worker);

  git_repository* Repo(Worker& worker);

  // Unknown is "not ignored": a file is listed rather than silently dropped.
  bool Ignored(Worker& worker, const std::string& rel);

  // The first entry in [lo, hi) whose path is not before `key`. Every path
  // in the range and `key` share their first `common` bytes (the folder).
  size_t LowerBound(size_t lo, size_t hi, std::string_view key, size_t common) const;

  // The entry with exactly the path `rel` under `task`, and with `folder`,
  // the entries under `rel` + "/" (a file needs only the first search).
  Match Find(const DirTask& task, const std::string& rel, std::string& key, bool folder) const;

  // A folder's tracked files are stat'ed together once it is listed
  // (stat_batch.h), relative to the open folder, so the kernel does not
  // walk the whole path again for every file.
  void ScanDirectory(const DirTask& task, Worker& worker);

  // Marks entry `index` seen; queues it for a stat unless git would not look.
  void MarkTracked(Worker& worker, size_t index, std::string_view name);

  void CheckPending(const DirTask& task, Worker& worker, int dir_fd);

  void ScanSubdirectory(Worker& worker, const std::string& rel, const std::string& absolute, const Match& match);

  // ' ' unchanged, 'M' modified (content or executable bit), 'T' type
  // change (file <-> symlink), 'D' gone.
  char WorktreeColumn(Worker& worker, const Entry& entry, const std::string& rel, int dir_fd, const char* name,
                      const NameStat& stat);

  bool ContentMatches(Worker& worker, const Entry& entry, const std::string& rel, int dir_fd, const char* name,
                      uint32_t type);

  // A submodule is modified when its checked-out commit is not the one the
  // index records. An uninitialised (empty) submodule folder is unchanged.
  void CheckSubmodule(Worker& worker, const Entry& entry, const std::string& absolute);

  const std::string& root_;
  const IndexFile& index_;
  const Settings& settings_;
  const bool use_io_uring_;
  std::vector<uint8_t> seen_;  // one writer per element: the task listing its folder

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<DirTask> queue_;
  int active_ = 0;
  std::vector<Worker> workers_;
  std::vector<std::thread> threads_;
  bool joined_ = false;
};

}  // namespace telic::grounding::scan
