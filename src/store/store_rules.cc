#include "store/store_rules.h"

#include <map>

#include <fmt/format.h>

#include "base/sha256.h"
#include "store/task_store.h"

namespace telic::store {

Error RunNotFound(std::string_view run_id) {
  return Error(ErrorCode::kNotFound, fmt::format("Run not found: {}", run_id));
}

Error RunAlreadyExists(std::string_view run_id) {
  return Error(ErrorCode::kAlreadyExists, fmt::format("Run already exists: {}", run_id));
}

Error RunVersionConflict() {
  return Error(ErrorCode::kConflict, "Concurrent run update detected; reload and retry with the latest version");
}

Error ArtifactAlreadyExists(std::string_view artifact_id) {
  return Error(ErrorCode::kAlreadyExists, fmt::format("Artifact already exists in this run: {}", artifact_id));
}

Error ArtifactNotFound(std::string_view artifact_id) {
  return Error(ErrorCode::kNotFound, fmt::format("Artifact not found: {}", artifact_id));
}

namespace {

Status CheckVersion(std::string_view run_id, std::optional<int64_t> expected, std::optional<int64_t> stored) {
  if (!expected) {
    if (stored) return std::unexpected(RunAlreadyExists(run_id));
    return Ok();
  }
  if (!stored) return std::unexpected(RunNotFound(run_id));
  if (*stored != *expected) return std::unexpected(RunVersionConflict());
  return Ok();
}

Status CheckArtifacts(int64_t stored, const Change& change) {
  if (change.artifacts.empty()) return Ok();
  if (change.expected_artifact_count && stored != *change.expected_artifact_count) {
    return Fail(ErrorCode::kConflict, std::string(kConcurrentAppend));
  }
  if (stored + static_cast<int64_t>(change.artifacts.size()) > static_cast<int64_t>(kMaxArtifactsPerRun)) {
    return Fail(ErrorCode::kResourceExhausted, fmt::format("Run artifact limit of {} reached", kMaxArtifactsPerRun));
  }
  for (const StoredArtifact& a : change.artifacts) {
    if (a.canonical_body.size() > kMaxArtifactBodyBytes) {
      return Fail(ErrorCode::kResourceExhausted, fmt::format("Artifact exceeds {} byte limit", kMaxArtifactBodyBytes));
    }
  }
  return Ok();
}

Status CheckTrace(int64_t stored, const Change& change) {
  if (change.events.empty()) return Ok();
  if (change.expected_trace_length && stored != *change.expected_trace_length) {
    return Fail(ErrorCode::kConflict, std::string(kConcurrentTraceAppend));
  }
  if (stored + static_cast<int64_t>(change.events.size()) > kMaxTraceEventsPerRun) {
    return Fail(ErrorCode::kResourceExhausted, fmt::format("Run trace limit of {} reached", kMaxTraceEventsPerRun));
  }
  return Ok();
}

}  // namespace

Status CheckChange(std::string_view run_id, std::optional<int64_t> expected_version, const StoredRunState& stored,
                   const Change& change) {
  TELIC_RETURN_IF_ERROR(CheckVersion(run_id, expected_version, stored.version));
  TELIC_RETURN_IF_ERROR(CheckArtifacts(stored.artifacts, change));
  return CheckTrace(stored.trace_length, change);
}

Result<std::vector<TraceEventRecord>> SealEvents(std::string_view run_id, const std::vector<TraceEventRecord>& events,
                                                 int64_t sequence, std::string prev_hash) {
  std::vector<TraceEventRecord> sealed;
  sealed.reserve(events.size());
  for (TraceEventRecord e : events) {
    if (!e.redactions.is_array()) return Fail(ErrorCode::kInternal, "trace event redactions must be a JSON array");
    e.run_id = std::string(run_id);
    e.sequence = ++sequence;
    e.prev_hash = prev_hash;
    RedactTraceEvent(e);  // nothing caller-supplied is stored unredacted
    e.hash = ComputeTraceEventHash(e);
    prev_hash = e.hash;
    sealed.push_back(std::move(e));
  }
  return sealed;
}

Result<StoredArtifact> VerifiedArtifact(StoredArtifact artifact) {
  if (Sha256Ref(artifact.canonical_body) != artifact.meta.sha256) {
    return Fail(ErrorCode::kDataLoss, fmt::format("Artifact integrity check failed: {}", artifact.meta.id));
  }
  return artifact;
}

Status CheckTombstonePageSize(int limit) {
  if (limit < 1 || limit > kMaxRunPageSize) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("Tombstone page size must be between 1 and {}", kMaxRunPageSize));
  }
  return Ok();
}

