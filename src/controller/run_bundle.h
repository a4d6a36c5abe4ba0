// Portable, verifiable run bundles (issue 22 §3; format in docs/BUNDLE.md):
// one canonical-JSON file holding a run record, its artifacts with their
// canonical bodies, its hash-chained trace, and the verify and replay
// reports telic computed when it exported them. Every section has a sha256
// and the whole document a bundleDigest, and the file must be exactly the
// canonical form of what it parses to, so any changed byte is detected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"
#include "store/records.h"

namespace telic::controller {

inline constexpr std::string_view kBundleFormat = "telic-run-bundle";
inline constexpr int kBundleFormatVersion = 1;
// The largest bundle read (1 GiB): far above any real run, bounded memory.
inline constexpr size_t kMaxBundleBytes = size_t{1024} * 1024 * 1024;

struct RunBundle {
  store::RunRecord run;
  std::vector<store::StoredArtifact> artifacts;  // in the store's insertion order
  std::vector<store::TraceEventRecord> trace;    // sequence 1..n
  Json verification;                             // {"verify": VerifyRun, "replay": ReplayRun}
  std::string bundle_digest;
};

// The bundle of `run_id` as file bytes (canonical JSON and a newline). Reads
// a consistent snapshot (retried when the run changes while it is read);
// kDataLoss when a stored body fails its digest.
Result<std::string> ExportBundle(RunService& service, const std::string& run_id);

// Parses bundle bytes, checking the structure (every field, no unknown one,
// JSON pointers in errors), the canonical byte form, the section digests
// and the bundleDigest. kInvalidArgument / kDataLoss name the first problem.
Result<RunBundle> ParseBundle(std::string_view bytes);

// Checks a parsed bundle's content with no store of the caller's: artifact
// digests, the trace chain, and that loading it into a scratch SQLite ledger
// (a store::ScratchDir under `state_dir`, removed after; never /tmp) gives
// the same trace hashes and the same verify and replay reports as recorded.
// Returns {"ok", "runId", "bundleDigest", "artifacts", "traceEvents",
// "finalTraceHash", "problems": [text...]}.
Json CheckBundle(const RunBundle& bundle, const std::string& state_dir);

// Loads a bundle that CheckBundle passed into `store` as a new run (one
// CreateRun transaction: run, artifacts, events) and checks the stored
// trace hashes equal the bundle's. kAlreadyExists when the run id is taken
// (nothing is written).
Status ImportBundle(store::Store& store, const RunBundle& bundle);

}  // namespace telic::controller
