#include "controller/acceptance.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "controller/references.h"
#include "controller/rule_violation.h"
#include "controller/work_plan_rules.h"
#include "policy/engine.h"
#include "policy/permission_set.h"
#include "policy/shell_command.h"
#include "policy/url_host.h"

namespace telic::controller {
namespace {

std::unexpected<Error> Reject(std::string pointer, std::string message) {
  return RuleViolation(std::move(pointer), std::move(message));
}

const std::set<std::string> kAlwaysMutating = {"repository.write", "repository.delete", "runtime.restart",
                                               "browser.mutate", "external.write"};
const std::set<std::string> kAlwaysReadOnly = {"repository.read", "shell.inspect", "runtime.inspect",
                                               "browser.inspect", "network.read",  "subagent.spawn"};

bool IsReportOrPlan(const std::string& mode) { return mode == "report_only" || mode == "plan_only"; }

// The object elements of body[key], by reference (no copies).
using Items = std::vector<std::reference_wrapper<const Json>>;

Items Objects(const Json& body, const char* key) {
  Items out;
  if (!body.is_object() || !body.contains(key) || !body[key].is_array()) return out;
  for (const Json& item : body[key]) {
    if (item.is_object()) out.push_back(std::cref(item));
  }
  return out;
}

// The JSON pointer "/key/<i>[/field]" of `item`, an element of body[key]
// (found by address); "/key" when it is not one.
std::string At(const Json& body, const char* key, const Json& item, std::string_view field = {}) {
  if (body.is_object() && body.contains(key) && body[key].is_array()) {
    const auto& array = body[key].get_ref<const Json::array_t&>();
    if (!array.empty() && &item >= array.data() && &item < array.data() + array.size()) {
      return PointerAt(key, static_cast<size_t>(&item - array.data()), field);
    }
  }
  return "/" + std::string(key);
}

std::vector<std::string> Field(const Items& items, const char* key) {
  std::vector<std::string> out;
  for (const Json& item : items) {
    if (item.contains(key) && item[key].is_string()) out.push_back(item[key].get<std::string>());
  }
  return out;
}

std::vector<std::string> CriterionIds(const Json& contract, const std::string& stage = "") {
  std::vector<std::string> out;
  for (const Json& criterion : Objects(contract, "acceptanceCriteria")) {
    if (!stage.empty() && criterion.value("stage", "") != stage) continue;
    if (criterion.contains("id") && criterion["id"].is_string()) out.push_back(criterion["id"].get<std::string>());
  }
  return out;
}

std::string Canonical(const Json& value) { return CanonicalJson(value); }

Json EnvelopeAuthorization(RunSnapshot& snapshot, const Json& envelope) {
  return RunAuthorization(std::string(domain::Name(snapshot.run().requested_mode)), envelope);
}

// The permission decision of an action for the trace (PROTOCOL §17.1).
Json TraceDecision(const Json& action, bool allowed, const std::vector<std::string>& policy_refs,
                   const std::string& summary) {
  std::string capability = action.contains("capability") && action["capability"].is_string()
                               ? action["capability"].get<std::string>()
                               : "unknown";
  std::string scope = action.contains("target") && action["target"].is_string() ? action["target"].get<std::string>()
                                                                                  : "unknown";
  if ((capability == "network.read" || capability == "external.write") && scope != "unknown") {
    auto target = policy::ParseNetworkUrl(scope);
    scope = target ? target->host : "invalid_network_target";
  }
  return {{"decision", allowed ? "allow" : "deny"},
          {"capability", capability},
          {"scope", scope},
          {"policyRefs", policy_refs},
          {"rationaleSummary", summary}};
}

policy::Decision AuthorizeForNode(const store::RunRecord& run, const Json& node, const std::string& capability,
                                  const Json& action) {
  policy::ActionRequest request;
  request.capability = capability;
  if (action.contains("target") && action["target"].is_string()) request.target = action["target"].get<std::string>();
  std::vector<policy::Layer> layers = {policy::ModeCeilingLayer(domain::Name(run.requested_mode)),
                                       {"work_node:" + node.value("id", ""), node.value("permissions", Json()), Json()}};
  return policy::Authorize(request, layers, policy::RepoRoot::OnDisk(run.repository_root));
}

Status Deny(std::optional<PermissionDenial>& denial, std::string pointer, std::string message, Json decision,
            std::vector<std::string> refs) {
  denial = PermissionDenial{std::move(decision), std::move(refs)};
  Issue issue{std::move(pointer), "permission_denied", message};
  return Fail(ErrorCode::kPermissionDenied, std::move(message), {std::move(issue)});
}

// ---------------------------------------------------------------- ProblemFrame

Status CheckProblemFrame(RunSnapshot& snapshot, const Json& body, const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  bool clarification_required = body.value("/clarification/required"_json_pointer, false);
  if (run.topology == domain::Topology::kMicro) {
    if (Objects(body, "draftAcceptanceCriteria").size() != 1) {
      return Reject("/draftAcceptanceCriteria", "Micro topology requires exactly one draft acceptance criterion");
    }
    if (Objects(body, "knownFacts").size() > 3) return Reject("/knownFacts", "Micro topology allows at most three known facts");
    if (clarification_required) return Reject("/clarification/required", "Micro topology cannot require clarification in ProblemFrame");
  }
  if (body.value("intentMode", "") != domain::Name(run.requested_mode)) return Reject("/intentMode", "ProblemFrame intentMode must match the immutable run mode");
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
      if (meta && meta->type == domain::ArtifactType::kEvidence) {
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

// ---------------------------------------------------------------- TaskContract

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

Status CheckTaskContract(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                         const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  if (body.value("intentMode", "") != domain::Name(run.requested_mode)) return Reject("/intentMode", "TaskContract intentMode must match the immutable run mode");
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
  if (run.phase == domain::Phase::kAgent2Compile) {
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
  if (run.phase == domain::Phase::kAgent2Compile) {
    if (snapshot.Count("TaskContract") != 0 || body.value("version", 0) != 1) {
      return Reject("/version", "The initial TaskContract must be version 1");
    }
  } else if (run.phase == domain::Phase::kAgent2Revise) {
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

// ---------------------------------------------------------------- PromptReview

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

// ---------------------------------------------------------------- WorkResult

Status CheckWorkResultActions(RunSnapshot& snapshot, const Json& node, const Json& body, const Items& actions,
                              const std::vector<std::string>& refs, std::optional<PermissionDenial>& denial) {
  const auto& run = snapshot.run();
  std::string node_id = node.value("id", "");
  std::vector<std::string> tools = StringArray(node, "allowedTools");
  for (const Json& action : actions) {
    if (!action.contains("capability") || !action["capability"].is_string()) {
      return Reject(At(body, "actions", action, "capability"), "WorkResult action capability is invalid");
    }
    std::string capability = action["capability"];
    if (!policy::IsCapability(capability)) {
      return Reject(At(body, "actions", action, "capability"), fmt::format("WorkResult action uses unknown capability {}", capability));
    }
    std::string status = action.value("status", "");
    bool attempted = status == "completed" || status == "failed";
    bool checked = attempted || status == "denied";
    if (!checked) continue;
    if (capability == "shell.inspect" &&
        !(action.contains("target") && action["target"].is_string() && policy::IsShellInspectTarget(action["target"].get<std::string>()))) {
      if (status == "denied") continue;
      return Deny(denial, At(body, "actions", action, "target"), "WorkResult shell inspection target is not a typed read-only inspection",
                  TraceDecision(action, false, refs, "Denied: shell.inspect accepts only typed read-only inspection targets."),
                  refs);
    }
    if (!ContainsString(tools, capability)) {
      if (status == "denied") continue;
      return Deny(denial, At(body, "actions", action, "capability"), fmt::format("WorkResult action uses a capability outside node {}", node_id),
                  TraceDecision(action, false, refs, fmt::format("Denied: capability is outside work node {}.", node_id)), refs);
    }
    policy::Decision decision = AuthorizeForNode(run, node, capability, action);
    if (status == "denied") {
      if (decision.allowed) return Reject(At(body, "actions", action, "status"), "WorkResult cannot claim a permission denial for an authorized action");
      continue;
    }
    if (!decision.allowed) {
      return Deny(denial, At(body, "actions", action, "target"), fmt::format("WorkResult action target is outside node {} permissions: {}", node_id, decision.summary),
                  TraceDecision(action, false, refs, decision.summary), refs);
    }
    if (kAlwaysMutating.count(capability) && action.value("mutating", false) != true) {
      return Reject(At(body, "actions", action, "mutating"), fmt::format("WorkResult action {} must be marked mutating", capability));
    }
    if (kAlwaysReadOnly.count(capability) && !(action.contains("mutating") && action["mutating"] == false)) {
      return Reject(At(body, "actions", action, "mutating"), fmt::format("WorkResult action {} must be marked non-mutating", capability));
    }
  }
  return Ok();
}

Status CheckFileChanges(RunSnapshot& snapshot, const Json& node, const Json& body, const Items& actions,
                        const Items& changes, const std::vector<std::string>& refs,
                        std::optional<PermissionDenial>& denial) {
  std::string node_id = node.value("id", "");
  for (const Json& change : changes) {
    if (!change.contains("path") || !change["path"].is_string()) return Reject(At(body, "filesChanged", change, "path"), "WorkResult file change path is invalid");
    std::string path = change["path"];
    std::string capability = change.value("changeType", "") == "deleted" ? "repository.delete" : "repository.write";
    Json synthetic = {{"capability", capability}, {"target", path}};
    policy::Decision decision = AuthorizeForNode(snapshot.run(), node, capability, synthetic);
    if (!decision.allowed) {
      return Deny(denial, At(body, "filesChanged", change, "path"), fmt::format("WorkResult file change is outside node {} permissions: {}", node_id, path),
                  TraceDecision(synthetic, false, refs, decision.summary), refs);
    }
    bool matched = std::any_of(actions.begin(), actions.end(), [&](const Json& a) {
      return a.value("capability", "") == capability && a.value("target", "") == path && a.value("status", "") == "completed" &&
             a.value("mutating", false) == true;
    });
    if (!matched) {
      return Reject(At(body, "filesChanged", change, "path"),
                    fmt::format("WorkResult file change lacks a matching completed {} action: {}", capability, path));
    }
  }
  for (const Json& action : actions) {
    std::string capability = action.value("capability", "");
    if (action.value("status", "") != "completed" || (capability != "repository.write" && capability != "repository.delete")) {
      continue;
    }
    bool matched = std::any_of(changes.begin(), changes.end(), [&](const Json& c) {
      bool deleted = c.value("changeType", "") == "deleted";
      return c.value("path", "") == action.value("target", "") && (capability == "repository.delete" ? deleted : !deleted);
    });
    if (!matched) return Reject(At(body, "actions", action, "target"), fmt::format("Completed {} action lacks an exact FileChange", capability));
  }
  return Ok();
}

int64_t LastCompletedMutation(const Items& actions) {
  for (int64_t i = static_cast<int64_t>(actions.size()) - 1; i >= 0; --i) {
    const Json& action = actions[static_cast<size_t>(i)];
    if (action.value("status", "") == "completed" && action.value("mutating", false) == true) return i;
  }
  return -1;
}

Status CheckCompletedWorkResult(RunSnapshot& snapshot, const Json& node, const Json& body, const Items& actions,
                                const std::vector<std::string>& coverage_ids) {
  int64_t last_mutation = LastCompletedMutation(actions);
  std::vector<std::string> required = StringArray(node, "requiredCapabilities");
  std::vector<std::string> assigned = StringArray(node, "acceptanceCriteria");
  if (last_mutation >= 0) {
    TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
    std::vector<std::string> completion = CriterionIds(*contract, "completion");
    bool owns = std::any_of(assigned.begin(), assigned.end(), [&](const std::string& c) { return ContainsString(completion, c); });
    for (const Json& requirement : Objects(*contract, "verificationRequirements")) {
      std::string capability = requirement.value("capability", "");
      if (requirement.value("required", false) != true || requirement.value("stage", "") != "completion" || !owns ||
          !ContainsString(required, capability)) {
        continue;
      }
      bool after = false;
      for (size_t i = static_cast<size_t>(last_mutation) + 1; i < actions.size() && !after; ++i) {
        const Json& action = actions[i];
        after = action.value("capability", "") == capability && action.value("status", "") == "completed" &&
                action.contains("mutating") && action["mutating"] == false;
      }
      if (!after) {
        return Reject(PointerAt("actions", static_cast<size_t>(last_mutation)),
                      fmt::format("Completion verification {} must run after the final mutating action", requirement.value("id", "")));
      }
    }
  }
  for (const auto& capability : required) {
    bool done = std::any_of(actions.begin(), actions.end(), [&](const Json& a) {
      return a.value("capability", "") == capability && a.value("status", "") == "completed";
    });
    if (!done) return Reject("/actions", fmt::format("Completed WorkResult is missing required capability {}", capability));
  }
  std::set<std::string> assigned_set(assigned.begin(), assigned.end());
  if (!EqualStringSets(coverage_ids, std::vector<std::string>(assigned_set.begin(), assigned_set.end()))) {
    return Reject("/acceptanceCoverage", "Completed WorkResult must cover every assigned criterion exactly once");
  }
  for (const Json& action : actions) {
    std::string st = action.value("status", "");
    if (st == "failed" || st == "denied") {
      return Reject(At(body, "actions", action, "status"), "Completed WorkResult cannot include failed or denied actions");
    }
  }
  for (const Json& test : Objects(body, "testResults")) {
    if (test.value("status", "") == "failed") return Reject(At(body, "testResults", test, "status"), "Completed WorkResult cannot include failed tests");
  }
  for (const Json& item : Objects(body, "acceptanceCoverage")) {
    if (item.value("status", "") != "pass") {
      return Reject(At(body, "acceptanceCoverage", item, "status"), "Completed WorkResult requires every assigned acceptance criterion to pass");
    }
  }
  return Ok();
}

// Whether `action` is a completed read-only step that can confirm a known
// correction still applies: a repository read, a typed inspection, or a
// non-mutating command such as the failing test (D57).
bool IsPreflightStep(const Json& action) {
  static const std::vector<std::string> kPreflight = {"repository.read", "shell.inspect", "runtime.inspect", "shell.execute"};
  return action.value("status", "") == "completed" && action.contains("mutating") && action["mutating"] == false &&
         ContainsString(kPreflight, action.value("capability", ""));
}

// TEL-031: a fix_only execution begins with a minimal preflight. The first
// mutating action the run attempts (completed or failed) must follow a
// completed preflight step, in this WorkResult or in one accepted before it.
Status CheckFixOnlyPreflight(RunSnapshot& snapshot, const Json& body, const Items& actions) {
  auto first_mutation = std::find_if(actions.begin(), actions.end(), [](const Json& a) {
    std::string st = a.value("status", "");
    return a.value("mutating", false) == true && (st == "completed" || st == "failed");
  });
  if (first_mutation == actions.end()) return Ok();
  if (std::any_of(actions.begin(), first_mutation, [](const Json& a) { return IsPreflightStep(a); })) return Ok();
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* earlier, snapshot.Body(*meta));
    Items done = Objects(*earlier, "actions");
    if (std::any_of(done.begin(), done.end(), [](const Json& a) { return IsPreflightStep(a); })) return Ok();
  }
  return Reject(At(body, "actions", first_mutation->get()),
                "fix_only execution must begin with a minimal preflight: a completed non-mutating repository.read, "
                "shell.inspect, runtime.inspect or shell.execute action confirming the known correction still applies "
                "must come before the first mutating action");
}

Status CheckWorkResult(RunSnapshot& snapshot, const Submission& s, std::optional<PermissionDenial>& denial) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(snapshot));
  if (!progress.pending_node) return Reject("/nodeId", "No dependency-ready work node remains");
  const Json& node = *progress.pending_node;
  std::string node_id = node.value("id", "");
  if (!node.value("permissions", Json()).is_object()) {
    return Reject("/nodeId", fmt::format("Work node {} permissions must be a structured permission set", node_id));
  }
  Items actions = Objects(body, "actions");
  Items changes = Objects(body, "filesChanged");
  int64_t max_calls = node.value("budgets", Json::object()).value("maximumToolCalls", int64_t{0});
  if (static_cast<int64_t>(actions.size()) > max_calls ||
      static_cast<int64_t>(StringArray(body, "toolEventRefs").size()) > max_calls) {
    return Reject(actions.size() > static_cast<size_t>(std::max<int64_t>(max_calls, 0)) ? "/actions" : "/toolEventRefs",
                  fmt::format("WorkResult exceeds node {} maximumToolCalls budget", node_id));
  }
  TELIC_ASSIGN_OR_RETURN(bool unlocked, AnalysisFixUnlocked(snapshot));
  const std::string mode(domain::Name(run.requested_mode));
  bool non_mutating = mode == "report_only" || mode == "plan_only" || mode == "analyze_only" ||
                      (mode == "analyze_and_fix" && !unlocked);
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> refs = {contract_ref, plan_ref};
  auto attempted_mutation = std::find_if(actions.begin(), actions.end(), [](const Json& a) {
    std::string st = a.value("status", "");
    return a.value("mutating", false) == true && (st == "completed" || st == "failed");
  });
  if (non_mutating && (!changes.empty() || attempted_mutation != actions.end())) {
    const bool action_denied = attempted_mutation != actions.end();
    const Json& first_change = changes.empty() ? Json::object() : changes[0].get();
    Json denied = action_denied ? attempted_mutation->get()
                  : !changes.empty()
                      ? Json{{"capability", first_change.value("changeType", "") == "deleted" ? "repository.delete" : "repository.write"},
                             {"target", first_change.value("path", "unspecified")}}
                      : Json{{"capability", "repository.write"}, {"target", "unspecified"}};
    std::string at = action_denied ? At(body, "actions", attempted_mutation->get()) : PointerAt("filesChanged", 0);
    return Deny(denial, at, fmt::format("{} cannot accept mutating work", mode),
                TraceDecision(denied, false, refs, fmt::format("Denied: {} is non-mutating at the current workflow stage.", mode)),
                refs);
  }
  TELIC_RETURN_IF_ERROR(CheckWorkResultActions(snapshot, node, body, actions, refs, denial));
  int64_t children = std::count_if(actions.begin(), actions.end(), [](const Json& a) {
    return a.value("capability", "") == "subagent.spawn" && a.value("status", "") == "completed";
  });
  int64_t max_children = std::min(node.value("budgets", Json::object()).value("maximumChildren", int64_t{0}),
                                  node["permissions"].value("subagents", Json::object()).value("maximumChildren", int64_t{0}));
  if (children > max_children) return Reject("/actions", fmt::format("WorkResult exceeds node {} child budget", node_id));
  TELIC_RETURN_IF_ERROR(CheckFileChanges(snapshot, node, body, actions, changes, refs, denial));
  std::vector<std::string> assigned = StringArray(node, "acceptanceCriteria");
  Items coverage = Objects(body, "acceptanceCoverage");
  for (const Json& item : coverage) {
    if (!item.contains("criterionId") || !item["criterionId"].is_string() ||
        !ContainsString(assigned, item["criterionId"].get<std::string>())) {
      return Reject(At(body, "acceptanceCoverage", item, "criterionId"), "WorkResult acceptance coverage is outside its WorkPlan node");
    }
  }
  std::vector<std::string> coverage_ids = Field(coverage, "criterionId");
  if (std::set<std::string>(coverage_ids.begin(), coverage_ids.end()).size() != coverage_ids.size()) {
    return Reject("/acceptanceCoverage", "WorkResult acceptance criteria must not be duplicated");
  }
  if (body.value("status", "") == "completed") {
    TELIC_RETURN_IF_ERROR(CheckCompletedWorkResult(snapshot, node, body, actions, coverage_ids));
  }
  TELIC_RETURN_IF_ERROR(CheckEvidenceSemantics(snapshot, s.type, body));
  // Last, so that a result refused for another reason names that reason.
  return mode == "fix_only" ? CheckFixOnlyPreflight(snapshot, body, actions) : Ok();
}

// ---------------------------------------------------------------- QualityReview

struct ReviewContext {
  std::string plan_ref;
  const Json* plan = nullptr;
  const Json* contract = nullptr;
  std::vector<std::string> result_refs;  // WorkResults of the latest plan
  std::vector<const Json*> results;
  bool unlocked = false;
};

Result<ReviewContext> LoadReviewContext(RunSnapshot& snapshot) {
  ReviewContext c;
  TELIC_ASSIGN_OR_RETURN(c.plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  TELIC_ASSIGN_OR_RETURN(c.plan, snapshot.LatestBody("WorkPlan"));
  TELIC_ASSIGN_OR_RETURN(c.contract, snapshot.LatestBody("TaskContract"));
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* result, snapshot.Body(*meta));
    if (result->value("workPlanRef", "") == c.plan_ref) {
      c.result_refs.push_back(snapshot.Uri(meta->id));
      c.results.push_back(result);
    }
  }
  TELIC_ASSIGN_OR_RETURN(c.unlocked, AnalysisFixUnlocked(snapshot));
  return c;
}

Result<std::vector<const Json*>> AllBodies(RunSnapshot& snapshot, std::string_view type) {
  std::vector<const Json*> out;
  for (const auto* meta : snapshot.All(type)) {
    TELIC_ASSIGN_OR_RETURN(const Json* body, snapshot.Body(*meta));
    out.push_back(body);
  }
  return out;
}

Status CheckReviewCompletion(RunSnapshot& snapshot, const Json& body, const ReviewContext& c) {
  const std::string mode(domain::Name(snapshot.run().requested_mode));
  std::string decision = body.value("decision", "");
  if (!IsReportOrPlan(mode) && (decision == "pass" || decision == "proceed_to_fix")) {
    std::vector<std::string> planned = Field(Objects(*c.plan, "nodes"), "id");
    std::vector<std::string> completed;
    for (const Json* result : c.results) {
      if (result->value("status", "") == "completed" && result->contains("nodeId")) completed.push_back((*result)["nodeId"]);
    }
    if (!EqualStringSets(completed, planned)) return Reject("/decision", "Passing QualityReview requires every planned node to complete");
  }
  if (decision == "pass" && (mode == "fix_only" || (mode == "analyze_and_fix" && c.unlocked))) {
    TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> results, AllBodies(snapshot, "WorkResult"));
    bool mutated = std::any_of(results.begin(), results.end(), [](const Json* r) {
      auto actions = Objects(*r, "actions");
      return std::any_of(actions.begin(), actions.end(), [](const Json& a) {
        return a.value("status", "") == "completed" && a.value("mutating", false) == true;
      });
    });
    if (!mutated) return Reject("/decision", "A passing fix review requires at least one completed mutating action");
  }
  return Ok();
}

Status CheckAcceptanceResults(RunSnapshot& snapshot, const Json& body, const ReviewContext& c) {
  const std::string mode(domain::Name(snapshot.run().requested_mode));
  bool diagnosis_stage = mode == "analyze_and_fix" && !c.unlocked;
  std::vector<std::string> expected = CriterionIds(*c.contract, diagnosis_stage ? "diagnosis" : "");
  Items results = Objects(body, "acceptanceResults");
  if (!EqualStringSets(Field(results, "criterionId"), expected)) {
    return Reject("/acceptanceResults", "QualityReview must cover every criterion for the current workflow stage exactly once");
  }
  if (IsReportOrPlan(mode)) return Ok();
  std::set<std::string> planned;
  for (const Json& node : Objects(*c.plan, "nodes")) {
    for (const auto& criterion : StringArray(node, "acceptanceCriteria")) planned.insert(criterion);
  }
  TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> prior_reviews, AllBodies(snapshot, "QualityReview"));
  for (const Json& result : results) {
    if (result.value("status", "") != "pass") continue;
    std::string criterion = result.value("criterionId", "");
    std::vector<std::string> evidence = StringArray(result, "evidenceRefs");
    auto same = [&](const Json& entry) {
      return entry.value("criterionId", "") == criterion && entry.value("status", "") == "pass" &&
             EqualStringSets(StringArray(entry, "evidenceRefs"), evidence);
    };
    bool current = std::any_of(c.results.begin(), c.results.end(), [&](const Json* r) {
      auto coverage = Objects(*r, "acceptanceCoverage");
      return std::any_of(coverage.begin(), coverage.end(), same);
    });
    bool retained = !planned.count(criterion) && std::any_of(prior_reviews.begin(), prior_reviews.end(), [&](const Json* r) {
      auto prior = Objects(*r, "acceptanceResults");
      return std::any_of(prior.begin(), prior.end(), same);
    });
    if (!current && !retained) {
      return Reject(At(body, "acceptanceResults", result, "evidenceRefs"), fmt::format("Passed acceptance criterion {} lacks matching WorkResult coverage", criterion));
    }
  }
  return Ok();
}

