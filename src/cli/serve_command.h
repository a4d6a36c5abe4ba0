// `telic serve` (and its alias `mcp`): MCP over stdio or Streamable HTTP,
// optionally with the web viewer; `telic ui`: the viewer alone.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/http_settings.h"
#include "cli/ledger_context.h"

namespace telic::cli {

// The options of serve, mcp and ui.
struct ServeFlags {
  LedgerFlags ledger;
  std::string http;  // HOST:PORT
  std::string auth_token_file;
  std::vector<std::string> allow_origins;
  std::vector<std::string> allow_hosts;
  bool ui = false;                 // serve --http --ui: the web UI under /ui
  std::string idle_after = "15m";  // the UI marks a running run idle after this long without a change
  HttpLimitFlags http_limits;
  std::string profile;  // default | lean ("" = TELIC_PROFILE, else default)
  // Whether telic shares the host's work tree (issue 38) and how strictly
  // runs observe it; also TELIC_WORKTREE=none and TELIC_OBSERVATION.
  bool no_worktree = false;
  std::string observation;
};

// Adds serve's (and mcp's) options to `command`, bound to `flags`.
void DefineServeOptions(CLI::App& command, ServeFlags& flags);

// Adds ui's options to `command`, bound to `flags`.
void DefineUiOptions(CLI::App& command, ServeFlags& flags);

// `telic serve`: serves until the input ends (stdio) or a signal (HTTP).
// A failed start prints one "Telic MCP failed: <reason>" line, exit 1; an
// unknown profile or --ui without --http is a usage error (2).
int Serve(const ServeFlags& flags);

// `telic ui`: the read-only web trace viewer over the ledger (no /mcp).
int Ui(ServeFlags flags);

}  // namespace telic::cli
