// The phase table: internal and protocol names, roles, accepted artifact types
// and the artifact types each phase may see (PROTOCOL §9.5, PROTOCOL §10.1-10.2).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "domain/vocabulary.h"

namespace telic::controller {

struct PhaseInfo {
  domain::Phase phase;
  std::string_view role;
  std::vector<domain::ArtifactType> accepted_types;  // first = requiredOutputType
  std::vector<domain::ArtifactType> eligible_inputs;
  bool allows_clarification;
};

// The table row of `phase` (every phase has one).
const PhaseInfo& FindPhase(domain::Phase phase);

// Protocol name of an internal phase name (a trace event's phase is text);
// text that is not a phase maps to itself.
std::string ProtocolPhaseName(std::string_view internal_name);
std::string ProtocolPhaseName(domain::Phase phase);

// Internal trace event type → canonical TraceEvent type (PROTOCOL §17.1).
std::string CanonicalEventType(std::string_view internal_type);

// Whether `role` is one of the logical roles of the TraceEvent actor enum.
bool IsLogicalRole(std::string_view role);

}  // namespace telic::controller
