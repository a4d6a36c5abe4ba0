// telic_run_check: telic runs one verification command that the run's
// contract allows as an exact shell.execute command, in its sandbox
// (observation/check_runner.h), and stores what it observed as Evidence
// (docs/API.md "telic_run_check").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"
#include "observation/check_runner.h"
#include "store/records.h"

namespace telic::controller {

// What the operator configured for checks (the server's settings).
struct CheckSettings {
  observation::SandboxConfig sandbox;
  // Absolute paths mounted read-only if they lie inside the work tree
  // (telic's state directory; the repository's .git is always protected).
  std::vector<std::string> protected_paths;
};

struct CheckRunRequest {
  std::string run_id;
  std::optional<int64_t> expected_version;
  Json command;     // an exact command string or an argv array
  std::string cwd;  // repository-relative; "" for the root
  // Exactly one binding: a node of the run's latest WorkPlan, or a task of
  // the graph awaiting verification (checked by the caller, which records
  // the verification; here it is named in the Evidence).
  std::optional<std::string> node_id;
  std::optional<std::string> task_id;
  observation::SandboxLimits limits;
};

struct CheckRunResult {
  store::RunRecord run;
  store::ArtifactMeta evidence;
  observation::CheckRecord record;
  Json permission_decision;  // the engine's decision that allowed the command
};

// Refusals (nothing runs, nothing is stored), in this order:
//   kInvalidArgument / kPermissionDenied: a malformed command or one a
//     shell would interpret, an invalid limit, not exactly one binding;
//   kNotFound: no such run; kStaleVersion: expected_version differs;
//   kFailedPrecondition: the run has ended, the node is not in its latest
//     WorkPlan, the sandbox cannot start;
//   kPermissionDenied: the run's permission intersection does not allow
//     shell.execute of this exact command (as telic_check_tool_action
//     decides), or cwd escapes the repository.
// A command that ran, whatever its end (failure, time limit, cancellation),
// is stored as Evidence (kind "test") with provenance observed
// (RunService::RecordObservedEvidence: it does not move the run, so a
// check that outlives other calls still stores its Evidence).
[[nodiscard]] Result<CheckRunResult> RunVerificationCheck(RunService& service, const CheckRunRequest& request,
                                                          const CheckSettings& settings,
                                                          const observation::RunControl& control = {});

// The Evidence body of a finished check (schemaVersion and ids included):
// content is the JSON of CheckRecordToJson plus the redacted output tail
// (cut further at its start so the content fits the 32 KiB Evidence bound).
Json CheckEvidenceBody(const std::string& run_id, const std::string& evidence_id, const std::string& captured_at,
                       const observation::CheckRecord& record, const CheckRunRequest& request);

// The tool result's `check` member: CheckRecordToJson plus outputTail, the
// Evidence reference and the binding.
Json CheckResultToJson(const CheckRunResult& result, const CheckRunRequest& request);

}  // namespace telic::controller
