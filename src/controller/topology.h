// Topology classification at run start (CAGT, PROTOCOL §11.1).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "domain/vocabulary.h"

namespace telic::controller {

struct ClassifyInput {
  std::string original_request;
  domain::Mode mode = domain::Mode::kAnalyzeOnly;
  std::vector<std::string> granted;  // after the host intersection
  std::vector<std::string> shell_allowlist;
  std::vector<std::string> network_domains;
  std::optional<domain::Topology> topology_override;
};

struct Classification {
  domain::Topology topology = domain::Topology::kStandard;
  std::string rationale_code;  // e.g. MICRO_SHORT_REPORT_ONLY, ANALYZE_AND_FIX
  std::vector<std::string> signals;
};

// Deterministic classification; an override incompatible with the request's
// signals is kInvalidArgument with the reference's message.
Result<Classification> ClassifyRun(const ClassifyInput& input);

// Sorted forensic signals of the input (ANALYZE_AND_FIX, COMPLEXITY_KEYWORD,
// ELEVATED_CAPABILITY, LONG_REQUEST, NETWORK_READ, SHELL_EXECUTE_ALLOWLIST).
std::vector<std::string> ForensicSignals(const ClassifyInput& input);

// Distinct (case-insensitive) file-path tokens with a known source extension.
std::vector<std::string> FilePathTokens(const std::string& text);

}  // namespace telic::controller
