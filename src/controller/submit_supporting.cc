// RunService's submissions that are not phase artifacts: supporting
// artifacts (Evidence, ScenarioSpec), which do not advance the run, and
// clarification answers. Phase artifacts are in submit.cc.
#include <algorithm>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "base/text.h"
#include "controller/references.h"
#include "controller/run_service.h"
#include "controller/run_snapshot.h"
#include "controller/transitions.h"
#include "grounding/secrets.h"

namespace telic::controller {
namespace {

using domain::ArtifactType;
using domain::Phase;
using domain::RunStatus;

constexpr size_t kMaxEvidencePerWorkPlan = 128;

std::unexpected<Error> Reject(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

// Canonical padded base64 (re-encodes identically); returns the decoded bytes.
Result<std::string> DecodeCanonicalBase64(const std::string& content) {
  static const std::regex kPattern(R"(^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$)");
  auto fail = [] { return Fail(ErrorCode::kInvalidArgument, "Evidence content is not canonical base64"); };
  if (!std::regex_match(content, kPattern)) return fail();
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : content) {
    if (c == '=') break;
    buffer = (buffer << 6) | static_cast<uint32_t>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  if (bits > 0 && (buffer & ((1u << bits) - 1)) != 0) return fail();  // non-zero padding bits
  if (out.size() > 2 * 1024 * 1024) return Fail(ErrorCode::kInvalidArgument, "Decoded evidence exceeds 2097152 bytes");
  return out;
}

bool ContainsSecretInValue(const Json& value) {
  if (value.is_string()) return grounding::ContainsLikelySecret(value.get_ref<const std::string&>());
  if (value.is_array() || value.is_object()) {
    return std::any_of(value.begin(), value.end(), [](const Json& v) { return ContainsSecretInValue(v); });
  }
  return false;
}

// The references a ProblemFrame cites: the frame itself, its original request,
// every fact's and inference's source, the evidence its unknowns inspected, its
// rule references and its clarification request.
std::vector<std::string> FrameCitedRefs(const std::string& frame_uri, const Json& frame) {
  std::vector<std::string> refs{frame_uri, frame.value("originalRequestRef", "")};
  for (const Json& fact : frame.value("knownFacts", Json::array())) refs.push_back(fact.value("sourceRef", ""));
  for (const Json& inference : frame.value("inferences", Json::array())) {
    for (const auto& ref : StringArray(inference, "sourceRefs")) refs.push_back(ref);
  }
  for (const Json& unknown : frame.value("unknowns", Json::array())) {
    for (const auto& ref : StringArray(unknown, "evidenceInspected")) refs.push_back(ref);
  }
  for (const auto& ref : StringArray(frame, "applicableRuleRefs")) refs.push_back(ref);
  if (frame.contains("clarification")) refs.push_back(frame["clarification"].value("requestRef", ""));
  return refs;
}

// TEL-091: a ScenarioSpec presents its ProblemFrame and may not add to it.
// Every source-map entry names one of the spec's own presentation fields
// (optionally with a path below it: "observableSymptoms[0]") and rests it only
// on references the frame itself cites (D56).
Status CheckScenarioSourceMap(const Json& spec, const std::string& frame_uri, const Json& frame) {
  static const std::vector<std::string> kPresentationFields = {"title", "narrative", "actor", "observableSymptoms",
                                                               "desiredOutcome"};
  std::vector<std::string> cited = FrameCitedRefs(frame_uri, frame);
  const Json& map = spec.contains("sourceMap") ? spec["sourceMap"] : Json::array();
  for (size_t i = 0; i < map.size(); ++i) {
    std::string field = map[i].value("field", "");
    std::string head = field.substr(0, field.find_first_of("[./"));
    if (!ContainsString(kPresentationFields, head)) {
      return Reject(fmt::format("ScenarioSpec /sourceMap/{}/field: '{}' is not a presentation field of a ScenarioSpec "
                                "(title, narrative, actor, observableSymptoms, desiredOutcome); a ScenarioSpec may not "
                                "add requirements or permissions to its ProblemFrame",
                                i, field));
    }
    std::vector<std::string> refs = StringArray(map[i], "sourceRefs");
    for (size_t j = 0; j < refs.size(); ++j) {
      if (!ContainsString(cited, refs[j])) {
        return Reject(fmt::format("ScenarioSpec /sourceMap/{}/sourceRefs/{}: {} is not cited by its ProblemFrame; a "
                                  "ScenarioSpec may not add facts absent from the frame",
                                  i, j, refs[j]));
      }
    }
  }
  return {};
}

// Evidence content (decoded when base64) and every string of the body and
// of its source references are free of a likely credential.
Status CheckEvidenceHoldsNoCredential(const Json& body, const std::vector<std::string>& source_refs) {
  std::string content = body.value("content", "");
  if (body.value("encoding", "") == "base64") {
    TELIC_ASSIGN_OR_RETURN(content, DecodeCanonicalBase64(content));
  }
  if (ContainsSecretInValue(body) || grounding::ContainsLikelySecret(content) || ContainsSecretInValue(Json(source_refs))) {
    return Reject("Evidence contains a likely credential; redact the value before submission");
  }
  return Ok();
}

// Evidence: every artifact:// source is an artifact of this run.
// ScenarioSpec: its ProblemFrame is one of this run's, and its source map
// only presents that frame (CheckScenarioSourceMap).
Status CheckSupportingSources(RunSnapshot& snapshot, bool evidence, const Json& body) {
  if (evidence) {
    for (const auto& ref : StringArray(body, "sourceRefs")) {
      if (ref.rfind("artifact://", 0) != 0) continue;
      auto aid = ArtifactIdFromUri(ref);
      if (!aid || ref != snapshot.Uri(*aid) || !snapshot.Find(*aid)) {
        return Reject(fmt::format("Evidence source reference is missing or belongs to another run: {}", ref));
      }
    }
    return Ok();
  }
  auto fid = ArtifactIdFromUri(body.value("problemFrameRef", ""));
  const store::ArtifactMeta* frame = fid ? snapshot.Find(*fid) : nullptr;
  if (!frame || body.value("problemFrameRef", "") != snapshot.Uri(*fid) || frame->type != ArtifactType::kProblemFrame) {
    return Reject("ScenarioSpec must reference an existing ProblemFrame in the same run");
  }
  TELIC_ASSIGN_OR_RETURN(const Json* frame_body, snapshot.Body(*frame));
  return CheckScenarioSourceMap(body, snapshot.Uri(*fid), *frame_body);
}

// True when `existing` is the artifact a resubmission would store (a replay).
bool SameSupporting(const store::ArtifactMeta& existing, ArtifactType type, const std::string& producer,
                    const std::string& sha256, const std::vector<std::string>& source_refs) {
  return existing.type == type && existing.schema_version == "1.0" && existing.producer == producer &&
         existing.sha256 == sha256 && existing.source_refs == source_refs && existing.redaction == "none";
}

// Evidence: at most kMaxEvidencePerWorkPlan submitted (not observed) since
// the latest WorkPlan. ScenarioSpec: one per ProblemFrame.
Status CheckSupportingQuota(RunSnapshot& snapshot, bool evidence, const Json& body) {
  if (evidence) {
    size_t after_plan = 0;
    bool seen_plan = false;
    for (const auto& meta : snapshot.artifacts()) {
      if (meta.type == ArtifactType::kWorkPlan) {
        seen_plan = true;
        after_plan = 0;
      } else if (meta.type == ArtifactType::kEvidence && seen_plan && meta.producer != store::kObservedEvidenceProducer) {
        ++after_plan;
      }
    }
    if (after_plan >= kMaxEvidencePerWorkPlan) {
      return Fail(ErrorCode::kResourceExhausted, fmt::format("Evidence quota of {} per WorkPlan reached", kMaxEvidencePerWorkPlan));
    }
    return Ok();
  }
  for (const auto* meta : snapshot.All(ArtifactType::kScenarioSpec)) {
    TELIC_ASSIGN_OR_RETURN(const Json* spec, snapshot.Body(*meta));
    if (spec->value("problemFrameRef", "") == body.value("problemFrameRef", "")) {
      return Fail(ErrorCode::kResourceExhausted, "Only one ScenarioSpec may be stored for the current ProblemFrame");
    }
  }
  return Ok();
}

}  // namespace

Result<SubmitResult> RunService::SubmitSupporting(const store::RunRecord& run, ArtifactType type, Json body,
                                                  const std::vector<std::string>& supplied_refs) {
  bool evidence = type == ArtifactType::kEvidence;
  if (run.status != RunStatus::kRunning || run.phase != (evidence ? Phase::kAgent4Execute : Phase::kAgent2Compile)) {
    return Reject(evidence ? "Evidence may be captured only during the bounded executor phase"
                           : "Optional ScenarioSpec must immediately follow its accepted ProblemFrame");
  }
  TELIC_RETURN_IF_ERROR(ValidateArtifactBody(std::string(domain::Name(type)), body));
  constexpr int kMaxAttempts = 16;
  for (int attempt = 1;; ++attempt) {
    auto result = SubmitSupportingAttempt(run, type, body, supplied_refs);
    if (result || attempt == kMaxAttempts || result.error().code() != ErrorCode::kConflict ||
        result.error().message() != store::kConcurrentAppend) {
      return result;
    }
  }
}

Result<SubmitResult> RunService::SubmitSupportingAttempt(const store::RunRecord& run, ArtifactType type,
                                                         const Json& body, const std::vector<std::string>& supplied_refs) {
  bool evidence = type == ArtifactType::kEvidence;
  TELIC_ASSIGN_OR_RETURN(RunSnapshot snapshot, RunSnapshot::LoadAt(store_, run, &artifact_index_, &bodies_));
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> source_refs, StoredSourceRefs(snapshot, body, supplied_refs));
  std::string id = body["id"];
  if (evidence) TELIC_RETURN_IF_ERROR(CheckEvidenceHoldsNoCredential(body, source_refs));
  TELIC_RETURN_IF_ERROR(CheckArtifactReferences(snapshot, std::string(domain::Name(type)), body, source_refs));
  TELIC_RETURN_IF_ERROR(CheckSupportingSources(snapshot, evidence, body));
  std::string producer = evidence ? "executor" : "scenario_author";
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::StoredArtifact artifact =
      store::MakeArtifact({id, run.run_id, type, "1.0", producer, "", source_refs, "none", now}, body);
  if (const store::ArtifactMeta* existing = snapshot.Find(id)) {
    if (!SameSupporting(*existing, type, producer, artifact.meta.sha256, source_refs)) {
      return Fail(ErrorCode::kAlreadyExists, fmt::format("Supporting artifact replay conflicts with immutable artifact: {}", id));
    }
    TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
    return SubmitResult{run, std::move(action), *existing, std::nullopt};
  }
  TELIC_RETURN_IF_ERROR(CheckSupportingQuota(snapshot, evidence, body));
  store::Change change;
  change.run = run;  // supporting artifacts do not bump the version...
  // ...so the checks above (replay, quota, one spec per frame) hold only if
  // no artifact was appended since the snapshot: the store compares counts.
  change.expected_artifact_count = static_cast<int64_t>(snapshot.artifacts().size());
  change.artifacts.push_back(artifact);
  auto event = evidence ? NewEvent(run, "executor", "evidence_captured",
                                   fmt::format("Captured a redacted {} evidence artifact.", body.value("kind", "")), now)
                        : NewEvent(run, "scenario_author", "scenario_presentation_stored",
                                   "Stored an optional sourced scenario presentation; the ProblemFrame remains authoritative.",
                                   now);
  event.input_refs = source_refs;
  event.output_refs = {snapshot.Uri(id)};
  change.events.push_back(std::move(event));
  snapshot.Release();  // so the run's cached index can take the append in place (ArtifactIndexCache)
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run.run_id, run.version, change));
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
  return SubmitResult{run, std::move(action), artifact.meta, std::nullopt};
}