// Whether a passing verification result is backed by a completed capability action.
Result<bool> VerificationObserved(RunSnapshot& snapshot, const Json& requirement, const Json& result, const ReviewContext& c) {
  std::string stage = requirement.value("stage", "");
  std::string capability = requirement.value("capability", "");
  std::vector<std::string> evidence = StringArray(result, "evidenceRefs");
  if (stage == "diagnosis" && c.unlocked) {
    TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> reviews, AllBodies(snapshot, "QualityReview"));
    for (const Json* review : reviews) {
      if (review->value("decision", "") != "proceed_to_fix") continue;
      for (const Json& prior : Objects(*review, "verificationResults")) {
        if (prior.value("requirementId", "") == requirement.value("id", "") && prior.value("capability", "") == capability &&
            prior.value("status", "") == "pass" && EqualStringSets(StringArray(prior, "evidenceRefs"), evidence)) {
          return true;
        }
      }
    }
  }
  std::vector<std::string> stage_criteria = CriterionIds(*c.contract, stage);
  std::set<std::string> eligible;
  for (const Json& node : Objects(*c.plan, "nodes")) {
    auto criteria = StringArray(node, "acceptanceCriteria");
    if (ContainsString(StringArray(node, "requiredCapabilities"), capability) &&
        std::any_of(criteria.begin(), criteria.end(), [&](const std::string& x) { return ContainsString(stage_criteria, x); })) {
      eligible.insert(node.value("id", ""));
    }
  }
  for (const Json* work : c.results) {
    if (!eligible.count(work->value("nodeId", ""))) continue;
    Items actions = Objects(*work, "actions");
    int64_t last = LastCompletedMutation(actions);
    for (size_t i = 0; i < actions.size(); ++i) {
      const Json& a = actions[i];
      if (a.value("capability", "") != capability || a.value("status", "") != "completed" ||
          !(a.contains("mutating") && a["mutating"] == false)) {
        continue;
      }
      if (stage == "completion" && last >= 0 && static_cast<int64_t>(i) <= last) continue;
      auto refs = StringArray(a, "evidenceRefs");
      if (std::any_of(refs.begin(), refs.end(), [&](const std::string& r) { return ContainsString(evidence, r); })) return true;
    }
  }
  return false;
}

