#include "controller/run_service.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/redact.h"
#include "base/text.h"
#include "controller/next_action.h"
#include "controller/topology.h"
#include "policy/permission_set.h"
#include "store/trace_context.h"
#include "protocol/refinements.h"
#include "schema/registry.h"

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

// Validates the authorization extras (PROTOCOL §6.1 "Processing") and returns the
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

// The capabilities of a new run.
struct StartCapabilities {
  std::vector<std::string> host;     // the host's, sorted
  std::vector<std::string> granted;  // asked for (or the mode's defaults) that the host has
  std::vector<std::string> denied;
  std::vector<std::string> domains;  // network read domains (CheckAuthorizationExtras)
};

Result<StartCapabilities> AuthorizeRun(const StartRunRequest& r) {
  StartCapabilities auth;
  auth.host = SortedUnique(r.host_capabilities);
  for (const auto& cap : SortedUnique(r.authorization_granted.value_or(policy::DefaultGrantsForMode(r.mode)))) {
    if (Contains(auth.host, cap)) auth.granted.push_back(cap);
  }
  auth.denied = SortedUnique(r.authorization_denied);
  TELIC_ASSIGN_OR_RETURN(auth.domains, CheckAuthorizationExtras(r, auth.host, auth.granted));
  return auth;
}

// The request's observation policy, or `fallback` when it names none.
Result<ObservationPolicy> RequestedObservationPolicy(const StartRunRequest& r, ObservationPolicy fallback) {
  if (!r.observation) return fallback;
  auto parsed = ParseObservationPolicy(*r.observation);
  if (!parsed) {
    return Fail(ErrorCode::kInvalidArgument, "observation must be \"checked\" or \"require_observed\"",
                {Issue{"/observation", "invalid_enum_value", "observation must be \"checked\" or \"require_observed\""}});
  }
  return *parsed;
}

// The RunEnvelope of the new `run`, whose original request is `request_ref`.
Json RunEnvelopeBody(const StartRunRequest& r, const store::RunRecord& run, const std::string& request_ref,
                     const StartCapabilities& auth) {
  bool native = r.native_subagents == "available";
  return Json{
      {"schemaVersion", "1.0"},
      {"runId", run.run_id},
      {"createdAt", run.created_at},
      {"originalRequestRef", request_ref},
      {"followupRequestRefs", Json::array()},
      {"requestedMode", r.mode},
      {"topology", run.topology},
      {"status", "active"},
      {"workingContext",
       {{"repositoryRoot", run.repository_root}, {"activeFiles", Json::array()}, {"applicableRuleRefs", Json::array()}}},
      {"host",
       {{"name", r.host_name}, {"version", nullptr}, {"nativeSubagents", r.native_subagents}, {"capabilities", auth.host}}},
      {"authorization",
       {{"granted", policy::CapabilitiesToPermissionSet(auth.granted, r.shell_execute_allowlist, false, auth.domains)},
        {"denied", policy::CapabilitiesToPermissionSet(auth.denied, {}, true)}}},
      {"budgets",
       {{"promptRevisions", 1},
        {"postExecutionRemediations", 1},
        {"maximumParallelWorkers", native ? 3 : 1},
        {"maximumSubagentDepth", native ? 1 : 0}}},
      {"policyRefs", Json::array()},
  };
}

// A new run's record, in its first phase.
store::RunRecord NewRunRecord(std::string run_id, const std::string& repository_root, domain::Mode mode,
                              domain::Topology topology, const std::optional<std::string>& prior_run_id,
                              const std::string& now) {
  store::RunRecord run;
  run.run_id = std::move(run_id);
  run.repository_root = repository_root;
  run.requested_mode = mode;
  run.topology = topology;
  run.prior_run_id = prior_run_id;
  run.status = domain::RunStatus::kRunning;
  run.phase = domain::Phase::kContextGrounding;
  run.created_at = run.updated_at = now;
  return run;
}

