#include "protocol/refinements.h"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "domain/vocabulary.h"

namespace telic::protocol {
namespace {

// Collects issues with pointers relative to the body root.
class Checker {
 public:
  void Require(bool ok, const std::string& pointer, std::string message) {
    if (!ok) issues_.push_back(Issue{pointer, "custom", std::move(message)});
  }
  std::vector<Issue> Take() { return std::move(issues_); }

 private:
  std::vector<Issue> issues_;
};

std::string At(const std::string& base, size_t index) { return fmt::format("{}/{}", base, index); }

const Json& List(const Json& body, const char* key) {
  static const Json kEmpty = Json::array();
  auto it = body.find(key);
  return it != body.end() && it->is_array() ? *it : kEmpty;
}

bool NonEmpty(const Json& object, const char* key) { return !List(object, key).empty(); }

// Ids within `lists` of `body` must be unique across all of them.
void UniqueIds(Checker& c, const Json& body, std::initializer_list<const char*> lists, const char* id_key = "id") {
  std::set<std::string> seen;
  for (const char* list : lists) {
    const Json& items = List(body, list);
    for (size_t i = 0; i < items.size(); ++i) {
      std::string id = items[i].value(id_key, "");
      c.Require(seen.insert(id).second, At(std::string("/") + list, i) + "/" + id_key,
                fmt::format("duplicate id \"{}\"", id));
    }
  }
}

// Shared objects -----------------------------------------------------------

void EvidenceClaims(Checker& c, const Json& claims, const std::string& base) {
  for (size_t i = 0; i < claims.size(); ++i) {
    std::string status = claims[i].value("status", "");
    c.Require(!(status == "observed" || status == "inferred") || NonEmpty(claims[i], "evidenceRefs"),
              At(base, i) + "/evidenceRefs", fmt::format("an {} claim needs at least one evidence reference", status));
  }
}

void Findings(Checker& c, const Json& findings, const std::string& base) {
  for (size_t i = 0; i < findings.size(); ++i) {
    c.Require(findings[i].value("severity", "") != "blocking" || NonEmpty(findings[i], "sourceRefs"),
              At(base, i) + "/sourceRefs", "a blocking finding needs at least one source reference");
  }
}

// AcceptanceCoverage, ReviewCheck, VerificationResult: pass/fail need evidence.
void Judged(Checker& c, const Json& items, const std::string& base) {
  for (size_t i = 0; i < items.size(); ++i) {
    std::string status = items[i].value("status", "");
    c.Require(!(status == "pass" || status == "fail") || NonEmpty(items[i], "evidenceRefs"), At(base, i) + "/evidenceRefs",
              fmt::format("a {} result needs at least one evidence reference", status));
  }
}

void ClaimMatrix(Checker& c, const Json& entries, const std::string& base) {
  std::set<std::string> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string id = entries[i].value("claimId", "");
    c.Require(seen.insert(id).second, At(base, i) + "/claimId", fmt::format("duplicate claim id \"{}\"", id));
    c.Require(entries[i].value("status", "") != "supported" || NonEmpty(entries[i], "evidenceRefs"),
              At(base, i) + "/evidenceRefs", "a supported claim needs at least one evidence reference");
  }
}

bool AnyFailedGate(const Json& body) {
  for (const Json& gate : List(body, "hardGates")) {
    if (!gate.value("passed", true)) return true;
  }
  return false;
}

bool AnyBlockingFinding(const Json& body) {
  for (const Json& finding : List(body, "findings")) {
    if (finding.value("severity", "") == "blocking") return true;
  }
  return false;
}

bool All(const Json& items, const char* key, std::string_view value) {
  for (const Json& item : items) {
    if (item.value(key, "") != value) return false;
  }
  return true;
}

// Per type -------------------------------------------------------------------

void ClarificationRequest(Checker& c, const Json& b) {
  bool expanding = b.value("reason", "") == "permission_expanding";
  c.Require(b.value("permissionExpansionRequired", false) == expanding, "/permissionExpansionRequired",
            "permissionExpansionRequired must be true exactly when the reason is permission_expanding");
  const Json& choices = List(b, "responseChoices");
  std::set<std::string> ids, consequences;
  bool within_resume = false, new_run = false;
  for (size_t i = 0; i < choices.size(); ++i) {
    const Json& choice = choices[i];
    std::string base = At("/responseChoices", i);
    c.Require(ids.insert(choice.value("id", "")).second, base + "/id", "response choice ids must be unique");
    c.Require(consequences.insert(choice.value("consequence", "")).second, base + "/consequence",
              "response choice consequences must be unique");
    bool requires_new = choice.value("authorityEffect", "") == "requires_new_run";
    bool runs_new = choice.value("runEffect", "") == "new_run";
    c.Require(requires_new == runs_new, base + "/runEffect",
              "authorityEffect requires_new_run must go with runEffect new_run, and only with it");
    if (!expanding) {
      c.Require(!requires_new, base + "/authorityEffect",
                "a user-owned divergence must keep every choice within the current authority");
    }
    within_resume |= !requires_new && choice.value("runEffect", "") == "resume";
    new_run |= requires_new;
  }
  if (expanding) {
    c.Require(within_resume && new_run, "/responseChoices",
              "a permission-expanding question needs a resume choice within current authority and a new-run choice");
  }
}

void ProblemFrame(Checker& c, const Json& b) {
  UniqueIds(c, b, {"knownFacts", "inferences", "unknowns", "draftAcceptanceCriteria"});
  bool needs_user = false;
  for (const Json& unknown : List(b, "unknowns")) {
    std::string kind = unknown.value("classification", "");
    needs_user |= kind == "user_owned_materially_divergent" || kind == "permission_expanding";
  }
  if (needs_user) {
    c.Require(b.value("/clarification/required"_json_pointer, false), "/clarification/required",
              "a user-owned or permission-expanding unknown requires clarification");
  }
}

void TaskContract(Checker& c, const Json& b) {
  UniqueIds(c, b, {"acceptanceCriteria"});
  UniqueIds(c, b, {"verificationRequirements"});
  std::string mode = b.value("intentMode", "");
  std::optional<domain::Mode> intent = domain::ModeNamed(mode);
  std::set<std::string> required_stages, criteria_stages;
  for (const Json& v : List(b, "verificationRequirements")) {
    if (v.value("required", false)) required_stages.insert(v.value("stage", ""));
  }
  for (const Json& a : List(b, "acceptanceCriteria")) criteria_stages.insert(a.value("stage", ""));
  bool executes = intent == domain::Mode::kAnalyzeOnly || intent == domain::Mode::kFixOnly ||
                  intent == domain::Mode::kAnalyzeAndFix;
  if (executes) {
    c.Require(!required_stages.empty(), "/verificationRequirements",
              fmt::format("{} needs at least one required verification", mode));
  }
  if (intent == domain::Mode::kAnalyzeAndFix) {
    c.Require(criteria_stages.count("diagnosis") && criteria_stages.count("completion"), "/acceptanceCriteria",
              "analyze_and_fix needs diagnosis and completion acceptance criteria");
    c.Require(required_stages.count("diagnosis") && required_stages.count("completion"), "/verificationRequirements",
              "analyze_and_fix needs required verification in both the diagnosis and completion stages");
  } else {
    const Json& verifications = List(b, "verificationRequirements");
    for (size_t i = 0; i < verifications.size(); ++i) {
      c.Require(verifications[i].value("stage", "") != "diagnosis", At("/verificationRequirements", i) + "/stage",
                fmt::format("{} may not have diagnosis-stage verification", mode));
    }
  }
  if (intent == domain::Mode::kReportOnly || intent == domain::Mode::kPlanOnly || intent == domain::Mode::kAnalyzeOnly) {
    const Json& p = b.value("permissions", Json::object());
    bool mutates = !p.value("/repository/write"_json_pointer, Json::array()).empty() ||
                   !p.value("/repository/delete"_json_pointer, Json::array()).empty() ||
                   !p.value("/runtime/restart"_json_pointer, Json::array()).empty() ||
                   p.value("/browser/mutateState"_json_pointer, false) ||
                   p.value("/network/externalWrite"_json_pointer, false);
    c.Require(!mutates, "/permissions", fmt::format("{} may not grant mutating permissions", mode));
  }
}

void PromptReview(Checker& c, const Json& b) {
  double expected = PromptReadinessScore(b.value("dimensionScores", Json::object()));
  c.Require(b.value("overallScore", -1.0) == expected, "/overallScore",
            fmt::format("overallScore must equal the weighted readiness score {}", FormatJsNumber(expected)));
  Findings(c, List(b, "findings"), "/findings");
  std::string decision = b.value("decision", "");
  bool failed_gate = AnyFailedGate(b), blocking = AnyBlockingFinding(b);
  if (decision == "pass") {
    c.Require(!failed_gate && !blocking, "/decision", "pass needs every hard gate passed and no blocking finding");
    c.Require(b.value("overallScore", 0.0) >= 80, "/overallScore", "pass needs an overall score of at least 80");
    c.Require(NonEmpty(b, "coverage") && All(List(b, "coverage"), "status", "covered"), "/coverage",
              "pass needs non-empty coverage with every entry covered");
  } else if (decision == "block") {
    c.Require(failed_gate || blocking, "/decision", "block needs a failed hard gate or a blocking finding");
  } else if (decision == "revise") {
    c.Require(b.value("revisionNumber", 1) == 0, "/revisionNumber", "revise is allowed only at revision 0");
    bool correctable = false, has_fields = false;
    for (const Json& f : List(b, "findings")) {
      correctable |= f.value("severity", "") == "blocking" && f.contains("requiredCorrection") && !f["requiredCorrection"].is_null();
      has_fields |= !List(f, "correctionFields").empty();
    }
    c.Require(correctable, "/findings", "revise needs a blocking finding with a required correction");
    c.Require(has_fields, "/findings", "revise needs at least one correction field");
  }
}

void WorkPlan(Checker& c, const Json& b) {
  const Json& nodes = List(b, "nodes");
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string id = nodes[i].value("id", "");
    c.Require(index.emplace(id, i).second, At("/nodes", i) + "/id", fmt::format("duplicate node id \"{}\"", id));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& deps = List(nodes[i], "dependsOn");
    std::set<std::string> seen;
    for (size_t k = 0; k < deps.size(); ++k) {
      std::string dep = deps[k].get<std::string>();
      std::string pointer = At(At("/nodes", i) + "/dependsOn", k);
      c.Require(index.count(dep) > 0, pointer, fmt::format("dependsOn names unknown node \"{}\"", dep));
      c.Require(dep != nodes[i].value("id", ""), pointer, "a node cannot depend on itself");
      // Stricter than the reference (D48): a dependency is named once.
      c.Require(seen.insert(dep).second, pointer, fmt::format("dependsOn names \"{}\" twice", dep));
    }
  }
  // Kahn's algorithm: whatever is left unsorted sits on a cycle.
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> dependents(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Json& dep : List(nodes[i], "dependsOn")) {
      auto it = index.find(dep.get<std::string>());
      if (it == index.end() || it->second == i) continue;
      ++pending[i];
      dependents[it->second].push_back(i);
    }
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  size_t sorted = 0;
  while (!ready.empty()) {
    size_t n = ready.back();
    ready.pop_back();
    ++sorted;
    for (size_t d : dependents[n]) {
      if (--pending[d] == 0) ready.push_back(d);
    }
  }
  c.Require(sorted == nodes.size(), "/nodes", "the node dependency graph has a cycle");
}

