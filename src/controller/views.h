// Wire renderings of stored records (PROTOCOL §8, PROTOCOL §13.17).
#pragma once

#include "base/canonical_json.h"
#include "store/records.h"

namespace telic::controller {

// The `run` object of tool results (PROTOCOL §8.1).
Json RunToJson(const store::RunRecord& run);
// The RunSummary of telic_list_runs (PROTOCOL §8.2).
Json RunSummaryToJson(const store::RunRecord& run);
// StoredArtifact metadata (PROTOCOL §8.3), no body.
Json ArtifactMetaToJson(const store::ArtifactMeta& meta);
// Metadata plus the parsed canonical body.
Json HydratedArtifactToJson(const store::StoredArtifact& artifact);
// The canonical TraceEvent projection served by telic_get_trace (PROTOCOL §17.1).
Json TraceEventToCanonical(const store::TraceEventRecord& event);
// TraceEvent.redactions of the canonical projection: one
// {id "<eventId>:redaction-N", targetRef trace://run/event-NNNN, category}
// per value redacted from the stored event.
Json CanonicalRedactions(const store::TraceEventRecord& event);
// The internal record (CLI `telic trace`), including the hash chain.
Json TraceEventToInternal(const store::TraceEventRecord& event);

// A run's context cost (issue 39; store::Store::GetContextCost) as shown by
// `telic show --json`, the web viewer and the OTLP export: {calls, bytes,
// estimatedTokens (bytes / 4), tools: [{tool, calls, bytes}]}.
Json ContextCostToJson(const std::vector<store::ContextCost>& costs);
// One line of it: "N calls, B bytes, ~T tokens (bytes/4)".
std::string ContextCostSummary(const std::vector<store::ContextCost>& costs);

}  // namespace telic::controller
