// RunService's observations of the host's work (issue 38): the baseline at
// grounding, claimed FileChanges checked and diffed, undeclared changes and
// the require_observed policy at the final report.
#include "controller/observe_work.h"

#include <fmt/format.h>

#include <set>

#include "base/sha256.h"
#include "controller/observed_evidence.h"
#include "controller/rule_violation.h"
#include "controller/run_service.h"
#include "controller/run_snapshot.h"
#include "observation/file_claims.h"
#include "observation/undeclared_changes.h"
#include "observation/unified_diff.h"
#include "policy/engine.h"
#include "policy/path_scope.h"

namespace telic::controller {

std::optional<ObservationPolicy> ParseObservationPolicy(std::string_view text) {
  if (text == "checked") return ObservationPolicy::kChecked;
  if (text == "require_observed") return ObservationPolicy::kRequireObserved;
  return std::nullopt;
}

std::string_view ObservationPolicyName(ObservationPolicy policy) {
  return policy == ObservationPolicy::kRequireObserved ? "require_observed" : "checked";
}

RunObservation RunObservationOf(const store::RunRecord& run) {
  RunObservation out;
  out.unobserved_reason = "not observed: the run started before telic observed work trees";
  const Json* stored = run.extra.is_object() && run.extra.contains("observation") ? &run.extra["observation"] : nullptr;
  if (!stored || !stored->is_object()) return out;
  out.policy = ParseObservationPolicy(stored->value("policy", "")).value_or(ObservationPolicy::kChecked);
  out.shared = stored->value("shared", false);
  out.unobserved_reason = stored->value("reason", "");
  if (stored->contains("baseline")) out.baseline = (*stored)["baseline"];
  return out;
}

void SetRunObservation(store::RunRecord& run, const RunObservation& observation) {
  Json stored = {{"policy", std::string(ObservationPolicyName(observation.policy))}, {"shared", observation.shared}};
  if (!observation.shared) stored["reason"] = observation.unobserved_reason;
  if (observation.baseline) stored["baseline"] = *observation.baseline;
  if (!run.extra.is_object()) run.extra = Json::object();
  run.extra["observation"] = std::move(stored);
}

namespace {

using observation::FileState;

std::string DigestOrReason(const Result<FileState>& state) {
  if (state) return state->Digest();
  return "unobservable: " + state.error().message();
}

// path -> the afterHash ("absent" for a deletion) of the last accepted FileChange of it.
Result<std::map<std::string, std::string>> DeclaredChanges(RunSnapshot& snapshot) {
  std::map<std::string, std::string> declared;
  for (const store::ArtifactMeta* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* body, snapshot.Body(*meta));
    for (const Json& change : body->value("filesChanged", Json::array())) {
      const Json& after = change.value("afterHash", Json());
      declared[change.value("path", "")] = after.is_string() ? after.get<std::string>() : std::string(observation::kAbsent);
    }
  }
  return declared;
}

// The id of telic's diff Evidence of `path` in the WorkResult `work_result_id`.
std::string DiffEvidenceId(const std::string& work_result_id, const std::string& path) {
  return "telic-diff-" + Sha256Hex(work_result_id + '\0' + path).substr(0, 32);
}

Json EvidenceBody(const std::string& run_id, std::string id, std::string kind, std::string summary, std::string content_type,
                  std::string content, std::vector<std::string> source_refs, std::vector<std::string> redactions,
                  const std::string& now) {
  return {{"schemaVersion", "1.0"},
          {"id", std::move(id)},
          {"runId", run_id},
          {"kind", std::move(kind)},
          {"capturedAt", now},
          {"summary", std::move(summary)},
          {"contentType", std::move(content_type)},
          {"encoding", "utf8"},
          {"content", std::move(content)},
          {"sourceRefs", std::move(source_refs)},
          {"redactions", std::move(redactions)},
          {"rationaleSummary", "Captured by telic from the work tree it shares with the host; not supplied by the host."}};
}

// `text` cut to at most `limit` bytes on a UTF-8 boundary.
std::string Clip(std::string text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

Json NotObservedNote(const RunObservation& run) {
  return {{"observed", false}, {"reason", run.unobserved_reason}, {"policy", std::string(ObservationPolicyName(run.policy))}};
}

}  // namespace

void RunService::set_work_tree(std::shared_ptr<observation::WorkTreeObserver> observer, std::string unobserved_reason) {
  work_tree_ = std::move(observer);
  unobserved_reason_ = std::move(unobserved_reason);
}

RunObservation RunService::NewRunObservation(ObservationPolicy policy) const {
  RunObservation out;
  out.policy = policy;
  out.shared = work_tree_ != nullptr;
  if (!out.shared) out.unobserved_reason = unobserved_reason_;
  return out;
}

Result<RunObservation> RunService::TakeBaseline(const store::RunRecord& run) {
  RunObservation observed = RunObservationOf(run);
  if (!observed.shared || run.requested_mode == domain::Mode::kReportOnly) return observed;
  if (!work_tree_) {
    observed.shared = false;
    observed.unobserved_reason = unobserved_reason_;
    return observed;
  }
  auto state = work_tree_->ReadState();
  if (!state) {
    if (state.error().code() != ErrorCode::kFailedPrecondition) return std::unexpected(state.error());
    observed.shared = false;  // e.g. the root is not a Git work tree: said, never passed
    observed.unobserved_reason = "not observed: " + state.error().message();
    return observed;
  }
  observation::Baseline baseline;
  baseline.head_commit = state->head_commit;
  baseline.complete = state->complete;
  for (const std::string& path : state->changed_paths) {
    baseline.dirty[path] = DigestOrReason(work_tree_->ReadFile(path, false));
  }
  observed.baseline = baseline.ToJson();
  return observed;
}

Result<std::string> RunService::GroundedDigest(const observation::Baseline& baseline, const std::string& path,
                                               std::optional<std::string>* bytes) {
  auto dirty = baseline.dirty.find(path);
  if (dirty != baseline.dirty.end()) return dirty->second;
  if (!baseline.complete) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("not observed: the work tree had more than {} changed paths when the run was grounded, so "
                            "the grounded content of {} is unknown",
                            observation::kMaxChangedPaths, path));
  }
  TELIC_ASSIGN_OR_RETURN(FileState committed, work_tree_->ReadCommitted(baseline.head_commit, path, bytes != nullptr));
  if (bytes) *bytes = committed.bytes;
  return committed.Digest();
}

