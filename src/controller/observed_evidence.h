// Evidence captured by telic itself (provenance observed, issue 38): the
// artifact and trace event every observation is stored with, whether it is
// stored alone (RunService::RecordObservedEvidence) or beside an accepted
// artifact in the same transaction (a WorkResult's observed diffs).
#pragma once

#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "store/records.h"

namespace telic::controller {

// The stored form of an observed Evidence body (producer
// store::kObservedEvidenceProducer, redaction "applied" when the body's
// `redactions` list is not empty, else "none").
store::StoredArtifact ObservedEvidenceArtifact(const std::string& run_id, const Json& body,
                                               std::vector<std::string> source_refs, const std::string& now);

// The summary of the kEvidenceObservedEvent that stores `body`: it names the
// kind and the provenance, so the chain's text says what the event means.
std::string ObservedEvidenceSummary(const Json& body);

}  // namespace telic::controller
