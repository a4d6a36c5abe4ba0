#include "controller/run_service.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/text.h"
#include "controller/next_action.h"
#include "controller/topology.h"
#include "policy/permission_set.h"

namespace telic::controller {
namespace {

std::vector<std::string> SortedUnique(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  return items;
}

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Validates the authorization extras (§6.1 "Processing") and returns the
// normalised, de-duplicated, sorted network domains.
Result<std::vector<std::string>> CheckAuthorizationExtras(const StartRunRequest& r,
                                                          const std::vector<std::string>& host,
                                                          const std::vector<std::string>& granted) {
  if (!r.shell_execute_allowlist.empty() && !(Contains(host, "shell.execute") && Contains(granted, "shell.execute"))) {
    return Fail(ErrorCode::kInvalidArgument, "Exact shell commands require granted shell.execute host capability");
  }
  if (!r.network_read_domains.empty() && !(Contains(host, "network.read") && Contains(granted, "network.read"))) {
    return Fail(ErrorCode::kInvalidArgument, "Network read domains require granted network.read host capability");
  }
  std::vector<std::string> domains;
  for (const auto& domain : r.network_read_domains) {
    auto normalised = policy::NormalizeNetworkReadDomain(domain);
    if (!normalised) {
      return Fail(ErrorCode::kInvalidArgument,
                  "Network read domains must be exact DNS names or IP addresses without schemes, paths, ports, "
                  "credentials, or wildcards");
    }
    domains.push_back(*normalised);
  }
  for (const auto& command : r.shell_execute_allowlist) {
    if (!policy::IsExactShellCommand(command)) {
      return Fail(ErrorCode::kInvalidArgument, "Shell execute authorization requires exact, non-compound commands");
    }
  }
  return SortedUnique(domains);
}

Status CheckPriorRun(store::Store& store, const std::string& prior_id, const std::string& root) {
  auto prior = store.GetRun(prior_id);
  if (!prior) {
    if (prior.error().code() == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("Prior run {} does not exist", prior_id));
    }
    return std::unexpected(prior.error());
  }
  if (prior->repository_root != root) return Fail(ErrorCode::kInvalidArgument, "Prior run repository root mismatch");
  if (!prior->IsTerminal()) return Fail(ErrorCode::kFailedPrecondition, "Prior run must be terminal before lineage link");
  return Ok();
}

Json BudgetSnapshot(const store::RunRecord& run) {
  return {{"promptRevisionsRemaining", run.prompt_revisions_remaining},
          {"postExecutionRemediationsRemaining", run.remediations_remaining}};
}

}  // namespace

store::TraceEventRecord RunService::NewEvent(const store::RunRecord& run, std::string actor, std::string type,
                                             std::string summary, const std::string& timestamp) {
  store::TraceEventRecord event;
  event.event_id = ids_.NewUuid();
  event.run_id = run.run_id;
  event.timestamp = timestamp;
  event.actor = std::move(actor);
  event.phase = run.phase;
  event.event_type = std::move(type);
  event.summary = std::move(summary);
  event.budget_snapshot = BudgetSnapshot(run);
  return event;
}

