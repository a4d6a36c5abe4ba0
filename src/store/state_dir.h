// Where a repository's state lives (WIRE-CONTRACT §1.2-1.3).
#pragma once

#include <map>
#include <string>

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

}  // namespace telic::store