Result<ObservedSubmission> RunService::ObserveWorkResult(RunSnapshot& snapshot, const std::string& work_result_id,
                                                         const Json& body, const std::string& now) {
  const store::RunRecord& run = snapshot.run();
  RunObservation observed = RunObservationOf(run);
  ObservedSubmission out;
  const Json& changes = body.value("filesChanged", Json::array());
  if (changes.empty()) return out;
  if (!observed.shared || !work_tree_ || !observed.baseline) {
    out.note = NotObservedNote(observed);
    if (observed.shared && !observed.baseline) out.note["reason"] = "not observed: the run has no work-tree baseline";
    return out;
  }
  TELIC_ASSIGN_OR_RETURN(observation::Baseline baseline, observation::Baseline::FromJson(*observed.baseline));
  TELIC_ASSIGN_OR_RETURN(auto declared, DeclaredChanges(snapshot));
  std::string work_result_uri = snapshot.Uri(work_result_id);
  Json checked = Json::array();
  Json diff_refs = Json::array();
  for (size_t i = 0; i < changes.size(); ++i) {
    std::string pointer = PointerAt("filesChanged", i);
    TELIC_ASSIGN_OR_RETURN(observation::ClaimedChange claim, observation::ClaimedChange::FromJson(changes[i], pointer));
    auto now_state = work_tree_->ReadFile(claim.path, true);
    if (!now_state) {
      std::string message = fmt::format("{} cannot be checked against the work tree: {}", claim.path, now_state.error().message());
      return RuleViolation(pointer + "/path", message);
    }
    std::optional<std::string> grounded_bytes;
    auto grounded = GroundedDigest(baseline, claim.path, &grounded_bytes);
    if (!grounded) return RuleViolation(pointer + "/path", grounded.error().message());
    auto previous = declared.find(claim.path);
    const std::string& expected_before = previous != declared.end() ? previous->second : *grounded;
    TELIC_RETURN_IF_ERROR(observation::CheckFileClaim(claim, expected_before, *now_state));
    declared[claim.path] = now_state->Digest();

    std::optional<std::string> before = *grounded == observation::kAbsent ? std::nullopt : grounded_bytes;
    bool before_known = *grounded == observation::kAbsent || grounded_bytes.has_value();
    observation::DiffText diff = observation::UnifiedDiff(claim.path, before, now_state->bytes);
    std::string summary = Clip(fmt::format("telic's diff of {} from the grounded content to the work tree now ({} bytes{})",
                                      claim.path, diff.full_bytes,
                                      diff.truncated ? fmt::format(", cut at {}", observation::kMaxDiffBytes) : ""), 3000);
    if (!before_known) {
      summary += "; the grounded content of this path was uncommitted and is shown as empty, its digest was " + *grounded;
    }
    std::string id = DiffEvidenceId(work_result_id, claim.path);
    Json evidence = EvidenceBody(run.run_id, id, "diff", summary, "text/x-diff", diff.text, {work_result_uri},
                                 diff.redactions, now);
    TELIC_RETURN_IF_ERROR(ValidateArtifactBody("Evidence", evidence));
    out.artifacts.push_back(ObservedEvidenceArtifact(run.run_id, evidence, {work_result_uri}, now));
    out.summaries.push_back(ObservedEvidenceSummary(evidence));
    checked.push_back({{"path", claim.path}, {"beforeHash", expected_before}, {"afterHash", now_state->Digest()},
                       {"diffRef", snapshot.Uri(id)}, {"truncated", diff.truncated}});
    diff_refs.push_back(snapshot.Uri(id));
  }
  out.note = {{"observed", true},
              {"policy", std::string(ObservationPolicyName(observed.policy))},
              {"filesChecked", std::move(checked)},
              {"diffEvidenceRefs", std::move(diff_refs)}};
  return out;
}

