#include "controller/verify.h"

#include <vector>

#include <fmt/format.h>

namespace telic::controller {

Result<Json> VerifyRun(RunService& service, const std::string& run_id) {
  // The store's records, not RunService::GetRun: computing the next action
  // reads artifact bodies, and a body that fails its digest is a problem to
  // report here, not a reason to report nothing.
  store::Store& store = service.store();
  if (auto run = store.GetRun(run_id); !run) return std::unexpected(run.error());
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store.ListArtifacts(run_id));
  std::vector<std::string> problems;
  size_t artifacts_ok = 0;
  for (const auto& meta : artifacts) {
    auto artifact = service.GetArtifact(run_id, meta.id);
    if (artifact) {
      ++artifacts_ok;
    } else {
      problems.push_back(artifact.error().message());
    }
  }
  int64_t after = 0, events = 0;
  std::string prev;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::TracePage page, service.GetTrace(run_id, after, 500));
    for (const auto& event : page.events) {
      ++events;
      if (event.sequence != after + 1) problems.push_back(fmt::format("trace gap before sequence {}", event.sequence));
      if (event.prev_hash != prev) problems.push_back(fmt::format("event {} does not chain to its predecessor", event.sequence));
      if (store::ComputeTraceEventHash(event) != event.hash) problems.push_back(fmt::format("event {} hash mismatch", event.sequence));
      prev = event.hash;
      after = event.sequence;
    }
    if (!page.has_more) break;
  }
  return Json{{"ok", problems.empty()}, {"runId", run_id}, {"artifactsVerified", artifacts_ok},
              {"artifacts", artifacts.size()}, {"traceEvents", events}, {"problems", problems}};
}

}  // namespace telic::controller
