// Approval binding: a user approval names the sha256 of the exact pending
// action text and the policy version it was granted under (RPT-019, RPT-020,
// RPT-030). Any byte of change to the action gives another digest, so it
// needs a new approval.
#pragma once

#include <string>
#include <string_view>

namespace telic::reports {

// The approval policy version telic ships; approvals granted under another
// version are not honoured.
inline constexpr std::string_view kApprovalPolicyVersion = "telic-approval/1";

// "sha256:<hex>" of the action text, byte for byte.
std::string ActionDigest(std::string_view action);

// "sha256:<hex>" of the canonical JSON {actionSha256, policyVersion, taskId}.
std::string ApprovalBinding(std::string_view task_id, std::string_view action_digest, std::string_view policy_version);

}  // namespace telic::reports
