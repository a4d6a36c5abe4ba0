// The Store interface: every state change of a run is one transaction.
//
// Implementations: SqliteStore (embedded default) and PgStore (PostgreSQL,
// shared by several instances); OpenStore picks one from --db. Callers never
// know which one they hold.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace telic::store {

// Hard limits enforced inside the write transaction (PROTOCOL §18).
inline constexpr size_t kMaxArtifactsPerRun = 2048;
// The kConflict message when Change::expected_artifact_count no longer holds.
inline constexpr std::string_view kConcurrentAppend =
    "Concurrent artifact append detected; reload and retry with the latest state";
// The kConflict message when Change::expected_trace_length no longer holds.
inline constexpr std::string_view kConcurrentTraceAppend =
    "Concurrent trace append detected; reload and retry with the latest state";
inline constexpr int64_t kMaxTraceEventsPerRun = 10000;
inline constexpr size_t kMaxArtifactBodyBytes = 2 * 1024 * 1024;

// A unit of change to one run: its new record, the artifacts it adds and the
// trace events it appends (their sequence and hashes are assigned on append).
struct Change {
  RunRecord run;
  std::vector<StoredArtifact> artifacts;
  std::vector<TraceEventRecord> events;
  // When set (and `artifacts` is not empty), the change applies only if the
  // run holds exactly this many artifacts; otherwise kConflict. It guards
  // appends that do not bump the run version (supporting artifacts).
  std::optional<int64_t> expected_artifact_count;
  // When set (and `events` is not empty), the change applies only if the
  // run's trace holds exactly this many events; otherwise kConflict with
  // kConcurrentTraceAppend. It guards events recorded without bumping the run
  // version (DENY permission_checked records), so a check-then-append of
  // one event cannot store it twice when two writers race.
  std::optional<int64_t> expected_trace_length;
};

struct TracePage {
  std::vector<TraceEventRecord> events;
  bool has_more = false;
};

inline constexpr int kMaxRunPageSize = 1000;

// One page of runs in creation order, newest first: created_at descending,
// then run_id ascending (bytewise, the same on every backend, so equal
// timestamps have a fixed order). created_at never changes, so following
// `next` from the first page lists every run that existed when that page was
// read exactly once, however runs are updated meanwhile; runs created later
// sort before the first page and are not listed.
struct RunQuery {
  int limit = 20;                     // 1..kMaxRunPageSize
  std::optional<std::string> before;  // a cursor (RunPage::next): only the runs after it in this order
  std::optional<domain::RunStatus> status;  // only runs with this status
  std::optional<domain::Mode> mode;         // only runs with this requested_mode
  std::optional<domain::Topology> topology;  // only runs with this (current) topology
  // Only runs whose original request (the run's first UserMessage, the one
  // without source refs) contains this text, ASCII letters compared without
  // case. It is matched inside the stored requests, so such a page reads
  // the runs it skips as well.
  std::optional<std::string> request_contains;
  // Only runs whose id starts with this text or whose original request
  // contains it (both ASCII letters without case): the viewer's search box.
  std::optional<std::string> search;
  // Also count every run the filters match (RunPage::total), ignoring the
  // cursor and the limit. Costs a second query; a text filter scans.
  bool with_total = false;
};

struct RunPage {
  std::vector<RunRecord> runs;
  // Every run the query's filters match, when RunQuery::with_total was set.
  std::optional<int64_t> total;
  // The cursor of the next page (the run id of the last run here); unset
  // when no run follows. A cursor is a run id, so it never goes stale.
  std::optional<std::string> next;
};

// kInvalidArgument unless 1 <= query.limit <= kMaxRunPageSize.
inline Status CheckRunQuery(const RunQuery& query) {
  if (query.limit < 1 || query.limit > kMaxRunPageSize) {
    return Fail(ErrorCode::kInvalidArgument,
                "Run page size must be between 1 and " + std::to_string(kMaxRunPageSize));
  }
  return Ok();
}

