#include "controller/next_action.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "controller/phases.h"
#include "policy/engine.h"
#include "policy/permission_set.h"
#include "schema/host_schemas.h"
#include "schema/registry.h"

namespace telic::controller {
namespace {

using domain::ArtifactType;
using domain::Phase;
using domain::Topology;
using store::ArtifactMeta;
using store::RunRecord;

const std::set<std::string, std::less<>> kReferenceFields = {
    "applicableRuleRefs", "argumentsRef", "changeRefs",     "clarificationRequestRef", "commandRef",
    "contextManifestRef", "contextRefs",  "derivedRefs",    "directEvidenceRefs",      "diffRef",
    "evidenceInspected",  "evidenceRefs", "findingRefs",    "followupRequestRefs",     "inputRefs",
    "instructionRef",     "originalRequestRef", "outputRef", "outputRefs",             "pinnedRefs",
    "policyRefs",         "problemFrameRef", "promptReadinessRubricRef", "qualityReviewRef", "ref",
    "requestRef",         "resultRef",    "ruleRefs",       "subjectRef",              "sourceRef",
    "sourceRefs",         "targetRef",    "taskContractRef", "traceRef",               "toolEventRefs",
    "userReportRef",      "verificationRefs", "workPlanRef", "workPlanRefs",           "workResultRefs"};

bool IsReferenceString(const std::string& s) {
  return s.rfind("artifact://", 0) == 0 || s.rfind("repo://", 0) == 0 || s.rfind("trace://", 0) == 0;
}

void Collect(const Json& value, std::string_view key, std::vector<std::string>& out) {
  if (value.is_string()) {
    if (kReferenceFields.count(key) && IsReferenceString(value.get_ref<const std::string&>())) {
      out.push_back(value.get<std::string>());
    }
  } else if (value.is_array()) {
    for (const Json& item : value) Collect(item, key, out);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) Collect(*it, it.key(), out);
  }
}

// The artifact id of "artifact://<runId>/<id>" when it names this run, else "".
std::string LocalArtifactId(const std::string& ref, const std::string& run_id) {
  std::string prefix = "artifact://" + run_id + "/";
  if (ref.rfind(prefix, 0) != 0) return {};
  std::string id = ref.substr(prefix.size());
  return id.find('/') == std::string::npos ? id : std::string();
}

const Json kNullJson;
const Json kEmptyArray = Json::array();
const Json kEmptyObject = Json::object();

// Member `key` of `object` by reference, or `fallback` when it has none: what
// object.value(key, fallback) returns, without copying the member (which
// value() does, and the action's inputs are whole plans and envelopes).
// Throws what value() throws when `object` is not an object.
const Json& MemberOr(const Json& object, const char* key, const Json& fallback) {
  if (!object.is_object()) {
    throw Json::type_error::create(306, fmt::format("cannot use value() with {}", object.type_name()), &object);
  }
  auto found = object.find(key);
  return found == object.end() ? fallback : *found;
}

const ArtifactMeta* Latest(const std::vector<ArtifactMeta>& artifacts, ArtifactType type) {
  for (auto it = artifacts.rbegin(); it != artifacts.rend(); ++it) {
    if (it->type == type) return &*it;
  }
  return nullptr;
}

std::string InstructionRef(const RunRecord& run, const PhaseInfo& phase) {
  std::string role(phase.role);
  if (run.topology == Topology::kMicro && run.phase == Phase::kAgent1Frame) role = "scenario_author-micro";
  if (run.topology == Topology::kMicro && run.phase == Phase::kAgent3Review) role = "quality_controller-spot";
  if (run.topology == Topology::kForensic && run.phase == Phase::kAgent3EvidenceReverify) {
    role = "quality_controller-reverify";
  }
  return "artifact://system/roles/" + role + "-v1";
}

// The schema served for an artifact type (built once, schema/host_schemas.h):
// a copy, or a reference to it.
Result<Json> ArtifactSchema(ArtifactType artifact_type, ActionSchemas form) {
  std::string type(domain::Name(artifact_type));
  if (form == ActionSchemas::kReferences) return schema::ServedSchemaRef(type);
  TELIC_ASSIGN_OR_RETURN(const schema::HostSchema* schema, schema::ArtifactHostSchema(type));
  return schema->json();
}

// Σ of node budgets.maximumToolCalls over every stored WorkPlan.
Result<int64_t> ReservedToolCalls(const std::vector<ArtifactMeta>& artifacts, const BodyLoader& load) {
  int64_t total = 0;
  for (const ArtifactMeta& meta : artifacts) {
    if (meta.type != ArtifactType::kWorkPlan) continue;
    TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> plan, load(meta));
    for (const Json& node : plan->value("nodes", Json::array())) {
      total += node.value("/budgets/maximumToolCalls"_json_pointer, int64_t{0});
    }
  }
  return total;
}

