// `telic demo`: drives a complete run over MCP the way a host would.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::cli {

struct DemoOptions {
  std::string telic_binary;  // the executable started as `telic serve`
  std::string scenario = "analyze_and_fix";
  std::string db;            // a ledger to use instead of the demo's own state directory
  std::string workdir;       // where the demo repository and state go ("" = a new temporary folder)
  bool json = false;
};

// The embedded scenario `name` (examples/<name>.json), or kNotFound.
Result<Json> LoadScenario(const std::string& name);

// Replaces ${run}, ${request}, ${now} and ${manifest} in every string of `value`.
Json SubstituteNames(const Json& value, const std::map<std::string, std::string>& names);

// Creates the scenario's repository, starts `telic serve` on it, submits
// every step and prints the phases as they pass, the final UserReport and
// where the ledger is. Returns the run id.
Result<std::string> RunDemo(const DemoOptions& options, std::ostream& out);

}  // namespace telic::cli