Status CheckVerificationResults(RunSnapshot& snapshot, const Json& body, const ReviewContext& c) {
  const std::string mode(domain::Name(snapshot.run().requested_mode));
  std::string decision = body.value("decision", "");
  bool diagnosis_stage = mode == "analyze_and_fix" && !c.unlocked;
  Items requirements;
  for (const Json& r : Objects(*c.contract, "verificationRequirements")) {
    if (!diagnosis_stage || r.value("stage", "") == "diagnosis") requirements.push_back(std::cref(r));
  }
  Items results = Objects(body, "verificationResults");
  if (!EqualStringSets(Field(results, "requirementId"), Field(requirements, "id"))) {
    return Reject("/verificationResults", "QualityReview must cover every verification requirement exactly once");
  }
  for (const Json& requirement : requirements) {
    std::string id = requirement.value("id", "");
    auto found = std::find_if(results.begin(), results.end(), [&](const Json& r) { return r.value("requirementId", "") == id; });
    if (found == results.end()) return Reject("/verificationResults", fmt::format("Verification result {} must use its contracted capability", id));
    const Json& result = found->get();
    if (result.value("capability", "") != requirement.value("capability", "")) {
      return Reject(At(body, "verificationResults", result, "capability"),
                    fmt::format("Verification result {} must use its contracted capability", id));
    }
    if (requirement.value("required", false) == true && (decision == "pass" || decision == "proceed_to_fix") &&
        result.value("status", "") != "pass") {
      return Reject(At(body, "verificationResults", result, "status"), fmt::format("Required verification {} must pass before progression", id));
    }
    if (result.value("status", "") == "pass" && !IsReportOrPlan(mode)) {
      TELIC_ASSIGN_OR_RETURN(bool observed, VerificationObserved(snapshot, requirement, result, c));
      if (!observed) {
        return Reject(At(body, "verificationResults", result, "evidenceRefs"),
                      fmt::format("Passed verification {} lacks a completed capability action", id));
      }
    }
  }
  return Ok();
}