Json Budgets(const RunRecord& run, int64_t reserved, int64_t workers, int64_t depth) {
  return {{"promptRevisions", run.prompt_revisions_remaining},
          {"postExecutionRemediations", run.remediations_remaining},
          {"remainingPlanToolCalls", std::max<int64_t>(0, kMaxPlanToolCalls - reserved)},
          {"maximumParallelWorkers", workers},
          {"maximumSubagentDepth", depth}};
}

Json CommonFields(const RunRecord& run, std::string rationale, std::string kind) {
  return {{"schemaVersion", "1.0"}, {"id", ActionId(run)},          {"runId", run.run_id},
          {"createdAt", run.updated_at}, {"rationaleSummary", std::move(rationale)}, {"kind", std::move(kind)}};
}

Result<Json> TerminalAction(const RunRecord& run, const std::vector<ArtifactMeta>& artifacts, const BodyLoader& load) {
  const ArtifactMeta* report = Latest(artifacts, ArtifactType::kUserReport);
  std::string status(domain::Name(run.status));
  if (report) {
    TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> body, load(*report));
    if (body->value("terminalStatus", "") == "failed_verification") status = "failed_verification";
  }
  Json action = CommonFields(run, fmt::format("Controller recorded terminal run status {}.", status), "terminal");
  action["phase"] = run.status;
  action["status"] = status;
  action["reportRef"] = report ? Json(store::ArtifactUri(run.run_id, report->id)) : Json(nullptr);
  return action;
}

Result<Json> ClarificationAction(const RunRecord& run, const std::vector<ArtifactMeta>& artifacts, int64_t reserved) {
  const ArtifactMeta* request = Latest(artifacts, ArtifactType::kClarificationRequest);
  if (!request) return Fail(ErrorCode::kInternal, "Awaiting-clarification run has no request artifact");
  Json action = CommonFields(run, "A materially divergent or permission-expanding choice requires the user.",
                             "clarification");
  action["phase"] = domain::RunStatus::kAwaitingClarification;
  action["clarificationRequestRef"] = store::ArtifactUri(run.run_id, request->id);
  action["effectivePermissions"] = policy::EmptyPermissionSet();
  action["remainingBudgets"] = Budgets(run, reserved, 1, 0);
  return action;
}

// The inputRefs projection (PROTOCOL §9.5), in ledger insertion order.
Result<std::vector<std::string>> ProjectInputs(const RunRecord& run, const PhaseInfo& phase,
                                               const std::vector<ArtifactMeta>& artifacts, const Json& envelope,
                                               const BodyLoader& load) {
  std::set<ArtifactType> eligible_types(phase.eligible_inputs.begin(), phase.eligible_inputs.end());
  std::unordered_map<std::string, const ArtifactMeta*> eligible;
  std::map<ArtifactType, const ArtifactMeta*> latest_by_type;
  for (const ArtifactMeta& meta : artifacts) {
    if (!eligible_types.count(meta.type)) continue;
    eligible[meta.id] = &meta;
    latest_by_type[meta.type] = &meta;
  }
  std::set<std::string> selected;
  std::vector<std::string> queue;
  auto select = [&](const std::string& id) {
    if (selected.insert(id).second) queue.push_back(id);
  };
  for (const auto& [type, meta] : latest_by_type) {
    if (type != ArtifactType::kEvidence) select(meta->id);
  }
  std::string request_id = LocalArtifactId(envelope.value("originalRequestRef", ""), run.run_id);
  if (!request_id.empty()) select(request_id);
  for (const ArtifactMeta& meta : artifacts) {
    if (eligible.count(meta.id) && (meta.type == ArtifactType::kWorkPlan || meta.type == ArtifactType::kWorkResult)) select(meta.id);
  }
  auto overflow = [] {
    return Fail(ErrorCode::kResourceExhausted,
                "NextAction input reference closure exceeds 256; use a smaller plan/evidence manifest");
  };
  for (size_t i = 0; i < queue.size(); ++i) {
    if (selected.size() > kMaxInputRefs) return overflow();
    auto found = eligible.find(queue[i]);
    if (found == eligible.end()) continue;
    TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> body, load(*found->second));
    std::vector<std::string> refs = CollectReferences(*body);
    refs.insert(refs.end(), found->second->source_refs.begin(), found->second->source_refs.end());
    for (const std::string& ref : refs) {
      auto target = eligible.find(LocalArtifactId(ref, run.run_id));
      if (target != eligible.end() && target->second->type != ArtifactType::kEvidence) select(target->first);
    }
  }
  if (selected.size() > kMaxInputRefs) return overflow();
  for (auto it = artifacts.rbegin(); it != artifacts.rend() && selected.size() < kMaxInputRefs; ++it) {
    if (it->type == ArtifactType::kEvidence && eligible.count(it->id)) selected.insert(it->id);
  }
  std::vector<std::string> refs;
  for (const ArtifactMeta& meta : artifacts) {
    if (selected.count(meta.id) && eligible.count(meta.id)) refs.push_back(store::ArtifactUri(run.run_id, meta.id));
  }
  return refs;
}

