// Where a repository's state lives (PROTOCOL §1.2-1.3).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace telic::store {

// The process environment, injectable for tests.
using Environment = std::map<std::string, std::string>;
Environment CurrentEnvironment();

struct StateLocation {
  std::string repository_root;  // real, absolute, symlink-free
  std::string state_dir;        // absolute
  std::string ledger_path;      // <state_dir>/telic.sqlite3
};

// Resolves TELIC_REPOSITORY_ROOT (else `cwd`) to its real path (missing →
// kFailedPrecondition), and the state dir: TELIC_STATE_DIR, else
// <XDG_STATE_HOME or $HOME/.local/state>/telic/repositories/<first 24 hex of
// sha256(root)>. Does not touch the file system beyond realpath.
Result<StateLocation> ResolveStateLocation(const Environment& env, const std::string& cwd);

// The state folder of the user scope (`telic install --user` keeps its record
// there): <XDG_STATE_HOME or $HOME/.local/state>/telic/homes/<first 24 hex of
// sha256(real path of `home`)>. TELIC_STATE_DIR (one repository's) does not
// apply. Does not touch the file system beyond realpath.
Result<std::string> ResolveHomeStateDir(const Environment& env, const std::string& home);

// Creates the state dir (mode 0700, parents too) and refuses unsafe layouts:
// a state dir that is a symlink or not a directory, one that lies inside the
// repository or contains it (lexically and after resolving the nearest
// existing ancestor), and a ledger path that exists but is not a regular file.
Status PrepareStateDir(const StateLocation& location);

// The folder under a state directory that holds scratch work (the ledger a
// bundle is checked in before it is imported): <state_dir>/scratch.
inline constexpr std::string_view kScratchFolder = "scratch";

// A private directory <state_dir>/scratch/<random> (mode 0700) for work that
// must not outlive the process. It is locked (flock on the directory) for as
// long as the object lives and removed with its content when it is
// destroyed; a process killed before that leaves it unlocked, and
// CleanStaleScratch removes it on the next start. Nothing is ever written
// outside the state directory, so a killed command leaves nothing in /tmp.
class ScratchDir {
 public:
  // Creates the scratch folder when missing; refuses one that is a symlink or
  // not a directory.
  [[nodiscard]] static Result<std::unique_ptr<ScratchDir>> Create(const std::string& state_dir);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  ScratchDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::string path_;
  int lock_fd_;
};

// Removes every entry of <state_dir>/scratch that no live process holds
// locked (left by a killed import or verify); entries that are not
// directories are removed too, symlinks without being followed. Returns how
// many were removed; a missing scratch folder removes nothing.
[[nodiscard]] Result<int> CleanStaleScratch(const std::string& state_dir);

}  // namespace telic::store
