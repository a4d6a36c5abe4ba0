#include "controller/companions.h"

#include <algorithm>
#include <regex>

#include "base/sha256.h"

namespace telic::controller {
namespace {

std::vector<std::string> ContextRefs(const Json& frame, const std::string& manifest_ref) {
  std::vector<std::string> refs;
  auto add = [&](const std::string& ref) {
    if (!ContainsString(refs, ref)) refs.push_back(ref);
  };
  for (const Json& fact : frame.value("knownFacts", Json::array())) {
    if (fact.value("provenance", "") != "user" && fact.contains("sourceRef") && fact["sourceRef"].is_string()) add(fact["sourceRef"]);
  }
  for (const Json& inference : frame.value("inferences", Json::array())) {
    for (const auto& ref : StringArray(inference, "sourceRefs")) add(ref);
  }
  if (!manifest_ref.empty()) add(manifest_ref);
  return refs;
}

// Whether `ref` names an artifact of this run whose stored blob re-hashes to its digest.
bool DigestVerifies(RunSnapshot& snapshot, const std::string& ref) {
  static const std::regex kRef(R"(^artifact://([^/]+)/([A-Za-z0-9._-]+)$)");
  std::smatch match;
  if (!std::regex_match(ref, match, kRef) || match[1].str() != snapshot.run_id()) return false;
  const store::ArtifactMeta* meta = snapshot.Find(match[2].str());
  return meta && snapshot.Body(*meta).has_value();  // Body re-hashes through the store
}

}  // namespace

Result<std::vector<Companion>> BuildMicroPack(RunSnapshot& snapshot, const std::string& frame_id, const Json& frame) {
  const auto& run = snapshot.run();
  TELIC_ASSIGN_OR_RETURN(const Json* envelope, snapshot.LatestBody(domain::ArtifactType::kRunEnvelope));
  const Json& criteria = frame.value("draftAcceptanceCriteria", Json::array());
  if (criteria.empty()) return Fail(ErrorCode::kInvalidArgument, "Micro bootstrap requires one draft acceptance criterion");
  const Json& criterion = criteria[0];
  std::string manifest_ref = snapshot.LatestRef(domain::ArtifactType::kContextManifest);
  std::string frame_ref = snapshot.Uri(frame_id);
  std::vector<std::string> context = ContextRefs(frame, manifest_ref);
  const domain::Mode mode = run.requested_mode;
  bool executes = mode == domain::Mode::kFixOnly || mode == domain::Mode::kAnalyzeOnly;
  bool micro_fix = mode == domain::Mode::kFixOnly && run.topology == domain::Topology::kMicro;
  const Json& granted = (*envelope)["authorization"]["granted"];
  Json contract = {
      {"schemaVersion", "1.0"}, {"id", "contract-01"}, {"runId", run.run_id}, {"version", 1},
      {"originalRequestRef", envelope->value("originalRequestRef", "")}, {"problemFrameRef", frame_ref},
      {"intentMode", mode}, {"objective", frame.value("goal", "")}, {"scope", frame.value("scope", Json::object())},
      {"constraints", frame.value("constraints", Json::array())}, {"nonGoals", frame.value("nonGoals", Json::array())},
      {"contextRefs", context}, {"ruleRefs", frame.value("applicableRuleRefs", Json::array())}, {"permissions", granted},
      {"acceptanceCriteria", Json::array({criterion})},
      {"requiredOutputs", Json::array({executes ? "Evidence-backed work result" : "Evidence-backed answer"})},
      {"verificationRequirements", Json::array()}, {"stopConditions", Json::array({"Stop within the micro topology scope."})},
      {"assumptions", Json::array()}, {"unresolvedQuestions", Json::array()},
      {"rationaleSummary", "Controller bootstrap contract for micro topology execution."}};
  if (executes) {
    contract["verificationRequirements"] = Json::array({{{"id", "VR-MICRO"},
                                                         {"stage", "completion"},
                                                         {"description", "Capture repository evidence for the bounded micro execution."},
                                                         {"required", true},
                                                         {"capability", "repository.read"},
                                                         {"fallback", "Stop if repository evidence cannot be captured."}}});
  }
  int64_t calls = (mode == domain::Mode::kReportOnly || mode == domain::Mode::kPlanOnly) ? 0 : micro_fix ? 8 : 32;
  Json tools = micro_fix ? Json::array({"repository.read", "repository.write"}) : Json::array({"repository.read"});
  std::string contract_ref = snapshot.Uri("contract-01");
  Json node = {{"id", "micro-execute"}, {"logicalRole", "executor"}, {"objective", frame.value("goal", "")},
               {"dependsOn", Json::array()}, {"inputRefs", Json::array({contract_ref})}, {"contextRefs", context},
               {"allowedTools", tools}, {"requiredCapabilities", tools}, {"permissions", granted},
               {"outputType", domain::ArtifactType::kWorkResult}, {"acceptanceCriteria", Json::array({criterion.value("id", "")})},
               {"stopConditions", Json::array({"Stop within the micro topology scope."})},
               {"budgets", {{"maximumToolCalls", calls}, {"maximumChildren", 0}}}};
  Json plan = {{"schemaVersion", "1.0"}, {"id", "plan-01"}, {"runId", run.run_id}, {"taskContractRef", contract_ref},
               {"executionMode", "serial"}, {"nodes", Json::array({node})}, {"joinRules", Json::array()},
               {"globalBudgets", {{"maximumToolCalls", calls}, {"maximumParallelWorkers", 1}, {"maximumSubagentDepth", 0}}},
               {"planValidation", "valid"}, {"rationaleSummary", "Controller bootstrap serial plan for micro topology."}};
  std::vector<std::string> contract_sources = {frame_ref};
  if (!manifest_ref.empty()) contract_sources.push_back(manifest_ref);
  return std::vector<Companion>{
      {"contract-01", domain::ArtifactType::kTaskContract, "task_compiler", contract_sources, std::move(contract)},
      {"plan-01", domain::ArtifactType::kWorkPlan, "quality_controller", {contract_ref}, std::move(plan)}};
}

Result<Receipt> CertifyReview(RunSnapshot& snapshot, const std::string& review_id, const Json& review, const std::string& now) {
  Json matrix = Json::array();
  bool all_supported = true;
  const Json& results = review.value("acceptanceResults", Json::array());
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& result = results[i];
    if (!result.is_object()) continue;
    std::string criterion = result.contains("criterionId") && result["criterionId"].is_string()
                                ? result["criterionId"].get<std::string>()
                                : "AC-" + std::to_string(i + 1);
    std::vector<std::string> evidence = StringArray(result, "evidenceRefs");
    bool digests = std::all_of(evidence.begin(), evidence.end(), [&](const std::string& r) { return DigestVerifies(snapshot, r); });
    bool supported = digests && result.value("status", "") == "pass";
    all_supported = all_supported && supported;
    matrix.push_back({{"claimId", "claim-" + criterion},
                      {"claim", "Criterion " + criterion + " spot-check claim"},
                      {"criterionIds", Json::array({criterion})},
                      {"basis", "direct"},
                      {"status", supported ? "supported" : "unverified"},
                      {"evidenceRefs", evidence},
                      {"rationaleSummary", result.contains("rationaleSummary") && result["rationaleSummary"].is_string()
                                               ? result["rationaleSummary"].get<std::string>()
                                               : std::string("Spot-check evidence receipt.")}});
  }
  Receipt receipt;
  bool verified = true;
  std::vector<std::string> seen;
  for (const char* section : {"acceptanceResults", "verificationResults", "hardGates", "ruleCompliance", "regressionChecks"}) {
    for (const Json& entry : review.value(section, Json::array())) {
      for (const auto& ref : StringArray(entry, "evidenceRefs")) {
        if (ContainsString(seen, ref)) continue;
        seen.push_back(ref);
        if (DigestVerifies(snapshot, ref)) receipt.verified_refs.push_back(ref);
        else verified = false;
      }
    }
  }
  receipt.verified = verified && all_supported;
  std::string review_ref = snapshot.Uri(review_id);
  receipt.artifact = {"receipt-01", domain::ArtifactType::kReceiptAudit, "controller", {review_ref},
                      {{"schemaVersion", "1.0"}, {"id", "receipt-01"}, {"runId", snapshot.run_id()},
                       {"controllingReviewRef", review_ref}, {"claimEvidenceMatrix", matrix},
                       {"digestStatus", receipt.verified ? "verified" : "failed"}, {"verifiedAt", now}}};
  return receipt;
}

std::string DigestSummaryForRefs(std::vector<std::string> refs) {
  std::sort(refs.begin(), refs.end());
  std::string joined;
  for (size_t i = 0; i < refs.size(); ++i) joined += (i ? "|" : "") + refs[i];
  return Sha256Ref(joined);
}

}  // namespace telic::controller
