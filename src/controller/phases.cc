#include "controller/phases.h"

#include <algorithm>
#include <optional>

namespace telic::controller {
namespace {

using domain::ArtifactType;
using domain::Phase;
constexpr ArtifactType kRunEnvelope = ArtifactType::kRunEnvelope;
constexpr ArtifactType kUserMessage = ArtifactType::kUserMessage;
constexpr ArtifactType kContextManifest = ArtifactType::kContextManifest;
constexpr ArtifactType kProblemFrame = ArtifactType::kProblemFrame;
constexpr ArtifactType kTaskContract = ArtifactType::kTaskContract;
constexpr ArtifactType kPromptReview = ArtifactType::kPromptReview;
constexpr ArtifactType kWorkPlan = ArtifactType::kWorkPlan;
constexpr ArtifactType kWorkResult = ArtifactType::kWorkResult;
constexpr ArtifactType kEvidence = ArtifactType::kEvidence;
constexpr ArtifactType kQualityReview = ArtifactType::kQualityReview;
constexpr ArtifactType kReleaseAudit = ArtifactType::kReleaseAudit;
constexpr ArtifactType kUserReport = ArtifactType::kUserReport;
constexpr ArtifactType kClarification = ArtifactType::kClarificationRequest;

// One row per phase, in domain::Phase order (FindPhase indexes it).
const std::vector<PhaseInfo>& Table() {
  static const std::vector<PhaseInfo> kPhases = {
      {Phase::kContextGrounding, "controller", {kContextManifest, kClarification},
       {kRunEnvelope, kUserMessage, kClarification}, true},
      {Phase::kAgent1Frame, "scenario_author", {kProblemFrame, kClarification},
       {kRunEnvelope, kUserMessage, kContextManifest, kClarification}, true},
      {Phase::kAgent2Compile, "task_compiler", {kTaskContract, kClarification},
       {kRunEnvelope, kUserMessage, kContextManifest, kProblemFrame, kClarification}, true},
      {Phase::kAgent1Review, "scenario_author", {kPromptReview, kClarification},
       {kUserMessage, kProblemFrame, kTaskContract, kClarification}, true},
      {Phase::kAgent2Revise, "task_compiler", {kTaskContract, kClarification},
       {kUserMessage, kProblemFrame, kTaskContract, kPromptReview, kClarification}, true},
      {Phase::kAgent3Plan, "quality_controller", {kWorkPlan, kClarification},
       {kTaskContract, kPromptReview, kContextManifest, kQualityReview, kReleaseAudit, kUserMessage, kClarification},
       true},
      {Phase::kAgent4Execute, "executor", {kWorkResult, kClarification},
       {kTaskContract, kWorkPlan, kContextManifest, kQualityReview, kReleaseAudit, kUserMessage, kClarification}, true},
      {Phase::kAgent3Review, "quality_controller", {kQualityReview, kClarification},
       {kTaskContract, kWorkPlan, kWorkResult, kEvidence, kQualityReview, kReleaseAudit, kUserMessage,
        kClarification},
       true},
      {Phase::kAgent3EvidenceReverify, "quality_controller", {kQualityReview, kClarification},
       {kTaskContract, kWorkPlan, kWorkResult, kEvidence, kQualityReview, kReleaseAudit, kUserMessage,
        kClarification},
       true},
      {Phase::kAgent5Audit, "release_auditor", {kReleaseAudit},
       {kUserMessage, kTaskContract, kWorkPlan, kWorkResult, kEvidence, kQualityReview, kClarification}, false},
      {Phase::kAgent5Report, "release_auditor", {kUserReport},
       {kUserMessage, kProblemFrame, kTaskContract, kPromptReview, kWorkPlan, kWorkResult, kEvidence,
        kQualityReview, kReleaseAudit, kClarification},
       false},
  };
  return kPhases;
}

}  // namespace

const PhaseInfo& FindPhase(domain::Phase phase) { return Table()[static_cast<size_t>(phase)]; }

std::string ProtocolPhaseName(std::string_view internal_name) {
  std::optional<domain::Phase> phase = domain::PhaseNamed(internal_name);
  return std::string(phase ? domain::ProtocolName(*phase) : internal_name);
}

std::string ProtocolPhaseName(domain::Phase phase) { return std::string(domain::ProtocolName(phase)); }

std::string CanonicalEventType(std::string_view type) {
  static const std::vector<std::string_view> kKept = {
      "run_started",      "phase_submitted", "clarification_requested", "permission_checked", "broker_decision",
      "topology_classified", "topology_escalated", "digest_verified", "lineage_linked"};
  if (std::find(kKept.begin(), kKept.end(), type) != kKept.end()) return std::string(type);
  if (type == "clarification_answered") return "transition_allowed";
  if (type == "run_cancelled") return "run_terminated";
  return "artifact_recorded";
}

bool IsLogicalRole(std::string_view role) {
  static const std::vector<std::string_view> kRoles = {"controller", "scenario_author", "task_compiler",
                                                       "quality_controller", "executor", "release_auditor",
                                                       "host", "tool", "user"};
  return std::find(kRoles.begin(), kRoles.end(), role) != kRoles.end();
}

}  // namespace telic::controller
