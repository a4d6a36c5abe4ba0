// Reference and evidence rules for submitted artifacts (PROTOCOL §14).
#pragma once

#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_snapshot.h"

namespace telic::controller {

// A reference string found in a body, with its path in the reference's
// notation: "body.actions[0].evidenceRefs[1]"; a submission's own source
// refs are "sourceRefs[i]".
struct LocatedRef {
  std::string ref;
  std::string path;
};

// Every reference-field string (PROTOCOL §14.1) of `body`, depth first.
std::vector<LocatedRef> CollectLocatedReferences(const Json& body);

// The stored sourceRefs of a submission (PROTOCOL §14.1): `supplied` (unique, else
// "Artifact sourceRefs must be unique") then every body string under a key
// `ref`/`evidenceInspected` or ending in Ref/Refs that is a reference URI,
// skipping artifact://system/… and artifact refs that do not name an
// existing artifact of this run; de-duplicated; more than 256 fails.
Result<std::vector<std::string>> StoredSourceRefs(const RunSnapshot& snapshot, const Json& body,
                                                  const std::vector<std::string>& supplied);

// Whether `path` is a direct-evidence path for a submission of `type` (PROTOCOL §14.2-6).
bool RequiresDirectEvidence(const std::string& path, const std::string& type);

// PROTOCOL §14.2 checks 1-7 for every reference of `body` and of `source_refs`.
Status CheckArtifactReferences(RunSnapshot& snapshot, const std::string& type, const Json& body,
                               const std::vector<std::string>& source_refs);

// PROTOCOL §14.2-8: ContextDocument only behind WorkResult observations/inferences,
// Evidence kinds fitting their path, lineage evidence from the prior run only.
Status CheckEvidenceSemantics(RunSnapshot& snapshot, const std::string& type, const Json& body);

// Evidence kinds acceptable for an action or verification of `capability`.
std::vector<std::string> EvidenceKindsForCapability(std::string_view capability);

}  // namespace telic::controller
