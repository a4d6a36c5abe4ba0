// The state of a Git work tree, read like `git status --porcelain=v1
// --untracked-files=all`, but fast enough for repositories of 100,000 files.
//
// libgit2's git_status_list_new lstat()s every tracked file on one thread;
// on a 100k-file repository that alone took ~700 ms (bench/grounding_bench.sh).
// This scan splits the work tree into directory tasks run by a small thread
// pool: each task lists one directory, matches its names against the index
// (sorted, so every directory's entries are one contiguous range), compares
// the cached stat data of tracked files, hashes only files whose stat data
// changed with their size unchanged (or that are "racy": modified in the same
// second the index was written), and reports untracked files that no ignore
// rule matches (libgit2's ignore engine: .gitignore files, .git/info/exclude,
// core.excludesFile). The index is read by git_index.h, not libgit2 (which
// took longer than `git ls-files` to load it). Staged changes come from
// libgit2's HEAD-tree-to-index diff with rename detection, run beside the
// directory tasks, and skipped when the index's cache tree (TREE extension)
// says the whole index is HEAD's tree.
//
// Differences from git, kept on purpose (docs/DECISIONS.md D50):
//   - a submodule (gitlink) counts as modified when its checked-out commit
//     differs from the index; changes inside its work tree are not looked at;
//   - files with skip-worktree set (sparse checkouts) are never reported.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grounding/git_index.h"

namespace telic::grounding {

// One `git status --porcelain=v1` record.
struct StatusRecord {
  std::string path;       // the path now (the new path of a rename); "dir/" for a nested repository
  std::string orig_path;  // the old path of a staged rename, else ""
  char x = ' ';           // porcelain index column (A M D R T, U for conflicts, ? for untracked)
  char y = ' ';           // porcelain work-tree column (M D T, U, ?)
  std::string index_id;   // the staged blob id (hex) when the index side changed, else ""
  bool worktree = false;  // the work-tree side has content to digest (modified, type change, untracked, conflict)
};

struct WorktreeStatus {
  // False when `root` is not the top of a Git work tree, or its index or
  // HEAD could not be read; nothing else is then meaningful.
  bool ok = false;
  std::vector<std::string> untracked;  // untracked, not ignored, in byte order
  std::vector<StatusRecord> records;   // as git prints them: changed paths by path (byte order), then untracked
  std::optional<std::string> head_commit;  // hex id; nullopt for an unborn HEAD
  // The index, one entry per path (conflict stages folded), by path in byte
  // order: the tracked paths are index->path(i) for i < index->size().
  std::shared_ptr<const IndexFile> index;
  bool stats_batched = false;  // the work tree's lstat calls went through io_uring (stat_batch.h)
};

// An index read before libgit2 opened the repository (ReadIndexEarly), for
// ReadWorktreeStatus to take instead of reading it again.
struct EarlyIndex {
  std::string path;               // the index file read, as given
  std::optional<IndexFile> file;  // one entry per path, sorted; nullopt when git_index.h could not read it
};

// Reads the index at `path` (normally "<top>/.git/index") the way the scan
// needs it, without libgit2, so that a caller can read it while libgit2 is
// still loading (docs/DECISIONS.md D-START8).
EarlyIndex ReadIndexEarly(std::string path);

struct ScanOptions {
  unsigned threads = 0;   // directory workers; 0 picks one per core, between 2 and 8
  bool io_uring = true;   // may batch lstat through io_uring where the kernel allows and it is faster (StatMode::kFastest); else fstatat
  // Taken (moved from) when its path is the repository's own index path,
  // exactly as libgit2 names it; otherwise left alone and the index is read
  // again. May be null.
  EarlyIndex* early_index = nullptr;
};

// Reads the work tree whose real top-level path is `root`, as `options` say.
// `while_scanning`, when given, is called on the calling thread with the
// index (one entry per path, sorted) while the workers list the work tree,
// so a caller can work on the tracked paths instead of waiting.
// Read-only: never writes the index or any object.
WorktreeStatus ReadWorktreeStatus(const std::string& root, const ScanOptions& options = {},
                                  const std::function<void(const IndexFile&)>& while_scanning = {});

}  // namespace telic::grounding