Result<std::vector<observation::UndeclaredChange>> RunService::FindUndeclared(RunSnapshot& snapshot,
                                                                              const observation::Baseline& baseline) {
  TELIC_ASSIGN_OR_RETURN(observation::WorkTreeState state, work_tree_->ReadState());
  if (!state.complete || !baseline.complete) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("not observed: the work tree has more than {} changed paths, too many to compare",
                            observation::kMaxChangedPaths));
  }
  TELIC_ASSIGN_OR_RETURN(auto declared, DeclaredChanges(snapshot));
  std::set<std::string> paths(state.changed_paths.begin(), state.changed_paths.end());
  for (const auto& [path, digest] : baseline.dirty) paths.insert(path);
  for (const auto& [path, digest] : declared) paths.insert(path);
  if (state.head_commit != baseline.head_commit) {
    TELIC_ASSIGN_OR_RETURN(std::vector<std::string> committed,
                           work_tree_->CommittedChanges(baseline.head_commit, state.head_commit));
    paths.insert(committed.begin(), committed.end());
  }
  if (paths.size() > observation::kMaxChangedPaths) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("not observed: {} paths changed since grounding, more than {} to compare", paths.size(),
                            observation::kMaxChangedPaths));
  }
  std::map<std::string, observation::PathDigests> candidates;
  for (const std::string& path : paths) {
    auto grounded = GroundedDigest(baseline, path, nullptr);
    candidates[path] = {grounded ? *grounded : "unobservable: " + grounded.error().message(),
                        DigestOrReason(work_tree_->ReadFile(path, false))};
  }
  const store::ArtifactMeta* contract_meta = snapshot.Latest("TaskContract");
  Json contract = Json::object();
  if (contract_meta) {
    TELIC_ASSIGN_OR_RETURN(const Json* body, snapshot.Body(*contract_meta));
    contract = *body;
  }
  const store::RunRecord& run = snapshot.run();
  auto classify = [&](std::string_view path) {
    for (const Json& pattern : contract.value("scope", Json::object()).value("exclude", Json::array())) {
      if (pattern.is_string() && policy::GlobMatches(pattern.get<std::string>(), path)) {
        return observation::UndeclaredKind::kExcludedByContract;
      }
    }
    if (contract.contains("permissions")) {
      for (const char* capability : {"repository.write", "repository.delete"}) {
        policy::ActionRequest request;
        request.capability = capability;
        request.target = std::string(path);
        std::vector<policy::Layer> layers = {policy::ModeCeilingLayer(domain::Name(run.requested_mode)),
                                             {"task_contract", contract["permissions"], Json()}};
        if (policy::Authorize(request, layers, policy::RepoRoot{run.repository_root, nullptr, {}}).allowed) {
          return observation::UndeclaredKind::kUndeclared;
        }
      }
    }
    return observation::UndeclaredKind::kOutsideWriteScope;
  };
  return observation::FindUndeclaredChanges(candidates, declared, classify);
}

