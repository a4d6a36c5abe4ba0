// RunService::RecordObservedEvidence and the stored form of observed Evidence.
#include "controller/observed_evidence.h"

#include <fmt/format.h>

#include "controller/references.h"
#include "controller/run_service.h"
#include "controller/run_snapshot.h"
#include "grounding/secrets.h"

namespace telic::controller {

store::StoredArtifact ObservedEvidenceArtifact(const std::string& run_id, const Json& body,
                                               std::vector<std::string> source_refs, const std::string& now) {
  bool redacted = body.contains("redactions") && body["redactions"].is_array() && !body["redactions"].empty();
  store::ArtifactMeta meta{body.value("id", ""), run_id, domain::ArtifactType::kEvidence, "1.0", std::string(store::kObservedEvidenceProducer),
                           "", std::move(source_refs), redacted ? "applied" : "none", now};
  return store::MakeArtifact(std::move(meta), body);
}

std::string ObservedEvidenceSummary(const Json& body) {
  return fmt::format("Observed a {} evidence artifact (provenance observed: captured by telic, not the host).",
                     body.value("kind", ""));
}

namespace {

bool HoldsLikelySecret(const Json& value) {
  if (value.is_string()) return grounding::ContainsLikelySecret(value.get_ref<const std::string&>());
  if (value.is_array() || value.is_object()) {
    for (const Json& item : value) {
      if (HoldsLikelySecret(item)) return true;
    }
  }
  return false;
}

}  // namespace

Result<store::ArtifactMeta> RunService::RecordObservedEvidence(const std::string& run_id, Json body) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
  if (run.IsTerminal()) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run {} has ended; no evidence can be added", run_id));
  }
  if (!body.is_object() || body.value("runId", "") != run_id) {
    return Fail(ErrorCode::kInvalidArgument, "Observed evidence runId does not match run_id");
  }
  TELIC_RETURN_IF_ERROR(ValidateArtifactBody("Evidence", body));
  if (HoldsLikelySecret(body)) {
    return Fail(ErrorCode::kInvalidArgument, "Observed evidence contains a likely credential; redact it before storing");
  }
  constexpr int kMaxAttempts = 16;
  for (int attempt = 1;; ++attempt) {
    auto stored = RecordObservedEvidenceAttempt(run_id, body);
    if (stored || attempt == kMaxAttempts || stored.error().code() != ErrorCode::kConflict) return stored;
    TELIC_ASSIGN_OR_RETURN(run, store_.GetRun(run_id));
    if (run.IsTerminal()) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run {} has ended; no evidence can be added", run_id));
    }
  }
}

Result<store::ArtifactMeta> RunService::RecordObservedEvidenceAttempt(const std::string& run_id, const Json& body) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
  TELIC_ASSIGN_OR_RETURN(RunSnapshot snapshot, RunSnapshot::LoadAt(store_, run, &artifact_index_, &bodies_));
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> source_refs, StoredSourceRefs(snapshot, body, {}));
  for (const std::string& ref : source_refs) {
    if (ref.rfind("artifact://", 0) != 0) continue;
    auto id = ArtifactIdFromUri(ref);
    if (!id || ref != snapshot.Uri(*id) || !snapshot.Find(*id)) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("Evidence source reference is missing or belongs to another run: {}", ref));
    }
  }
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::StoredArtifact artifact = ObservedEvidenceArtifact(run_id, body, source_refs, now);
  if (const store::ArtifactMeta* existing = snapshot.Find(artifact.meta.id)) {
    if (existing->type == domain::ArtifactType::kEvidence && existing->producer == artifact.meta.producer &&
        existing->sha256 == artifact.meta.sha256 && existing->source_refs == source_refs) {
      return *existing;
    }
    return Fail(ErrorCode::kAlreadyExists,
                fmt::format("Observed evidence conflicts with immutable artifact: {}", artifact.meta.id));
  }
  store::Change change;
  change.run = run;  // evidence does not bump the version; the artifact count guards the append
  change.expected_artifact_count = static_cast<int64_t>(snapshot.artifacts().size());
  change.artifacts.push_back(artifact);
  auto event = NewEvent(run, "controller", std::string(store::kEvidenceObservedEvent), ObservedEvidenceSummary(body), now);
  event.input_refs = source_refs;
  event.output_refs = {snapshot.Uri(artifact.meta.id)};
  change.events.push_back(std::move(event));
  snapshot.Release();
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run_id, run.version, change));
  return artifact.meta;
}

}  // namespace telic::controller