// The first action of a new run is computed from what was just written
// (`change`), in memory, not read back from the ledger: the metadata of its
// two artifacts (a new run has no others; the action does not use the store's
// seq) and the trees their canonical bytes were made from (strings,
// integers, arrays and objects only, so parsing those bytes gives these
// trees again). Nothing is cached: a later read indexes the run and
// caches its action (RunServiceTest pins that both actions are equal).
Result<Json> FirstAction(const store::RunRecord& run, const store::Change& change,
                         const std::shared_ptr<const Json>& request_body, const std::shared_ptr<const Json>& envelope,
                         BodyCache& bodies, store::Store& store, ActionSchemas form) {
  const std::string& request_id = change.artifacts[0].meta.id;
  std::vector<store::ArtifactMeta> written;
  written.reserve(change.artifacts.size());
  for (const store::StoredArtifact& artifact : change.artifacts) written.push_back(artifact.meta);
  auto load = [&](const store::ArtifactMeta& meta) -> Result<std::shared_ptr<const Json>> {
    if (meta.run_id == run.run_id && meta.id == request_id) return request_body;
    if (meta.run_id == run.run_id && meta.id == run.run_id) return envelope;
    return bodies.Load(store, meta);
  };
  return ComputeNextAction(run, written, load, form);
}

}  // namespace

store::TraceEventRecord RunService::NewEvent(const store::RunRecord& run, std::string actor, std::string type,
                                             std::string summary, const std::string& timestamp) {
  store::TraceEventRecord event;
  event.event_id = ids_.NewUuid();
  event.run_id = run.run_id;
  event.timestamp = timestamp;
  event.actor = std::move(actor);
  event.phase = domain::Name(run.phase);
  event.event_type = std::move(type);
  event.summary = std::move(summary);  // the store redacts it and says so (store::RedactTraceEvent)
  event.budget_snapshot = BudgetSnapshot(run);
  store::StampTraceContext(event);  // the host request's W3C trace context, if it sent one
  return event;
}

Result<RunAndAction> RunService::StartRun(const StartRunRequest& r) {
  if (!HasNonWhitespace(r.original_request)) return Fail(ErrorCode::kInvalidArgument, "Original request is required");
  if (!HasNonWhitespace(r.host_name)) return Fail(ErrorCode::kInvalidArgument, "Host name is required");
  TELIC_ASSIGN_OR_RETURN(StartCapabilities auth, AuthorizeRun(r));
  TELIC_ASSIGN_OR_RETURN(domain::Mode mode, domain::ParseMode(r.mode, "/mode"));
  std::optional<domain::Topology> topology_override;
  if (r.topology_override) {
    TELIC_ASSIGN_OR_RETURN(topology_override, domain::ParseTopology(*r.topology_override, "/topology_override"));
  }
  TELIC_ASSIGN_OR_RETURN(Classification topology,
                         ClassifyRun({r.original_request, mode, auth.granted, r.shell_execute_allowlist,
                                      r.network_read_domains, topology_override}));
  if (r.prior_run_id) TELIC_RETURN_IF_ERROR(CheckPriorRun(store_, *r.prior_run_id, repository_root_));

  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::RunRecord run = NewRunRecord(ids_.NewUuid(), repository_root_, mode, topology.topology, r.prior_run_id, now);
  TELIC_ASSIGN_OR_RETURN(ObservationPolicy observation_policy,
                         RequestedObservationPolicy(r, default_observation_policy_));
  SetRunObservation(run, NewRunObservation(observation_policy));

  std::string request_id = ids_.NewUuid();
  std::string request_ref = store::ArtifactUri(run.run_id, request_id);
  // Shared: the first action reads them from memory (below).
  const auto envelope = std::make_shared<const Json>(RunEnvelopeBody(r, run, request_ref, auth));
  const auto request_body = std::make_shared<const Json>(
      Json{{"schemaVersion", "1.0"}, {"id", request_id}, {"runId", run.run_id}, {"content", r.original_request}});

  store::Change change;
  change.run = run;
  change.artifacts.push_back(store::MakeArtifact({request_id, run.run_id, domain::ArtifactType::kUserMessage, "1.0", "user", "", {}, "none", now}, *request_body));
  change.artifacts.push_back(store::MakeArtifact(
      {run.run_id, run.run_id, domain::ArtifactType::kRunEnvelope, "1.0", "controller", "", {request_ref}, "none", now}, *envelope));
  change.events.push_back(NewEvent(run, "controller", "run_started",
                                   "Run received with immutable request and authorization envelope.", now));
  change.events.push_back(NewEvent(run, "controller", "topology_classified", topology.rationale_code, now));
  if (r.prior_run_id) {
    auto linked = NewEvent(run, "controller", "lineage_linked", fmt::format("Linked to prior run {}", *r.prior_run_id), now);
    linked.input_refs = {"trace://" + *r.prior_run_id};
    change.events.push_back(std::move(linked));
  }
  TELIC_RETURN_IF_ERROR(store_.CreateRun(change));
  // The two trees are the bodies just stored: later reads of this run (its
  // actions, its submissions' rules) take them from memory too.
  bodies_.Put(change.artifacts[0].meta.sha256, request_body, change.artifacts[0].canonical_body.size());
  bodies_.Put(change.artifacts[1].meta.sha256, envelope, change.artifacts[1].canonical_body.size());
  TELIC_ASSIGN_OR_RETURN(Json action, FirstAction(run, change, request_body, envelope, bodies_, store_,
                                                  action_schemas_.load(std::memory_order_relaxed)));
  return RunAndAction{std::move(run), std::move(action)};
}

