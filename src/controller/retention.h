// Run retention (issue 22): deleting runs and pruning old ones, shared by
// `telic runs delete|prune` and `telic serve`'s prune on start.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "controller/run_service.h"
#include "store/state_config.h"
#include "store/store.h"

namespace telic::controller {

// "user@host" of this process (deleted_by of a tombstone).
std::string CurrentUserAtHost();

// Deletes `run_ids` (Store::DeleteRun), in the given order. Every id is
// checked before anything is deleted: an unknown run (kNotFound) or, without
// `force`, a live one (kFailedPrecondition) fails the whole call with nothing
// deleted. With `force`, a live run is first cancelled through
// RunService::CancelRun, so its trace ends with run_cancelled and the
// tombstone's final hash covers that event. Returns the tombstones.
Result<std::vector<store::RunTombstone>> DeleteRuns(RunService& service, const std::vector<std::string>& run_ids,
                                                    bool force, const store::DeletionRequest& request);

// The runs `policy` selects at `now_ms`: status in policy.statuses (every
// terminal status when empty), updated_at older than now - older_than, and
// not among the policy.keep newest-created runs of the ledger. Newest first.
Result<std::vector<store::RunRecord>> SelectPrunable(store::Store& store, const store::RetentionPolicy& policy,
                                                     int64_t now_ms);

// Deletes what SelectPrunable selects (only ended runs; nothing is cancelled).
// A run changed or deleted by someone else meanwhile is skipped.
Result<std::vector<store::RunTombstone>> PruneRuns(RunService& service, const store::RetentionPolicy& policy,
                                                   const store::DeletionRequest& request);

// Tombstones as JSON: {"seq", "runId", "finalTraceHash", "traceEvents",
// "artifacts", "status", "createdAt", "deletedAt", "deletedBy", "reason"}.
Json TombstoneToJson(const store::RunTombstone& tombstone);

}  // namespace telic::controller
