// The facts telic observes in the host's work tree (issue 38), behind one
// interface: the controller asks a WorkTreeObserver and judges the answers
// with the pure functions of file_claims.h and undeclared_changes.h, so it
// stays a function of (stored state, submitted input, observed facts). Tests
// inject an observer; replay needs none, because what was accepted on an
// observation is stored with it (the checked FileChanges, telic's diff and
// undeclared-change Evidence).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::observation {

// What every observation says when the server does not share the host's
// work tree (`--no-worktree`, TELIC_WORKTREE=none): never a silent pass.
inline constexpr std::string_view kNotShared = "not observed: the server does not see the host's work tree";

// The digest a path holds in a baseline or an observation when no file is there.
inline constexpr std::string_view kAbsent = "absent";

// Files larger than this are not hashed: an observation of one fails with
// kResourceExhausted (the claim is refused, never passed unseen).
inline constexpr int64_t kMaxObservedFileBytes = 64 * 1024 * 1024;
// A work tree with more changed paths than this (against HEAD) is not
// compared path by path: WorkTreeState::complete is false and the
// undeclared-change check says so instead of passing.
inline constexpr size_t kMaxChangedPaths = 10'000;

// One path as telic saw it.
struct FileState {
  bool exists = false;  // a regular file is there (absent otherwise)
  std::string sha256;   // "sha256:<64 hex>" of its bytes when it exists, else ""
  // The bytes, when asked for (FileState of an absent file: none).
  std::optional<std::string> bytes;

  // sha256, or kAbsent.
  std::string Digest() const { return exists ? sha256 : std::string(kAbsent); }
};

// The work tree against its HEAD commit, as `git status` sees it: tracked
// paths whose index or work-tree content differs from HEAD and untracked
// paths no ignore rule matches (.gitignore, .git/info/exclude); .git and the
// state directory are never listed.
struct WorkTreeState {
  std::optional<std::string> head_commit;  // hex; nullopt for an unborn HEAD
  std::vector<std::string> changed_paths;  // repository-relative, sorted, unique
  bool complete = true;                    // false: more than kMaxChangedPaths (changed_paths then empty)
};

class WorkTreeObserver {
 public:
  virtual ~WorkTreeObserver() = default;

  // The file at `path` (repository-relative, normalised as the permission
  // engine normalises targets) as it is now, read without following any
  // symlink: a path through `..`, outside the root, through a symlink, or
  // naming something other than a regular file is kPermissionDenied with the
  // reason; a missing path is a FileState without `exists`.
  [[nodiscard]] virtual Result<FileState> ReadFile(const std::string& path, bool with_bytes) = 0;

  // The file at `path` in commit `commit` (hex); absent when the commit has
  // no such blob or `commit` is nullopt (an unborn HEAD).
  [[nodiscard]] virtual Result<FileState> ReadCommitted(const std::optional<std::string>& commit,
                                                        const std::string& path, bool with_bytes) = 0;

  // The work tree's state now (see WorkTreeState).
  [[nodiscard]] virtual Result<WorkTreeState> ReadState() = 0;

  // The paths whose content differs between two commits (either may be
  // nullopt: the empty tree), sorted.
  [[nodiscard]] virtual Result<std::vector<std::string>> CommittedChanges(const std::optional<std::string>& from,
                                                                          const std::optional<std::string>& to) = 0;
};

}  // namespace telic::observation