void WorkResult(Checker& c, const Json& b) {
  EvidenceClaims(c, List(b, "observations"), "/observations");
  EvidenceClaims(c, List(b, "inferences"), "/inferences");
  const Json& observations = List(b, "observations");
  for (size_t i = 0; i < observations.size(); ++i) {
    std::string s = observations[i].value("status", "");
    c.Require(s == "observed" || s == "user_reported", At("/observations", i) + "/status",
              "observations may only be observed or user_reported");
  }
  const Json& inferences = List(b, "inferences");
  for (size_t i = 0; i < inferences.size(); ++i) {
    std::string s = inferences[i].value("status", "");
    c.Require(s == "inferred" || s == "unverified", At("/inferences", i) + "/status",
              "inferences may only be inferred or unverified");
  }
  const Json& actions = List(b, "actions");
  bool failed_action = false;
  for (size_t i = 0; i < actions.size(); ++i) {
    const std::optional<domain::ActionStatus> s = domain::ActionStatusNamed(actions[i].value("status", ""));
    failed_action |= s == domain::ActionStatus::kFailed || s == domain::ActionStatus::kDenied;
    c.Require(s != domain::ActionStatus::kCompleted || NonEmpty(actions[i], "evidenceRefs"),
              At("/actions", i) + "/evidenceRefs",
              "a completed action needs at least one evidence reference");
  }
  const Json& files = List(b, "filesChanged");
  for (size_t i = 0; i < files.size(); ++i) {
    const Json& f = files[i];
    std::string kind = f.value("changeType", "");
    bool before = f.contains("beforeHash") && !f["beforeHash"].is_null();
    bool after = f.contains("afterHash") && !f["afterHash"].is_null();
    std::string base = At("/filesChanged", i);
    if (kind == "created") c.Require(!before && after, base, "a created file has no beforeHash and an afterHash");
    if (kind == "deleted") c.Require(before && !after, base, "a deleted file has a beforeHash and no afterHash");
    if (kind == "modified") {
      c.Require(before && after && f["beforeHash"] != f["afterHash"], base,
                "a modified file has different beforeHash and afterHash");
    }
  }
  const Json& tests = List(b, "testResults");
  bool failed_test = false;
  for (size_t i = 0; i < tests.size(); ++i) {
    const std::optional<domain::TestStatus> s = domain::TestStatusNamed(tests[i].value("status", ""));
    const bool ran = s == domain::TestStatus::kPassed || s == domain::TestStatus::kFailed;
    failed_test |= s == domain::TestStatus::kFailed;
    c.Require(!ran || (tests[i].contains("outputRef") && !tests[i]["outputRef"].is_null()),
              At("/testResults", i) + "/outputRef",
              fmt::format("a {} test needs an outputRef", ran ? domain::Name(*s) : std::string_view()));
  }
  Judged(c, List(b, "acceptanceCoverage"), "/acceptanceCoverage");
  if (domain::WorkStatusNamed(b.value("status", "")) == domain::WorkStatus::kCompleted) {
    c.Require(NonEmpty(b, "evidenceRefs"), "/evidenceRefs", "a completed result needs at least one evidence reference");
    c.Require(!failed_action, "/actions", "a completed result cannot contain a failed or denied action");
    c.Require(!failed_test, "/testResults", "a completed result cannot contain a failed test");
    c.Require(All(List(b, "acceptanceCoverage"), "status", "pass"), "/acceptanceCoverage",
              "a completed result needs every acceptance criterion covered with pass");
  }
}

