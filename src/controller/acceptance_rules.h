// Internal to the acceptance rules (PROTOCOL §15): the per-family checks
// the dispatcher (acceptance.cc) calls, and the helpers the families share.
// Families: acceptance_contract.cc (ProblemFrame, TaskContract,
// PromptReview), work_plan_rules.cc (WorkPlan), acceptance_work.cc
// (WorkResult), acceptance_reviews.cc (QualityReview, ReleaseAudit),
// acceptance_reports.cc (UserReport).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/acceptance.h"
#include "controller/run_snapshot.h"
#include "policy/engine.h"

namespace telic::controller::rules {

// ------------------------------------------------------------ family checks
// Each returns the refusal of the first violated rule (kInvalidArgument with
// a JSON pointer into the body, or kPermissionDenied with `denial` set).

[[nodiscard]] Status CheckProblemFrame(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref);
[[nodiscard]] Status CheckTaskContract(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                                       const std::string& original_request_ref);
[[nodiscard]] Status CheckPromptReview(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref);
[[nodiscard]] Status CheckWorkResult(RunSnapshot& snapshot, const Submission& s, std::optional<PermissionDenial>& denial);
[[nodiscard]] Status CheckQualityReview(RunSnapshot& snapshot, const Submission& s, const Json& envelope);
[[nodiscard]] Status CheckReleaseAudit(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                                       const std::string& original_request_ref);
[[nodiscard]] Status CheckUserReport(RunSnapshot& snapshot, const Submission& s);

// ------------------------------------------------------------ shared helpers

// A rule violation at `pointer` (rule_violation.h).
std::unexpected<Error> Reject(std::string pointer, std::string message);

// Records `decision` in `denial` and returns kPermissionDenied at `pointer`.
Status Deny(std::optional<PermissionDenial>& denial, std::string pointer, std::string message, Json decision,
            std::vector<std::string> refs);

bool IsReportOrPlan(const std::string& mode);

// The object elements of body[key], by reference (no copies).
using Items = std::vector<std::reference_wrapper<const Json>>;
Items Objects(const Json& body, const char* key);

// The JSON pointer "/key/<i>[/field]" of `item`, an element of body[key]
// (found by address); "/key" when it is not one.
std::string At(const Json& body, const char* key, const Json& item, std::string_view field = {});

// The string values of `key` in `items` (non-strings skipped).
std::vector<std::string> Field(const Items& items, const char* key);

// The ids of the contract's acceptance criteria, of `stage` when not empty.
std::vector<std::string> CriterionIds(const Json& contract, const std::string& stage = "");

std::string Canonical(const Json& value);

// The run's effective permissions under the envelope's authorization.
Json EnvelopeAuthorization(RunSnapshot& snapshot, const Json& envelope);

// The permission decision of an action for the trace (PROTOCOL §17.1).
Json TraceDecision(const Json& action, bool allowed, const std::vector<std::string>& policy_refs,
                   const std::string& summary);

// Authorizes `action` under the mode ceiling and the work node's permissions.
policy::Decision AuthorizeForNode(const store::RunRecord& run, const Json& node, const std::string& capability,
                                  const Json& action);

// The index of the last completed mutating action, or -1.
int64_t LastCompletedMutation(const Items& actions);

// Every stored body of `type`, in acceptance order.
[[nodiscard]] Result<std::vector<const Json*>> AllBodies(RunSnapshot& snapshot, std::string_view type);

// Whether every required verification of `contract` passed in `quality`;
// `refs` receives their evidence refs (first occurrence order).
bool RequiredVerificationsPass(const Json& contract, const Json& quality, std::vector<std::string>& refs);

}  // namespace telic::controller::rules
