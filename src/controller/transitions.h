// The run state machine (PROTOCOL §10.3): a pure function from the
// current run record and an accepted phase artifact to the next record.
// Versions, timestamps and storage are the caller's concern.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "store/records.h"

namespace telic::controller {

struct Transition {
  store::RunRecord run;
  std::string summary;
  // "prompt_revision", "post_execution_remediation" or "" when no budget was used.
  std::string budget_consumed;
};

// Artifact types the run's current phase accepts; the first is required.
const std::vector<domain::ArtifactType>& AcceptedArtifactTypes(const store::RunRecord& run);

// Applies an accepted artifact of `type` with `body`. `execution_complete`
// is whether no plan node remains after a WorkResult (agent_4_execute only).
// Errors (kInvalidArgument) name the rule, e.g. "Phase agent_1_frame requires
// ProblemFrame or ClarificationRequest; received WorkPlan".
Result<Transition> AdvanceRun(const store::RunRecord& run, const std::string& type, const Json& body,
                              std::optional<bool> execution_complete = std::nullopt);

// The transition of a clarification boundary recorded after the budget of
// one clarification per run is spent: an honest blocked report is next.
Transition ClarificationBudgetExhausted(const store::RunRecord& run);

// A resume answer: status running, phase = resumePhase.
Result<store::RunRecord> ResumeAfterClarification(const store::RunRecord& run);

}  // namespace telic::controller
