// Internal to the acceptance rules (PROTOCOL §15): the per-family checks
// the dispatcher (acceptance.cc) calls, and the helpers the families share.
// Families: acceptance_contract.cc (ProblemFrame, TaskContract,
// PromptReview), work_plan_rules.cc (WorkPlan), acceptance_work.cc
// (WorkResult), acceptance_reviews.cc (QualityReview, ReleaseAudit),
// acceptance_reports.cc (UserReport).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/acceptance.h"
#include "controller/artifact_views.h"
#include "controller/run_snapshot.h"
#include "domain/vocabulary.h"
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

// The run record's vocabulary fields as enums, read in one place (nullopt:
// a word outside the vocabulary, which no rule matches).
std::optional<domain::Mode> RunMode(const RunSnapshot& snapshot);
std::optional<domain::Phase> RunPhase(const RunSnapshot& snapshot);
std::optional<domain::Topology> RunTopology(const RunSnapshot& snapshot);

// Whether `meta` is an artifact of `type`.
bool IsType(const store::ArtifactMeta& meta, domain::ArtifactType type);

// report_only and plan_only: the modes that never execute.
bool IsReportOrPlan(std::optional<domain::Mode> mode);

// analyze_and_fix before its fix is unlocked: the diagnosis stage.
bool IsDiagnosisStage(std::optional<domain::Mode> mode, bool unlocked);

std::string Canonical(const Json& value);

// The run's effective permissions under the envelope's authorization.
Json EnvelopeAuthorization(RunSnapshot& snapshot, const Json& envelope);

// The permission decision of an action on `target` for the trace (PROTOCOL §17.1).
Json TraceDecision(const std::string& capability, const std::string& target, bool allowed,
                   const std::vector<std::string>& policy_refs, const std::string& summary);

// Authorizes `capability` on `target` under the mode ceiling and the work node's permissions.
policy::Decision AuthorizeForNode(const store::RunRecord& run, const WorkNodeView& node, const std::string& capability,
                                  const std::string& target);

// ------------------------------------------------------------ stored views

template <typename View>
using ViewBuilder = Result<View> (*)(const Json&);

// kDataLoss naming stored artifact `id`, whose body does not fit its view.
std::unexpected<Error> StoredViewMismatch(std::string_view id, const Error& error);

// The view of a stored artifact's body.
template <typename View>
[[nodiscard]] Result<View> ViewOf(RunSnapshot& snapshot, const store::ArtifactMeta& meta, ViewBuilder<View> build) {
  TELIC_ASSIGN_OR_RETURN(const Json* body, snapshot.Body(meta));
  Result<View> view = build(*body);
  if (!view) return StoredViewMismatch(meta.id, view.error());
  return view;
}

// The view of the latest body of `type` (RunSnapshot::LatestBody's error when none).
template <typename View>
[[nodiscard]] Result<View> LatestView(RunSnapshot& snapshot, std::string_view type, ViewBuilder<View> build) {
  TELIC_RETURN_IF_ERROR(snapshot.LatestBody(type));
  return ViewOf(snapshot, *snapshot.Latest(type), build);
}

// The view of the latest body of `type`, or nullopt when there is none.
template <typename View>
[[nodiscard]] Result<std::optional<View>> LatestViewOrNull(RunSnapshot& snapshot, std::string_view type,
                                                           ViewBuilder<View> build) {
  const store::ArtifactMeta* meta = snapshot.Latest(type);
  if (!meta) return std::optional<View>();
  TELIC_ASSIGN_OR_RETURN(View view, ViewOf(snapshot, *meta, build));
  return std::optional<View>(std::move(view));
}

// The views of every stored body of `type`, in acceptance order.
template <typename View>
[[nodiscard]] Result<std::vector<View>> AllViews(RunSnapshot& snapshot, std::string_view type, ViewBuilder<View> build) {
  std::vector<View> out;
  for (const store::ArtifactMeta* meta : snapshot.All(type)) {
    TELIC_ASSIGN_OR_RETURN(View view, ViewOf(snapshot, *meta, build));
    out.push_back(std::move(view));
  }
  return out;
}

}  // namespace telic::controller::rules
