// RunService::ReplayRun: the reference's replay report (PROTOCOL §17.3)
// and telic's state check, which re-derives the run record from the stored
// artifacts and events through the same state machine.
#include <algorithm>

#include <fmt/format.h>

#include "base/text.h"
#include "controller/acceptance.h"
#include "controller/run_service.h"
#include "controller/run_snapshot.h"
#include "controller/transitions.h"

namespace telic::controller {
namespace {

using domain::Phase;
using domain::RunStatus;
using domain::Topology;

bool IsStateEvent(const store::TraceEventRecord& e) {
  if (e.event_type == "phase_submitted" || e.event_type == "clarification_requested" || e.event_type == "budget_consumed" ||
      e.event_type == "clarification_answered" || e.event_type == "run_cancelled") {
    return true;
  }
  // Escalation by rejection: the would-be artifact as input, nothing as output.
  return e.event_type == "topology_escalated" && e.output_refs.empty();
}

// The snapshot as it stood before the artifact at `index` was stored.
RunSnapshot PrefixSnapshot(RunSnapshot& full, size_t index) {
  std::vector<store::ArtifactMeta> prefix(full.artifacts().begin(), full.artifacts().begin() + static_cast<long>(index));
  return RunSnapshot(full.store(), full.run(), std::move(prefix));
}

// Applies one state-changing event to `state`. Returns a difference message
// when the event cannot be replayed.
Result<std::string> ApplyEvent(RunSnapshot& full, store::RunRecord& state, const store::TraceEventRecord& e) {
  if (e.event_type == "run_cancelled") {
    state.status = RunStatus::kCancelled;
    return std::string();
  }
  if (e.event_type == "topology_escalated") {
    std::string reason = e.summary;
    state.topology = reason == "MICRO_USER_REPORTED" ? Topology::kStandard : Topology::kForensic;
    state.phase = reason == "MICRO_USER_REPORTED" ? Phase::kAgent1Review : Phase::kAgent5Audit;
    state.status = RunStatus::kRunning;
    state.resume_phase = std::nullopt;
    state.escalation_count += 1;
    return std::string();
  }
  if (e.output_refs.empty()) return fmt::format("event {} has no output artifact", e.sequence);
  auto id = ArtifactIdFromUri(e.output_refs.front());
  const store::ArtifactMeta* meta = id ? full.Find(*id) : nullptr;
  if (!meta) return fmt::format("event {} names a missing artifact {}", e.sequence, e.output_refs.front());
  TELIC_ASSIGN_OR_RETURN(const Json* body, full.Body(*meta));
  if (e.event_type == "clarification_answered") {
    TELIC_ASSIGN_OR_RETURN(const Json* request, full.LatestBodyOrNull(domain::ArtifactType::kClarificationRequest));
    std::string effect = "cancel";
    std::string answer(TrimJs(body->value("content", "")));
    for (const Json& choice : request ? request->value("responseChoices", Json::array()) : Json::array()) {
      if (choice.value("id", "") == answer) effect = choice.value("runEffect", "cancel");
    }
    if (effect == "resume") {
      TELIC_ASSIGN_OR_RETURN(state, ResumeAfterClarification(state));
    } else {
      state.status = RunStatus::kCancelled;
      state.resume_phase = std::nullopt;
    }
    return std::string();
  }
  if (e.event_type == "budget_consumed") {
    state = ClarificationBudgetExhausted(state).run;
    return std::string();
  }
  std::optional<bool> complete;
  if (meta->type == domain::ArtifactType::kWorkResult) {
    size_t index = static_cast<size_t>(meta - full.artifacts().data());
    RunSnapshot before = PrefixSnapshot(full, index);
    TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(before, body));
    complete = progress.remaining_after == 0;
  }
  Topology topology_before = state.topology;
  auto transition = AdvanceRun(state, std::string(domain::Name(meta->type)), *body, complete);
  if (!transition) return fmt::format("event {}: {}", e.sequence, transition.error().message());
  state = transition->run;
  if (state.topology != topology_before) state.escalation_count += 1;
  return std::string();
}

Json StateJson(const store::RunRecord& r) {
  return {{"status", r.status},
          {"phase", domain::Name(r.phase)},
          {"resumePhase", r.resume_phase ? Json(domain::Name(*r.resume_phase)) : Json(nullptr)},
          {"topology", r.topology},
          {"version", r.version},
          {"escalationCount", r.escalation_count},
          {"promptRevisionsRemaining", r.prompt_revisions_remaining},
          {"postExecutionRemediationsRemaining", r.remediations_remaining},
          {"outcomeHint", r.outcome_hint ? Json(*r.outcome_hint) : Json(nullptr)}};
}

// The record every run starts from, in the topology its envelope classified.
store::RunRecord InitialState(const store::RunRecord& run, const Json& envelope) {
  store::RunRecord state = run;
  state.status = RunStatus::kRunning;
  state.phase = Phase::kContextGrounding;
  state.resume_phase = std::nullopt;
  state.version = 1;
  state.escalation_count = 0;
  state.prompt_revisions_remaining = 1;
  state.remediations_remaining = 1;
  state.outcome_hint = std::nullopt;
  state.topology = domain::TopologyNamed(envelope.value("topology", std::string(domain::Name(run.topology))))
                       .value_or(run.topology);
  return state;
}

// telic's state check: `state` advanced by each state event of `trace`, then
// compared field by field with the stored run record.
Json StateCheck(RunSnapshot& snapshot, const std::vector<store::TraceEventRecord>& trace, store::RunRecord state) {
  Json differences = Json::array();
  for (const auto& e : trace) {
    if (!IsStateEvent(e)) continue;
    auto problem = ApplyEvent(snapshot, state, e);
    if (!problem) {
      differences.push_back(fmt::format("event {} cannot be replayed: {}", e.sequence, problem.error().message()));
    } else if (!problem->empty()) {
      differences.push_back(*problem);
    }
    state.version += 1;
  }
  Json stored = StateJson(snapshot.run());
  Json rebuilt = StateJson(state);
  for (auto it = stored.begin(); it != stored.end(); ++it) {
    if (rebuilt[it.key()] != *it) {
      differences.push_back(fmt::format("{}: stored {} but replay derives {}", it.key(), it->dump(), rebuilt[it.key()].dump()));
    }
  }
  return {{"consistent", differences.empty()}, {"differences", differences}, {"rebuilt", rebuilt}};
}

// One step per stored artifact, at the last event that output it, with
// whether its stored bytes still match their digest; in trace order.
Json ReplaySteps(store::Store& store, const RunSnapshot& snapshot, const std::vector<store::TraceEventRecord>& trace) {
  const store::RunRecord& run = snapshot.run();
  Json steps = Json::array();
  for (size_t i = 0; i < snapshot.artifacts().size(); ++i) {
    const store::ArtifactMeta& meta = snapshot.artifacts()[i];
    std::string uri = snapshot.Uri(meta.id);
    const store::TraceEventRecord* last = nullptr;
    for (const auto& e : trace) {
      if (std::find(e.output_refs.begin(), e.output_refs.end(), uri) != e.output_refs.end()) last = &e;
    }
    auto body = store.GetArtifact(run.run_id, meta.id);
    std::string digest = body ? "ok" : (body.error().code() == ErrorCode::kDataLoss ? "mismatch" : "missing");
    Json step = {{"sequence", last ? last->sequence : static_cast<int64_t>(i)},
                 {"phase", last ? last->phase : std::string(domain::Name(run.phase))},
                 {"artifactRef", uri},
                 {"artifactType", meta.type},
                 {"digestStatus", digest}};
    if (last && last->event_type == "topology_escalated") step["escalationReason"] = last->summary;
    steps.push_back(step);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Json& a, const Json& b) { return a["sequence"] < b["sequence"]; });
  return steps;
}

