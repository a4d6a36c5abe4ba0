// `telic verify`: every artifact of a run re-hashed, its trace hash chain
// checked. Read-only; shared by the CLI and the web UI.
#pragma once

#include <string>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"

namespace telic::controller {

// {"ok", "runId", "artifactsVerified", "artifacts", "traceEvents", "problems": [text...]}.
// Errors only when the run cannot be read (kNotFound for an unknown run);
// a digest mismatch or a broken chain is a problem in the report.
Result<Json> VerifyRun(RunService& service, const std::string& run_id);

}  // namespace telic::controller