Result<RunAndAction> RunService::StartRun(const StartRunRequest& r) {
  if (!HasNonWhitespace(r.original_request)) return Fail(ErrorCode::kInvalidArgument, "Original request is required");
  if (!HasNonWhitespace(r.host_name)) return Fail(ErrorCode::kInvalidArgument, "Host name is required");
  std::vector<std::string> host = SortedUnique(r.host_capabilities);
  std::vector<std::string> granted;
  for (const auto& cap : SortedUnique(r.authorization_granted.value_or(policy::DefaultGrantsForMode(r.mode)))) {
    if (Contains(host, cap)) granted.push_back(cap);
  }
  std::vector<std::string> denied = SortedUnique(r.authorization_denied);
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> domains, CheckAuthorizationExtras(r, host, granted));
  TELIC_ASSIGN_OR_RETURN(Classification topology,
                         ClassifyRun({r.original_request, r.mode, granted, r.shell_execute_allowlist,
                                      r.network_read_domains, r.topology_override}));
  if (r.prior_run_id) TELIC_RETURN_IF_ERROR(CheckPriorRun(store_, *r.prior_run_id, repository_root_));

  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::RunRecord run;
  run.run_id = ids_.NewUuid();
  run.repository_root = repository_root_;
  run.requested_mode = r.mode;
  run.topology = topology.topology;
  run.prior_run_id = r.prior_run_id;
  run.status = "running";
  run.phase = "context_grounding";
  run.created_at = run.updated_at = now;

  std::string request_id = ids_.NewUuid();
  std::string request_ref = store::ArtifactUri(run.run_id, request_id);
  bool native = r.native_subagents == "available";
  Json envelope = {
      {"schemaVersion", "1.0"},
      {"runId", run.run_id},
      {"createdAt", now},
      {"originalRequestRef", request_ref},
      {"followupRequestRefs", Json::array()},
      {"requestedMode", r.mode},
      {"topology", topology.topology},
      {"status", "active"},
      {"workingContext",
       {{"repositoryRoot", repository_root_}, {"activeFiles", Json::array()}, {"applicableRuleRefs", Json::array()}}},
      {"host", {{"name", r.host_name}, {"version", nullptr}, {"nativeSubagents", r.native_subagents}, {"capabilities", host}}},
      {"authorization",
       {{"granted", policy::CapabilitiesToPermissionSet(granted, r.shell_execute_allowlist, false, domains)},
        {"denied", policy::CapabilitiesToPermissionSet(denied, {}, true)}}},
      {"budgets",
       {{"promptRevisions", 1},
        {"postExecutionRemediations", 1},
        {"maximumParallelWorkers", native ? 3 : 1},
        {"maximumSubagentDepth", native ? 1 : 0}}},
      {"policyRefs", Json::array()},
  };
  Json request_body = {{"schemaVersion", "1.0"}, {"id", request_id}, {"runId", run.run_id}, {"content", r.original_request}};

  store::Change change;
  change.run = run;
  change.artifacts.push_back(store::MakeArtifact({request_id, run.run_id, "UserMessage", "1.0", "user", "", {}, "none", now}, request_body));
  change.artifacts.push_back(store::MakeArtifact(
      {run.run_id, run.run_id, "RunEnvelope", "1.0", "controller", "", {request_ref}, "none", now}, envelope));
  change.events.push_back(NewEvent(run, "controller", "run_started",
                                   "Run received with immutable request and authorization envelope.", now));
  change.events.push_back(NewEvent(run, "controller", "topology_classified", topology.rationale_code, now));
  if (r.prior_run_id) {
    auto linked = NewEvent(run, "controller", "lineage_linked", fmt::format("Linked to prior run {}", *r.prior_run_id), now);
    linked.input_refs = {"trace://" + *r.prior_run_id};
    change.events.push_back(std::move(linked));
  }
  TELIC_RETURN_IF_ERROR(store_.CreateRun(change));
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
  return RunAndAction{std::move(run), std::move(action)};
}

Result<Json> RunService::NextActionFor(const store::RunRecord& run) {
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store_.ListArtifacts(run.run_id));
  auto load = [this](const store::ArtifactMeta& meta) -> Result<Json> {
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact artifact, store_.GetArtifact(meta.run_id, meta.id));
    return Json::parse(artifact.canonical_body);
  };
  return ComputeNextAction(run, artifacts, load);
}

Result<Json> RunService::GetNextAction(const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
  return NextActionFor(run);
}

Result<RunDetail> RunService::GetRun(const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store_.ListArtifacts(run_id));
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
  return RunDetail{std::move(run), std::move(artifacts), std::move(action)};
}

Result<std::vector<store::RunRecord>> RunService::ListRuns(int limit) { return store_.ListRuns(limit); }

Result<store::StoredArtifact> RunService::GetArtifact(const std::string& run_id, const std::string& artifact_id) {
  return store_.GetArtifact(run_id, artifact_id);
}

Result<store::TracePage> RunService::GetTrace(const std::string& run_id, int64_t after_sequence, int limit) {
  TELIC_RETURN_IF_ERROR(store_.GetRun(run_id));
  return store_.GetTrace(run_id, after_sequence, limit);
}

Result<store::RunRecord> RunService::CheckTokens(const std::string& run_id, const std::string& action_id,
                                                 int64_t expected_version) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
  if (run.version != expected_version) {
    return Fail(ErrorCode::kStaleVersion,
                fmt::format("Stale run version {}; current version is {}", expected_version, run.version));
  }
  if (action_id != ActionId(run)) {
    return Fail(ErrorCode::kStaleVersion, "Stale or foreign action_id; reload the next action");
  }
  return run;
}

Result<RunAndAction> RunService::CancelRun(const std::string& run_id, const std::string& action_id,
                                           int64_t expected_version) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, CheckTokens(run_id, action_id, expected_version));
  if (!run.IsTerminal()) {
    std::string now = FormatIsoMillis(clock_.NowMillis());
    store::RunRecord next = run;
    next.status = "cancelled";
    next.version = run.version + 1;
    next.updated_at = now;
    store::Change change;
    change.run = next;
    change.events.push_back(NewEvent(next, "user", "run_cancelled", "Run cancelled by user or host.", now));
    TELIC_RETURN_IF_ERROR(store_.ApplyChange(run_id, run.version, change));
    run = std::move(next);
  }
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
  return RunAndAction{std::move(run), std::move(action)};
}

}  // namespace telic::controller