void DiagnosisGate(Checker& c, const Json& gate, const std::string& base) {
  bool supported = gate.value("status", "") == "supported";
  bool has_order = gate.contains("correctionWorkOrder") && !gate["correctionWorkOrder"].is_null();
  if (supported) {
    c.Require(NonEmpty(gate, "directEvidenceRefs") && has_order, base,
              "a supported diagnosis needs direct evidence and a correction work order");
  } else {
    c.Require(!has_order, base + "/correctionWorkOrder", "an unsupported diagnosis cannot carry a correction work order");
  }
  if (has_order) {
    std::set<std::string> sources;
    for (const Json& ref : List(gate["correctionWorkOrder"], "sourceRefs")) sources.insert(ref.get<std::string>());
    for (const Json& ref : List(gate, "directEvidenceRefs")) {
      c.Require(sources.count(ref.get<std::string>()) > 0, base + "/correctionWorkOrder/sourceRefs",
                fmt::format("the correction work order must cite direct evidence {}", ref.get<std::string>()));
    }
  }
}

void QualityReview(Checker& c, const Json& b) {
  c.Require(NonEmpty(b, "workPlanRefs") || NonEmpty(b, "workResultRefs"), "/workResultRefs",
            "a quality review must cite a work plan or a work result");
  Findings(c, List(b, "findings"), "/findings");
  Judged(c, List(b, "acceptanceResults"), "/acceptanceResults");
  Judged(c, List(b, "ruleCompliance"), "/ruleCompliance");
  Judged(c, List(b, "regressionChecks"), "/regressionChecks");
  Judged(c, List(b, "verificationResults"), "/verificationResults");
  std::string decision = b.value("decision", "");
  double score = b.value("score", 0.0);
  bool checks_pass = All(List(b, "ruleCompliance"), "status", "pass") && All(List(b, "regressionChecks"), "status", "pass");
  bool clean = !AnyFailedGate(b) && !AnyBlockingFinding(b);
  if (decision == "pass" || decision == "proceed_to_fix") {
    c.Require(score >= 80, "/score", fmt::format("{} needs a score of at least 80", decision));
    c.Require(clean && checks_pass, "/decision",
              fmt::format("{} needs every gate passed, no blocking finding and every check passing", decision));
  }
  if (decision == "pass") {
    c.Require(All(List(b, "acceptanceResults"), "status", "pass"), "/acceptanceResults",
              "pass needs every acceptance result to pass");
  }
  bool has_order = b.contains("remediationWorkOrder") && !b["remediationWorkOrder"].is_null();
  if (decision == "remediate") {
    c.Require(b.value("remainingRemediations", 0) == 1 && has_order, "/remediationWorkOrder",
              "remediate needs a remaining remediation and a remediation work order");
  } else {
    c.Require(!has_order, "/remediationWorkOrder", "only remediate may carry a remediation work order");
  }
  bool has_gate = b.contains("diagnosisGate") && !b["diagnosisGate"].is_null();
  if (decision == "proceed_to_fix") {
    c.Require(has_gate, "/diagnosisGate", "proceed_to_fix needs a diagnosis gate");
    if (has_gate) {
      const Json& gate = b["diagnosisGate"];
      c.Require(gate.value("status", "") == "supported" && gate.value("withinApprovedScope", false) &&
                    gate.value("permissionsSufficient", false),
                "/diagnosisGate",
                "proceed_to_fix needs a supported diagnosis within the approved scope and permissions");
    }
  } else {
    c.Require(!has_gate, "/diagnosisGate", "only proceed_to_fix may carry a diagnosis gate");
  }
  if (has_gate) DiagnosisGate(c, b["diagnosisGate"], "/diagnosisGate");
}

