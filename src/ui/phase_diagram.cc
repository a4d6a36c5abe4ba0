#include "ui/phase_diagram.h"

#include <algorithm>
#include <set>
#include <utility>

#include "controller/phases.h"

namespace telic::ui {
namespace {

constexpr const char* kClarification = "clarification";

// Internal phases in protocol order (the diagram's node order).
const std::vector<std::string>& PhaseOrder() {
  static const std::vector<std::string> kOrder = [] {
    std::vector<std::string> names;
    for (domain::Phase phase : domain::AllPhases()) names.emplace_back(domain::Name(phase));
    return names;
  }();
  return kOrder;
}

// Events whose phase is a state the run was in (grounding, submissions,
// clarifications, escalations); evidence and permission checks are not moves.
bool IsStateEvent(const std::string& type) {
  return type == "run_started" || type == "phase_submitted" || type == "clarification_requested" ||
         type == "clarification_answered" || type == "budget_consumed" || type == "topology_escalated";
}

}  // namespace

const std::vector<PhaseEdge>& PhaseEdges() {
  using domain::ArtifactType;
  using domain::Phase;
  using domain::RunStatus;
  auto edge = [](Phase from, auto to, std::string when) {
    return PhaseEdge{std::string(domain::Name(from)), std::string(domain::Name(to)), std::move(when)};
  };
  auto type = [](ArtifactType t) { return std::string(domain::Name(t)); };
  static const std::vector<PhaseEdge> kEdges = {
      edge(Phase::kContextGrounding, Phase::kAgent1Frame, type(ArtifactType::kContextManifest)),
      edge(Phase::kAgent1Frame, Phase::kAgent2Compile, type(ArtifactType::kProblemFrame)),
      edge(Phase::kAgent1Frame, Phase::kAgent4Execute, "micro: execution"),
      edge(Phase::kAgent1Frame, Phase::kAgent3Review, "micro: spot-check"),
      edge(Phase::kAgent2Compile, Phase::kAgent1Review, type(ArtifactType::kTaskContract)),
      edge(Phase::kAgent2Revise, Phase::kAgent1Review, "revised " + type(ArtifactType::kTaskContract)),
      edge(Phase::kAgent1Review, Phase::kAgent3Plan, "pass"),
      edge(Phase::kAgent1Review, Phase::kAgent2Revise, "revise"),
      edge(Phase::kAgent1Review, Phase::kAgent5Report, "block / budget spent"),
      edge(Phase::kAgent3Plan, Phase::kAgent4Execute, type(ArtifactType::kWorkPlan)),
      edge(Phase::kAgent3Plan, Phase::kAgent3Review, "plan/report only"),
      edge(Phase::kAgent4Execute, Phase::kAgent4Execute, "node remains"),
      edge(Phase::kAgent4Execute, Phase::kAgent3Review, type(ArtifactType::kWorkResult)),
      edge(Phase::kAgent3Review, Phase::kAgent3Plan, "proceed_to_fix / remediate"),
      edge(Phase::kAgent3Review, Phase::kAgent3EvidenceReverify, std::string(domain::Name(domain::Topology::kForensic))),
      edge(Phase::kAgent3Review, Phase::kAgent5Audit, "pass / partial / block"),
      edge(Phase::kAgent3Review, Phase::kAgent1Review, "micro escalation"),
      edge(Phase::kAgent3Review, Phase::kAgent5Report, std::string(domain::Name(domain::Topology::kMicro))),
      edge(Phase::kAgent3EvidenceReverify, Phase::kAgent5Audit, "reverified"),
      edge(Phase::kAgent5Audit, Phase::kAgent5Report, "release / partial / block"),
      edge(Phase::kAgent5Audit, Phase::kAgent3Plan, "remediate"),
      edge(Phase::kAgent5Report, RunStatus::kCompleted, type(ArtifactType::kUserReport)),
      edge(Phase::kAgent5Report, RunStatus::kPartial, type(ArtifactType::kUserReport)),
      edge(Phase::kAgent5Report, RunStatus::kBlocked, type(ArtifactType::kUserReport)),
  };
  return kEdges;
}

std::vector<std::string> PathTaken(const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace) {
  std::vector<std::string> path;
  auto visit = [&](const std::string& state) {
    if (!state.empty() && (path.empty() || path.back() != state)) path.push_back(state);
  };
  for (const auto& event : trace) {
    if (!IsStateEvent(event.event_type)) continue;
    visit(event.phase);
    if (event.event_type == "clarification_requested") visit(kClarification);
  }
  if (run.status == domain::RunStatus::kAwaitingClarification) {
    visit(kClarification);
  } else if (run.IsTerminal()) {
    visit(std::string(domain::Name(run.status)));
  } else {
    visit(std::string(domain::Name(run.phase)));
  }
  return path;
}

DagGraph PhaseDiagram(const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace) {
  std::vector<std::string> path = PathTaken(run, trace);
  std::set<std::pair<std::string, std::string>> taken;
  for (size_t i = 0; i + 1 < path.size(); ++i) taken.insert({path[i], path[i + 1]});
  // A phase that accepted two submissions in a row (agent_4_execute with
  // another plan node left) took its own loop; the path folds repeats.
  const store::TraceEventRecord* previous = nullptr;
  for (const auto& event : trace) {
    if (event.event_type != "phase_submitted") continue;
    bool executing = domain::PhaseNamed(event.phase) == domain::Phase::kAgent4Execute;
    if (previous && previous->phase == event.phase && executing) taken.insert({event.phase, event.phase});
    previous = &event;
  }
  std::set<std::string> visited(path.begin(), path.end());
  std::string current = run.status == domain::RunStatus::kAwaitingClarification ? kClarification
                        : run.IsTerminal() ? std::string(domain::Name(run.status))
                                           : std::string(domain::Name(run.phase));

  DagGraph graph;
  auto node_class = [&](const std::string& id, std::string base) {
    if (visited.contains(id)) base += " taken";
    if (id == current) base += " current";
    return base;
  };
  for (const auto& phase : PhaseOrder()) {
    graph.nodes.push_back({phase, controller::ProtocolPhaseName(phase), phase, node_class(phase, "phase"), "", ""});
  }
  bool clarified = visited.contains(kClarification);
  if (clarified) {
    graph.nodes.push_back({kClarification, "clarification", "awaiting the user", node_class(kClarification, "pause"), "", ""});
  }
  std::vector<std::string> outcomes;
  for (domain::RunStatus status : {domain::RunStatus::kCompleted, domain::RunStatus::kPartial, domain::RunStatus::kBlocked}) {
    outcomes.emplace_back(domain::Name(status));
  }
  if (run.status == domain::RunStatus::kCancelled) outcomes.push_back(std::string(domain::Name(run.status)));
  for (const auto& outcome : outcomes) {
    std::string cls = "outcome outcome-" + outcome;
    graph.nodes.push_back({outcome, outcome, "terminal status", node_class(outcome, cls), "", ""});
  }
  std::set<std::pair<std::string, std::string>> drawn;
  for (const auto& edge : PhaseEdges()) {
    bool on_path = taken.contains({edge.from, edge.to});
    graph.edges.push_back({edge.from, edge.to, edge.when, on_path ? "taken" : "possible"});
    drawn.insert({edge.from, edge.to});
  }
  // Edges the run took that the static table has no entry for: clarification
  // pauses and resumes, cancellation, a phase repeated after a resume.
  for (const auto& [from, to] : taken) {
    if (drawn.contains({from, to})) continue;
    std::string label = to == kClarification ? "ClarificationRequest"
                        : from == kClarification ? "answer"
                        : to == domain::Name(domain::RunStatus::kCancelled) ? "cancel"
                                            : "";
    graph.edges.push_back({from, to, label, "taken extra-path"});
  }
  return graph;
}

}  // namespace telic::ui
