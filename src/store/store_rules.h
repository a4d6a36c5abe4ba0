// The rules of the Store and TaskStore contracts that do not depend on a
// backend, written once: the version and limit checks of a run change and
// their error texts, the sealing of trace events into the hash chain, the
// re-hash of an artifact read back, and the checks of a task-graph change.
// Each backend reads what the rules need inside its write transaction, calls
// them, and keeps only its SQL, connections and commit strategy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/records.h"
#include "store/store.h"
#include "store/task_records.h"

namespace telic::store {

// ---- errors every backend reports with the same text ----
Error RunNotFound(std::string_view run_id);
Error RunAlreadyExists(std::string_view run_id);
// The compare-and-set of a run's version failed: another writer won.
Error RunVersionConflict();
Error ArtifactAlreadyExists(std::string_view artifact_id);
Error ArtifactNotFound(std::string_view artifact_id);

// What a backend read of a run inside its write transaction, before any write.
struct StoredRunState {
  std::optional<int64_t> version;  // nullopt: the run does not exist
  int64_t artifacts = 0;           // its artifact count (read when the change adds artifacts)
  int64_t trace_length = 0;        // its last trace sequence (read when the change appends events)
  std::string trace_hash;          // its last trace event's hash ("" when it has none)
};

// The checks of Store::CreateRun (expected_version unset) and
// Store::ApplyChange, in this order: the run exists or not as the call
// needs, its version is the expected one (kConflict otherwise); then, when
// the change adds artifacts, Change::expected_artifact_count (kConflict),
// kMaxArtifactsPerRun and kMaxArtifactBodyBytes (kResourceExhausted); then,
// when it appends events, Change::expected_trace_length (kConflict) and
// kMaxTraceEventsPerRun (kResourceExhausted).
[[nodiscard]] Status CheckChange(std::string_view run_id, std::optional<int64_t> expected_version,
                                 const StoredRunState& stored, const Change& change);

// `events` as they are stored for run `run_id` after a trace of length
// `sequence` whose last hash is `prev_hash`: numbered on, redacted
// (RedactTraceEvent), and chained (prev_hash, hash). kInternal when an
// event's redactions are not an array.
[[nodiscard]] Result<std::vector<TraceEventRecord>> SealEvents(std::string_view run_id,
                                                               const std::vector<TraceEventRecord>& events,
                                                               int64_t sequence, std::string prev_hash);

// `artifact` as read back, once its body is re-hashed: kDataLoss ("Artifact
// integrity check failed: <id>") when the body's digest is not its sha256.
[[nodiscard]] Result<StoredArtifact> VerifiedArtifact(StoredArtifact artifact);

// kInvalidArgument unless 1 <= limit <= kMaxRunPageSize (ListTombstones).
[[nodiscard]] Status CheckTombstonePageSize(int limit);

// ---- the task graph (TaskStore::Apply) ----

// What a backend offers the task-change rules: the reads they check and the
// writes they make, each inside the backend's one transaction. The bool
// answers say whether the row was written (false: the id is taken, or the
// version or the approval's state moved).
class TaskChangeRows {
 public:
  virtual ~TaskChangeRows() = default;
  // The stored version of a task; nullopt when there is none.
  virtual Result<std::optional<int64_t>> TaskVersion(const std::string& task_id) = 0;
  // The number of tasks in a scope (a run's graph, or the standalone one).
  virtual Result<int64_t> CountTasks(const std::optional<std::string>& run_id) = 0;
  virtual Result<bool> InsertTask(const TaskRecord& task) = 0;
  // Applies only when the stored version is task.version - 1.
  virtual Result<bool> UpdateTask(const TaskRecord& task) = 0;
  virtual Result<bool> InsertStory(const StoryRecord& story) = 0;
  virtual Result<bool> UpdateStory(const StoryRecord& story) = 0;
  virtual Status InsertApproval(const ApprovalRecord& approval) = 0;
  // Marks an unused approval used at `now`.
  virtual Result<bool> UseApproval(const std::string& approval_id, const std::string& now) = 0;
  virtual Status InsertEvent(const TaskEventRecord& event) = 0;
};

// TaskStore::Apply's rules on `rows`, in order: every read version still
// holds, the expected scope size holds (kConflict), no scope passes
// kMaxTasksPerScope (kResourceExhausted); then the writes: task inserts
// (kAlreadyExists) and compare-and-set updates (kConflict), the same for
// stories, approvals (a used one: kFailedPrecondition), events. The caller
// commits when this succeeds and rolls back otherwise.
[[nodiscard]] Status ApplyTaskChange(const TaskChange& change, TaskChangeRows& rows);

}  // namespace telic::store