// ---- the task graph ----

namespace {

Error TaskConflict(std::string_view task_id) {
  return Error(ErrorCode::kConflict, fmt::format("Concurrent task update detected on {}; reload and retry", task_id));
}

// The reads the change was computed from, the scope guard and the per-scope limit.
Status CheckTaskReads(const TaskChange& change, TaskChangeRows& rows) {
  for (const auto& [id, version] : change.reads) {
    TELIC_ASSIGN_OR_RETURN(std::optional<int64_t> stored, rows.TaskVersion(id));
    if (!stored || *stored != version) return std::unexpected(TaskConflict(id));
  }
  if (change.expected_scope) {
    TELIC_ASSIGN_OR_RETURN(int64_t tasks, rows.CountTasks(change.expected_scope->run_id));
    if (tasks != change.expected_scope->tasks) return Fail(ErrorCode::kConflict, kConcurrentScopeChange);
  }
  std::map<std::optional<std::string>, int64_t> added;
  for (const auto& t : change.inserted_tasks) ++added[t.run_id];
  for (const auto& [run, n] : added) {
    TELIC_ASSIGN_OR_RETURN(int64_t tasks, rows.CountTasks(run));
    if (tasks + n > static_cast<int64_t>(kMaxTasksPerScope)) {
      return Fail(ErrorCode::kResourceExhausted, fmt::format("Task graph limit of {} tasks reached", kMaxTasksPerScope));
    }
  }
  return Ok();
}

Status WriteTasksAndStories(const TaskChange& change, TaskChangeRows& rows) {
  for (const auto& t : change.inserted_tasks) {
    TELIC_ASSIGN_OR_RETURN(bool inserted, rows.InsertTask(t));
    if (!inserted) return Fail(ErrorCode::kAlreadyExists, fmt::format("Task already exists: {}", t.task_id));
  }
  for (const auto& t : change.updated_tasks) {
    TELIC_ASSIGN_OR_RETURN(bool updated, rows.UpdateTask(t));
    if (!updated) return std::unexpected(TaskConflict(t.task_id));
  }
  for (const auto& s : change.inserted_stories) {
    TELIC_ASSIGN_OR_RETURN(bool inserted, rows.InsertStory(s));
    if (!inserted) return Fail(ErrorCode::kAlreadyExists, fmt::format("Story already exists: {}", s.story_id));
  }
  for (const auto& s : change.updated_stories) {
    TELIC_ASSIGN_OR_RETURN(bool updated, rows.UpdateStory(s));
    if (!updated) {
      return Fail(ErrorCode::kConflict, fmt::format("Concurrent story update detected on {}; reload and retry", s.story_id));
    }
  }
  return Ok();
}

}  // namespace

Status ApplyTaskChange(const TaskChange& change, TaskChangeRows& rows) {
  TELIC_RETURN_IF_ERROR(CheckTaskReads(change, rows));
  TELIC_RETURN_IF_ERROR(WriteTasksAndStories(change, rows));
  for (const auto& a : change.inserted_approvals) TELIC_RETURN_IF_ERROR(rows.InsertApproval(a));
  for (const auto& id : change.used_approvals) {
    TELIC_ASSIGN_OR_RETURN(bool used, rows.UseApproval(id, change.now));
    if (!used) return Fail(ErrorCode::kFailedPrecondition, "Approval already used; a new approval is required");
  }
  for (const auto& e : change.events) TELIC_RETURN_IF_ERROR(rows.InsertEvent(e));
  return Ok();
}

}  // namespace telic::store