Status CheckQualityReview(RunSnapshot& snapshot, const Submission& s, const Json& envelope) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  if (body.value("remainingRemediations", -1) != run.remediations_remaining) {
    return Reject("/remainingRemediations", "QualityReview remainingRemediations must match the controller budget");
  }
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(ReviewContext c, LoadReviewContext(snapshot));
  if (body.value("taskContractRef", "") != contract_ref) return Reject("/taskContractRef", "QualityReview must use the current TaskContract");
  if (!ContainsString(StringArray(body, "workPlanRefs"), c.plan_ref)) return Reject("/workPlanRefs", "QualityReview must include the current WorkPlan");
  if (!EqualStringSets(StringArray(body, "workResultRefs"), c.result_refs)) {
    return Reject("/workResultRefs", "QualityReview WorkResult lineage is incomplete or stale");
  }
  TELIC_RETURN_IF_ERROR(CheckReviewCompletion(snapshot, body, c));
  TELIC_RETURN_IF_ERROR(CheckAcceptanceResults(snapshot, body, c));
  if (!EqualStringSets(Field(Objects(body, "ruleCompliance"), "subjectRef"), StringArray(*c.contract, "ruleRefs"))) {
    return Reject("/ruleCompliance", "QualityReview must cover every TaskContract rule exactly once");
  }
  TELIC_RETURN_IF_ERROR(CheckVerificationResults(snapshot, body, c));
  const std::string mode(domain::Name(run.requested_mode));
  std::string decision = body.value("decision", "");
  Json authorized = EnvelopeAuthorization(snapshot, envelope);
  const Json& contract_permissions = c.contract->value("permissions", Json());
  if (decision == "proceed_to_fix") {
    const Json& gate = body.value("diagnosisGate", Json());
    ScopedWorkOrderRules rules{"Diagnosis correction work order", "targetCriterionIds", CriterionIds(*c.contract, "completion"),
                               contract_permissions, authorized, {}, true, true, "/diagnosisGate/correctionWorkOrder"};
    std::vector<std::string> direct = gate.is_object() ? StringArray(gate, "directEvidenceRefs") : std::vector<std::string>{};
    rules.eligible_source_refs.insert(direct.begin(), direct.end());
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(gate.is_object() ? gate.value("correctionWorkOrder", Json()) : Json(), rules));
  }
  if (decision == "remediate") {
    bool diagnosis_stage = mode == "analyze_and_fix" && !c.unlocked;
    ScopedWorkOrderRules rules{"Quality remediation work order", "failedCriterionIds",
                               diagnosis_stage ? CriterionIds(*c.contract, "diagnosis") : CriterionIds(*c.contract),
                               contract_permissions, diagnosis_stage ? RunAuthorization("analyze_only", envelope) : authorized,
                               {}, false, !IsReportOrPlan(mode), "/remediationWorkOrder"};
    rules.eligible_source_refs.insert(c.plan_ref);
    rules.eligible_source_refs.insert(c.result_refs.begin(), c.result_refs.end());
    for (const auto& ref : snapshot.AllRefs("Evidence")) rules.eligible_source_refs.insert(ref);
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(body.value("remediationWorkOrder", Json()), rules));
  }
  if (decision == "proceed_to_fix" && (mode != "analyze_and_fix" || c.unlocked)) {
    return Reject("/decision", "proceed_to_fix is legal only after the first analyze_and_fix diagnosis");
  }
  if (mode == "analyze_and_fix" && !c.unlocked && decision == "pass") {
    return Reject("/decision", "Analyze-and-fix diagnosis must pass through proceed_to_fix before release");
  }
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

