// Acceptance rules of the contract family (PROTOCOL §15): ProblemFrame,
// TaskContract and its PromptReview. The rules read the typed views of
// artifact_views.h; a contract revision and the frame-to-contract copies are
// compared member by member as JSON (whole-value equality, generic over the
// members a review names), which is why those reads stay on the body.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "domain/vocabulary.h"
#include "policy/permission_set.h"
#include "policy/shell_command.h"

namespace telic::controller::rules {
namespace {

// The Evidence kinds that ground a fact of `provenance` (empty: not evidence-grounded).
std::vector<EvidenceKind> GroundingKinds(Provenance provenance) {
  switch (provenance) {
    case Provenance::kRuntime: return {EvidenceKind::kRuntime, EvidenceKind::kLog};
    case Provenance::kBrowser: return {EvidenceKind::kBrowser};
    case Provenance::kTool: return {EvidenceKind::kToolOutput, EvidenceKind::kTest, EvidenceKind::kDiff};
    case Provenance::kUser:
    case Provenance::kRepository: return {};
  }
  return {};
}

// Whether `source` names an Evidence of this run whose kind is one of `kinds`.
Result<bool> MatchingEvidence(RunSnapshot& snapshot, const std::string& source, const std::vector<EvidenceKind>& kinds) {
  auto id = ArtifactIdFromUri(source);
  const store::ArtifactMeta* meta = id ? snapshot.Find(*id) : nullptr;
  if (!meta || !IsType(*meta, domain::ArtifactType::kEvidence)) return false;
  TELIC_ASSIGN_OR_RETURN(EvidenceView evidence, ViewOf(snapshot, *meta, ViewEvidence));
  return std::find(kinds.begin(), kinds.end(), evidence.kind) != kinds.end();
}

// Each known fact cites a source its provenance allows.
Status CheckFactSources(RunSnapshot& snapshot, const ProblemFrameView& frame) {
  std::set<std::string> user_messages;
  for (const auto* meta : snapshot.All("UserMessage")) {
    if (meta->producer == "user") user_messages.insert(snapshot.Uri(meta->id));
  }
  for (size_t i = 0; i < frame.known_facts.size(); ++i) {
    const GroundedFactView& fact = frame.known_facts[i];
    std::string at = PointerAt("knownFacts", i, "sourceRef");
    if (fact.provenance == Provenance::kUser && !user_messages.count(fact.source_ref)) {
      return Reject(at, "User-provenance facts must cite a same-run user message");
    }
    if (fact.provenance == Provenance::kRepository && fact.source_ref.rfind("repo://", 0) != 0) {
      return Reject(at, "Repository-provenance facts must cite selected repository context");
    }
    std::vector<EvidenceKind> kinds = GroundingKinds(fact.provenance);
    if (kinds.empty()) continue;
    TELIC_ASSIGN_OR_RETURN(bool matches, MatchingEvidence(snapshot, fact.source_ref, kinds));
    if (!matches) return Reject(at, fmt::format("{}-provenance facts require matching Evidence", Name(fact.provenance)));
  }
  return Ok();
}

// A revised contract (version 2) changes exactly the fields its blocking
// review findings correct and keeps the ones they preserve.
Status CheckContractRevision(RunSnapshot& snapshot, const Submission& s, const TaskContractView& contract) {
  const Json& body = s.body;
  const store::ArtifactMeta* previous_meta = snapshot.Latest("TaskContract");
  const store::ArtifactMeta* review_meta = snapshot.Latest("PromptReview");
  if (!previous_meta || !review_meta) return Reject("", "TaskContract revision is missing its prior lineage");
  TELIC_ASSIGN_OR_RETURN(const Json* previous, snapshot.Body(*previous_meta));
  TELIC_ASSIGN_OR_RETURN(PromptReviewView review, ViewOf(snapshot, *review_meta, ViewPromptReview));
  bool cites = ContainsString(s.source_refs, snapshot.Uri(previous_meta->id)) &&
               ContainsString(s.source_refs, snapshot.Uri(review_meta->id));
  if (review.decision != PromptDecision::kRevise || review.revision_number != 0 || contract.version != 2 || !cites) {
    return Reject(contract.version != 2 ? "/version" : "", "Revised TaskContract must be version 2 and cite its contract review lineage");
  }
  std::set<std::string> preserved;
  std::set<std::string> corrections;
  for (const FindingView& finding : review.findings) {
    preserved.insert(finding.preserve_fields.begin(), finding.preserve_fields.end());
    if (finding.severity == FindingSeverity::kBlocking && finding.has_required_correction) {
      corrections.insert(finding.correction_fields.begin(), finding.correction_fields.end());
    }
  }
  if (!policy::PermissionSetIsSubset(*contract.permissions, previous->value("permissions", Json()))) {
    return Reject("/permissions", "TaskContract revision permissions cannot broaden the prior contract");
  }
  std::set<std::string> keys;
  for (auto it = previous->begin(); it != previous->end(); ++it) keys.insert(it.key());
  for (auto it = body.begin(); it != body.end(); ++it) keys.insert(it.key());
  std::set<std::string> changed;
  for (const auto& key : keys) {
    if (key == "id" || key == "version") continue;
    Json a = previous->contains(key) ? (*previous)[key] : Json();
    Json b = body.contains(key) ? body[key] : Json();
    if (previous->contains(key) != body.contains(key) || Canonical(a) != Canonical(b)) changed.insert(key);
  }
  for (const auto& field : corrections) {
    if (preserved.count(field)) return Reject("/" + field, fmt::format("TaskContract revision field {} cannot be both preserved and corrected", field));
  }
  for (const auto& field : changed) {
    if (!corrections.count(field)) return Reject("/" + field, fmt::format("TaskContract revision field {} is outside the typed correction scope", field));
  }
  for (const auto& field : corrections) {
    if (!changed.count(field)) return Reject("/" + field, fmt::format("TaskContract revision did not apply declared correction field {}", field));
  }
  for (const auto& field : preserved) {
    if (!previous->contains(field) || !body.contains(field) || Canonical((*previous)[field]) != Canonical(body[field])) {
      return Reject("/" + field, fmt::format("Revised TaskContract changed preserved field {}", field));
    }
  }
  return Ok();
}

// The contract keeps the frame's grounding: every non-user fact and inference
// source in its contextRefs, and every applicable rule.
Status CheckContractGrounding(const TaskContractView& contract, const ProblemFrameView& frame) {
  for (const GroundedFactView& fact : frame.known_facts) {
    if (fact.provenance != Provenance::kUser && !ContainsString(contract.context_refs, fact.source_ref)) {
      return Reject("/contextRefs", "TaskContract contextRefs must retain every non-user ProblemFrame fact and inference source");
    }
  }
  for (const auto& ref : frame.inference_source_refs) {
    if (!ContainsString(contract.context_refs, ref)) {
      return Reject("/contextRefs", "TaskContract contextRefs must retain every non-user ProblemFrame fact and inference source");
    }
  }
  return Ok();
}

// The initial contract copies the frame's scope, constraints, non-goals and
// draft criteria exactly.
Status CheckContractCopiesFrame(const Json& body, const Json& frame) {
  for (const char* field : {"scope", "constraints", "nonGoals"}) {
    if (Canonical(body.value(field, Json())) != Canonical(frame.value(field, Json()))) {
      return Reject(std::string("/") + field, fmt::format("TaskContract must preserve ProblemFrame {} exactly", field));
    }
  }
  if (Canonical(body.value("acceptanceCriteria", Json())) != Canonical(frame.value("draftAcceptanceCriteria", Json()))) {
    return Reject("/acceptanceCriteria", "TaskContract acceptance criteria must preserve the reviewed ProblemFrame draft exactly");
  }
  return Ok();
}

// Required verifications are backed by the contract's permissions, shell
// commands are exact, and the permissions stay within the authorization.
Status CheckContractPermissions(RunSnapshot& snapshot, const TaskContractView& contract, const Json& envelope) {
  const Json& permissions = *contract.permissions;
  for (size_t i = 0; i < contract.verification_requirements.size(); ++i) {
    const VerificationRequirementView& requirement = contract.verification_requirements[i];
    if (requirement.required && !PermissionAllowsCapability(permissions, requirement.capability)) {
      return Reject(PointerAt("verificationRequirements", i, "capability"),
                    fmt::format("Required verification {} is not backed by TaskContract permissions", requirement.id));
    }
  }
  std::vector<std::string> commands = StringArray(permissions.value("shell", Json::object()), "executeAllowlist");
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!policy::IsExactShellCommand(commands[i])) {
      return Reject(PointerAt("permissions/shell/executeAllowlist", i),
                    "TaskContract shell execute permissions require exact, non-compound commands");
    }
  }
  if (!policy::PermissionSetIsSubset(permissions, EnvelopeAuthorization(snapshot, envelope))) {
    return Reject("/permissions", "TaskContract permissions exceed immutable authorization");
  }
  return Ok();
}

}  // namespace

