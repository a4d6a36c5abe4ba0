// NextAction: computed on demand from stored state, never stored (PROTOCOL §9).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "store/records.h"

namespace telic::controller {

inline constexpr size_t kMaxInputRefs = 256;
inline constexpr int64_t kMaxPlanToolCalls = 4000;

// Loads the parsed body of a stored artifact (shared: bodies are immutable,
// and a loader may keep them, controller/body_cache.h).
using BodyLoader = std::function<Result<std::shared_ptr<const Json>>(const store::ArtifactMeta&)>;

// Whether `key` is one of the reference fields of PROTOCOL §14.1.
bool IsReferenceField(std::string_view key);

// Every reference string in `body` (PROTOCOL §14.1): string values at any depth under a
// reference-field key, starting with artifact://, repo:// or trace://.
std::vector<std::string> CollectReferences(const Json& body);

// How a NextAction carries its requiredOutputSchema and
// additionalOutputSchemas: as copies of the served schemas, or as
// schema::ServedSchemaRef references to them (no copy; only for a caller that
// writes the action with mcp's result writer or expands the references with
// schema::ExpandServedSchemaRefs).
enum class ActionSchemas { kCopies, kReferences };

// The single legal NextAction for `run` given its artifacts (insertion order).
// Pure: the same stored state always yields the same action (createdAt is
// run.updated_at). Fails when the input closure exceeds 256 references.
Result<Json> ComputeNextAction(const store::RunRecord& run, const std::vector<store::ArtifactMeta>& artifacts,
                               const BodyLoader& load_body, ActionSchemas form = ActionSchemas::kCopies);

// "action:<runId>:<version>"
std::string ActionId(const store::RunRecord& run);

}  // namespace telic::controller