namespace {

// Every artifact reference `value` holds, with the JSON pointer (below
// `pointer`) where it is written.
void CollectRefs(const Json& value, const std::string& pointer, std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_string()) {
    out.emplace_back(value.get<std::string>(), pointer);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) CollectRefs(value[i], pointer + "/" + std::to_string(i), out);
  }
}

// Where a run's verification is cited: the report's verificationRefs and
// claims, every accepted WorkResult's testResults outputs and every accepted
// QualityReview's verificationResults. Each is (reference, where), `where`
// naming the artifact and the pointer inside it.
Result<std::vector<std::pair<std::string, std::string>>> VerificationCitations(RunSnapshot& snapshot,
                                                                               const Json& report) {
  std::vector<std::pair<std::string, std::string>> refs;
  CollectRefs(report.value("verificationRefs", Json::array()), "/verificationRefs", refs);
  const Json claims = report.value("completionClaims", Json::array());
  for (size_t i = 0; i < claims.size(); ++i) {
    CollectRefs(claims[i].value("evidenceRefs", Json::array()), fmt::format("/completionClaims/{}/evidenceRefs", i), refs);
  }
  for (const store::ArtifactMeta* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* result, snapshot.Body(*meta));
    const Json tests = result->value("testResults", Json::array());
    for (size_t i = 0; i < tests.size(); ++i) {
      CollectRefs(tests[i].value("outputRef", Json()), fmt::format("WorkResult {} /testResults/{}/outputRef", meta->id, i),
                  refs);
    }
  }
  for (const store::ArtifactMeta* meta : snapshot.All("QualityReview")) {
    TELIC_ASSIGN_OR_RETURN(const Json* review, snapshot.Body(*meta));
    const Json results = review->value("verificationResults", Json::array());
    for (size_t i = 0; i < results.size(); ++i) {
      CollectRefs(results[i].value("evidenceRefs", Json::array()),
                  fmt::format("QualityReview {} /verificationResults/{}/evidenceRefs", meta->id, i), refs);
    }
  }
  return refs;
}

// Records the undeclared changes `listed` that a UserReport (`report_id`)
// met as observed Evidence in `out`, and cites it in the note. The full list
// is in the result; the Evidence keeps as many entries as fit its content limit.
Status AddUndeclaredEvidence(ObservedSubmission& out, const RunSnapshot& snapshot, const std::string& report_id,
                             const Json& listed, const std::vector<observation::UndeclaredChange>& undeclared,
                             const std::string& now) {
  const std::string& run_id = snapshot.run().run_id;
  std::string id = "telic-undeclared-" + Sha256Hex(report_id).substr(0, 32);
  Json kept = Json::array();
  for (const Json& entry : listed) {
    kept.push_back(entry);
    if (CanonicalJson(kept).size() > 30'000) {
      kept.erase(kept.size() - 1);
      break;
    }
  }
  std::string content = CanonicalJson(kept);
  Json evidence = EvidenceBody(run_id, id, "repository",
                               Clip(fmt::format("{} undeclared change(s) telic found in the work tree: {}",
                                                undeclared.size(), observation::DescribeUndeclared(undeclared, 5)),
                                    4000),
                               "application/json", content, {}, {}, now);
  TELIC_RETURN_IF_ERROR(ValidateArtifactBody("Evidence", evidence));
  out.artifacts.push_back(ObservedEvidenceArtifact(run_id, evidence, {}, now));
  out.summaries.push_back(ObservedEvidenceSummary(evidence));
  out.note["evidenceRef"] = snapshot.Uri(id);
  return Ok();
}

}  // namespace