// The first dependency-ready node of the latest WorkPlan that has no result
// yet (PROTOCOL §15.7), with the plan; node is null when none remains.
struct PendingWork {
  std::shared_ptr<const Json> plan;
  const Json* node = nullptr;  // inside *plan
};

Result<PendingWork> PendingNode(const RunRecord& run, const std::vector<ArtifactMeta>& artifacts, const BodyLoader& load) {
  const ArtifactMeta* plan_meta = Latest(artifacts, ArtifactType::kWorkPlan);
  if (!plan_meta) return Fail(ErrorCode::kFailedPrecondition, "Executor phase is missing its WorkPlan");
  PendingWork work;
  TELIC_ASSIGN_OR_RETURN(work.plan, load(*plan_meta));
  std::string plan_ref = store::ArtifactUri(run.run_id, plan_meta->id);
  std::set<std::string> completed, attempted;
  for (const ArtifactMeta& meta : artifacts) {
    if (meta.type != ArtifactType::kWorkResult) continue;
    TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> result, load(meta));
    if (result->value("workPlanRef", "") != plan_ref) continue;
    attempted.insert(result->value("nodeId", ""));
    // A WorkResult "completed" completes its node (the task state of that name).
    if (domain::TaskStateNamed(result->value("status", "")) == domain::TaskState::kCompleted) completed.insert(result->value("nodeId", ""));
  }
  for (const Json& node : MemberOr(*work.plan, "nodes", kEmptyArray)) {
    std::string id = node.value("id", "");
    if (attempted.count(id)) continue;
    bool ready = true;
    for (const Json& dep : MemberOr(node, "dependsOn", kEmptyArray)) {
      ready = ready && dep.is_string() && completed.count(dep.get_ref<const std::string&>());
    }
    if (ready) {
      work.node = &node;
      break;
    }
  }
  return work;
}

// The permissions a phase's action carries before execution narrows them:
// repository read while grounding context, none otherwise.
Json PhasePermissions(const RunRecord& run, const Json& envelope) {
  Json permissions = policy::EmptyPermissionSet();
  if (run.phase == Phase::kContextGrounding && envelope.contains("authorization")) {
    const Json& authorization = envelope["authorization"];
    Json effective = policy::EffectiveRunPermissions(domain::Name(run.requested_mode), authorization.value("granted", Json()),
                                                     authorization.value("denied", Json()));
    permissions["repository"]["read"] = effective["repository"]["read"];
  }
  return permissions;
}

// What a phase action lets its agent use.
struct ActionGrant {
  Json permissions;
  Json work_node_id;  // null unless a work node is pending
  int64_t workers;
  int64_t depth;
};

// In the execute phase: the grant narrowed to the pending work node (refused
// when the node asks for more than the run's authorization) and to the
// plan's worker budget.
Status NarrowToPendingNode(const RunRecord& run, const std::vector<ArtifactMeta>& artifacts, const BodyLoader& load,
                           const Json& envelope, ActionGrant& grant) {
  TELIC_ASSIGN_OR_RETURN(PendingWork work, PendingNode(run, artifacts, load));
  if (work.node != nullptr) {
    std::string id = work.node->value("id", "");
    const Json& authorization = MemberOr(envelope, "authorization", kEmptyObject);
    Json run_permissions = policy::EffectiveRunPermissions(domain::Name(run.requested_mode), MemberOr(authorization, "granted", kNullJson),
                                                           MemberOr(authorization, "denied", kNullJson));
    const Json& node_permissions = MemberOr(*work.node, "permissions", kNullJson);
    if (!policy::PermissionSetIsSubset(node_permissions, run_permissions)) {
      return Fail(ErrorCode::kPermissionDenied, fmt::format("Work node {} exceeds the immutable run authorization", id));
    }
    grant.permissions = node_permissions;
    grant.work_node_id = id;
    grant.depth = std::min<int64_t>(grant.depth, node_permissions.value("/subagents/maximumDepth"_json_pointer, int64_t{0}));
  } else {
    grant.depth = std::min<int64_t>(grant.depth, 0);
  }
  grant.workers =
      std::min<int64_t>(grant.workers, work.plan->value("/globalBudgets/maximumParallelWorkers"_json_pointer, grant.workers));
  return Ok();
}