Result<std::shared_ptr<const Json>> RunService::SharedNextAction(const store::RunRecord& run) {
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const ArtifactIndex> index, artifact_index_.Get(run.run_id));
  return SharedNextAction(run, *index);
}

Result<std::shared_ptr<const Json>> RunService::SharedNextAction(const store::RunRecord& run, const ArtifactIndex& index) {
  const std::vector<store::ArtifactMeta>& artifacts = index.list();
  {
    std::lock_guard lock(actions_mutex_);
    auto it = actions_.find(run.run_id);
    if (it != actions_.end() && it->second.artifacts == artifacts.size() && it->second.run == run) {
      return it->second.action;
    }
  }
  auto load = [this](const store::ArtifactMeta& meta) { return bodies_.Load(store_, meta); };
  const ActionSchemas form = action_schemas_.load(std::memory_order_relaxed);
  TELIC_ASSIGN_OR_RETURN(Json computed, ComputeNextAction(run, artifacts, load, form));
  auto action = std::make_shared<const Json>(std::move(computed));
  std::lock_guard lock(actions_mutex_);
  if (actions_.size() >= kMaxCachedActions && !actions_.contains(run.run_id)) actions_.clear();
  actions_[run.run_id] = CachedAction{run, artifacts.size(), action};
  return action;
}

void RunService::set_action_schemas(ActionSchemas form) {
  std::lock_guard lock(actions_mutex_);
  action_schemas_.store(form, std::memory_order_relaxed);
  actions_.clear();
}

Result<Json> RunService::NextActionFor(const store::RunRecord& run) {
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> action, SharedNextAction(run));
  return *action;
}

// The reads below take the record and the artifact index in one store call
// (one round trip on PostgreSQL) and reuse that index for the action.
Result<std::shared_ptr<const Json>> RunService::GetNextAction(const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(ArtifactIndexCache::RunAndIndex read, artifact_index_.GetWithRun(run_id));
  return SharedNextAction(read.run, *read.index);
}

Result<RunDetail> RunService::GetRun(const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(ArtifactIndexCache::RunAndIndex read, artifact_index_.GetWithRun(run_id));
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> action, SharedNextAction(read.run, *read.index));
  return RunDetail{std::move(read.run), read.index->list(), *action};
}

