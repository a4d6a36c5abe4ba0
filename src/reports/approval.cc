#include "reports/approval.h"

#include "base/canonical_json.h"
#include "base/sha256.h"

namespace telic::reports {

std::string ActionDigest(std::string_view action) { return Sha256Ref(action); }

std::string ApprovalBinding(std::string_view task_id, std::string_view action_digest, std::string_view policy_version) {
  Json binding = {{"taskId", task_id}, {"actionSha256", action_digest}, {"policyVersion", policy_version}};
  return Sha256Ref(CanonicalJson(binding));
}

}  // namespace telic::reports