// The escalations, then the broker's denials, each by its summary.
Json TraceHighlights(const std::vector<store::TraceEventRecord>& trace) {
  Json highlights = Json::array();
  for (const auto& e : trace) {
    if (e.event_type == "topology_escalated") highlights.push_back(e.summary);
  }
  for (const auto& e : trace) {
    if (e.event_type == "broker_decision" && e.permission_decision && e.permission_decision->value("decision", "") == "deny") {
      highlights.push_back(e.summary);
    }
  }
  return highlights;
}

}  // namespace

Result<Json> RunService::ReplayRun(const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(RunSnapshot snapshot, RunSnapshot::Load(store_, run_id));
  TELIC_ASSIGN_OR_RETURN(const std::vector<store::TraceEventRecord>* trace, snapshot.Trace());
  const store::RunRecord& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(const Json* envelope, snapshot.LatestBody(domain::ArtifactType::kRunEnvelope));
  Json check = StateCheck(snapshot, *trace, InitialState(run, *envelope));
  if (run.topology == Topology::kMicro) {
    return Json{{"runId", run_id}, {"topology", Topology::kMicro}, {"steps", Json::array()}, {"traceHighlights", Json::array()},
                {"degraded", true}, {"reason", "micro_topology"}, {"stateCheck", check}};
  }
  Json steps = ReplaySteps(store_, snapshot, *trace);
  Json highlights = TraceHighlights(*trace);
  return Json{{"runId", run_id}, {"topology", run.topology}, {"steps", steps}, {"traceHighlights", highlights},
              {"stateCheck", check}};
}

}  // namespace telic::controller
