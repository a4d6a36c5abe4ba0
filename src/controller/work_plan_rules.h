// WorkPlan acceptance (PROTOCOL §15.6) and the scoped work orders shared
// by QualityReview, ReleaseAudit and diagnosis gates.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_snapshot.h"

namespace telic::controller {

inline constexpr int64_t kMaxToolCallsPerRun = 4000;

struct ScopedWorkOrderRules {
  std::string label;
  std::string criterion_field;  // targetCriterionIds | failedCriterionIds
  std::vector<std::string> allowed_criteria;
  Json contract_permissions;
  Json authorized_permissions;
  std::set<std::string> eligible_source_refs;
  bool require_all_criteria = false;
  bool require_executable_capability = false;
  std::string pointer;  // where the work order sits in the submitted body
};

Status CheckScopedWorkOrder(const Json& order, const ScopedWorkOrderRules& rules);

// Every PROTOCOL §15.6 rule for a WorkPlan `body` with id `plan_id`.
Status CheckWorkPlan(RunSnapshot& snapshot, const std::string& plan_id, const Json& body, const Json& envelope);

}  // namespace telic::controller
