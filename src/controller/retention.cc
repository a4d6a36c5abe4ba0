#include "controller/retention.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace telic::controller {
namespace {

constexpr int kPage = 500;

// Every run with one of `statuses` (all runs when empty), newest created first.
Result<std::vector<store::RunRecord>> AllRuns(store::Store& store, std::optional<std::string> status) {
  std::vector<store::RunRecord> runs;
  store::RunQuery query;
  query.limit = kPage;
  if (status) {
    TELIC_ASSIGN_OR_RETURN(query.status, domain::ParseRunStatus(*status, "/statuses"));
  }
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::RunPage page, store.QueryRuns(query));
    for (auto& run : page.runs) runs.push_back(std::move(run));
    if (!page.next) return runs;
    query.before = page.next;
  }
}

// The newest-created first order of QueryRuns (created_at desc, run_id asc).
bool NewerFirst(const store::RunRecord& a, const store::RunRecord& b) {
  return a.created_at != b.created_at ? a.created_at > b.created_at : a.run_id < b.run_id;
}

}  // namespace

std::string CurrentUserAtHost() {
  std::string user = "unknown";
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) user = pw->pw_name;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return user + "@" + (host[0] ? host : "localhost");
}

Result<std::vector<store::RunTombstone>> DeleteRuns(RunService& service, const std::vector<std::string>& run_ids,
                                                    bool force, const store::DeletionRequest& request) {
  store::Store& store = service.store();
  for (const std::string& id : run_ids) {
    TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store.GetRun(id));
    if (!run.IsTerminal() && !force) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("Run {} is {}; pass --force to cancel it and delete it", id, run.status));
    }
  }
  std::vector<store::RunTombstone> tombstones;
  for (const std::string& id : run_ids) {
    TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store.GetRun(id));
    if (!run.IsTerminal()) {
      TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> action, service.GetNextAction(id));
      TELIC_ASSIGN_OR_RETURN(RunAndAction cancelled, service.CancelRun(id, action->value("id", ""), run.version));
      run = std::move(cancelled.run);
    }
    TELIC_ASSIGN_OR_RETURN(store::RunTombstone tombstone, store.DeleteRun(id, run.version, request));
    tombstones.push_back(std::move(tombstone));
  }
  service.ForgetCachedBodies();
  return tombstones;
}

Result<std::vector<store::RunRecord>> SelectPrunable(store::Store& store, const store::RetentionPolicy& policy,
                                                     int64_t now_ms) {
  TELIC_RETURN_IF_ERROR(store::CheckPruneStatuses(policy.statuses));
  std::vector<std::string> statuses = policy.statuses;
  if (statuses.empty()) statuses.assign(std::begin(store::kTerminalStatuses), std::end(store::kTerminalStatuses));
  std::vector<std::string> kept;
  if (policy.keep > 0) {
    store::RunQuery newest;
    newest.limit = std::min(policy.keep, store::kMaxRunPageSize);
    while (static_cast<int>(kept.size()) < policy.keep) {
      newest.limit = std::min(policy.keep - static_cast<int>(kept.size()), store::kMaxRunPageSize);
      TELIC_ASSIGN_OR_RETURN(store::RunPage page, store.QueryRuns(newest));
      for (const auto& run : page.runs) kept.push_back(run.run_id);
      if (!page.next) break;
      newest.before = page.next;
    }
  }
  std::string cutoff = FormatIsoMillis(now_ms - policy.older_than_ms);
  std::vector<store::RunRecord> selected;
  for (const std::string& status : statuses) {
    TELIC_ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs, AllRuns(store, status));
    for (auto& run : runs) {
      if (run.updated_at >= cutoff) continue;
      if (std::find(kept.begin(), kept.end(), run.run_id) != kept.end()) continue;
      selected.push_back(std::move(run));
    }
  }
  std::sort(selected.begin(), selected.end(), NewerFirst);
  return selected;
}

Result<std::vector<store::RunTombstone>> PruneRuns(RunService& service, const store::RetentionPolicy& policy,
                                                   const store::DeletionRequest& request) {
  TELIC_ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs,
                         SelectPrunable(service.store(), policy, service.clock().NowMillis()));
  std::vector<store::RunTombstone> tombstones;
  for (const auto& run : runs) {
    auto tombstone = service.store().DeleteRun(run.run_id, run.version, request);
    if (tombstone) {
      tombstones.push_back(std::move(*tombstone));
    } else if (tombstone.error().code() != ErrorCode::kConflict && tombstone.error().code() != ErrorCode::kNotFound) {
      return std::unexpected(tombstone.error());
    }
  }
  if (!tombstones.empty()) service.ForgetCachedBodies();
  return tombstones;
}

Json TombstoneToJson(const store::RunTombstone& t) {
  return Json{{"seq", t.seq},           {"runId", t.run_id},         {"finalTraceHash", t.final_trace_hash},
              {"traceEvents", t.trace_events}, {"artifacts", t.artifacts}, {"status", t.status},
              {"createdAt", t.created_at}, {"deletedAt", t.deleted_at}, {"deletedBy", t.deleted_by},
              {"reason", t.reason}};
}

}  // namespace telic::controller