Status RunService::RecordRefusedCall(const std::string& run_id, std::string_view tool, const Json& refusal) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(run_id));
  store::RefusedCall call;
  call.run_id = run_id;
  call.at = FormatIsoMillis(clock_.NowMillis());
  call.tool = std::string(tool);
  call.code = refusal.value("code", "");
  call.error = refusal.value("error", "");
  call.run_version = run.version;
  if (refusal.contains("issues") && refusal["issues"].is_array()) {
    for (const Json& issue : refusal["issues"]) {
      if (call.issues.size() >= store::kMaxIssuesPerRefusedCall || !issue.is_object()) break;
      call.issues.push_back({{"pointer", issue.value("pointer", "")}, {"code", issue.value("code", "")},
                             {"message", issue.value("message", "")}});
    }
  }
  TELIC_ASSIGN_OR_RETURN(int64_t seq, store_.RecordRefusedCall(call));
  (void)seq;
  return Ok();
}

Result<RunStamp> RunService::ReadStamp(const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(ArtifactIndexCache::RunAndIndex read, artifact_index_.GetWithRun(run_id));
  return RunStamp{std::move(read.run), read.index->list().size()};
}

Result<std::vector<store::RunRecord>> RunService::ListRuns(int limit) { return store_.ListRuns(limit); }

Result<store::RunPage> RunService::QueryRuns(const store::RunQuery& query) { return store_.QueryRuns(query); }

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

namespace {

// The fixed manifest of a report_only run: discovery is skipped (PROTOCOL §16.6).
Json ReportOnlyManifest(const std::string& run_id) {
  return {{"schemaVersion", "1.0"},
          {"id", "context-report-only-" + run_id.substr(0, 12)},
          {"runId", run_id},
          {"repositoryFingerprint", {{"headCommit", nullptr}, {"dirtyWorktreeHash", Sha256Ref("")}}},
          {"pinnedRefs", Json::array()},
          {"candidates", Json::array()},
          {"derivedRefs", Json::array()},
          {"excludedCandidateSummaries", Json::array()},
          {"inventorySource", "filesystem"},
          {"warnings", Json::array({"report_only mode intentionally skipped new repository discovery."})},
          {"budget",
           {{"maximumFiles", 1}, {"maximumFileBytes", 1}, {"maximumTotalBytes", 1}, {"maximumInventoryFiles", 1},
            {"candidateFiles", 0}, {"selectedFiles", 0}, {"estimatedTokens", 0}, {"selectedBytes", 0}}}};
}

}  // namespace

Status ValidateArtifactBody(const std::string& type, Json& body) {
  TELIC_ASSIGN_OR_RETURN(const schema::Validator* validator,
                         schema::Registry::Default().Find("artifacts/" + type + ".json"));
  std::vector<Issue> issues = validator->Validate(body);
  if (issues.empty()) issues = protocol::CheckRefinements(type, body);
  if (issues.empty()) return Ok();
  // The message is built before `issues` is moved (argument order is unspecified).
  std::string message = fmt::format("{} failed schema validation: {}", type, issues.front().message);
  return Fail(ErrorCode::kInvalidArgument, std::move(message), std::move(issues));
}