void ReleaseAudit(Checker& c, const Json& b) {
  ClaimMatrix(c, List(b, "claimEvidenceMatrix"), "/claimEvidenceMatrix");
  Findings(c, List(b, "findings"), "/findings");
  Judged(c, List(b, "userFidelity"), "/userFidelity");
  c.Require(NonEmpty(b, "workPlanRefs") || NonEmpty(b, "workResultRefs"), "/workResultRefs",
            "a release audit must cite a work plan or a work result");
  std::string decision = b.value("decision", "");
  bool has_defect = b.contains("remediationDefect") && !b["remediationDefect"].is_null();
  bool has_report = b.contains("userReportRef") && !b["userReportRef"].is_null();
  bool fidelity_pass = All(List(b, "userFidelity"), "status", "pass");
  bool claims_supported = All(List(b, "claimEvidenceMatrix"), "status", "supported");
  bool mode_pass = b.value("modeCompliance", "") == "pass";
  if (decision == "release") {
    c.Require(mode_pass && fidelity_pass && claims_supported && !AnyBlockingFinding(b), "/decision",
              "release needs mode compliance, full user fidelity, every claim supported and no blocking finding");
  }
  if (decision == "remediate") {
    c.Require(b.value("remainingRemediations", 0) == 1 && has_defect && !has_report, "/remediationDefect",
              "remediate needs a remaining remediation, a defect and no user report reference");
  } else {
    c.Require(!has_defect, "/remediationDefect", "only remediate may carry a remediation defect");
    c.Require(has_report, "/userReportRef", "a non-remediate audit must name the user report to come");
  }
  if (std::optional<domain::ReviewDecision> decided = domain::ReviewDecisionNamed(decision);
      decided == domain::ReviewDecision::kPartial || decided == domain::ReviewDecision::kBlock) {
    bool concrete = !mode_pass || !fidelity_pass || !claims_supported || NonEmpty(b, "findings") ||
                    NonEmpty(b, "unresolvedRisks");
    c.Require(concrete, "/decision", fmt::format("{} must keep a concrete failure, finding or unresolved risk", decision));
  }
}

