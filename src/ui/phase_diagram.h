// The protocol's phase state diagram (PROTOCOL §10.3, as
// src/controller/transitions.cc implements it) with one run's path on it.
#pragma once

#include <string>
#include <vector>

#include "store/records.h"
#include "ui/dag_layout.h"

namespace telic::ui {

// One edge of the state machine: `from` → `to` when `when` holds.
struct PhaseEdge {
  std::string from;
  std::string to;
  std::string when;
};

// Every transition between internal phases and from agent_5_report to the
// terminal statuses (completed, partial, blocked). Cancellation and
// clarification, possible from most phases, are drawn only when a run took them.
const std::vector<PhaseEdge>& PhaseEdges();

// The states one run passed through, in order: the phase of each
// state-changing trace event (consecutive repeats folded), "clarification"
// where it paused for one, then its current phase, or its terminal status
// when it ended.
std::vector<std::string> PathTaken(const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace);

// The diagram: every phase (protocol name as title, internal name below),
// the taken edges and nodes marked ("taken"), the current phase
// ("current"), the terminal outcome ("terminal <status>").
DagGraph PhaseDiagram(const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace);

}  // namespace telic::ui
