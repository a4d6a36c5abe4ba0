// `telic install HOST [--user]`, `telic uninstall HOST [--user]` and the host
// section of `telic doctor` (docs/HOSTS.md).
//
// Install merges the host's plan (src/cli/install_hosts.h) into the files of
// the scope's base folder (the repository root, or $HOME with --user):
//   - JSON files: keys set / array items appended with the user's keys and
//     key order kept; a file that does not parse as strict JSON (JSONC with
//     comments, trailing commas) is refused, never rewritten;
//   - TOML (Codex's config.toml): one table appended as a text block, the
//     rest of the file untouched byte for byte; checked with toml++;
//   - whole files telic owns (skills, rules, hook scripts).
// A file is backed up (<state>/backups/) before its first change; a
// reinstall that changes nothing writes nothing. What was written is recorded
// in <state>/installs.json, where <state> is the repository's state directory
// (project scope) or <XDG_STATE_HOME or ~/.local/state>/telic/homes/<key of
// $HOME> (user scope): out of the repository's reach, so a repository cannot
// forge what uninstall removes. Uninstall removes exactly what is recorded:
// when a file still holds the bytes install left (same sha256), its original
// bytes come back from a backup whose sha256 is also recorded (or it is
// deleted if install created it); otherwise only telic's keys, items or block
// are taken out and the user's later edits stay. Every path, recorded or
// planned, is confined to the scope (cli/install_paths.h). A record an older
// telic left in <base>/.telic/installs.json is advisory (D-S1.2).
#pragma once

#include <iosfwd>
#include <string>

#include "base/canonical_json.h"

namespace telic::cli {

struct InstallRequest {
  std::string host;
  bool user = false;
  std::string project_root;  // absolute: the repository root
  std::string home;          // absolute: $HOME
  std::string telic;         // absolute path of the telic binary to configure
  bool json = false;
  std::string state_dir;       // the repository's state directory (project scope record)
  std::string user_state_dir;  // the state folder of $HOME (user scope record)
  std::string gate = "run";    // the hook's mode: "run" | "strict" (install_hosts.h GateMode)
};

// Exit codes: 0 done (or nothing to do), 1 refused or failed (nothing
// written for the file that failed; earlier files of the host stay written
// and recorded, so uninstall still removes them), 2 usage.
int RunInstall(const InstallRequest& request, std::ostream& out, std::ostream& err);
int RunUninstall(const InstallRequest& request, std::ostream& out, std::ostream& err);

// Per host found in the project or the home folder (a marker folder exists
// or telic is recorded as installed there): {"found", "installs": [{"scope",
// "binary", "current", "hook", "gate", "problems"}]} (gate "run", "strict" or
// "no hook") ("recordedBy" for a record an
// older telic left inside the scope). `ok` turns false when an install is not
// current (binary moved or not this one, a piece missing). `where` gives the
// roots, state folders and this binary (host and user are not read).
Json HostDoctorChecks(const InstallRequest& where, bool& ok);

}  // namespace telic::cli