Status CheckProblemFrame(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(ProblemFrameView frame, ViewProblemFrame(body));
  if (RunTopology(snapshot) == domain::Topology::kMicro) {
    if (frame.draft_criteria != 1) {
      return Reject("/draftAcceptanceCriteria", "Micro topology requires exactly one draft acceptance criterion");
    }
    if (frame.known_facts.size() > 3) return Reject("/knownFacts", "Micro topology allows at most three known facts");
    if (frame.clarification_required) return Reject("/clarification/required", "Micro topology cannot require clarification in ProblemFrame");
  }
  if (frame.intent_mode != run.requested_mode) return Reject("/intentMode", "ProblemFrame intentMode must match the immutable run mode");
  if (frame.original_request_ref != original_request_ref) {
    return Reject("/originalRequestRef", "ProblemFrame must reference the current original request");
  }
  TELIC_RETURN_IF_ERROR(CheckFactSources(snapshot, frame));
  if (frame.clarification_required) {
    return Reject("/clarification/required", "Required clarification must be submitted as ClarificationRequest before ProblemFrame");
  }
  return Ok();
}

Status CheckTaskContract(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                         const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(TaskContractView contract, ViewTaskContract(s.body));
  if (contract.intent_mode != run.requested_mode) return Reject("/intentMode", "TaskContract intentMode must match the immutable run mode");
  TELIC_ASSIGN_OR_RETURN(std::string frame_ref, snapshot.RequireLatestRef("ProblemFrame"));
  if (contract.original_request_ref != original_request_ref || contract.problem_frame_ref != frame_ref) {
    return Reject(contract.original_request_ref != original_request_ref ? "/originalRequestRef" : "/problemFrameRef", "TaskContract lineage is stale or incomplete");
  }
  TELIC_ASSIGN_OR_RETURN(ProblemFrameView frame, LatestView(snapshot, "ProblemFrame", ViewProblemFrame));
  TELIC_RETURN_IF_ERROR(CheckContractGrounding(contract, frame));
  std::optional<domain::Phase> phase = RunPhase(snapshot);
  if (phase == domain::Phase::kAgent2Compile) TELIC_RETURN_IF_ERROR(CheckContractCopiesFrame(s.body, *frame.body));
  if (!EqualStringSets(contract.rule_refs, frame.applicable_rule_refs)) {
    return Reject("/ruleRefs", "TaskContract must retain every applicable ProblemFrame rule exactly once");
  }
  if (phase == domain::Phase::kAgent2Compile) {
    if (snapshot.Count("TaskContract") != 0 || contract.version != 1) {
      return Reject("/version", "The initial TaskContract must be version 1");
    }
  } else if (phase == domain::Phase::kAgent2Revise) {
    TELIC_RETURN_IF_ERROR(CheckContractRevision(snapshot, s, contract));
  }
  return CheckContractPermissions(snapshot, contract, envelope);
}

