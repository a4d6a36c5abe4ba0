// Store changes shared by tests that need a run and nothing else of it.
#pragma once

#include <string>

#include "store/records.h"

namespace telic::testing {

// A new run `id` (report_only, running, context_grounding) with its
// run_started event and no artifacts.
inline store::Change MinimalRunChange(const std::string& id) {
  store::Change change;
  change.run.run_id = id;
  change.run.repository_root = "/repo";
  change.run.requested_mode = domain::Mode::kReportOnly;
  change.run.status = domain::RunStatus::kRunning;
  change.run.phase = domain::Phase::kContextGrounding;
  change.run.created_at = change.run.updated_at = "2026-12-02T00:00:00.000Z";
  store::TraceEventRecord started;
  started.event_id = id + "-e1";
  started.timestamp = change.run.created_at;
  started.actor = "controller";
  started.phase = "context_grounding";
  started.event_type = started.summary = "run_started";
  change.events.push_back(started);
  return change;
}

}  // namespace telic::testing
