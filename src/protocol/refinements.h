// Body refinements: the per-artifact rules JSON Schema cannot express
// (PROTOCOL §13, the "Rules:" of each type and shared object). They run
// after schema validation on a schema-valid body and need no stored state;
// rules that relate a body to other artifacts of the run live elsewhere.
#pragma once

#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::protocol {

// Every violated refinement of `body` (an artifact of `type`), each with the
// JSON pointer of the offending value and code "custom". Unknown types and
// types without refinements yield no issues.
std::vector<Issue> CheckRefinements(std::string_view type, const Json& body);

// round2(0.3·intentFidelity + 0.2·repositoryGrounding + 0.15·constraints +
// 0.2·testableAcceptance + 0.1·executionFeasibility + 0.05·contextEfficiency),
// in IEEE double in that order, round2(x) = floor(x·100 + 0.5) / 100.
double PromptReadinessScore(const Json& dimension_scores);

}  // namespace telic::protocol
