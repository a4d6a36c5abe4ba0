// How a stored record becomes a row and back, written once for every
// backend. Each record's fields are listed in exactly one place (the
// ForEach*Field templates below): the stores encode and decode rows through
// them against a small row interface each backend implements, and the run
// bundle and the wire views name their fields from the same list.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "store/records.h"
#include "store/store.h"

namespace telic::store {

// One stored row, read by column position (a backend's result row).
class RowReader {
 public:
  virtual ~RowReader() = default;
  virtual bool IsNull(int column) const = 0;
  // The column's text; "" for NULL.
  virtual std::string Text(int column) const = 0;
  // The column as an integer; nullopt when it does not hold one.
  virtual std::optional<int64_t> Int(int column) const = 0;
};

// The values of one row to store, appended in column order (a backend's
// statement parameters).
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void Text(std::string_view value) = 0;
  virtual void Null() = 0;
  virtual void Int(int64_t value) = 0;
};

// What a reader from outside the store (a bundle) checks of a field beyond
// its type: an identifier (base/ids.h), a count (0..1,000,000) or a version
// (at least 1).
enum class FieldCheck { kNone, kId, kCount, kVersion };

// A field's names: its column in every backend and its key in the run
// bundle's JSON.
struct FieldName {
  std::string_view column;
  std::string_view json;
  FieldCheck check = FieldCheck::kNone;
};

// Calls visit(FieldName, field) for each field of a run record, in column
// order. `Run` is RunRecord or const RunRecord.
template <typename Run, typename Visit>
void ForEachRunField(Run& r, Visit&& visit) {
  visit(FieldName{"run_id", "runId", FieldCheck::kId}, r.run_id);
  visit(FieldName{"schema_version", "schemaVersion"}, r.schema_version);
  visit(FieldName{"repository_root", "repositoryRoot"}, r.repository_root);
  visit(FieldName{"requested_mode", "requestedMode"}, r.requested_mode);
  visit(FieldName{"topology", "topology"}, r.topology);
  visit(FieldName{"escalation_count", "escalationCount", FieldCheck::kCount}, r.escalation_count);
  visit(FieldName{"prior_run_id", "priorRunId", FieldCheck::kId}, r.prior_run_id);
  visit(FieldName{"status", "status"}, r.status);
  visit(FieldName{"phase", "phase"}, r.phase);
  visit(FieldName{"resume_phase", "resumePhase"}, r.resume_phase);
  visit(FieldName{"version", "version", FieldCheck::kVersion}, r.version);
  visit(FieldName{"prompt_revisions_remaining", "promptRevisionsRemaining", FieldCheck::kCount},
        r.prompt_revisions_remaining);
  visit(FieldName{"remediations_remaining", "remediationsRemaining", FieldCheck::kCount}, r.remediations_remaining);
  visit(FieldName{"outcome_hint", "outcomeHint"}, r.outcome_hint);
  visit(FieldName{"created_at", "createdAt"}, r.created_at);
  visit(FieldName{"updated_at", "updatedAt"}, r.updated_at);
  visit(FieldName{"extra_json", "extra"}, r.extra);
}

// The stored fields of an artifact's metadata (not seq, which the store assigns).
template <typename Meta, typename Visit>
void ForEachArtifactField(Meta& m, Visit&& visit) {
  visit(FieldName{"run_id", "runId", FieldCheck::kId}, m.run_id);
  visit(FieldName{"artifact_id", "id", FieldCheck::kId}, m.id);
  visit(FieldName{"type", "type"}, m.type);
  visit(FieldName{"schema_version", "schemaVersion"}, m.schema_version);
  visit(FieldName{"producer", "producer"}, m.producer);
  visit(FieldName{"sha256", "sha256"}, m.sha256);
  visit(FieldName{"source_refs_json", "sourceRefs"}, m.source_refs);
  visit(FieldName{"redaction", "redaction"}, m.redaction);
  visit(FieldName{"created_at", "createdAt"}, m.created_at);
}

