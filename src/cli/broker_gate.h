// `telic broker-gate [--repo P]`: the host hook of the tool broker
// (WIRE-CONTRACT §17.2; docs/PERMISSIONS.md "The broker").
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "base/canonical_json.h"
#include "store/state_dir.h"

namespace telic::cli {

// A host hook's tool call mapped to a capability and target:
//   {"command": "<non-empty>"}                       → shell.execute
//   tool_name|toolName Write, StrReplace, ApplyPatch, EditNotebook, and (telic)
//     Edit, MultiEdit, NotebookEdit                  → repository.write with
//     tool_input|toolInput .path / .file_path / .target_notebook / .notebook_path
//   Delete                                           → repository.delete (.path)
//   Shell, and (telic) Bash                          → shell.execute (.command)
// nullopt for anything else or an empty target (such calls are not gated).
struct HookToolCall {
  std::string capability;
  std::string target;
};
std::optional<HookToolCall> MapHookInput(const Json& hook_input);

// Reads one JSON object from `in` (empty input is {}), decides it and prints
// one compact line {"permission":"allow"} or {"permission":"deny",
// "user_message":..., "agent_message":...}. The run evaluated is the running
// run of this repository that changed last, read from the ledger
// (controller::FindActiveRun, D-P2); the decision is recorded as a
// broker_decision event ("Hook broker allowed|denied ...").
//
// Strict by default: when no run can be evaluated (no ledger, no running run
// of this repository, unreadable hook input, a decision that cannot be
// recorded) the
// call is denied. TELIC_BROKER_PERMISSIVE=1 fails open instead (local
// development only). Returns 0; 1 only on an unexpected exception.
int RunBrokerGate(const store::Environment& env, const std::string& cwd, const std::string& repo_flag,
                  const std::string& db_flag, std::istream& in, std::ostream& out);

}  // namespace telic::cli