// ---------------------------------------------------------------- ReleaseAudit

Status CheckReleaseAudit(RunSnapshot& snapshot, const Submission& s, const Json& envelope,
                         const std::string& original_request_ref) {
  const auto& run = snapshot.run();
  const Json& body = s.body;
  if (body.value("remainingRemediations", -1) != run.remediations_remaining) {
    return Reject("/remainingRemediations", "ReleaseAudit remainingRemediations must match the controller budget");
  }
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string quality_ref, snapshot.RequireLatestRef("QualityReview"));
  TELIC_RETURN_IF_ERROR(snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> results = snapshot.AllRefs("WorkResult");
  const char* stale = body.value("originalRequestRef", "") != original_request_ref ? "/originalRequestRef"
                      : body.value("taskContractRef", "") != contract_ref           ? "/taskContractRef"
                      : body.value("qualityReviewRef", "") != quality_ref           ? "/qualityReviewRef"
                      : !EqualStringSets(StringArray(body, "workPlanRefs"), snapshot.AllRefs("WorkPlan")) ? "/workPlanRefs"
                      : !EqualStringSets(StringArray(body, "workResultRefs"), results)                    ? "/workResultRefs"
                                                                                                          : nullptr;
  if (stale) return Reject(stale, "ReleaseAudit lineage is incomplete or stale");
  if (!EqualStringSets(Field(Objects(body, "userFidelity"), "subjectRef"), {original_request_ref})) {
    return Reject("/userFidelity", "ReleaseAudit user fidelity must cover the immutable original request exactly once");
  }
  std::string decision = body.value("decision", "");
  if (body.value("modeCompliance", "") == "fail" && decision != "partial" && decision != "block") {
    return Reject("/decision", "Failed mode compliance requires a partial or blocked release audit");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* quality, snapshot.LatestBody("QualityReview"));
  if (quality->value("decision", "") == "block" && decision != "block") {
    return Reject("/decision", "A blocked QualityReview cannot be downgraded by the ReleaseAudit");
  }
  if (decision == "release" && quality->value("decision", "") != "pass") return Reject("/decision", "Release requires a passing current QualityReview");
  Items matrix = Objects(body, "claimEvidenceMatrix");
  if (decision == "release" && matrix.empty()) return Reject("/claimEvidenceMatrix", "Release requires at least one audited claim");
  TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
  std::vector<std::string> criteria = CriterionIds(*contract);
  std::vector<std::string> claim_ids = Field(matrix, "claimId");
  if (std::set<std::string>(claim_ids.begin(), claim_ids.end()).size() != claim_ids.size()) {
    return Reject("/claimEvidenceMatrix", "ReleaseAudit claim identifiers must be unique");
  }
  for (const Json& entry : matrix) {
    for (const auto& criterion : StringArray(entry, "criterionIds")) {
      if (!ContainsString(criteria, criterion)) return Reject(At(body, "claimEvidenceMatrix", entry, "criterionIds"), "ReleaseAudit claim matrix invents contract criteria");
    }
  }
  if (decision == "remediate") {
    ScopedWorkOrderRules rules{"Release remediation defect", "failedCriterionIds", criteria, contract->value("permissions", Json()),
                               EnvelopeAuthorization(snapshot, envelope), {}, false, !IsReportOrPlan(std::string(domain::Name(run.requested_mode))),
                               "/remediationDefect"};
    rules.eligible_source_refs.insert(quality_ref);
    rules.eligible_source_refs.insert(results.begin(), results.end());
    for (const auto& ref : snapshot.AllRefs("Evidence")) rules.eligible_source_refs.insert(ref);
    TELIC_RETURN_IF_ERROR(CheckScopedWorkOrder(body.value("remediationDefect", Json()), rules));
  }
  if (decision == "release") {
    for (const auto& criterion : criteria) {
      bool supported = std::any_of(matrix.begin(), matrix.end(), [&](const Json& e) {
        return e.value("status", "") == "supported" &&
               (run.requested_mode == domain::Mode::kReportOnly || e.value("basis", "") == "direct") &&
               ContainsString(StringArray(e, "criterionIds"), criterion);
      });
      if (!supported) return Reject("/claimEvidenceMatrix", "Released claim matrix must support every TaskContract criterion");
    }
  }
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

// ---------------------------------------------------------------- UserReport

// Whether every required verification of `contract` passed in `quality`;
// `refs` receives their evidence refs (first occurrence order).
bool RequiredVerificationsPass(const Json& contract, const Json& quality, std::vector<std::string>& refs) {
  Items results = Objects(quality, "verificationResults");
  bool all_pass = true;
  for (const Json& requirement : Objects(contract, "verificationRequirements")) {
    if (requirement.value("required", false) != true) continue;
    auto found = std::find_if(results.begin(), results.end(),
                              [&](const Json& r) { return r.value("requirementId", "") == requirement.value("id", ""); });
    if (found == results.end() || found->get().value("status", "") != "pass") all_pass = false;
    if (found == results.end()) continue;
    for (const auto& ref : StringArray(found->get(), "evidenceRefs")) {
      if (!ContainsString(refs, ref)) refs.push_back(ref);
    }
  }
  return all_pass;
}

Status CheckMicroReport(RunSnapshot& snapshot, const Submission& s) {
  const Json& body = s.body;
  TELIC_ASSIGN_OR_RETURN(std::string quality_ref, snapshot.RequireLatestRef("QualityReview"));
  std::string status = body.value("terminalStatus", "");
  if (status == "completed") {
    if (Objects(body, "completionClaims").empty()) return Reject("/completionClaims", "Completed micro UserReport requires at least one completion claim");
    TELIC_ASSIGN_OR_RETURN(const Json* receipt, snapshot.LatestBodyOrNull("ReceiptAudit"));
    if (!receipt) return Reject("/terminalStatus", "Completed micro UserReport requires a ReceiptAudit companion");
    if (receipt->value("digestStatus", "") != "verified") return Reject("/terminalStatus", "Completed micro UserReport requires a verified ReceiptAudit");
    if (receipt->value("controllingReviewRef", "") != quality_ref) return Reject("/terminalStatus", "ReceiptAudit must cite the controlling QualityReview");
  } else if (!ContainsString(StringArray(body, "findingRefs"), quality_ref)) {
    return Reject("/findingRefs", "Micro UserReport must cite the controlling QualityReview");
  }
  // Stricter than the reference (docs/DECISIONS.md D44): in a micro run the
  // report answers the spot-check review directly, so the seed's "a blocked
  // QualityReview cannot be downgraded" and the audited path's
  // failed_verification rule apply to it too.
  TELIC_ASSIGN_OR_RETURN(const Json* quality, snapshot.LatestBody("QualityReview"));
  if (quality->value("decision", "") == "block" && status != "blocked") {
    return Reject("/terminalStatus", "A blocked QualityReview cannot be downgraded by the UserReport");
  }
  if (status == "failed_verification") {
    TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
    std::vector<std::string> refs;
    if (RequiredVerificationsPass(*contract, *quality, refs)) {
      return Reject("/terminalStatus", "failed_verification requires an incomplete required verification");
    }
  }
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

Status CheckEarlyBlockedReport(RunSnapshot& snapshot, const Json& body) {
  const auto& run = snapshot.run();
  std::string controlling = snapshot.LatestRef("PromptReview");
  if (controlling.empty()) controlling = snapshot.LatestRef("ClarificationRequest");
  if (run.phase != domain::Phase::kAgent5Report || run.outcome_hint != domain::RunStatus::kBlocked || body.value("terminalStatus", "") != "blocked" ||
      body.value("permissionsHonored", false) != true || controlling.empty() ||
      !ContainsString(StringArray(body, "findingRefs"), controlling) || !Objects(body, "completionClaims").empty()) {
    const char* at = body.value("terminalStatus", "") != "blocked"      ? "/terminalStatus"
                     : body.value("permissionsHonored", false) != true ? "/permissionsHonored"
                     : !Objects(body, "completionClaims").empty()      ? "/completionClaims"
                                                                       : "/findingRefs";
    return Reject(at, "A pre-execution blocked run requires an honest blocked UserReport");
  }
  return Ok();
}

Status CheckAuditedReportClaims(const Json& body, const Json& audit) {
  Items matrix = Objects(audit, "claimEvidenceMatrix");
  Items claims = Objects(body, "completionClaims");
  for (const Json& claim : claims) {
    auto reviewed = std::find_if(matrix.begin(), matrix.end(), [&](const Json& e) {
      std::string basis = e.value("basis", "");
      bool user_claim = claim.value("status", "") == "user_reported";
      return e.value("claimId", "") == claim.value("id", "") && e.value("claim", "") == claim.value("text", "") &&
             e.value("status", "") == "supported" && (basis != "user_reported" || user_claim) && (basis != "direct" || !user_claim);
    });
    if (reviewed == matrix.end() || !EqualStringSets(StringArray(claim, "evidenceRefs"), StringArray(reviewed->get(), "evidenceRefs"))) {
      return Reject(At(body, "completionClaims", claim), "UserReport completion claim was not approved by the ReleaseAudit evidence matrix");
    }
  }
  if (audit.value("decision", "") == "release") {
    std::vector<std::string> supported;
    for (const Json& e : matrix) {
      if (e.value("status", "") == "supported" && e.contains("claimId")) supported.push_back(e["claimId"]);
    }
    if (!EqualStringSets(Field(claims, "id"), supported)) {
      return Reject("/completionClaims", "Released UserReport must include every supported audited claim exactly once");
    }
  }
  return Ok();
}

Status CheckAuditedReport(RunSnapshot& snapshot, const Submission& s, const Json& audit) {
  const Json& body = s.body;
  if (audit.value("userReportRef", "") != snapshot.Uri(s.id)) return Reject("/id", "UserReport does not match the ReleaseAudit forward reference");
  if (body.value("permissionsHonored", !true) != (audit.value("modeCompliance", "") == "pass") || !body.contains("permissionsHonored")) {
    return Reject("/permissionsHonored", "UserReport permissionsHonored must match the ReleaseAudit mode-compliance result");
  }
  std::string status = body.value("terminalStatus", "");
  if (status == "completed" && Objects(body, "completionClaims").empty()) {
    return Reject("/completionClaims", "Completed UserReport requires at least one completion claim");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* contract, snapshot.LatestBody("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(const Json* quality, snapshot.LatestBody("QualityReview"));
  std::vector<std::string> findings = StringArray(body, "findingRefs");
  if (status != "completed" && !ContainsString(findings, snapshot.LatestRef("QualityReview")) &&
      !ContainsString(findings, snapshot.LatestRef("ReleaseAudit"))) {
    return Reject("/findingRefs", "Non-completed UserReport must cite its controlling quality review or release audit");
  }
  std::vector<std::string> verification_refs;
  bool all_pass = RequiredVerificationsPass(*contract, *quality, verification_refs);
  if (status == "completed" && (!all_pass || !EqualStringSets(StringArray(body, "verificationRefs"), verification_refs))) {
    return Reject(all_pass ? "/verificationRefs" : "/terminalStatus", "Completed UserReport must retain every passed required verification");
  }
  if (status == "failed_verification" && all_pass) return Reject("/terminalStatus", "failed_verification requires an incomplete required verification");
  std::string decision = audit.value("decision", "");
  std::vector<std::string> allowed = decision == "release"   ? std::vector<std::string>{"completed"}
                                     : decision == "partial" ? std::vector<std::string>{"partial", "failed_verification"}
                                     : decision == "block"   ? std::vector<std::string>{"blocked"}
                                                             : std::vector<std::string>{};
  if (!allowed.empty() && !ContainsString(allowed, status)) {
    return Reject("/terminalStatus", fmt::format("UserReport terminalStatus must be {} after {}", fmt::join(allowed, " or "), decision));
  }
  TELIC_RETURN_IF_ERROR(CheckAuditedReportClaims(body, audit));
  return CheckEvidenceSemantics(snapshot, s.type, body);
}

Status CheckUserReport(RunSnapshot& snapshot, const Submission& s) {
  const Json& body = s.body;
  if (body.value("traceRef", "") != "trace://" + snapshot.run_id()) {
    return Reject("/traceRef", "UserReport traceRef must reference the aggregate trace for the current run");
  }
  std::vector<std::string> diffs;
  TELIC_ASSIGN_OR_RETURN(std::vector<const Json*> results, AllBodies(snapshot, "WorkResult"));
  for (const Json* result : results) {
    for (const Json& change : Objects(*result, "filesChanged")) {
      if (change.contains("diffRef") && change["diffRef"].is_string() && !ContainsString(diffs, change["diffRef"].get<std::string>())) {
        diffs.push_back(change["diffRef"]);
      }
    }
  }
  if (!EqualStringSets(StringArray(body, "changeRefs"), diffs)) {
    return Reject("/changeRefs", "UserReport changeRefs must retain every accepted WorkResult diff exactly once");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* audit, snapshot.LatestBodyOrNull("ReleaseAudit"));
  if (audit) return CheckAuditedReport(snapshot, s, *audit);
  if (snapshot.run().topology == domain::Topology::kMicro) return CheckMicroReport(snapshot, s);
  return CheckEarlyBlockedReport(snapshot, body);
}

}  // namespace

bool PermissionAllowsCapability(const Json& p, std::string_view capability) {
  if (!p.is_object()) return false;
  auto list_nonempty = [&](const char* family, const char* field) {
    const Json f = p.value(family, Json::object());
    return f.is_object() && f.contains(field) && f[field].is_array() && !f[field].empty();
  };
  auto flag = [&](const char* family, const char* field) {
    const Json f = p.value(family, Json::object());
    return f.is_object() && f.value(field, false) == true;
  };
  if (capability == "repository.read") return list_nonempty("repository", "read");
  if (capability == "repository.write") return list_nonempty("repository", "write");
  if (capability == "repository.delete") return list_nonempty("repository", "delete");
  if (capability == "shell.inspect") return flag("shell", "inspect");
  if (capability == "shell.execute") return list_nonempty("shell", "executeAllowlist");
  if (capability == "runtime.inspect") return list_nonempty("runtime", "inspect");
  if (capability == "runtime.restart") return list_nonempty("runtime", "restart");
  if (capability == "browser.inspect") return flag("browser", "inspect");
  if (capability == "browser.mutate") return flag("browser", "mutateState");
  if (capability == "network.read") return list_nonempty("network", "readDomains");
  if (capability == "external.write") return flag("network", "externalWrite");
  if (capability == "subagent.spawn") {
    const Json sub = p.value("subagents", Json::object());
    return sub.value("spawn", false) == true && sub.value("maximumChildren", int64_t{0}) > 0;
  }
  return false;
}

Json RunAuthorization(const std::string& mode, const Json& envelope) {
  const Json& authorization = envelope.value("authorization", Json());
  if (!authorization.is_object() || !authorization.contains("granted") || !authorization.contains("denied")) {
    return policy::EmptyPermissionSet();
  }
  return policy::EffectiveRunPermissions(mode, authorization["granted"], authorization["denied"]);
}

Result<bool> AnalysisFixUnlocked(RunSnapshot& snapshot) {
  std::set<std::string> authorizing;
  for (const auto* meta : snapshot.All("QualityReview")) {
    TELIC_ASSIGN_OR_RETURN(const Json* review, snapshot.Body(*meta));
    const Json& gate = review->value("diagnosisGate", Json());
    if (review->value("decision", "") == "proceed_to_fix" && gate.is_object() && gate.contains("correctionWorkOrder") &&
        gate["correctionWorkOrder"].is_object()) {
      authorizing.insert(snapshot.Uri(meta->id));
    }
  }
  if (authorizing.empty()) return false;
  for (const auto* meta : snapshot.All("WorkPlan")) {
    TELIC_ASSIGN_OR_RETURN(const Json* plan, snapshot.Body(*meta));
    std::vector<Json> nodes = plan->value("nodes", std::vector<Json>{});
    if (nodes.empty()) continue;
    bool all_cite = std::all_of(nodes.begin(), nodes.end(), [&](const Json& node) {
      auto refs = StringArray(node, "inputRefs");
      return std::any_of(refs.begin(), refs.end(), [&](const std::string& r) { return authorizing.count(r) > 0; });
    });
    if (all_cite) return true;
  }
  return false;
}

Result<ExecutionProgress> ComputeExecutionProgress(RunSnapshot& snapshot, const Json* candidate) {
  const store::ArtifactMeta* plan_meta = snapshot.Latest("WorkPlan");
  if (!plan_meta) return Fail(ErrorCode::kFailedPrecondition, "Executor phase is missing its WorkPlan");
  TELIC_ASSIGN_OR_RETURN(const Json* plan, snapshot.Body(*plan_meta));
  std::vector<Json> nodes = plan->value("nodes", std::vector<Json>{});
  if (nodes.empty()) return Fail(ErrorCode::kFailedPrecondition, "Latest WorkPlan has no executable nodes");
  std::string plan_ref = snapshot.Uri(plan_meta->id);
  std::set<std::string> completed, unsuccessful;
  for (const auto* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* result, snapshot.Body(*meta));
    if (result->value("workPlanRef", "") != plan_ref || !result->contains("nodeId")) continue;
    (result->value("status", "") == "completed" ? completed : unsuccessful).insert(result->value("nodeId", ""));
  }
  ExecutionProgress progress;
  for (const Json& node : nodes) {
    std::string id = node.value("id", "");
    auto deps = StringArray(node, "dependsOn");
    if (!completed.count(id) && !unsuccessful.count(id) &&
        std::all_of(deps.begin(), deps.end(), [&](const std::string& d) { return completed.count(d) > 0; })) {
      progress.pending_node = node;
      break;
    }
  }
  bool candidate_failed = false;
  if (candidate) {
    if (candidate->value("workPlanRef", "") != plan_ref) return Reject("/workPlanRef", "WorkResult must reference the current WorkPlan");
    if (!progress.pending_node) return Reject("/nodeId", "No dependency-ready WorkPlan node remains");
    std::string pending = progress.pending_node->value("id", "");
    if (candidate->value("nodeId", "") != pending) return Reject("/nodeId", fmt::format("WorkResult must complete dependency-ready node {}", pending));
    candidate_failed = candidate->value("status", "") != "completed";
    (candidate_failed ? unsuccessful : completed).insert(pending);
  }
  if (candidate_failed) {
    progress.remaining_after = 0;
  } else {
    progress.remaining_after = static_cast<size_t>(
        std::count_if(nodes.begin(), nodes.end(), [&](const Json& n) { return !completed.count(n.value("id", "")); }));
  }
  return progress;
}

Result<std::vector<Json>> WorkResultPermissionDecisions(RunSnapshot& snapshot, const Json& body) {
  TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(snapshot));
  std::vector<Json> decisions;
  if (!progress.pending_node) return decisions;
  const Json& node = *progress.pending_node;
  TELIC_ASSIGN_OR_RETURN(std::string contract_ref, snapshot.RequireLatestRef("TaskContract"));
  TELIC_ASSIGN_OR_RETURN(std::string plan_ref, snapshot.RequireLatestRef("WorkPlan"));
  std::vector<std::string> refs = {contract_ref, plan_ref};
  for (const Json& action : Objects(body, "actions")) {
    std::string status = action.value("status", "");
    if (status != "completed" && status != "failed" && status != "denied") continue;
    std::string capability = action.value("capability", "");
    bool allowed_tool = policy::IsCapability(capability) && ContainsString(StringArray(node, "allowedTools"), capability);
    if (allowed_tool) {
      policy::Decision decision = AuthorizeForNode(snapshot.run(), node, capability, action);
      decisions.push_back(TraceDecision(action, decision.allowed, refs, decision.summary));
    } else {
      decisions.push_back(TraceDecision(action, false, refs,
                                        fmt::format("Denied: capability is outside work node {}.", node.value("id", ""))));
    }
  }
  return decisions;
}

std::string PermissionEventSummary(const Json& decision) {
  return fmt::format("{} {} for {}.", decision.value("decision", "") == "allow" ? "Allowed" : "Denied",
                     decision.value("capability", ""), decision.value("scope", ""));
}

Status CheckCrossArtifactRules(RunSnapshot& snapshot, const Submission& s, std::optional<PermissionDenial>& denial) {
  TELIC_ASSIGN_OR_RETURN(const Json* envelope, snapshot.LatestBody("RunEnvelope"));
  if (!envelope->contains("originalRequestRef") || !(*envelope)["originalRequestRef"].is_string()) {
    return Fail(ErrorCode::kDataLoss, "RunEnvelope is missing its original request reference");
  }
  std::string original = (*envelope)["originalRequestRef"];
  const std::string& type = s.type;
  if (type == "ClarificationRequest") return Ok();
  if (type == "ProblemFrame") return CheckProblemFrame(snapshot, s.body, original);
  if (type == "TaskContract") return CheckTaskContract(snapshot, s, *envelope, original);
  if (type == "PromptReview") return CheckPromptReview(snapshot, s.body, original);
  if (type == "WorkPlan") return CheckWorkPlan(snapshot, s.id, s.body, *envelope);
  if (type == "WorkResult") return CheckWorkResult(snapshot, s, denial);
  if (type == "QualityReview") return CheckQualityReview(snapshot, s, *envelope);
  if (type == "ReleaseAudit") return CheckReleaseAudit(snapshot, s, *envelope, original);
  if (type == "UserReport") return CheckUserReport(snapshot, s);
  return Ok();
}

}  // namespace telic::controller
