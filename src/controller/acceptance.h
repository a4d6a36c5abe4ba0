// Per-artifact acceptance rules (PROTOCOL §15): deterministic checks of
// a schema-valid phase artifact against the run's stored artifacts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_snapshot.h"

namespace telic::controller {

// A permission failure found by the rules: the DENY decision to record in a
// `permission_checked` trace event, with its input refs.
struct PermissionDenial {
  Json decision;
  std::vector<std::string> input_refs;
};

// The artifact being accepted.
struct Submission {
  std::string id;
  std::string type;
  Json body;
  std::vector<std::string> source_refs;  // stored source refs (PROTOCOL §14.1)
};

// Where execution stands on the latest WorkPlan.
struct ExecutionProgress {
  std::optional<Json> pending_node;  // the first dependency-ready node without a result
  size_t remaining_after = 0;        // nodes left after the candidate result (0 if it did not complete)
};

// Execution progress; with `candidate` (a WorkResult body) it is checked to
// complete the pending node of the latest plan.
Result<ExecutionProgress> ComputeExecutionProgress(RunSnapshot& snapshot, const Json* candidate = nullptr);

// The effective run permissions of the envelope for `mode` (PROTOCOL §12.4).
Json RunAuthorization(const std::string& mode, const Json& envelope);

// Whether the analyze_and_fix fix stage is unlocked (PROTOCOL §15.6 "Fix unlocked").
Result<bool> AnalysisFixUnlocked(RunSnapshot& snapshot);

// Runs every PROTOCOL §15 rule for the submission. On a permission failure the
// error is kPermissionDenied and `denial` receives the decision to trace.
Status CheckCrossArtifactRules(RunSnapshot& snapshot, const Submission& submission,
                               std::optional<PermissionDenial>& denial);

// The `permission_checked` decisions written with an accepted WorkResult, one
// per completed/failed/denied action, in order.
Result<std::vector<Json>> WorkResultPermissionDecisions(RunSnapshot& snapshot, const Json& body);

// "Allowed|Denied <capability> for <scope>."
std::string PermissionEventSummary(const Json& decision);

bool PermissionAllowsCapability(const Json& permissions, std::string_view capability);

}  // namespace telic::controller
