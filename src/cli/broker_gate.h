// `telic broker-gate [--repo P]`: the host hook of the tool broker
// (PROTOCOL §17.2; docs/PERMISSIONS.md "The broker").
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "base/canonical_json.h"
#include "cli/hook_hosts.h"
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
// one compact line: with host kTelic (no --host) {"permission":"allow"} or
// {"permission":"deny", "user_message":..., "agent_message":...}; with a
// host, that host's documented hook input is read (MapHostHookInput) and the
// answer is written in its format (HostAllowAnswer / HostDenyAnswer). The run evaluated is the running
// run of this repository that changed last, read from the ledger
// (controller::FindActiveRun, D-P2); the decision is recorded as a
// broker_decision event ("Hook broker allowed|denied ...").
//
// `reads_ungated` (--gate mutating): repository.read and network.read calls
// are not gated (answered allow with no ledger look-up), for hosts whose hook
// sees every tool (Cline) so reading outside a run stays possible.
//
// Strict by default: when no run can be evaluated (no ledger, no running run
// of this repository, unreadable hook input, a decision that cannot be
// recorded) the call is denied. TELIC_BROKER_PERMISSIVE=1 fails open instead
// (local development only). Returns 0; 1 only on an unexpected exception.
//
// `outside_run` kHost (--outside-run host, what `telic install` wires by
// default): when no run of this repository is active (no ledger, no running
// run) the answer is the host's allow / no objection, so the host's own
// permission system decides; unreadable input then also passes, since
// outside a run telic governs nothing. A ledger that cannot be opened or read
// and a decision that cannot be recorded still deny. Inside a run nothing
// changes: the run's permissions decide, deny by default.
enum class OutsideRun { kDeny, kHost };
int RunBrokerGate(const store::Environment& env, const std::string& cwd, const std::string& repo_flag,
                  const std::string& db_flag, HookHost host, std::istream& in, std::ostream& out,
                  bool reads_ungated = false, OutsideRun outside_run = OutsideRun::kDeny);

}  // namespace telic::cli