// The kInvalidArgument error for a `before` cursor that names no run.
inline Error UnknownRunCursor(std::string_view cursor) {
  return Error(ErrorCode::kInvalidArgument,
               "Unknown cursor " + std::string(cursor) + ": no run with that id in this ledger");
}

// What `telic runs delete` records about a run it deleted (issue 22): the
// run's identity and final trace hash, so that deletion itself is auditable.
struct RunTombstone {
  int64_t seq = 0;  // assigned by the store, increasing
  std::string run_id;
  std::string final_trace_hash;  // the last trace event's hash ("" for an empty trace)
  int64_t trace_events = 0;
  int64_t artifacts = 0;
  std::string status;      // the run's status when it was deleted
  std::string created_at;  // the run's creation time
  std::string deleted_at;
  std::string deleted_by;  // who asked (user@host, or "telic serve" for retention on start)
  std::string reason;      // "delete" | "prune" | "retention"
};

// A tool call about a run that telic refused (a rejected submission, a stale
// token, arguments that failed their schema): kept beside the run so the
// viewer can say where a run failed. Not part of the run: recording one
// changes neither its version, its artifacts nor its hash-chained trace.
struct RefusedCall {
  int64_t seq = 0;  // assigned by the store: 1, 2, ... per run
  std::string run_id;
  std::string at;     // ISO-8601 UTC, when telic refused it
  std::string tool;   // e.g. "telic_submit_artifact"
  std::string code;   // the error's stable code, e.g. "invalid_argument"
  std::string error;  // the refusal, as the caller was told (already redacted)
  Json issues = Json::array();  // [{pointer, code, message}], at most kMaxIssuesPerRefusedCall
  int64_t run_version = 0;      // the run's version when it was refused
};
// At most this many refused calls are kept per run; later ones are not recorded.
inline constexpr int64_t kMaxRefusedCallsPerRun = 1000;
inline constexpr size_t kMaxIssuesPerRefusedCall = 32;

// Who deletes a run, when, and why (RunTombstone's last three fields).
struct DeletionRequest {
  std::string deleted_at;
  std::string deleted_by;
  std::string reason;
};

// What the tool results of one run cost a host model's context (issue 39):
// the calls of one tool and the bytes of their results (the text content,
// which is the compact JSON of structuredContent).
struct ContextCost {
  std::string tool;
  int64_t calls = 0;
  int64_t bytes = 0;
  bool operator==(const ContextCost&) const = default;
};

class Store {
 public:
  virtual ~Store() = default;

