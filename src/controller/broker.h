// The tool broker: whether a run permits one host-native tool call
// (PROTOCOL §17.2; docs/PERMISSIONS.md "The broker"). Behind the MCP
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
// denied family withdrawn; PROTOCOL §12.4) and whose deny set is the
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

// The run the hook broker evaluates (PROTOCOL §17.4 names it in
// active-session.json; telic reads it from the ledger instead, D-P2): of the
// runs of `repository_root` that are running, the one whose state changed
// last (greatest updated_at; on a tie the newer run). nullopt when none is
// running. The write path therefore writes nothing besides its commit.
Result<std::optional<store::RunRecord>> FindActiveRun(store::Store& store, const std::string& repository_root);

}  // namespace telic::controller
