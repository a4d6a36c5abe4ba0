// Repository discovery and inventory (PROTOCOL §16.1, PROTOCOL §16.2, PROTOCOL §16.5).
//
// Git repositories are read through libgit2: the work tree top is found
// like `git rev-parse --show-toplevel`, tracked files come from the index
// and untracked-not-ignored files from one parallel work-tree scan
// (worktree_status.h; it honours .gitignore, .git/info/exclude and
// core.excludesFile of the repository's own config). That same scan feeds
// the dirty-worktree fingerprint.
// Global, XDG and system git configuration are not read (the reference runs
// git with GIT_CONFIG_GLOBAL=/dev/null and GIT_CONFIG_SYSTEM=/dev/null), so
// the result does not depend on who runs telic.
//
// A folder that is not a Git work tree falls back to a sorted recursive walk
// that skips .git .telic build coverage dist node_modules.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "grounding/worktree_status.h"

namespace telic::grounding {

using PathPredicate = std::function<bool(std::string_view repository_path)>;

struct RepositoryRoot {
  std::string path;  // the Git work tree top containing the requested folder, else that folder (real paths)
  // The index beside the nearest ".git" folder at or above the requested
  // one, read while libgit2 loaded; the scan takes it when libgit2 names
  // the same file (ScanOptions::early_index), else reads its own.
  EarlyIndex early_index;
};

// PROTOCOL §16.1: the real path of `requested` (which must be an existing directory),
// replaced by the real path of its Git work tree top when there is one and it
// contains `requested`. kInvalidArgument with the reference's messages when
// `requested` is blank, missing or not a directory. libgit2 is loaded and
// asked for the work tree top on a thread of its own while this one reads
// the likely index (D-START8); the top is libgit2's answer either way.
Result<RepositoryRoot> ResolveRepositoryRoot(std::string_view requested);

struct InventoryRequest {
  std::string root;              // RepositoryRoot::path
  EarlyIndex* early_index = nullptr;  // RepositoryRoot::early_index, taken when it is the root's index; may be null
  size_t max_walk_paths = 0;     // the filesystem walk stops after this many paths
  PathPredicate is_excluded;     // under an excluded root (e.g. the state dir); may be empty
  PathPredicate may_read;        // the run may read this path; empty: every path
  std::function<void(int64_t found)> progress;  // called while walking; may be empty
  std::function<bool()> cancelled;  // true: the walk stops at the next entry (the inventory is then partial); may be empty
};

struct Inventory {
  Inventory() = default;
  Inventory(Inventory&&) = default;
  Inventory& operator=(Inventory&&) = default;
  Inventory(const Inventory&) = delete;  // a copy's paths would point into this one's `owned`
  Inventory& operator=(const Inventory&) = delete;

  std::string source;  // "git" or "filesystem"
  // Normalised repository-relative paths, unique, sorted by UTF-16 code
  // units. Paths that do not normalise, lie under an excluded root or that
  // the run may not read are only counted. They point into `index` (tracked
  // paths, as the index holds them) or `owned` (the rest), which moving the
  // Inventory keeps in place: 100,000 paths are not copied.
  std::vector<std::string_view> paths;
  std::shared_ptr<const void> index;
  std::deque<std::string> owned;
  std::vector<std::string> warnings;
  int64_t invalid_path_count = 0;    // did not normalise (PROTOCOL §16.2 invalid_path)
  int64_t excluded_path_count = 0;   // dropped as under an excluded root
  int64_t permission_skipped = 0;    // dropped because may_read said no
  // Git only.
  bool git = false;
  std::optional<std::string> head_commit;
  std::vector<StatusRecord> status;  // sorted by path, case-sensitively
};

// PROTOCOL §16.2 inventory: Git through libgit2, else the filesystem walk (with a
// warning). Never fails: an unreadable root gives an empty walk.
Inventory DiscoverRepositoryFiles(const InventoryRequest& request);

struct Fingerprint {
  std::optional<std::string> head_commit;
  std::string dirty_worktree_hash;  // "sha256:<hex>"
  std::vector<std::string> warnings;
};

// PROTOCOL §16.5 repository fingerprint.
//
// Git: SHA-256 over the status records in `git status --porcelain=v1 -z`
// form (`XY path\0`, renames `R  new\0old\0`), each followed by
// `<staged blob id or ->\0<work-tree digest or ->\0`, then the text of
// `path\0hash` entries joined by `\0` for `read_hashes` (every file read that
// passed the secret check), sorted by path. The work-tree digest is the
// SHA-256 of the file's bytes (of the link text for a symlink), so the hash
// changes whenever tracked, staged or untracked content changes; a clean
// repository hashes exactly what the reference hashes. Records the run may
// not read, or under an excluded root, are left out.
//
// Not Git: SHA-256 of the sorted `inventory` as `path\0(hash|unread)` joined
// by `\0`, head commit null, and a warning.
Fingerprint FingerprintRepository(const std::string& root, const Inventory& inventory,
                                  const std::vector<std::string_view>& inventory_paths,
                                  const std::map<std::string, std::string>& read_hashes,
                                  const PathPredicate& may_read, const PathPredicate& is_excluded);

}  // namespace telic::grounding
