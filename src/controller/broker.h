// The tool broker: whether a run permits one host-native tool call
// (WIRE-CONTRACT §17.2; docs/PERMISSIONS.md "The broker"). Behind the MCP
// tool telic_check_tool_action and the `telic broker-gate` hook command;
// both are answered by the permission engine (src/policy/engine.h).
#pragma once

#include <optional>
#include <string>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"
#include "policy/engine.h"
#include "store/records.h"
#include "store/store.h"

namespace telic::controller {

struct BrokerDecision {
  bool allowed = false;
  // allowed | policy_denied | no_policy | capability_not_granted
  std::string reason_code;
  std::string summary;
  // The trace PermissionDecision: {decision, capability, scope, policyRefs,
  // rationaleSummary}; scope is the normalised target (a hostname for
  // network.read and external.write, "invalid_network_target" when the URL
  // does not parse, so credentials never persist), "unknown" without one.
  Json permission_decision;
  // The engine's full decision: deciding layer, rule, every layer's verdict.
  policy::Decision detail;
};

// Evaluates `capability` (and its optional target) against the run-level
// authority of `run`: the layers intent_mode:<mode> and run_envelope, whose
// allow set is the effective run permissions (mode ceiling ∩ granted, a
// denied family withdrawn; WIRE-CONTRACT §12.4) and whose deny set is the
// envelope's denied set. Paths resolve against the run's repository root on
// disk (symlinks followed). Strict where the reference is loose:
//   - no RunEnvelope (or one without authorization) grants nothing;
//   - a terminal run (completed, cancelled, ...) authorizes nothing;
//   - shell.inspect targets must be one of the six typed targets.
// `envelope` is the RunEnvelope body or null; `envelope_ref` its
// artifact:// URI or "".
BrokerDecision EvaluateBrokerAction(const store::RunRecord& run, const Json& envelope, const std::string& envelope_ref,
                                    const std::string& capability, const std::optional<std::string>& target);

// Loads the run's latest RunEnvelope, evaluates, and appends one
// broker_decision trace event (actor host, inputRefs [envelope URI],
// the permission decision, summary "<prefix> allowed <cap>." or
// "<prefix> denied <cap>: <reasonCode>.") without changing the run's
// version. `summary_prefix` is "Broker" for MCP, "Hook broker" for the hook.
// Fails when the event cannot be stored (e.g. the trace limit, or a
// concurrent change of the run: kConflict).
Result<BrokerDecision> DecideAndRecord(store::Store& store, Clock& clock, IdSource& ids, const store::RunRecord& run,
                                       const std::string& capability, const std::optional<std::string>& target,
                                       const std::string& summary_prefix);

// The wire form of a decision: {allowed, reasonCode, summary, permissionDecision}.
Json BrokerDecisionToJson(const BrokerDecision& decision);
// telic's explanation beside it: {decidingLayer, rule, scope, layers: [{layer, allowed, rule}]}.
Json BrokerExplanationToJson(const BrokerDecision& decision);

// active-session.json (WIRE-CONTRACT §17.4): which run and action the hook
// broker evaluates. One file per state directory, last writer wins.
struct ActiveSession {
  std::string run_id;
  std::string action_id;
  int64_t run_version = 0;
  std::string repository_root;
  std::string requested_mode;
  std::string updated_at;
};
std::string ActiveSessionPath(const std::string& state_dir);
// Writes the session for a running run (atomically: a temporary file, then
// rename), or removes the file when the run is not running. `run` is the
// wire run record (controller/views.h RunToJson), `action_id` its NextAction's id.
Status UpdateActiveSession(const std::string& state_dir, const Json& run, const std::string& action_id);
// nullopt when the file is missing or not a well-formed session.
std::optional<ActiveSession> ReadActiveSession(const std::string& state_dir);

}  // namespace telic::controller