Status CheckPromptReview(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref) {
  TELIC_ASSIGN_OR_RETURN(PromptReviewView review, ViewPromptReview(body));
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  if (review.target_ref != contract_ref) return Reject("/targetRef", "PromptReview must review the current TaskContract");
  TELIC_ASSIGN_OR_RETURN(TaskContractView contract, LatestView(snapshot, "TaskContract", ViewTaskContract));
  std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {original_request_ref, {"objective", "intentMode"}},
      {contract.problem_frame_ref, {"scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs"}},
      {contract_ref,
       {"permissions", "contextRefs", "requiredOutputs", "verificationRequirements", "stopConditions", "assumptions",
        "unresolvedQuestions"}}};
  if (review.coverage.size() != expected.size()) return Reject("/coverage", "PromptReview coverage must include every authoritative contract source");
  for (const auto& [source, fields] : expected) {
    std::vector<size_t> matches;
    for (size_t i = 0; i < review.coverage.size(); ++i) {
      if (review.coverage[i].source_ref == source) matches.push_back(i);
    }
    if (matches.size() != 1 || !EqualStringSets(review.coverage[matches[0]].contract_fields, fields)) {
      std::string at = matches.empty() ? "/coverage" : PointerAt("coverage", matches.back(), "contractFields");
      return Reject(at, fmt::format("PromptReview coverage for {} is incomplete or duplicated", source));
    }
  }
  if (review.revision_number != contract.version - 1) {
    return Reject("/revisionNumber", "PromptReview revisionNumber must match the current TaskContract version");
  }
  return Ok();
}

}  // namespace telic::controller::rules
