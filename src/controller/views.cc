#include "controller/views.h"

#include <fmt/format.h>

#include "base/json_parse.h"
#include "controller/phases.h"

namespace telic::controller {
namespace {

Json Optional(const std::optional<std::string>& value) { return value ? Json(*value) : Json(nullptr); }
template <typename E>
Json Optional(const std::optional<E>& value) {
  return Optional(store::OptionalName(value));
}

}  // namespace

Json RunToJson(const store::RunRecord& r) {
  return {{"runId", r.run_id},
          {"schemaVersion", r.schema_version},
          {"repositoryRoot", r.repository_root},
          {"requestedMode", r.requested_mode},
          {"topology", r.topology},
          {"escalationCount", r.escalation_count},
          {"priorRunId", Optional(r.prior_run_id)},
          {"status", r.status},
          {"phase", domain::Name(r.phase)},
          {"resumePhase", Optional(r.resume_phase)},
          {"version", r.version},
          {"budgets",
           {{"promptRevisionsRemaining", r.prompt_revisions_remaining},
            {"postExecutionRemediationsRemaining", r.remediations_remaining}}},
          {"outcomeHint", Optional(r.outcome_hint)},
          {"createdAt", r.created_at},
          {"updatedAt", r.updated_at}};
}

Json RunSummaryToJson(const store::RunRecord& r) {
  return {{"runId", r.run_id},       {"schemaVersion", r.schema_version}, {"requestedMode", r.requested_mode},
          {"topology", r.topology},  {"status", r.status},                {"phase", domain::Name(r.phase)},
          {"resumePhase", Optional(r.resume_phase)}, {"version", r.version},
          {"outcomeHint", Optional(r.outcome_hint)}, {"createdAt", r.created_at}, {"updatedAt", r.updated_at}};
}

Json ArtifactMetaToJson(const store::ArtifactMeta& m) {
  return {{"id", m.id},         {"runId", m.run_id},           {"type", m.type},
          {"schemaVersion", m.schema_version}, {"producer", m.producer}, {"sha256", m.sha256},
          {"sourceRefs", m.source_refs}, {"redaction", m.redaction}, {"createdAt", m.created_at}};
}

Json HydratedArtifactToJson(const store::StoredArtifact& artifact) {
  Json j = ArtifactMetaToJson(artifact.meta);
  j["body"] = StoredJsonOrThrow(artifact.canonical_body);
  return j;
}

Json CanonicalRedactions(const store::TraceEventRecord& e) {
  Json out = Json::array();
  if (!e.redactions.is_array()) return out;
  for (size_t i = 0; i < e.redactions.size(); ++i) {
    out.push_back({{"id", fmt::format("{}:redaction-{}", e.event_id, i + 1)},
                   {"targetRef", store::TraceEventUri(e.run_id, e.sequence)},
                   {"category", e.redactions[i].value("category", "credential")}});
  }
  return out;
}

Json TraceEventToCanonical(const store::TraceEventRecord& e) {
  const Json& budgets = e.budget_snapshot;
  return {{"schemaVersion", "1.0"},
          {"id", e.event_id},
          {"runId", e.run_id},
          {"sequence", e.sequence},
          {"timestamp", e.timestamp},
          {"actor", IsLogicalRole(e.actor) ? e.actor : std::string("host")},
          {"phase", ProtocolPhaseName(e.phase)},
          {"eventType", CanonicalEventType(e.event_type)},
          {"inputRefs", e.input_refs},
          {"outputRefs", e.output_refs},
          {"tool", nullptr},
          {"permissionDecision", e.permission_decision ? *e.permission_decision : Json(nullptr)},
          {"budgetSnapshot",
           {{"promptRevisions", budgets.value("promptRevisionsRemaining", 0)},
            {"postExecutionRemediations", budgets.value("postExecutionRemediationsRemaining", 0)},
            {"transportRetries", 0}}},
          {"rationaleSummary", e.summary},
          {"redactions", CanonicalRedactions(e)}};
}

Json TraceEventToInternal(const store::TraceEventRecord& e) {
  Json j = {{"eventId", e.event_id},
            {"runId", e.run_id},
            {"sequence", e.sequence},
            {"timestamp", e.timestamp},
            {"actor", e.actor},
            {"phase", e.phase},
            {"eventType", e.event_type},
            {"inputRefs", e.input_refs},
            {"outputRefs", e.output_refs},
            {"permissionDecision", e.permission_decision ? *e.permission_decision : Json(nullptr)},
            {"decisionSummary", e.summary},
            {"budgetSnapshot", e.budget_snapshot},
            {"redactions", e.redactions},
            {"prevHash", e.prev_hash},
          {"hash", e.hash}};
  // Only events a traced request caused carry these (outside the hash).
  if (e.traceparent) j["traceparent"] = *e.traceparent;
  if (e.tracestate) j["tracestate"] = *e.tracestate;
  return j;
}

Json ContextCostToJson(const std::vector<store::ContextCost>& costs) {
  int64_t calls = 0, bytes = 0;
  Json tools = Json::array();
  for (const store::ContextCost& cost : costs) {
    calls += cost.calls;
    bytes += cost.bytes;
    tools.push_back({{"tool", cost.tool}, {"calls", cost.calls}, {"bytes", cost.bytes}});
  }
  return {{"calls", calls}, {"bytes", bytes}, {"estimatedTokens", bytes / 4}, {"tools", std::move(tools)}};
}

std::string ContextCostSummary(const std::vector<store::ContextCost>& costs) {
  Json total = ContextCostToJson(costs);
  return fmt::format("{} calls, {} bytes, ~{} tokens (bytes/4)", total["calls"].get<int64_t>(),
                     total["bytes"].get<int64_t>(), total["estimatedTokens"].get<int64_t>());
}

}  // namespace telic::controller