Status RunService::CheckRequireObserved(RunSnapshot& snapshot, const Json& body) {
  TELIC_ASSIGN_OR_RETURN(auto citations, VerificationCitations(snapshot, body));
  for (const auto& [ref, where] : citations) {
    auto id = ArtifactIdFromUri(ref);
    const store::ArtifactMeta* meta = id && ref == snapshot.Uri(*id) ? snapshot.Find(*id) : nullptr;
    if (!meta || meta->type != domain::ArtifactType::kEvidence || store::ProvenanceOf(*meta) != store::Provenance::kClaimed) continue;
    TELIC_ASSIGN_OR_RETURN(const Json* evidence, snapshot.Body(*meta));
    if (evidence->value("kind", "") == "test") {
      bool in_report = !where.empty() && where.front() == '/';
      return RuleViolation(in_report ? where : "/terminalStatus",
                           fmt::format("require_observed: test evidence {} ({}) is claimed by the host; cite the "
                                       "output of a check telic ran (telic_run_check) instead",
                                       ref, where));
    }
  }
  for (const store::ArtifactMeta* meta : snapshot.All("WorkResult")) {
    TELIC_ASSIGN_OR_RETURN(const Json* result, snapshot.Body(*meta));
    for (const Json& change : result->value("filesChanged", Json::array())) {
      std::string path = change.value("path", "");
      if (!snapshot.Find(DiffEvidenceId(meta->id, path))) {
        return RuleViolation("/terminalStatus",
                             fmt::format("require_observed: the change of {} has no diff evidence observed by telic", path));
      }
    }
  }
  return Ok();
}

Result<ObservedSubmission> RunService::ObserveUserReport(RunSnapshot& snapshot, const std::string& report_id,
                                                         const Json& body, const std::string& now) {
  const store::RunRecord& run = snapshot.run();
  RunObservation observed = RunObservationOf(run);
  std::string status = body.value("terminalStatus", "");
  // A report's terminal status shares the run statuses' words (failed_verification aside).
  std::optional<domain::RunStatus> reported = domain::RunStatusNamed(status);
  bool claims_completion = reported == domain::RunStatus::kCompleted || reported == domain::RunStatus::kPartial;
  ObservedSubmission out;
  bool strict = observed.policy == ObservationPolicy::kRequireObserved;
  if (!observed.shared || !work_tree_ || !observed.baseline) {
    out.note = NotObservedNote(observed);
    if (observed.shared && !observed.baseline) out.note["reason"] = "not observed: the run has no work-tree baseline";
    if (strict && reported == domain::RunStatus::kCompleted) {
      return RuleViolation("/terminalStatus",
                           fmt::format("require_observed: completed needs observed work, but {}", out.note.value("reason", "")));
    }
    return out;
  }
  TELIC_ASSIGN_OR_RETURN(observation::Baseline baseline, observation::Baseline::FromJson(*observed.baseline));
  auto undeclared = FindUndeclared(snapshot, baseline);
  if (!undeclared) {
    if (claims_completion) return RuleViolation("/terminalStatus", undeclared.error().message());
    out.note = {{"observed", false}, {"reason", undeclared.error().message()},
                {"policy", std::string(ObservationPolicyName(observed.policy))}};
    return out;
  }
  if (claims_completion && !undeclared->empty()) {
    return RuleViolation("/terminalStatus",
                         fmt::format("The work tree has changes since grounding that no accepted FileChange declares: {}; "
                                     "declare them in a WorkResult, undo them, or report blocked or failed_verification",
                                     observation::DescribeUndeclared(*undeclared)));
  }
  if (strict && reported == domain::RunStatus::kCompleted) TELIC_RETURN_IF_ERROR(CheckRequireObserved(snapshot, body));
  Json listed = Json::array();
  for (const auto& change : *undeclared) listed.push_back(change.ToJson());
  out.note = {{"observed", true},
              {"policy", std::string(ObservationPolicyName(observed.policy))},
              {"undeclaredChanges", listed}};
  if (!undeclared->empty()) TELIC_RETURN_IF_ERROR(AddUndeclaredEvidence(out, snapshot, report_id, listed, *undeclared, now));
  return out;
}

}  // namespace telic::controller
