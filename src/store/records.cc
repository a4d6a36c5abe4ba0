#include "store/records.h"

#include "base/redact.h"

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/sha256.h"

namespace telic::store {

bool RunRecord::IsTerminal() const { return domain::IsTerminal(status); }

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

namespace {

void AppendStringArray(const std::vector<std::string>& items, std::string& out) {
  out.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(items[i], out);
  }
  out.push_back(']');
}

}  // namespace

// Written member by member in canonical key order (all keys are ASCII, so
// byte order is UTF-16 order): the bytes CanonicalJson gives for the object
// of these members (pinned by a test against that form), without building it.
std::string TraceEventHashInput(const TraceEventRecord& e) {
  std::string out;
  out.reserve(384 + e.summary.size());
  out += "{\"actor\":";
  AppendJsonString(e.actor, out);
  out += ",\"budgetSnapshot\":";
  AppendCanonicalJson(e.budget_snapshot, out);
  out += ",\"eventId\":";
  AppendJsonString(e.event_id, out);
  out += ",\"eventType\":";
  AppendJsonString(e.event_type, out);
  out += ",\"inputRefs\":";
  AppendStringArray(e.input_refs, out);
  out += ",\"outputRefs\":";
  AppendStringArray(e.output_refs, out);
  out += ",\"permissionDecision\":";
  if (e.permission_decision) {
    AppendCanonicalJson(*e.permission_decision, out);
  } else {
    out += "null";
  }
  out += ",\"phase\":";
  AppendJsonString(e.phase, out);
  out += ",\"prevHash\":";
  AppendJsonString(e.prev_hash, out);
  // Only events that carry redactions hash them, so every event stored before
  // the field existed keeps its hash.
  if (e.redactions.is_array() && !e.redactions.empty()) {
    out += ",\"redactions\":";
    AppendCanonicalJson(e.redactions, out);
  }
  out += ",\"runId\":";
  AppendJsonString(e.run_id, out);
  out += ",\"sequence\":";
  out += std::to_string(e.sequence);
  out += ",\"summary\":";
  AppendJsonString(e.summary, out);
  out += ",\"timestamp\":";
  AppendJsonString(e.timestamp, out);
  out.push_back('}');
  return out;
}

std::string ComputeTraceEventHash(const TraceEventRecord& event) {
  return Sha256Ref(TraceEventHashInput(event));
}

std::optional<Provenance> ProvenanceOf(const ArtifactMeta& meta) {
  if (meta.type != domain::ArtifactType::kEvidence) return std::nullopt;
  return meta.producer == kObservedEvidenceProducer ? Provenance::kObserved : Provenance::kClaimed;
}

std::string_view ProvenanceName(Provenance provenance) {
  return provenance == Provenance::kObserved ? "observed" : "claimed";
}

Result<Json> DecodeJsonColumn(std::string_view table, std::string_view key, std::string_view column,
                              std::string_view text) {
  auto parsed = ParseStoredJson(text);
  if (!parsed) {
    return Fail(ErrorCode::kDataLoss, fmt::format("{} row {}: {} is not readable ({})", table, key, column,
                                                  parsed.error().message()));
  }
  return parsed;
}

Error UnreadableColumn(std::string_view table, std::string_view key, std::string_view column, const Error& cause) {
  return Error(ErrorCode::kDataLoss, fmt::format("{} row {}: {} is not readable ({})", table, key, column, cause.message()));
}

Result<std::vector<std::string>> DecodeListColumn(std::string_view table, std::string_view key,
                                                  std::string_view column, std::string_view text) {
  TELIC_ASSIGN_OR_RETURN(Json list, DecodeJsonColumn(table, key, column, text));
  std::vector<std::string> out;
  bool strings = list.is_array();
  for (const Json& item : strings ? list : Json::array()) {
    if (!item.is_string()) strings = false;
    if (strings) out.push_back(item.get<std::string>());
  }
  if (!strings) return Fail(ErrorCode::kDataLoss, fmt::format("{} row {}: {} is not a list of strings", table, key, column));
  return out;
}

bool RequiresObservedWork(const RunRecord& run) {
  if (!run.extra.is_object()) return false;
  auto observation = run.extra.find("observation");
  return observation != run.extra.end() && observation->is_object() &&
         observation->value("policy", "") == "require_observed";
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