  // Adds `costs` to the context cost kept for `run_id` (summed per tool, by
  // any number of processes). Kept beside the run, outside its version and
  // trace hash chain; nothing is kept for a run that does not exist (or no
  // longer does), and a deleted run's costs go with it. A store that keeps
  // no context cost ignores the call.
  virtual Status AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
    (void)run_id, (void)costs;
    return Ok();
  }
  // Adds `costs` like AddContextCost, but may hold them until a later write
  // of the same run commits and store them in that transaction (no commit of
  // their own), or until FlushContextCosts. What is held is lost if the
  // process dies first: a statistic, never an acknowledged write. Default:
  // AddContextCost at once, its error dropped.
  virtual void DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) {
    (void)AddContextCost(run_id, costs);
  }
  // Stores every cost DeferContextCost holds.
  virtual Status FlushContextCosts() { return Ok(); }
  // The run's context cost per tool, by tool name; empty when none was kept.
  virtual Result<std::vector<ContextCost>> GetContextCost(std::string_view run_id) {
    (void)run_id;
    return std::vector<ContextCost>{};
  }

  // Creates a new run with its first artifacts and events, atomically.
  // kAlreadyExists if the run id is taken.
  virtual Status CreateRun(const Change& change) = 0;

  // Applies `change` to an existing run as one transaction, only if the
  // stored run version equals `expected_version` (compare-and-set); the run
  // record is replaced by change.run. Errors: kNotFound (no such run),
  // kConflict (the version moved: another writer won; nothing is stored),
  // kAlreadyExists (an artifact id is taken in this run), kResourceExhausted
  // (artifact, trace or body limits). On any error nothing is stored.
  virtual Status ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) = 0;

  virtual Result<RunRecord> GetRun(std::string_view run_id) = 0;

  // Newest first: updated_at descending, then run_id ascending.
  virtual Result<std::vector<RunRecord>> ListRuns(int limit) = 0;

  // One page of runs (see RunQuery), filtered by status and mode, read from
  // an index. Errors: kInvalidArgument for a limit out of range or a cursor
  // naming no run.
  virtual Result<RunPage> QueryRuns(const RunQuery& query) = 0;

  // Artifact metadata of a run in insertion order.
  Result<std::vector<ArtifactMeta>> ListArtifacts(std::string_view run_id) { return ListArtifactsAfter(run_id, 0); }
  // The artifacts whose seq is greater than `after_seq`, in insertion order.
  // Appends to one run commit in seq order, so a reader that has seen every
  // artifact up to seq N misses none by asking for those after N.
  virtual Result<std::vector<ArtifactMeta>> ListArtifactsAfter(std::string_view run_id, int64_t after_seq) = 0;

  // The run's record and ListArtifactsAfter(run_id, after_seq): what a read
  // of a run's state needs, in one call. This default makes the two calls,
  // the record first (so the artifacts are never older than the record); a
  // networked store answers both in one round trip. kNotFound as GetRun.
  struct RunAndArtifacts {
    RunRecord run;
    std::vector<ArtifactMeta> appended;
  };
  virtual Result<RunAndArtifacts> GetRunAndArtifactsAfter(std::string_view run_id, int64_t after_seq) {
    auto run = GetRun(run_id);
    if (!run) return std::unexpected(run.error());
    auto appended = ListArtifactsAfter(run_id, after_seq);
    if (!appended) return std::unexpected(appended.error());
    return RunAndArtifacts{std::move(*run), std::move(*appended)};
  }

  // One artifact with its body. The body is re-hashed on every read:
  // kDataLoss ("Artifact integrity check failed") on mismatch,
  // kNotFound ("Artifact not found: <id>") if the run has no such artifact.
  virtual Result<StoredArtifact> GetArtifact(std::string_view run_id, std::string_view artifact_id) = 0;

  // Events with sequence > after_sequence, ascending, at most `limit`.
  virtual Result<TracePage> GetTrace(std::string_view run_id, int64_t after_sequence, int limit) = 0;

  // Deletes a run through the one route the append-only guards allow, in one
  // transaction: records its tombstone, then removes its artifacts with their
  // bodies (on PostgreSQL, the blobs no other run references), its trace,
  // its task graph rows (tasks, events, stories, approvals) and the run row. Applies only if the stored version
  // equals `expected_version` (kConflict otherwise; kNotFound for no run).
  // The run's state is not judged here: callers cancel a live run first.
  virtual Result<RunTombstone> DeleteRun(std::string_view run_id, int64_t expected_version,
                                         const DeletionRequest& request) = 0;

  // Tombstones, newest first, at most `limit` (1..kMaxRunPageSize).
  virtual Result<std::vector<RunTombstone>> ListTombstones(int limit) = 0;

  // Appends `call` to its run's refused-call log (seq assigned here) and
  // returns its seq; 0 when the run already holds kMaxRefusedCallsPerRun.
  // Deleting the run deletes its log. A store without a log: kFailedPrecondition.
  virtual Result<int64_t> RecordRefusedCall(const RefusedCall& call) {
    (void)call;
    return Fail(ErrorCode::kFailedPrecondition, "this store keeps no refused-call log");
  }

  // The run's refused calls with seq > after_seq, oldest first, at most `limit`.
  virtual Result<std::vector<RefusedCall>> ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) {
    (void)run_id, (void)after_seq, (void)limit;
    return std::vector<RefusedCall>{};
  }
};

}  // namespace telic::store