Result<GroundResult> RunService::GroundContext(const GroundContextRequest& request, const GroundingControl& control) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, CheckTokens(request.run_id, request.action_id, request.expected_version));
  if (run.status != domain::RunStatus::kRunning || run.phase != domain::Phase::kContextGrounding) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run {} is not awaiting context grounding", run.run_id));
  }
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
  // The work tree as the run is grounded on it, before the grounder reads it.
  TELIC_ASSIGN_OR_RETURN(RunObservation observed, TakeBaseline(run));
  GroundingOutput output;
  if (run.requested_mode == domain::Mode::kReportOnly) {
    output.manifest = ReportOnlyManifest(run.run_id);
  } else {
    if (!grounder_) return Fail(ErrorCode::kFailedPrecondition, "repository grounding is not available in this telic build");
    TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store_.ListArtifacts(run.run_id));
    auto request_meta = std::find_if(artifacts.begin(), artifacts.end(), [](const auto& a) { return a.type == domain::ArtifactType::kUserMessage; });
    if (request_meta == artifacts.end()) return Fail(ErrorCode::kDataLoss, "Run is missing its immutable original request");
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact original, store_.GetArtifact(run.run_id, request_meta->id));
    TELIC_ASSIGN_OR_RETURN(Json original_body, ParseStoredJson(original.canonical_body));
    GroundingInput input{run.run_id, run.repository_root, original_body.value("content", ""),
                         request.active_paths, request.budget, action["effectivePermissions"], control};
    TELIC_ASSIGN_OR_RETURN(output, grounder_(input));
  }
  TELIC_RETURN_IF_ERROR(ValidateArtifactBody("ContextManifest", output.manifest));
  if (control.cancelled && control.cancelled()) return Fail(ErrorCode::kFailedPrecondition, "Grounding was cancelled");

  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::RunRecord next = run;
  next.phase = domain::Phase::kAgent1Frame;
  next.version = run.version + 1;
  next.updated_at = now;
  if (RunObservationOf(run).shared) SetRunObservation(next, observed);
  store::Change change;
  change.run = next;
  std::vector<std::string> source_refs = action["inputRefs"].get<std::vector<std::string>>();
  for (Json& document : output.documents) {
    std::string id = document.value("id", "");
    std::string repo_ref = document.value("repositoryRef", "");
    change.artifacts.push_back(store::MakeArtifact({id, run.run_id, domain::ArtifactType::kContextDocument, "1.0", "controller", "", {repo_ref}, "none", now}, document));
    auto event = NewEvent(run, "controller", "context_source_stored", "Repository source stored once for grounding.", now);
    event.input_refs = {repo_ref};
    event.output_refs = {store::ArtifactUri(run.run_id, id)};
    change.events.push_back(std::move(event));
    if (source_refs.size() < 256) source_refs.push_back(store::ArtifactUri(run.run_id, id));
  }
  std::string manifest_id = output.manifest["id"];
  std::string manifest_uri = store::ArtifactUri(run.run_id, manifest_id);
  change.artifacts.push_back(store::MakeArtifact({manifest_id, run.run_id, domain::ArtifactType::kContextManifest, "1.0", "controller", "", source_refs, "none", now}, output.manifest));
  auto submitted = NewEvent(run, "controller", "phase_submitted", "Repository context was grounded; framing is next.", now);
  submitted.input_refs = source_refs;
  submitted.output_refs = {manifest_uri};
  submitted.budget_snapshot = {{"promptRevisionsRemaining", next.prompt_revisions_remaining},
                               {"postExecutionRemediationsRemaining", next.remediations_remaining}};
  change.events.push_back(std::move(submitted));
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run.run_id, run.version, change));
  TELIC_ASSIGN_OR_RETURN(Json next_action, NextActionFor(next));
  return GroundResult{std::move(next), std::move(next_action), std::move(output.manifest)};
}

Result<RunAndAction> RunService::CancelRun(const std::string& run_id, const std::string& action_id,
                                           int64_t expected_version) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, CheckTokens(run_id, action_id, expected_version));
  if (!run.IsTerminal()) {
    std::string now = FormatIsoMillis(clock_.NowMillis());
    store::RunRecord next = run;
    next.status = domain::RunStatus::kCancelled;
    next.version = run.version + 1;
    next.updated_at = now;
    store::Change change;
    change.run = next;
    change.events.push_back(NewEvent(next, "user", "run_cancelled", "Run cancelled by user or host.", now));
    TELIC_RETURN_IF_ERROR(store_.ApplyChange(run_id, run.version, change));
    run = std::move(next);
    NotifyChanged(run_id);
  }
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
  return RunAndAction{std::move(run), std::move(action)};
}

}  // namespace telic::controller
