// A trace event's hash input built the slow, obvious way: the object of its
// hashed members as a JSON tree, made canonical. Tests hold the stored hashes
// and the member-by-member writer (store::TraceEventHashInput) to it.
#pragma once

#include <string>

#include "base/canonical_json.h"
#include "store/records.h"

namespace telic::testing {

// With `with_redactions` false, the form every event had before events
// carried redactions; with it true, `redactions` is hashed when non-empty.
inline std::string TraceEventHashInputOfTree(const store::TraceEventRecord& e, bool with_redactions = true) {
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
            {"summary", e.summary},
            {"budgetSnapshot", e.budget_snapshot},
            {"prevHash", e.prev_hash}};
  if (with_redactions && e.redactions.is_array() && !e.redactions.empty()) j["redactions"] = e.redactions;
  return CanonicalJson(j);
}

}  // namespace telic::testing
