// The records telic stores: runs, immutable artifacts, append-only trace events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "domain/vocabulary.h"

namespace telic::store {

// One run. Fields mirror the wire `run` object (PROTOCOL §8.1); `extra`
// holds controller state that has no wire field (an object, never null).
struct RunRecord {
  std::string run_id;
  std::string schema_version = "1.0";
  std::string repository_root;
  domain::Mode requested_mode = domain::Mode::kAnalyzeOnly;
  domain::Topology topology = domain::Topology::kStandard;
  int escalation_count = 0;
  std::optional<std::string> prior_run_id;
  domain::RunStatus status = domain::RunStatus::kRunning;
  domain::Phase phase = domain::Phase::kContextGrounding;
  std::optional<domain::Phase> resume_phase;
  int64_t version = 1;
  int prompt_revisions_remaining = 1;
  int remediations_remaining = 1;
  // The status the final report must honour (completed, partial, blocked).
  std::optional<domain::RunStatus> outcome_hint;
  std::string created_at;
  std::string updated_at;
  Json extra = Json::object();

  bool IsTerminal() const;
  bool operator==(const RunRecord&) const = default;
};

// Metadata of one immutable artifact (PROTOCOL §8.3).
struct ArtifactMeta {
  std::string id;
  std::string run_id;
  domain::ArtifactType type = domain::ArtifactType::kRunEnvelope;
  std::string schema_version = "1.0";
  std::string producer;
  std::string sha256;  // "sha256:<hex>" of the canonical body
  std::vector<std::string> source_refs;
  std::string redaction = "none";
  std::string created_at;
  // The store's insertion position (increasing within a run; gaps allowed).
  // Set by ListArtifacts/ListArtifactsAfter; 0 elsewhere.
  int64_t seq = 0;
  bool operator==(const ArtifactMeta&) const = default;
};

// Where an Evidence artifact's content comes from (issue 38). kObserved:
// captured by telic itself (its own diffs, the output of a check it ran, the
// work tree it compared); kClaimed: submitted by the host, which telic
// stored as it was told. The fact lives outside the body, which keeps the
// wire schema: an observed Evidence's producer is kObservedEvidenceProducer
// (a host's is "executor", and producers are assigned by the server, never
// by a caller), and the event that stored it is kEvidenceObservedEvent with
// that actor, so the trace's hash chain covers it. Ledgers written before
// observed evidence existed hold claimed evidence only and read so unchanged.
enum class Provenance { kObserved, kClaimed };
inline constexpr std::string_view kObservedEvidenceProducer = "controller";
inline constexpr std::string_view kEvidenceObservedEvent = "evidence_observed";
inline constexpr std::string_view kEvidenceClaimedEvent = "evidence_captured";

// The provenance of an Evidence artifact; nullopt for every other type.
std::optional<Provenance> ProvenanceOf(const ArtifactMeta& meta);
// "observed" | "claimed".
std::string_view ProvenanceName(Provenance provenance);

// A JSON column of a stored row, read back: kDataLoss naming the table, the
// row's key and the column when the bytes are not JSON (of the expected
// shape, for a list of strings). Row decoders of every backend use these, so
// a corrupt row is an error result, never an exception.
[[nodiscard]] Result<Json> DecodeJsonColumn(std::string_view table, std::string_view key, std::string_view column,
                                            std::string_view text);
[[nodiscard]] Result<std::vector<std::string>> DecodeListColumn(std::string_view table, std::string_view key,
                                                                std::string_view column, std::string_view text);

// A vocabulary column of a stored row (a run's status, phase, mode or
// topology, an artifact's type), read back with `parse`, a domain::Parse*
// function: kDataLoss "<table> row <key>: <column> is not readable (...)"
// when the text is not one of the vocabulary's words.
Error UnreadableColumn(std::string_view table, std::string_view key, std::string_view column, const Error& cause);
template <typename E>
[[nodiscard]] Result<E> DecodeWordColumn(std::string_view table, std::string_view key, std::string_view column,
                                         std::string_view text, Result<E> (*parse)(std::string_view, std::string_view)) {
  Result<E> value = parse(text, column);
  if (!value) return std::unexpected(UnreadableColumn(table, key, column, value.error()));
  return value;
}

// The stored name of an optional vocabulary value (its domain::Name; the
// internal name of a phase); nullopt stays nullopt.
template <typename E>
std::optional<std::string> OptionalName(const std::optional<E>& value) {
  if (!value) return std::nullopt;
  return std::string(domain::Name(*value));
}

// True when `run` was started under the require_observed observation policy
// (the controller writes it at start as extra.observation.policy): its
// verifications must be telic's own, never the host's word.
bool RequiresObservedWork(const RunRecord& run);

// An artifact with its canonical body (the exact bytes its sha256 covers).
struct StoredArtifact {
  ArtifactMeta meta;
  std::string canonical_body;
};

// One trace event. `sequence`, `prev_hash` and `hash` are assigned by the
// store when the event is appended: sequence counts from 1 per run with no
// gaps; hash = sha256 over prev_hash and the event's canonical form, so the
// events of a run form a hash chain (the first event's prev_hash is "").
struct TraceEventRecord {
  std::string event_id;
  std::string run_id;
  int64_t sequence = 0;
  std::string timestamp;
  std::string actor;
  // The internal name of the run's phase when the event was written. Kept as
  // text, not domain::Phase: it is inside the hash chain, and a ledger or
  // bundle must verify byte for byte whatever text it holds.
  std::string phase;
  std::string event_type;  // internal event type
  std::vector<std::string> input_refs;
  std::vector<std::string> output_refs;
  std::optional<Json> permission_decision;
  std::string summary;
  Json budget_snapshot = Json::object();
  // What was redacted from this event's caller-supplied text before it was
  // stored, in order: [{"field": "<where>", "category": "credential"|"secret"}]
  // (an array, empty when nothing was). Projected as TraceEvent.redactions.
  Json redactions = Json::array();
  std::string prev_hash;
  std::string hash;
  // The W3C trace context of the host request that caused this event
  // (store/trace_context.h), when it sent a valid one. Stored beside the
  // event, outside its hash: never part of TraceEventHashInput.
  std::optional<std::string> traceparent;
  std::optional<std::string> tracestate;
};

// Redacts the caller-supplied text of `event` before it is stored: the
// summary and every string inside permission_decision. Each replaced value
// appends {"field": <JSON pointer of the event field>, "category": ...} to
// event.redactions. Idempotent: text redacted once has nothing left to
// redact, so a second call adds nothing. Every store calls this on every
// event it appends, before the hash is computed.
void RedactTraceEvent(TraceEventRecord& event);

// `value` with every string inside it redacted (object keys are kept): for
// decisions and messages returned to a caller.
Json RedactedJson(Json value);

// The canonical JSON the hash chain covers (every field but `hash`).
std::string TraceEventHashInput(const TraceEventRecord& event);
// sha256 ref of TraceEventHashInput(event).
std::string ComputeTraceEventHash(const TraceEventRecord& event);

// "artifact://<runId>/<artifactId>"
std::string ArtifactUri(const std::string& run_id, const std::string& artifact_id);
// "trace://<runId>/event-NNNN" (at least four digits).
std::string TraceEventUri(const std::string& run_id, int64_t sequence);

// Builds a StoredArtifact from a parsed body: canonicalises it and computes its digest.
StoredArtifact MakeArtifact(ArtifactMeta meta, const Json& body);

}  // namespace telic::store
