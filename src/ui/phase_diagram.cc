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
  static const std::vector<std::string> kOrder = {
      "context_grounding", "agent_1_frame", "agent_2_compile", "agent_1_review", "agent_2_revise", "agent_3_plan",
      "agent_4_execute",   "agent_3_review", "agent_3_evidence_reverify", "agent_5_audit", "agent_5_report"};
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
  static const std::vector<PhaseEdge> kEdges = {
      {"context_grounding", "agent_1_frame", "ContextManifest"},
      {"agent_1_frame", "agent_2_compile", "ProblemFrame"},
      {"agent_1_frame", "agent_4_execute", "micro: execution"},
      {"agent_1_frame", "agent_3_review", "micro: spot-check"},
      {"agent_2_compile", "agent_1_review", "TaskContract"},
      {"agent_2_revise", "agent_1_review", "revised TaskContract"},
      {"agent_1_review", "agent_3_plan", "pass"},
      {"agent_1_review", "agent_2_revise", "revise"},
      {"agent_1_review", "agent_5_report", "block / budget spent"},
      {"agent_3_plan", "agent_4_execute", "WorkPlan"},
      {"agent_3_plan", "agent_3_review", "plan/report only"},
      {"agent_4_execute", "agent_4_execute", "node remains"},
      {"agent_4_execute", "agent_3_review", "WorkResult"},
      {"agent_3_review", "agent_3_plan", "proceed_to_fix / remediate"},
      {"agent_3_review", "agent_3_evidence_reverify", "forensic"},
      {"agent_3_review", "agent_5_audit", "pass / partial / block"},
      {"agent_3_review", "agent_1_review", "micro escalation"},
      {"agent_3_review", "agent_5_report", "micro"},
      {"agent_3_evidence_reverify", "agent_5_audit", "reverified"},
      {"agent_5_audit", "agent_5_report", "release / partial / block"},
      {"agent_5_audit", "agent_3_plan", "remediate"},
      {"agent_5_report", "completed", "UserReport"},
      {"agent_5_report", "partial", "UserReport"},
      {"agent_5_report", "blocked", "UserReport"},
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
    if (previous && previous->phase == event.phase && event.phase == "agent_4_execute") taken.insert({event.phase, event.phase});
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
  std::vector<std::string> outcomes = {"completed", "partial", "blocked"};
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
                        : to == "cancelled" ? "cancel"
                                            : "";
    graph.edges.push_back({from, to, label, "taken extra-path"});
  }
  return graph;
}

}  // namespace telic::ui
