// The scope `telic install` works in and telic's record of what it wrote
// there: the scope's files (read bounded, written through a rename), the
// manifest <state>/installs.json (loaded only when well formed), the backups
// beside it, and the folders installs created. The record lives in the state
// directory, out of the repository's reach (cli/install_command.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/install_command.h"
#include "cli/install_hosts.h"

namespace telic::cli::install {

namespace fs = std::filesystem;

// A scope: the folder install writes into and the folder telic keeps its
// record in. The record lives in the state directory, out of the
// repository's reach: a repository cannot forge what uninstall will remove.
struct Scope {
  fs::path base;     // real path of the project root or $HOME
  std::string name;  // "project" | "user"
  fs::path state;    // the state folder of this scope: installs.json, backups/
  fs::path manifest() const { return state / "installs.json"; }
};

// The scope of a request: its real base folder and its state folder.
[[nodiscard]] Result<Scope> ScopeOf(const InstallRequest& request);

// A regular file's bytes; at most kMaxConfigBytes + 1 of them.
std::optional<std::string> ReadBytes(const fs::path& path);

// Creates the missing folders above `file`; appends each one created (relative
// to `base`, outermost first) to `created`.
[[nodiscard]] Status MakeParents(const fs::path& base, const fs::path& file, std::vector<std::string>& created);

// Writes through a temporary file and a rename, keeping an existing file's mode.
[[nodiscard]] Status WriteBytes(const fs::path& path, const std::string& bytes, bool executable);

// Creates `dir` and its missing parents, private to the user (0700).
[[nodiscard]] Status MakePrivateFolder(const fs::path& dir);

// Parses a manifest's bytes with the config bounds; nullopt when it is not one.
std::optional<OrderedJson> ParseManifest(const std::string& bytes, const std::string& shown);

// The scope's manifest (an empty one when there is none); an error when the
// file is not a well-formed telic install manifest.
[[nodiscard]] Result<OrderedJson> LoadManifest(const Scope& scope);

// Writes the manifest (unchanged bytes are not rewritten); an empty one is
// removed, with the backups folder when that is empty.
[[nodiscard]] Status SaveManifest(const Scope& scope, const OrderedJson& manifest);

// The record of `path` in another host's install in this scope, if any.
const OrderedJson* SharedRecord(const OrderedJson& manifest, const std::string& host, const std::string& path);

// The record of `path` in `install` (nullptr when `install` is).
const OrderedJson* RecordOf(const OrderedJson* install, const std::string& path);

// A backup's name, relative to the scope's state folder.
std::string BackupName(const std::string& host, const std::string& path);

// Removes the recorded folders (relative to the scope) that are inside the
// scope and empty now, deepest first; returns the ones that stay.
std::vector<std::string> RemoveEmptyFolders(const Scope& scope, std::vector<std::string> dirs);

// Removes the folders installs created that are empty now and forgets them;
// the others stay recorded for a later uninstall.
void RemoveCreatedDirs(const Scope& scope, const std::string& host, OrderedJson& manifest);

}  // namespace telic::cli::install
