// What `telic install HOST` writes for each host (docs/HOSTS.md lists every
// file with the host documentation it follows): the MCP server entry that
// starts this telic binary, the workflow instructions the host reads, and the
// pre-tool-use hook wired to `telic broker-gate --host HOST` where the host
// has one. This file is only the table; src/cli/install_config_edit.cc merges it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::cli {

using OrderedJson = nlohmann::ordered_json;

enum class PieceFormat {
  kJson,  // a key set (or an array item appended) inside a JSON config file
  kToml,  // a table appended to a TOML config file, as one text block
  kFile,  // a whole file telic owns (a skill, a rules file, a hook script)
};

// One thing install writes. Paths are relative to the scope's base folder
// (the repository root, or $HOME with --user).
struct Piece {
  std::string role;  // "mcp" | "instructions" | "hook"
  PieceFormat format = PieceFormat::kFile;
  std::string path;
  // kJson: the object keys leading to the value, e.g. {"mcpServers", "telic"};
  // with `append`, the array the value is appended to (once: an equal item
  // already there counts as installed).
  std::vector<std::string> keys;
  bool append = false;
  // kJson: set only when the key is absent (e.g. Cursor's "version": 1);
  // never counts as telic's own and is left in place by uninstall.
  bool only_if_absent = false;
  OrderedJson value;
  std::string text;  // kToml: the block appended; kFile: the file's content
  bool executable = false;
};

struct HostPlan {
  std::string host;
  bool user = false;
  std::vector<Piece> pieces;
  // A sentence for what this scope cannot hold (e.g. Cline keeps MCP
  // servers only in its user settings), printed by install; "" otherwise.
  std::string note;
};

// The hosts `telic install` knows, in a fixed order.
const std::vector<std::string>& InstallHostNames();

// How an installed hook treats calls made while no telic run is active.
enum class GateMode {
  kRun,     // the default: only a run's calls are gated; outside a run the host decides (--outside-run host)
  kStrict,  // deny every gated call while no run is active (`--gate strict`)
};
// "run" | "strict", and back (nullopt for anything else).
const char* GateModeName(GateMode mode);
std::optional<GateMode> ParseGateMode(const std::string& name);

// The plan for `host` at project scope (user false) or user scope, with
// `telic` the absolute path of the binary to start and `gate` the hook's
// mode. Fails for an unknown host.
Result<HostPlan> PlanHost(const std::string& host, bool user, const std::string& telic,
                          GateMode gate = GateMode::kRun);

// The folders whose presence means a host is used here (for `telic doctor`),
// relative to the project root and to $HOME.
struct HostMarkers {
  std::vector<std::string> project;
  std::vector<std::string> home;
};
HostMarkers MarkersOf(const std::string& host);

// A POSIX-shell-quoted word ('...' with ' escaped), for hook command lines.
std::string ShellQuote(const std::string& word);

}  // namespace telic::cli
