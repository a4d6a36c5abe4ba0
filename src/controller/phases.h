// The phase table: internal and protocol names, roles, accepted artifact types
// and the artifact types each phase may see (PROTOCOL §9.5, PROTOCOL §10.1-10.2).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace telic::controller {

struct PhaseInfo {
  std::string internal_name;
  std::string protocol_name;
  std::string role;
  std::vector<std::string> accepted_types;  // first = requiredOutputType
  std::vector<std::string> eligible_inputs;
  bool allows_clarification;
};

// The phase with this internal name, or nullptr.
const PhaseInfo* FindPhase(std::string_view internal_name);

// Protocol name of an internal phase; names that are not phases map to themselves.
std::string ProtocolPhaseName(std::string_view internal_name);

// Internal trace event type → canonical TraceEvent type (PROTOCOL §17.1).
std::string CanonicalEventType(std::string_view internal_type);

// Whether `role` is one of the logical roles of the TraceEvent actor enum.
bool IsLogicalRole(std::string_view role);

}  // namespace telic::controller
