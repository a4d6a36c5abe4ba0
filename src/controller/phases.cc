#include "controller/phases.h"

#include <algorithm>

namespace telic::controller {
namespace {

const std::vector<PhaseInfo>& Table() {
  static const std::vector<PhaseInfo> kPhases = {
      {"context_grounding", "context_discovery", "controller", {"ContextManifest", "ClarificationRequest"},
       {"RunEnvelope", "UserMessage", "ClarificationRequest"}, true},
      {"agent_1_frame", "agent_1_frame", "scenario_author", {"ProblemFrame", "ClarificationRequest"},
       {"RunEnvelope", "UserMessage", "ContextManifest", "ClarificationRequest"}, true},
      {"agent_2_compile", "agent_2_compile", "task_compiler", {"TaskContract", "ClarificationRequest"},
       {"RunEnvelope", "UserMessage", "ContextManifest", "ProblemFrame", "ClarificationRequest"}, true},
      {"agent_1_review", "agent_1_review", "scenario_author", {"PromptReview", "ClarificationRequest"},
       {"UserMessage", "ProblemFrame", "TaskContract", "ClarificationRequest"}, true},
      {"agent_2_revise", "agent_2_revision", "task_compiler", {"TaskContract", "ClarificationRequest"},
       {"UserMessage", "ProblemFrame", "TaskContract", "PromptReview", "ClarificationRequest"}, true},
      {"agent_3_plan", "agent_3_plan", "quality_controller", {"WorkPlan", "ClarificationRequest"},
       {"TaskContract", "PromptReview", "ContextManifest", "QualityReview", "ReleaseAudit", "UserMessage",
        "ClarificationRequest"}, true},
      {"agent_4_execute", "agent_4_execute", "executor", {"WorkResult", "ClarificationRequest"},
       {"TaskContract", "WorkPlan", "ContextManifest", "QualityReview", "ReleaseAudit", "UserMessage",
        "ClarificationRequest"}, true},
      {"agent_3_review", "agent_3_quality_review", "quality_controller", {"QualityReview", "ClarificationRequest"},
       {"TaskContract", "WorkPlan", "WorkResult", "Evidence", "QualityReview", "ReleaseAudit", "UserMessage",
        "ClarificationRequest"}, true},
      {"agent_3_evidence_reverify", "agent_3_evidence_reverify", "quality_controller",
       {"QualityReview", "ClarificationRequest"},
       {"TaskContract", "WorkPlan", "WorkResult", "Evidence", "QualityReview", "ReleaseAudit", "UserMessage",
        "ClarificationRequest"}, true},
      {"agent_5_audit", "agent_5_release_audit", "release_auditor", {"ReleaseAudit"},
       {"UserMessage", "TaskContract", "WorkPlan", "WorkResult", "Evidence", "QualityReview",
        "ClarificationRequest"}, false},
      {"agent_5_report", "user_report", "release_auditor", {"UserReport"},
       {"UserMessage", "ProblemFrame", "TaskContract", "PromptReview", "WorkPlan", "WorkResult", "Evidence",
        "QualityReview", "ReleaseAudit", "ClarificationRequest"}, false},
  };
  return kPhases;
}

}  // namespace

const PhaseInfo* FindPhase(std::string_view internal_name) {
  const auto& table = Table();
  auto it = std::find_if(table.begin(), table.end(), [&](const PhaseInfo& p) { return p.internal_name == internal_name; });
  return it == table.end() ? nullptr : &*it;
}

std::string ProtocolPhaseName(std::string_view internal_name) {
  const PhaseInfo* phase = FindPhase(internal_name);
  return phase ? phase->protocol_name : std::string(internal_name);
}

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
