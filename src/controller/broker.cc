#include "controller/broker.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/ids.h"
#include "base/json_parse.h"
#include "base/redact.h"
#include "controller/next_action.h"
#include "policy/permission_set.h"
#include "policy/url_host.h"
#include "store/trace_context.h"

namespace telic::controller {
namespace {

// The trace scope of a decision (PROTOCOL §17.2), never empty.
std::string TraceScope(const std::string& capability, const std::optional<std::string>& target,
                       const policy::Decision& decision) {
  if (capability == "network.read" || capability == "external.write") {
    if (!target) return "unknown";
    auto url = policy::ParseNetworkUrl(*target);
    return url ? url->host : "invalid_network_target";
  }
  if (!target || target->empty()) return "unknown";
  // The normalised target when the engine could read it, else the raw text.
  std::string scope = decision.reason_code == "invalid_target" || decision.scope.empty() ? *target : decision.scope;
  if (scope.size() > 2048) scope.resize(2048);
  return scope;
}

BrokerDecision Finish(policy::Decision detail, const std::string& capability, const std::optional<std::string>& target,
                      const std::string& envelope_ref) {
  BrokerDecision out;
  out.allowed = detail.allowed;
  if (detail.allowed) {
    out.reason_code = "allowed";
  } else if (detail.reason_code == "no_policy") {
    out.reason_code = "no_policy";
  } else if (detail.reason_code == "unknown_capability") {
    out.reason_code = "capability_not_granted";
  } else {
    out.reason_code = "policy_denied";
  }
  out.summary = detail.summary;
  Json refs = Json::array();
  if (!envelope_ref.empty()) refs.push_back(envelope_ref);
  out.permission_decision = {{"decision", detail.allowed ? "allow" : "deny"},
                             {"capability", capability},
                             {"scope", TraceScope(capability, target, detail)},
                             {"policyRefs", refs},
                             {"rationaleSummary", detail.summary}};
  out.detail = std::move(detail);
  return out;
}

}  // namespace

BrokerDecision EvaluateBrokerAction(const store::RunRecord& run, const Json& envelope, const std::string& envelope_ref,
                                    const std::string& capability, const std::optional<std::string>& target) {
  policy::ActionRequest request;
  request.capability = capability;
  request.target = target;
  policy::RepoRoot root = policy::RepoRoot::OnDisk(run.repository_root);

  if (run.IsTerminal()) {
    // A finished run authorizes nothing (the reference still evaluates it).
    policy::Layer closed{"run_state:" + std::string(domain::Name(run.status)), nullptr, nullptr};
    policy::Decision detail = policy::Authorize(request, {closed}, root);
    if (detail.reason_code == "policy_denied") {
      detail.rule = "run is " + std::string(domain::Name(run.status)) + ": a terminal run authorizes no host tool calls";
      if (!detail.verdicts.empty()) detail.verdicts.front().rule = detail.rule;
    }
    return Finish(std::move(detail), capability, target, envelope_ref);
  }

  Json allow = nullptr;
  Json deny = nullptr;
  try {
    if (envelope.is_object() && envelope.contains("authorization") && envelope["authorization"].is_object()) {
      const Json& authorization = envelope["authorization"];
      if (authorization.contains("granted") && authorization.contains("denied")) {
        allow = policy::EffectiveRunPermissions(domain::Name(run.requested_mode), authorization["granted"], authorization["denied"]);
        deny = authorization["denied"];
      }
    }
  } catch (const std::exception&) {
    // A malformed envelope grants nothing and denies everything.
    allow = nullptr;
    deny = Json::object({{"repository", "malformed"}});
  }
  std::vector<policy::Layer> layers = {policy::ModeCeilingLayer(domain::Name(run.requested_mode)), {"run_envelope", allow, deny}};
  return Finish(policy::Authorize(request, layers, root), capability, target, envelope_ref);
}

Result<BrokerDecision> DecideAndRecord(store::Store& store, Clock& clock, IdSource& ids, const store::RunRecord& run,
                                       const std::string& capability, const std::optional<std::string>& target,
                                       const std::string& summary_prefix) {
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store.ListArtifacts(run.run_id));
  Json envelope = nullptr;
  std::string envelope_ref;
  for (auto it = artifacts.rbegin(); it != artifacts.rend(); ++it) {
    if (it->type != domain::ArtifactType::kRunEnvelope) continue;
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact stored, store.GetArtifact(run.run_id, it->id));
    TELIC_ASSIGN_OR_RETURN(envelope, ParseStoredJson(stored.canonical_body));
    envelope_ref = store::ArtifactUri(run.run_id, it->id);
    break;
  }
  BrokerDecision decision = EvaluateBrokerAction(run, envelope, envelope_ref, capability, target);

  store::TraceEventRecord event;
  event.event_id = ids.NewUuid();
  event.run_id = run.run_id;
  event.timestamp = FormatIsoMillis(clock.NowMillis());
  event.actor = "host";
  event.phase = domain::Name(run.phase);
  event.event_type = "broker_decision";
  if (!envelope_ref.empty()) event.input_refs = {envelope_ref};
  event.permission_decision = decision.permission_decision;
  event.summary = decision.allowed ? summary_prefix + " allowed " + capability + "."
                                   : summary_prefix + " denied " + capability + ": " + decision.reason_code + ".";
  event.budget_snapshot = {{"promptRevisionsRemaining", run.prompt_revisions_remaining},
                           {"postExecutionRemediationsRemaining", run.remediations_remaining}};
  store::StampTraceContext(event);  // the host request's W3C trace context, if it sent one
  store::Change change;
  change.run = run;  // unchanged: broker checks do not bump the version
  change.events.push_back(std::move(event));
  TELIC_RETURN_IF_ERROR(store.ApplyChange(run.run_id, run.version, change));
  return decision;
}

// Results carry the redacted target and summary, as the trace does: the
// decision was taken on the raw text.
Json BrokerDecisionToJson(const BrokerDecision& decision) {
  return {{"allowed", decision.allowed},
          {"reasonCode", decision.reason_code},
          {"summary", RedactedText(decision.summary)},
          {"permissionDecision", store::RedactedJson(decision.permission_decision)}};
}

Json BrokerExplanationToJson(const BrokerDecision& decision) {
  Json layers = Json::array();
  for (const auto& verdict : decision.detail.verdicts) {
    layers.push_back({{"layer", verdict.layer}, {"allowed", verdict.allowed}, {"rule", verdict.rule}});
  }
  // Rules quote the target: redacted like the scope.
  return store::RedactedJson({{"decidingLayer", decision.detail.deciding_layer},
          {"rule", decision.detail.rule},
          {"scope", decision.permission_decision.value("scope", "unknown")},
          {"layers", layers}});
}

Result<std::optional<store::RunRecord>> FindActiveRun(store::Store& store, const std::string& repository_root) {
  store::RunQuery query;
  query.limit = store::kMaxRunPageSize;
  query.status = domain::RunStatus::kRunning;
  std::optional<store::RunRecord> active;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::RunPage page, store.QueryRuns(query));
    for (store::RunRecord& run : page.runs) {
      if (run.repository_root != repository_root) continue;
      if (!active || run.updated_at > active->updated_at) active = std::move(run);
    }
    if (!page.next) return active;
    query.before = page.next;
  }
}

}  // namespace telic::controller