// The schemas of the phase's other accepted types, and Evidence's while executing.
Result<Json> AdditionalOutputSchemas(const RunRecord& run, const PhaseInfo& phase, ActionSchemas form) {
  Json additional = Json::object();
  for (size_t i = 1; i < phase.accepted_types.size(); ++i) {
    TELIC_ASSIGN_OR_RETURN(additional[std::string(domain::Name(phase.accepted_types[i]))],
                           ArtifactSchema(phase.accepted_types[i], form));
  }
  if (run.phase == Phase::kAgent4Execute) {
    TELIC_ASSIGN_OR_RETURN(additional[std::string(domain::Name(ArtifactType::kEvidence))],
                           ArtifactSchema(ArtifactType::kEvidence, form));
  }
  return additional;
}

Result<Json> PhaseAction(const RunRecord& run, const std::vector<ArtifactMeta>& artifacts, const BodyLoader& load,
                         int64_t reserved, ActionSchemas form) {
  const PhaseInfo* phase = &FindPhase(run.phase);
  static const Json kNoEnvelope = Json::object();
  std::shared_ptr<const Json> loaded_envelope;
  if (const ArtifactMeta* meta = Latest(artifacts, ArtifactType::kRunEnvelope)) {
    TELIC_ASSIGN_OR_RETURN(loaded_envelope, load(*meta));
  }
  const Json& envelope = loaded_envelope ? *loaded_envelope : kNoEnvelope;
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> inputs, ProjectInputs(run, *phase, artifacts, envelope, load));
  const Json& host_budgets = MemberOr(envelope, "budgets", kEmptyObject);
  ActionGrant grant{PhasePermissions(run, envelope), nullptr,
                    host_budgets.value("maximumParallelWorkers", int64_t{1}),
                    host_budgets.value("maximumSubagentDepth", int64_t{0})};
  if (run.phase == Phase::kAgent4Execute) TELIC_RETURN_IF_ERROR(NarrowToPendingNode(run, artifacts, load, envelope, grant));
  const ArtifactMeta* manifest = Latest(artifacts, ArtifactType::kContextManifest);
  Json action = CommonFields(
      run,
      fmt::format("Controller selected {} for {} topology from immutable run state.", domain::ProtocolName(run.phase),
                  domain::Name(run.topology)),
      "phase");
  action["phase"] = domain::ProtocolName(run.phase);
  action["logicalRole"] = phase->role;
  action["instructionRef"] = InstructionRef(run, *phase);
  action["inputRefs"] = std::move(inputs);
  action["contextManifestRef"] = manifest ? Json(store::ArtifactUri(run.run_id, manifest->id)) : Json(nullptr);
  action["requiredOutputType"] = phase->accepted_types.front();
  TELIC_ASSIGN_OR_RETURN(action["requiredOutputSchema"], ArtifactSchema(phase->accepted_types.front(), form));
  TELIC_ASSIGN_OR_RETURN(action["additionalOutputSchemas"], AdditionalOutputSchemas(run, *phase, form));
  action["workNodeId"] = std::move(grant.work_node_id);
  action["effectivePermissions"] = std::move(grant.permissions);
  action["remainingBudgets"] = Budgets(run, reserved, grant.workers, grant.depth);
  action["stopConditions"] = {
      "Do not broaden the user-selected intent mode or permissions.",
      "Stop at a materially divergent user-owned decision.",
      "Submit concise rationale summaries and evidence references, never hidden chain-of-thought."};
  return action;
}

}  // namespace

bool IsReferenceField(std::string_view key) { return kReferenceFields.count(key) > 0; }

std::vector<std::string> CollectReferences(const Json& body) {
  std::vector<std::string> out;
  Collect(body, "", out);
  return out;
}

std::string ActionId(const RunRecord& run) { return fmt::format("action:{}:{}", run.run_id, run.version); }

Result<Json> ComputeNextAction(const RunRecord& run, const std::vector<ArtifactMeta>& artifacts,
                               const BodyLoader& load_body, ActionSchemas form) {
  if (run.IsTerminal()) return TerminalAction(run, artifacts, load_body);
  TELIC_ASSIGN_OR_RETURN(int64_t reserved, ReservedToolCalls(artifacts, load_body));
  if (run.status == domain::RunStatus::kAwaitingClarification) return ClarificationAction(run, artifacts, reserved);
  return PhaseAction(run, artifacts, load_body, reserved, form);
}

}  // namespace telic::controller
