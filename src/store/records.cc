#include "store/records.h"

#include "base/redact.h"

#include <fmt/format.h>

#include "base/sha256.h"

namespace telic::store {

bool RunRecord::IsTerminal() const {
  return status == "completed" || status == "partial" || status == "blocked" || status == "cancelled";
}

namespace {

void RedactString(std::string& text, const std::string& field, Json& redactions) {
  Redacted r = RedactSecrets(text);
  if (!r.changed()) return;
  text = std::move(r.text);
  for (const std::string& category : r.categories) redactions.push_back({{"field", field}, {"category", category}});
}

// Redacts every string under `value` (object keys are the decision's own
// field names and are kept).
void RedactStrings(Json& value, const std::string& pointer, Json& redactions) {
  if (value.is_string()) {
    RedactString(value.get_ref<std::string&>(), pointer, redactions);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) RedactStrings(value[i], pointer + "/" + std::to_string(i), redactions);
  } else if (value.is_object()) {
    for (auto& [key, item] : value.items()) RedactStrings(item, pointer + "/" + key, redactions);
  }
}

}  // namespace

void RedactTraceEvent(TraceEventRecord& event) {
  if (!event.redactions.is_array()) event.redactions = Json::array();
  RedactString(event.summary, "/summary", event.redactions);
  if (event.permission_decision) RedactStrings(*event.permission_decision, "/permissionDecision", event.redactions);
}

Json RedactedJson(Json value) {
  Json ignored = Json::array();
  RedactStrings(value, "", ignored);
  return value;
}

std::string TraceEventHashInput(const TraceEventRecord& e) {
  Json j = {
      {"eventId", e.event_id},
      {"runId", e.run_id},
      {"sequence", e.sequence},
      {"timestamp", e.timestamp},
      {"actor", e.actor},
      {"phase", e.phase},
      {"eventType", e.event_type},
      {"inputRefs", e.input_refs},
      {"outputRefs", e.output_refs},
      {"permissionDecision", e.permission_decision ? *e.permission_decision : Json(nullptr)},
      {"summary", e.summary},
      {"budgetSnapshot", e.budget_snapshot},
      {"prevHash", e.prev_hash},
  };
  // Only events that carry redactions hash them, so every event stored before
  // the field existed keeps its hash.
  if (e.redactions.is_array() && !e.redactions.empty()) j["redactions"] = e.redactions;
  return CanonicalJson(j);
}

std::string ComputeTraceEventHash(const TraceEventRecord& event) {
  return Sha256Ref(TraceEventHashInput(event));
}

std::string ArtifactUri(const std::string& run_id, const std::string& artifact_id) {
  return "artifact://" + run_id + "/" + artifact_id;
}

std::string TraceEventUri(const std::string& run_id, int64_t sequence) {
  return fmt::format("trace://{}/event-{:04}", run_id, sequence);
}

StoredArtifact MakeArtifact(ArtifactMeta meta, const Json& body) {
  StoredArtifact artifact{std::move(meta), CanonicalJson(body)};
  artifact.meta.sha256 = Sha256Ref(artifact.canonical_body);
  return artifact;
}

}  // namespace telic::store
