// TaskService's run mirroring: SyncRun replays a run's accepted WorkPlans
// and WorkResults into its task graph (task_service.h).
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "graph/task_scope.h"
#include "graph/task_service.h"

namespace telic::graph {

namespace {

// The id in "artifact://<run>/<id>", or "".
std::string ArtifactIdOf(std::string_view uri) {
  constexpr std::string_view kPrefix = "artifact://";
  if (uri.substr(0, kPrefix.size()) != kPrefix) return "";
  size_t slash = uri.rfind('/');
  return slash < kPrefix.size() ? "" : std::string(uri.substr(slash + 1));
}

// The stored body of `meta`, which must be a JSON object.
Result<Json> StoredBody(store::Store& runs, const std::string& run_id, const store::ArtifactMeta& meta) {
  TELIC_ASSIGN_OR_RETURN(store::StoredArtifact stored, runs.GetArtifact(run_id, meta.id));
  TELIC_ASSIGN_OR_RETURN(Json parsed, ParseStoredJson(stored.canonical_body));
  if (!parsed.is_object()) return Fail(ErrorCode::kDataLoss, fmt::format("stored {} {} is not an object", meta.type, meta.id));
  return parsed;
}

}  // namespace

Result<SyncSummary> TaskService::SyncRun(const std::string& run_id) {
  // Another writer (instance, CLI) may sync the same run at once: a commit
  // whose scope changed since it was read is retried on the new state.
  constexpr int kMaxAttempts = 8;
  for (int attempt = 1;; ++attempt) {
    auto synced = SyncRunOnce(run_id);
    if (synced || attempt == kMaxAttempts || synced.error().code() != ErrorCode::kConflict) return synced;
  }
}

Result<SyncSummary> TaskService::SyncRunOnce(const std::string& run_id) {
  if (!runs_) return Fail(ErrorCode::kFailedPrecondition, "the task graph has no run store to mirror");
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, runs_->GetRun(run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts,
                         runs_->ListArtifactsAfter(run_id, SyncedThrough(run_id)));
  Scope scope(*this, run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  scope.GuardScope();  // an import decided on "not there yet" must still hold at commit
  std::unordered_map<std::string, int> by_name;
  for (size_t i = 0; i < scope.tasks().size(); ++i) by_name[scope.tasks()[i].name] = static_cast<int>(i);
  SyncSummary summary;
  for (const store::ArtifactMeta& meta : artifacts) {
    if (meta.type == domain::ArtifactType::kWorkPlan) {
      TELIC_ASSIGN_OR_RETURN(Json plan, StoredBody(*runs_, run_id, meta));
      const Json nodes = plan.value("nodes", Json::array());
      if (!nodes.is_array() || nodes.empty() || !nodes[0].is_object() ||
          by_name.contains(meta.id + "/" + nodes[0].value("id", ""))) {
        continue;
      }
      // A plan the graph cannot hold (the controller accepted it, so this
      // is a rule mismatch) is skipped and counted, never blocking the rest.
      auto created = ImportInto(scope, plan, 0);
      if (!created) {
        summary.skipped_plans.push_back(fmt::format("{}: {}", meta.id, created.error().message()));
        continue;
      }
      for (int index : *created) by_name[scope.task(index).name] = index;
      summary.imported += static_cast<int>(created->size());
    } else if (meta.type == domain::ArtifactType::kWorkResult) {
      TELIC_ASSIGN_OR_RETURN(Json result, StoredBody(*runs_, run_id, meta));
      auto found = by_name.find(ArtifactIdOf(result.value("workPlanRef", "")) + "/" + result.value("nodeId", ""));
      if (found == by_name.end() || domain::IsTerminal(scope.task(found->second).state)) continue;
      int index = found->second;
      std::string status = result.value("status", "");
      scope.AddEvent(index, "work_result_accepted", "controller", {{"workResult", meta.id}, {"status", status}});
      // A WorkResult's status "completed" completes its task; every other status fails it.
      if (domain::TaskStateNamed(status) == TaskState::kCompleted) {
        TELIC_RETURN_IF_ERROR(scope.Complete(index));
        summary.completed += 1;
      } else {
        scope.Terminate(index, TaskState::kFailed, fmt::format("WorkResult {} reported {}", meta.id, status), "controller");
        summary.failed += 1;
      }
    }
  }
  if (run.IsTerminal()) summary.cancelled += scope.CancelOpenTasks(fmt::format("run ended {}", run.status));
  if (summary.imported + summary.completed + summary.failed + summary.cancelled > 0) TELIC_RETURN_IF_ERROR(scope.Commit());
  if (!artifacts.empty()) MarkSynced(run_id, artifacts.back().seq);
  return summary;
}

int64_t TaskService::SyncedThrough(const std::string& run_id) {
  std::lock_guard lock(synced_mutex_);
  auto found = synced_through_.find(run_id);
  return found == synced_through_.end() ? 0 : found->second;
}

void TaskService::MarkSynced(const std::string& run_id, int64_t seq) {
  std::lock_guard lock(synced_mutex_);
  int64_t& through = synced_through_[run_id];
  through = std::max(through, seq);
}

}  // namespace telic::graph