// The stored fields of a trace event.
template <typename Event, typename Visit>
void ForEachEventField(Event& e, Visit&& visit) {
  visit(FieldName{"run_id", "runId", FieldCheck::kId}, e.run_id);
  visit(FieldName{"sequence", "sequence"}, e.sequence);
  visit(FieldName{"event_id", "eventId", FieldCheck::kId}, e.event_id);
  visit(FieldName{"timestamp", "timestamp"}, e.timestamp);
  visit(FieldName{"actor", "actor"}, e.actor);
  visit(FieldName{"phase", "phase"}, e.phase);
  visit(FieldName{"event_type", "eventType"}, e.event_type);
  visit(FieldName{"input_refs_json", "inputRefs"}, e.input_refs);
  visit(FieldName{"output_refs_json", "outputRefs"}, e.output_refs);
  visit(FieldName{"permission_decision_json", "permissionDecision"}, e.permission_decision);
  visit(FieldName{"summary", "summary"}, e.summary);
  visit(FieldName{"budget_snapshot_json", "budgetSnapshot"}, e.budget_snapshot);
  visit(FieldName{"redactions_json", "redactions"}, e.redactions);
  visit(FieldName{"prev_hash", "prevHash"}, e.prev_hash);
  visit(FieldName{"hash", "hash"}, e.hash);
  visit(FieldName{"traceparent", "traceparent"}, e.traceparent);
  visit(FieldName{"tracestate", "tracestate"}, e.tracestate);
}

// The stored fields of a run tombstone.
template <typename Tombstone, typename Visit>
void ForEachTombstoneField(Tombstone& t, Visit&& visit) {
  visit(FieldName{"seq", "seq"}, t.seq);
  visit(FieldName{"run_id", "runId", FieldCheck::kId}, t.run_id);
  visit(FieldName{"final_trace_hash", "finalTraceHash"}, t.final_trace_hash);
  visit(FieldName{"trace_events", "traceEvents"}, t.trace_events);
  visit(FieldName{"artifacts", "artifacts"}, t.artifacts);
  visit(FieldName{"status", "status"}, t.status);
  visit(FieldName{"created_at", "createdAt"}, t.created_at);
  visit(FieldName{"deleted_at", "deletedAt"}, t.deleted_at);
  visit(FieldName{"deleted_by", "deletedBy"}, t.deleted_by);
  visit(FieldName{"reason", "reason"}, t.reason);
}

// The column lists, comma-separated in column order ("run_id, schema_version, ...").
const std::string& RunColumns();
const std::string& ArtifactColumns();
const std::string& EventColumns();
const std::string& TombstoneColumns();
inline constexpr int kRunColumnCount = 17;
inline constexpr int kArtifactColumnCount = 9;
inline constexpr int kEventColumnCount = 17;
inline constexpr int kTombstoneColumnCount = 10;

// Appends a record's columns to `row`, in column order (JSON as canonical text).
void EncodeRun(const RunRecord& run, RowWriter& row);
void EncodeArtifactMeta(const ArtifactMeta& meta, RowWriter& row);
void EncodeEvent(const TraceEventRecord& event, RowWriter& row);

// Reads a record from `row`'s columns first..first+count-1. kDataLoss naming
// the table, the row's key and the column when a column is unreadable (JSON
// that does not parse, an integer column that holds none); never throws.
[[nodiscard]] Result<RunRecord> DecodeRun(const RowReader& row, int first = 0);
[[nodiscard]] Result<ArtifactMeta> DecodeArtifactMeta(const RowReader& row, int first = 0);
[[nodiscard]] Result<TraceEventRecord> DecodeEvent(const RowReader& row, int first = 0);
[[nodiscard]] Result<RunTombstone> DecodeTombstone(const RowReader& row, int first = 0);

// A record as one JSON object keyed by each field's FieldName::json, without
// the fields named in `omit` (optional text unset is null; JSON as is). The
// run bundle's "run" is RunRecordJson(run); the wire views omit fields.
Json RunRecordJson(const RunRecord& run, std::span<const std::string_view> omit = {});
Json ArtifactMetaJson(const ArtifactMeta& meta, std::span<const std::string_view> omit = {});

// The columns of a refused call as listed (run_id is the caller's).
inline constexpr std::string_view kRefusedCallColumns = "seq, at, tool, code, error, issues_json, run_version";
// A refused call of run `run_id` from `row`'s kRefusedCallColumns: kDataLoss
// "refused_calls row (<run>, <seq>): ..." when a column is unreadable.
[[nodiscard]] Result<RefusedCall> DecodeRefusedCall(std::string_view run_id, const RowReader& row);

// An integer column of a stored row: kDataLoss naming table, key and column
// when it holds no integer.
[[nodiscard]] Result<int64_t> DecodeIntColumn(const RowReader& row, int column, std::string_view table,
                                              std::string_view key, std::string_view column_name);

}  // namespace telic::store
