// How strictly a run's work is observed (issue 38, item 6), and the state
// the controller keeps for it in the run record (RunRecord::extra
// "observation": the policy, whether the work tree is shared, and the
// baseline taken when the run was grounded).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/canonical_json.h"
#include "store/records.h"

namespace telic::controller {

enum class ObservationPolicy {
  // Whenever the work tree is shared: every claimed FileChange is checked
  // against it, telic stores its own diff of each, and a report claiming
  // completion (completed, partial) is refused while an undeclared change exists.
  kChecked,
  // kChecked, and a run may end completed only if every repository change is
  // backed by telic's observed diff Evidence and every test Evidence it cites
  // is observed (a check telic ran); an unshared work tree cannot complete.
  kRequireObserved,
};

// "checked" | "require_observed"; nullopt for anything else.
std::optional<ObservationPolicy> ParseObservationPolicy(std::string_view text);
std::string_view ObservationPolicyName(ObservationPolicy policy);

// What a run's record says about observation.
struct RunObservation {
  ObservationPolicy policy = ObservationPolicy::kChecked;
  bool shared = false;           // telic saw the host's work tree when the run started
  std::string unobserved_reason;  // when not shared: what every observation says instead
  std::optional<Json> baseline;  // observation::Baseline::ToJson(), once grounded with a shared work tree
};

// Runs started before observation existed read as not shared.
RunObservation RunObservationOf(const store::RunRecord& run);
void SetRunObservation(store::RunRecord& run, const RunObservation& observation);

}  // namespace telic::controller