void UserReport(Checker& c, const Json& b) {
  const Json& claims = List(b, "completionClaims");
  EvidenceClaims(c, claims, "/completionClaims");
  std::string status = b.value("terminalStatus", "");
  // The terminal status shares the run statuses' words (failed_verification aside).
  std::optional<domain::RunStatus> terminal = domain::RunStatusNamed(status);
  if (terminal == domain::RunStatus::kCompleted) {
    c.Require(!claims.empty(), "/completionClaims", "a completed report needs at least one completion claim");
    c.Require(b.value("permissionsHonored", false), "/permissionsHonored", "a completed report must honour permissions");
    for (size_t i = 0; i < claims.size(); ++i) {
      c.Require(claims[i].value("status", "") != "unverified" && NonEmpty(claims[i], "evidenceRefs"),
                At("/completionClaims", i), "a completed report cannot rest on an unverified or unevidenced claim");
    }
  } else if (terminal != domain::RunStatus::kCancelled) {
    c.Require(NonEmpty(b, "findingRefs") || NonEmpty(b, "unresolvedRisks") || NonEmpty(b, "nextActions"), "/terminalStatus",
              fmt::format("a {} report must name a finding, an unresolved risk or a next action", status));
  }
}

void ReceiptAudit(Checker& c, const Json& b) {
  ClaimMatrix(c, List(b, "claimEvidenceMatrix"), "/claimEvidenceMatrix");
  if (b.value("digestStatus", "") == "verified") {
    c.Require(All(List(b, "claimEvidenceMatrix"), "status", "supported"), "/claimEvidenceMatrix",
              "a verified receipt needs every claim supported");
  }
}