Result<SubmitResult> RunService::AnswerClarification(const store::RunRecord& run, const std::string& response) {
  std::string trimmed(TrimJs(response));
  if (trimmed.empty()) return Fail(ErrorCode::kInvalidArgument, "Clarification response is required");
  if (run.status != RunStatus::kAwaitingClarification) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run {} is not awaiting clarification", run.run_id));
  }
  TELIC_ASSIGN_OR_RETURN(RunSnapshot snapshot, RunSnapshot::LoadAt(store_, run, &artifact_index_, &bodies_));
  const store::ArtifactMeta* request = snapshot.Latest(ArtifactType::kClarificationRequest);
  if (!request) return Fail(ErrorCode::kDataLoss, "Awaiting-clarification run has no request artifact");
  TELIC_ASSIGN_OR_RETURN(const Json* request_body, snapshot.Body(*request));
  const Json choices = request_body->value("responseChoices", Json::array());
  const Json* choice = nullptr;
  for (const Json& candidate : choices) {
    if (candidate.is_object() && candidate.value("id", "") == trimmed) choice = &candidate;
  }
  if (!choice) {
    return Fail(ErrorCode::kInvalidArgument,
                "Clarification response must equal one of the typed response choice identifiers");
  }
  std::string effect = choice->value("runEffect", "");
  store::RunRecord next = run;
  if (effect == "resume") {
    TELIC_ASSIGN_OR_RETURN(next, ResumeAfterClarification(run));
  } else if (effect == "cancel" || effect == "new_run") {
    next.status = RunStatus::kCancelled;
    next.resume_phase = std::nullopt;
  } else {
    return Fail(ErrorCode::kDataLoss, "Clarification choice has no valid typed run effect");
  }
  std::string now = FormatIsoMillis(clock_.NowMillis());
  next.version = run.version + 1;
  next.updated_at = now;
  std::string answer_id = ids_.NewUuid();
  std::string request_ref = snapshot.Uri(request->id);
  Json answer = {{"schemaVersion", "1.0"}, {"id", answer_id}, {"runId", run.run_id}, {"content", response}};
  store::Change change;
  change.run = next;
  change.artifacts.push_back(
      store::MakeArtifact({answer_id, run.run_id, ArtifactType::kUserMessage, "1.0", "user", "", {request_ref}, "none", now},
                          answer));
  std::string summary =
      effect == "resume"    ? "User supplied a bounded decision; the paused phase resumed without broader authority."
      : effect == "new_run" ? "User selected a choice that requires a newly authorized run; the current run terminated "
                              "without broader authority."
                            : "User cancelled the paused run without broadening authority.";
  auto event = NewEvent(next, "user", "clarification_answered", summary, now);
  event.input_refs = {request_ref};
  event.output_refs = {snapshot.Uri(answer_id)};
  change.events.push_back(std::move(event));
  snapshot.Release();  // so the run's cached index can take the append in place (ArtifactIndexCache)
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run.run_id, run.version, change));
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(next));
  return SubmitResult{std::move(next), std::move(action), std::nullopt, std::nullopt};
}

}  // namespace telic::controller
