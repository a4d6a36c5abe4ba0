// Acceptance rules of the contract family (PROTOCOL §15): ProblemFrame,
// TaskContract and its PromptReview.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/acceptance_rules.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "policy/permission_set.h"
#include "policy/shell_command.h"

namespace telic::controller::rules {
namespace {

Status CheckContractRevision(RunSnapshot& snapshot, const Submission& s, const Json& body) {
  const store::ArtifactMeta* previous_meta = snapshot.Latest("TaskContract");
  const store::ArtifactMeta* review_meta = snapshot.Latest("PromptReview");
  if (!previous_meta || !review_meta) return Reject("", "TaskContract revision is missing its prior lineage");
  TELIC_ASSIGN_OR_RETURN(const Json* previous, snapshot.Body(*previous_meta));
  TELIC_ASSIGN_OR_RETURN(const Json* review, snapshot.Body(*review_meta));
  bool cites = ContainsString(s.source_refs, snapshot.Uri(previous_meta->id)) &&
               ContainsString(s.source_refs, snapshot.Uri(review_meta->id));
  if (review->value("decision", "") != "revise" || review->value("revisionNumber", -1) != 0 ||
      body.value("version", 0) != 2 || !cites) {
    return Reject(body.value("version", 0) != 2 ? "/version" : "", "Revised TaskContract must be version 2 and cite its contract review lineage");
  }
  std::set<std::string> preserved;
  std::set<std::string> corrections;
  for (const Json& finding : Objects(*review, "findings")) {
    for (const auto& f : StringArray(finding, "preserveFields")) preserved.insert(f);
    if (finding.value("severity", "") == "blocking" && finding.contains("requiredCorrection") &&
        finding["requiredCorrection"].is_string()) {
      for (const auto& f : StringArray(finding, "correctionFields")) corrections.insert(f);
    }
  }
  if (!policy::PermissionSetIsSubset(body.value("permissions", Json()), previous->value("permissions", Json()))) {
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

}  // namespace

Status CheckProblemFrame(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  bool clarification_required = body.value("/clarification/required"_json_pointer, false);
  if (run.topology == "micro") {
    if (Objects(body, "draftAcceptanceCriteria").size() != 1) {
      return Reject("/draftAcceptanceCriteria", "Micro topology requires exactly one draft acceptance criterion");
    }
    if (Objects(body, "knownFacts").size() > 3) return Reject("/knownFacts", "Micro topology allows at most three known facts");
    if (clarification_required) return Reject("/clarification/required", "Micro topology cannot require clarification in ProblemFrame");
  }
  if (body.value("intentMode", "") != run.requested_mode) return Reject("/intentMode", "ProblemFrame intentMode must match the immutable run mode");
  if (body.value("originalRequestRef", "") != original_request_ref) {
    return Reject("/originalRequestRef", "ProblemFrame must reference the current original request");
  }
  std::set<std::string> user_messages;
  for (const auto* meta : snapshot.All("UserMessage")) {
    if (meta->producer == "user") user_messages.insert(snapshot.Uri(meta->id));
  }
  for (const Json& fact : Objects(body, "knownFacts")) {
    if (!fact.contains("sourceRef") || !fact["sourceRef"].is_string()) return Reject(At(body, "knownFacts", fact, "sourceRef"), "ProblemFrame fact source is invalid");
    std::string source = fact["sourceRef"];
    std::string provenance = fact.value("provenance", "");
    if (provenance == "user" && !user_messages.count(source)) {
      return Reject(At(body, "knownFacts", fact, "sourceRef"), "User-provenance facts must cite a same-run user message");
    }
    if (provenance == "repository" && source.rfind("repo://", 0) != 0) {
      return Reject(At(body, "knownFacts", fact, "sourceRef"), "Repository-provenance facts must cite selected repository context");
    }
    if (provenance == "runtime" || provenance == "browser" || provenance == "tool") {
      std::vector<std::string> kinds = provenance == "runtime"   ? std::vector<std::string>{"runtime", "log"}
                                       : provenance == "browser" ? std::vector<std::string>{"browser"}
                                                                 : std::vector<std::string>{"tool_output", "test", "diff"};
      auto id = ArtifactIdFromUri(source);
      const store::ArtifactMeta* meta = id ? snapshot.Find(*id) : nullptr;
      bool matches = false;
      if (meta && meta->type == "Evidence") {
        TELIC_ASSIGN_OR_RETURN(const Json* evidence, snapshot.Body(*meta));
        matches = ContainsString(kinds, evidence->value("kind", ""));
      }
      if (!matches) return Reject(At(body, "knownFacts", fact, "sourceRef"), fmt::format("{}-provenance facts require matching Evidence", provenance));
    }
  }
  if (clarification_required) {
    return Reject("/clarification/required", "Required clarification must be submitted as ClarificationRequest before ProblemFrame");
  }
  return Ok();
}

Status CheckTaskContract(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                         const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  if (body.value("intentMode", "") != run.requested_mode) return Reject("/intentMode", "TaskContract intentMode must match the immutable run mode");
  TELIC_ASSIGN_OR_RETURN(std::string frame_ref, snapshot.RequireLatestRef("ProblemFrame"));
  if (body.value("originalRequestRef", "") != original_request_ref || body.value("problemFrameRef", "") != frame_ref) {
    return Reject(body.value("originalRequestRef", "") != original_request_ref ? "/originalRequestRef" : "/problemFrameRef", "TaskContract lineage is stale or incomplete");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* frame, snapshot.LatestBody("ProblemFrame"));
  std::vector<std::string> context_refs = StringArray(body, "contextRefs");
  for (const Json& fact : Objects(*frame, "knownFacts")) {
    if (fact.value("provenance", "") != "user" && fact.contains("sourceRef") && fact["sourceRef"].is_string() &&
        !ContainsString(context_refs, fact["sourceRef"].get<std::string>())) {
      return Reject("/contextRefs", "TaskContract contextRefs must retain every non-user ProblemFrame fact and inference source");
    }
  }
  for (const Json& inference : Objects(*frame, "inferences")) {
    for (const auto& ref : StringArray(inference, "sourceRefs")) {
      if (!ContainsString(context_refs, ref)) {
        return Reject("/contextRefs", "TaskContract contextRefs must retain every non-user ProblemFrame fact and inference source");
      }
    }
  }
  if (run.phase == "agent_2_compile") {
    for (const char* field : {"scope", "constraints", "nonGoals"}) {
      if (Canonical(body.value(field, Json())) != Canonical(frame->value(field, Json()))) {
        return Reject(std::string("/") + field, fmt::format("TaskContract must preserve ProblemFrame {} exactly", field));
      }
    }
    if (Canonical(body.value("acceptanceCriteria", Json())) != Canonical(frame->value("draftAcceptanceCriteria", Json()))) {
      return Reject("/acceptanceCriteria", "TaskContract acceptance criteria must preserve the reviewed ProblemFrame draft exactly");
    }
  }
  if (!EqualStringSets(StringArray(body, "ruleRefs"), StringArray(*frame, "applicableRuleRefs"))) {
    return Reject("/ruleRefs", "TaskContract must retain every applicable ProblemFrame rule exactly once");
  }
  if (run.phase == "agent_2_compile") {
    if (snapshot.Count("TaskContract") != 0 || body.value("version", 0) != 1) {
      return Reject("/version", "The initial TaskContract must be version 1");
    }
  } else if (run.phase == "agent_2_revise") {
    TELIC_RETURN_IF_ERROR(CheckContractRevision(snapshot, s, body));
  }
  const Json& permissions = body.value("permissions", Json());
  for (const Json& requirement : Objects(body, "verificationRequirements")) {
    if (requirement.value("required", false) == true &&
        !PermissionAllowsCapability(permissions, requirement.value("capability", ""))) {
      return Reject(At(body, "verificationRequirements", requirement, "capability"),
                    fmt::format("Required verification {} is not backed by TaskContract permissions",
                                requirement.value("id", "")));
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

Status CheckPromptReview(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref) {
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  if (body.value("targetRef", "") != contract_ref) return Reject("/targetRef", "PromptReview must review the current TaskContract");
  TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
  Items coverage = Objects(body, "coverage");
  std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {original_request_ref, {"objective", "intentMode"}},
      {contract->value("problemFrameRef", ""), {"scope", "constraints", "nonGoals", "acceptanceCriteria", "ruleRefs"}},
      {contract_ref,
       {"permissions", "contextRefs", "requiredOutputs", "verificationRequirements", "stopConditions", "assumptions",
        "unresolvedQuestions"}}};
  if (coverage.size() != expected.size()) return Reject("/coverage", "PromptReview coverage must include every authoritative contract source");
  for (const auto& [source, fields] : expected) {
    std::vector<const Json*> matches;
    for (const Json& entry : coverage) {
      if (entry.value("sourceRef", "") == source) matches.push_back(&entry);
    }
    if (matches.size() != 1 || !EqualStringSets(StringArray(*matches[0], "contractFields"), fields)) {
      std::string at = matches.empty() ? "/coverage" : At(body, "coverage", *matches.back(), "contractFields");
      return Reject(at, fmt::format("PromptReview coverage for {} is incomplete or duplicated", source));
    }
  }
  if (!contract->contains("version") || !(*contract)["version"].is_number() ||
      body.value("revisionNumber", -1) != (*contract)["version"].get<int64_t>() - 1) {
    return Reject("/revisionNumber", "PromptReview revisionNumber must match the current TaskContract version");
  }
  return Ok();
}

}  // namespace telic::controller::rules
