// Run bundles and OpenTelemetry export (issue 22 §3-4):
//   telic export RUN [-o FILE]               a verifiable bundle (docs/BUNDLE.md)
//   telic export RUN --otlp [URL] [--allow-remote]   OTLP/HTTP JSON spans
//   telic verify --bundle FILE               checks a bundle with no ledger
//   telic import FILE                        loads a bundle as a new run
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/run_service.h"
#include "store/store.h"

namespace telic::cli {

struct BundleCommands {
  CLI::Option* otlp = nullptr;  // set when --otlp was given (with or without a URL)
  std::string run_id;
  std::string output;  // -o FILE; "" for stdout
  std::string otlp_url;
  bool allow_remote = false;
  std::string file;  // import FILE
};

// Adds `export`'s positionals and options to its command `sub`, bound to
// `c` (keep it alive until the command ran).
void DefineExportOptions(CLI::App& sub, BundleCommands& c);

// Adds `import`'s FILE to its command `sub`, bound to `c`.
void DefineImportOptions(CLI::App& sub, BundleCommands& c);

// `telic export`: the bundle (or, with --otlp, the OTLP spans) of one run.
int RunExport(const BundleCommands& commands, controller::RunService& service, std::ostream& out, std::ostream& err);

// `telic import FILE`: checks the whole bundle (its scratch ledger under
// `state_dir`), then creates its run in `store`; `imported` runs after a
// successful import (task graph sync). Everything printed that came from the
// bundle goes through TerminalText.
int RunImport(const BundleCommands& commands, store::Store& store, const std::string& state_dir,
              const std::function<void(const std::string&)>& imported, bool json, std::ostream& out, std::ostream& err);

// `telic verify --bundle FILE`: exit 0 when the bundle checks out, else 1
// (its scratch ledger under `state_dir`, removed after).
int RunVerifyBundle(const std::string& file, const std::string& state_dir, bool json, std::ostream& out,
                    std::ostream& err);

}  // namespace telic::cli