void ContextManifest(Checker& c, const Json& b) {
  const Json& candidates = List(b, "candidates");
  std::set<std::string> refs;
  int64_t selected = 0, bytes = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    c.Require(refs.insert(candidates[i].value("ref", "")).second, At("/candidates", i) + "/ref",
              "candidate refs must be unique");
    if (candidates[i].value("decision", "") == "selected") {
      ++selected;
      bytes += candidates[i].value("byteSize", int64_t{0});
    }
  }
  const Json& budget = b.value("budget", Json::object());
  c.Require(budget.value("selectedFiles", int64_t{-1}) == selected, "/budget/selectedFiles",
            "selectedFiles must equal the number of selected candidates");
  c.Require(budget.value("selectedBytes", int64_t{-1}) == bytes, "/budget/selectedBytes",
            "selectedBytes must equal the byte size of the selected candidates");
  c.Require(bytes <= budget.value("maximumTotalBytes", int64_t{0}), "/budget/selectedBytes",
            "selectedBytes must not exceed maximumTotalBytes");
  UniqueIds(c, b, {"excludedCandidateSummaries"}, "reason");
}

void TraceEvent(Checker& c, const Json& b) {
  std::string type = b.value("eventType", "");
  if (type == "permission_checked" || type == "broker_decision") {
    c.Require(b.contains("permissionDecision") && !b["permissionDecision"].is_null(), "/permissionDecision",
              fmt::format("a {} event needs a permission decision", type));
  }
  if (type == "tool_started" || type == "tool_finished") {
    c.Require(b.contains("tool") && !b["tool"].is_null(), "/tool", fmt::format("a {} event needs a tool", type));
  }
}

}  // namespace

double PromptReadinessScore(const Json& s) {
  double x = 0.3 * s.value("intentFidelity", 0.0) + 0.2 * s.value("repositoryGrounding", 0.0) +
             0.15 * s.value("constraintsAndPermissions", 0.0) + 0.2 * s.value("testableAcceptance", 0.0) +
             0.1 * s.value("executionFeasibility", 0.0) + 0.05 * s.value("contextEfficiency", 0.0);
  return std::floor(x * 100 + 0.5) / 100;
}

std::vector<Issue> CheckRefinements(std::string_view type, const Json& body) {
  using domain::ArtifactType;
  static const std::map<ArtifactType, std::function<void(Checker&, const Json&)>> kRules = {
      {ArtifactType::kClarificationRequest, ClarificationRequest},
      {ArtifactType::kProblemFrame, ProblemFrame},
      {ArtifactType::kContextManifest, ContextManifest},
      {ArtifactType::kTaskContract, TaskContract},
      {ArtifactType::kPromptReview, PromptReview},
      {ArtifactType::kWorkPlan, WorkPlan},
      {ArtifactType::kWorkResult, WorkResult},
      {ArtifactType::kQualityReview, QualityReview},
      {ArtifactType::kReleaseAudit, ReleaseAudit},
      {ArtifactType::kUserReport, UserReport},
      {ArtifactType::kReceiptAudit, ReceiptAudit},
  };
  Checker checker;
  if (!body.is_object()) return checker.Take();
  if (type == "TraceEvent") {  // a trace event is served with a schema but is no stored artifact type
    TraceEvent(checker, body);
  } else if (std::optional<ArtifactType> known = domain::ArtifactTypeNamed(type)) {
    if (auto rule = kRules.find(*known); rule != kRules.end()) rule->second(checker, body);
  }
  return checker.Take();
}

}  // namespace telic::protocol
