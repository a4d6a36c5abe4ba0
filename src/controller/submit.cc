// RunService::SubmitArtifact and its paths: phase artifacts, supporting
// artifacts (Evidence, ScenarioSpec) and clarification answers.
#include <algorithm>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/redact.h"
#include "base/text.h"
#include "controller/acceptance.h"
#include "controller/companions.h"
#include "controller/next_action.h"
#include "controller/phases.h"
#include "controller/references.h"
#include "controller/rule_violation.h"
#include "controller/run_service.h"
#include "controller/run_snapshot.h"
#include "controller/transitions.h"
#include "grounding/secrets.h"

namespace telic::controller {
namespace {

using domain::ArtifactType;
using domain::Phase;
using domain::RunStatus;
using domain::Topology;

constexpr int kMaxClarificationsPerRun = 1;
constexpr int kMaxEscalationsPerRun = 2;
constexpr size_t kMaxEvidencePerWorkPlan = 128;

std::unexpected<Error> Reject(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

// The producer the server assigns (callers cannot set it).
std::string ProducerFor(const store::RunRecord& run, std::optional<ArtifactType> type) {
  switch (type.value_or(ArtifactType::kRunEnvelope)) {
    case ArtifactType::kProblemFrame:
    case ArtifactType::kScenarioSpec:
    case ArtifactType::kPromptReview:
      return "scenario_author";
    case ArtifactType::kTaskContract:
      return "task_compiler";
    case ArtifactType::kWorkPlan:
    case ArtifactType::kQualityReview:
      return "quality_controller";
    case ArtifactType::kWorkResult:
    case ArtifactType::kEvidence:
      return "executor";
    case ArtifactType::kReleaseAudit:
    case ArtifactType::kUserReport:
      return "release_auditor";
    default:
      return std::string(FindPhase(run.phase).role);
  }
}

// The [request, answer] refs a resumed phase artifact must cite, or empty
// when no answered clarification is pending (PROTOCOL §10.5).
std::vector<std::string> PendingClarificationLineage(const RunSnapshot& snapshot) {
  std::set<std::string> requests;
  for (const auto* meta : snapshot.All(ArtifactType::kClarificationRequest)) requests.insert(meta->id);
  const auto& artifacts = snapshot.artifacts();
  auto names_request = [&](const std::string& ref) {
    auto id = ArtifactIdFromUri(ref);
    return id && requests.count(*id) > 0;
  };
  const store::ArtifactMeta* answer = nullptr;
  for (auto it = artifacts.rbegin(); it != artifacts.rend() && !answer; ++it) {
    if (it->type == ArtifactType::kUserMessage && std::any_of(it->source_refs.begin(), it->source_refs.end(), names_request)) answer = &*it;
  }
  if (!answer) return {};
  auto request = std::find_if(answer->source_refs.begin(), answer->source_refs.end(), names_request);
  std::string request_ref = *request;
  std::string answer_ref = snapshot.Uri(answer->id);
  static const std::set<ArtifactType> kPhaseTypes = {
      ArtifactType::kContextManifest, ArtifactType::kProblemFrame, ArtifactType::kTaskContract,
      ArtifactType::kPromptReview,    ArtifactType::kWorkPlan,     ArtifactType::kWorkResult,
      ArtifactType::kQualityReview};
  bool consumed = std::any_of(artifacts.begin(), artifacts.end(), [&](const store::ArtifactMeta& a) {
    return kPhaseTypes.count(a.type) && a.id != answer->id && ContainsString(a.source_refs, request_ref) &&
           ContainsString(a.source_refs, answer_ref);
  });
  if (consumed) return {};
  return {request_ref, answer_ref};
}

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

// "/" + `key` escaped as one RFC 6901 reference token.
std::string PointerToken(const std::string& key) {
  std::string out = "/";
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

struct CredentialFinding {
  std::string pointer;  // of the string value, or of the object whose member name holds it
  std::string_view kind;
  bool member_name = false;
};

// The first string under `value` (at `pointer`), member names included, in
// which grounding::LikelySecretKind finds a credential.
std::optional<CredentialFinding> FindLikelyCredential(const Json& value, const std::string& pointer) {
  if (value.is_string()) {
    auto kind = grounding::LikelySecretKind(value.get_ref<const std::string&>());
    if (kind) return CredentialFinding{pointer, *kind};
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (auto found = FindLikelyCredential(value[i], pointer + "/" + std::to_string(i))) return found;
    }
  } else if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      // A secret in a member name is reported at the object: its pointer would echo it.
      if (auto kind = grounding::LikelySecretKind(key)) return CredentialFinding{pointer, *kind, true};
      if (auto found = FindLikelyCredential(item, pointer + PointerToken(key))) return found;
    }
  }
  return std::nullopt;
}

// An artifact body is refused when a string in it holds a likely credential:
// the issue names its JSON pointer and the kind of secret, never the secret.
// Supporting artifacts are checked before anything else; phase artifacts
// after their rules, so a permission denial is recorded (redacted) as the
// reference records it, and before anything is stored.
Status CheckNoLikelyCredential(const Json& body) {
  auto found = FindLikelyCredential(body, "");
  if (!found) return Ok();
  std::string where = found->pointer.empty() ? "(root)" : found->pointer;
  std::string message = fmt::format(
      "Artifact body {} {} a likely credential ({}); nothing was stored: remove the value or name where it is kept "
      "instead",
      where, found->member_name ? "has a member name holding" : "holds", found->kind);
  return RuleViolation(found->pointer, std::move(message));
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

}  // namespace

Result<SubmitResult> RunService::SubmitArtifact(const SubmitRequest& r) {
  auto result = SubmitArtifactUnnotified(r);
  // Only plans, results and the end of a run concern the listener (see
  // set_change_listener); other submissions would make it re-read the run's
  // history for nothing.
  std::optional<ArtifactType> type = r.artifact_type ? domain::ArtifactTypeNamed(*r.artifact_type) : std::nullopt;
  bool concerns_listener = type == ArtifactType::kWorkPlan || type == ArtifactType::kWorkResult;
  if (result && (concerns_listener || result->run.IsTerminal())) NotifyChanged(r.run_id);
  return result;
}

Result<SubmitResult> RunService::SubmitArtifactUnnotified(const SubmitRequest& r) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, CheckTokens(r.run_id, r.action_id, r.expected_version));
  bool artifact_parts = r.artifact_type || r.body || r.body_json;
  if (r.clarification_response) {
    if (artifact_parts) {
      return Fail(ErrorCode::kInvalidArgument, "Clarification response cannot be combined with an artifact submission");
    }
    return AnswerClarification(run, *r.clarification_response);
  }
  if (!r.artifact_type) return Fail(ErrorCode::kInvalidArgument, "artifact_type is required for an artifact submission");
  if (r.body && r.body_json) return Fail(ErrorCode::kInvalidArgument, "body and body_json cannot be combined");
  if (!r.body && !r.body_json) {
    return Fail(ErrorCode::kInvalidArgument,
                "artifact_type and exactly one of body or body_json are required for an artifact submission");
  }
  Json body;
  if (r.body_json) {
    auto parsed = ParseJsonStrict(*r.body_json);
    if (!parsed) return Fail(ErrorCode::kInvalidArgument, "body_json must contain valid JSON");
    body = std::move(*parsed);
    if (!body.is_object()) return Fail(ErrorCode::kInvalidArgument, "body_json must encode one canonical JSON object");
  } else {
    body = *r.body;
  }
  if (!body.is_object() || !body.contains("id") || !body["id"].is_string() || !body.contains("runId") ||
      !body["runId"].is_string()) {
    return Fail(ErrorCode::kInvalidArgument, "Artifact body must include canonical id and runId fields");
  }
  if (body["runId"] != r.run_id) return Fail(ErrorCode::kInvalidArgument, "Artifact body runId does not match run_id");
  if (run.status != RunStatus::kRunning) return Fail(ErrorCode::kFailedPrecondition, "Run is not accepting a phase artifact");
  const std::string& type = *r.artifact_type;
  std::optional<ArtifactType> kind = domain::ArtifactTypeNamed(type);
  if (kind == ArtifactType::kEvidence || kind == ArtifactType::kScenarioSpec) {
    TELIC_RETURN_IF_ERROR(CheckNoLikelyCredential(body));
    return SubmitSupporting(run, *kind, std::move(body), r.source_refs);
  }
  return SubmitPhaseArtifact(run, type, std::move(body), r.source_refs);
}

Result<SubmitResult> RunService::EscalateByRejection(const store::RunRecord& run, const std::string& artifact_uri,
                                                     Topology topology, Phase phase, const std::string& reason) {
  if (run.escalation_count >= kMaxEscalationsPerRun) return Fail(ErrorCode::kResourceExhausted, "escalation budget exhausted");
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::RunRecord next = run;
  next.topology = topology;
  next.phase = phase;
  next.status = RunStatus::kRunning;
  next.resume_phase = std::nullopt;
  next.escalation_count += 1;
  next.version += 1;
  next.updated_at = now;
  store::Change change;
  change.run = next;
  auto event = NewEvent(run, "controller", "topology_escalated", reason, now);
  event.input_refs = {artifact_uri};
  change.events.push_back(std::move(event));
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run.run_id, run.version, change));
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("Topology escalated to {} ({})", domain::Name(topology), reason));
}

Result<SubmitResult> RunService::SubmitPhaseArtifact(const store::RunRecord& run, const std::string& type, Json body,
                                                     const std::vector<std::string>& supplied_refs) {
  TELIC_RETURN_IF_ERROR(ValidateArtifactBody(type, body));
  TELIC_ASSIGN_OR_RETURN(RunSnapshot snapshot, RunSnapshot::LoadAt(store_, run, &artifact_index_, &bodies_));
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> source_refs, StoredSourceRefs(snapshot, body, supplied_refs));
  std::string id = body["id"];
  std::string uri = snapshot.Uri(id);
  const std::optional<ArtifactType> kind = domain::ArtifactTypeNamed(type);
  const std::vector<ArtifactType>& accepted = AcceptedArtifactTypes(run);
  auto accepts = [&](ArtifactType t) { return std::find(accepted.begin(), accepted.end(), t) != accepted.end(); };
  bool clarification_exhausted = kind == ArtifactType::kClarificationRequest &&
                                 snapshot.Count(ArtifactType::kClarificationRequest) >= kMaxClarificationsPerRun;
  if (clarification_exhausted && !accepts(ArtifactType::kClarificationRequest)) {
    return Reject(fmt::format("Phase {} cannot record another clarification boundary", domain::Name(run.phase)));
  }
  std::vector<std::string> lineage = PendingClarificationLineage(snapshot);
  if (!lineage.empty() && kind && *kind != ArtifactType::kClarificationRequest && accepts(*kind) &&
      !std::all_of(lineage.begin(), lineage.end(), [&](const std::string& ref) { return ContainsString(source_refs, ref); })) {
    return Reject("The resumed phase artifact must cite the exact clarification request and answer");
  }
  TELIC_RETURN_IF_ERROR(CheckArtifactReferences(snapshot, type, body, source_refs));
  if (run.topology == Topology::kMicro && kind == ArtifactType::kUserReport) {
    for (const Json& claim : body.value("completionClaims", Json::array())) {
      if (claim.value("status", "") == "user_reported") {
        return EscalateByRejection(run, uri, Topology::kStandard, Phase::kAgent1Review, "MICRO_USER_REPORTED");
      }
    }
  }
  if (run.topology == Topology::kStandard && kind == ArtifactType::kReleaseAudit) {
    for (const Json& entry : body.value("claimEvidenceMatrix", Json::array())) {
      if (entry.value("basis", "") == "user_reported") {
        return EscalateByRejection(run, uri, Topology::kForensic, Phase::kAgent5Audit, "STANDARD_USER_REPORTED_CLAIMS");
      }
    }
  }
  Submission submission{id, type, body, source_refs};
  std::optional<PermissionDenial> denial;
  Status rules = CheckCrossArtifactRules(snapshot, submission, denial);
  std::string now = FormatIsoMillis(clock_.NowMillis());
  if (!rules) {
    if (denial) TELIC_RETURN_IF_ERROR(RecordDenial(run, snapshot, *denial, rules.error().message(), now));
    return std::unexpected(rules.error());
  }
  TELIC_RETURN_IF_ERROR(CheckNoLikelyCredential(body));
  ObservedSubmission observed;
  if (kind == ArtifactType::kWorkResult) {
    TELIC_ASSIGN_OR_RETURN(observed, ObserveWorkResult(snapshot, id, body, now));
  } else if (kind == ArtifactType::kUserReport) {
    TELIC_ASSIGN_OR_RETURN(observed, ObserveUserReport(snapshot, id, body, now));
  }
  std::vector<Json> permission_decisions;
  std::optional<bool> execution_complete;
  if (kind == ArtifactType::kWorkResult) {
    TELIC_ASSIGN_OR_RETURN(permission_decisions, WorkResultPermissionDecisions(snapshot, body));
    TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(snapshot, &body));
    execution_complete = progress.remaining_after == 0;
  }
  Transition transition;
  if (clarification_exhausted) {
    transition = ClarificationBudgetExhausted(run);
  } else {
    TELIC_ASSIGN_OR_RETURN(transition, AdvanceRun(run, type, body, execution_complete));
  }
  store::RunRecord next = transition.run;
  next.version = run.version + 1;
  next.updated_at = now;
  if (next.topology != run.topology) {
    if (run.escalation_count >= kMaxEscalationsPerRun) return Fail(ErrorCode::kResourceExhausted, "escalation budget exhausted");
    next.escalation_count = run.escalation_count + 1;
  }

  store::Change change;
  change.run = next;
  std::string producer = ProducerFor(run, kind);
  // Every type a phase accepts is an artifact type: AdvanceRun refused any other.
  change.artifacts.push_back(
      store::MakeArtifact({id, run.run_id, *kind, "1.0", producer, "", source_refs, "none", now}, body));
  store::RunRecord event_run = next;
  event_run.phase = run.phase;  // events carry the phase the artifact was submitted in
  for (const Json& decision : permission_decisions) {
    auto event = NewEvent(event_run, "controller", "permission_checked", PermissionEventSummary(decision), now);
    event.input_refs = decision.value("policyRefs", std::vector<std::string>{});
    event.output_refs = {uri};  // PROTOCOL §17.1: the checks name the artifact they authorized
    event.permission_decision = decision;  // the store redacts it and says so (RedactTraceEvent)
    change.events.push_back(std::move(event));
  }
  std::string event_type = clarification_exhausted           ? "budget_consumed"
                           : kind == ArtifactType::kClarificationRequest ? "clarification_requested"
                                                             : "phase_submitted";
  // telic's own evidence of this submission (provenance observed): its events
  // come before the submission's, so a terminal report's event stays the last.
  std::vector<store::StoredArtifact> observed_artifacts;
  for (size_t i = 0; i < observed.artifacts.size(); ++i) {
    auto event = NewEvent(event_run, "controller", std::string(store::kEvidenceObservedEvent), observed.summaries[i], now);
    event.input_refs = {uri};
    event.output_refs = {snapshot.Uri(observed.artifacts[i].meta.id)};
    observed_artifacts.push_back(std::move(observed.artifacts[i]));
    change.events.push_back(std::move(event));
  }
  auto main_event = NewEvent(event_run, producer, event_type, transition.summary, now);
  main_event.input_refs = source_refs;
  main_event.output_refs = {uri};
  change.events.push_back(std::move(main_event));
  for (auto& artifact : observed_artifacts) change.artifacts.push_back(std::move(artifact));

  if (kind == ArtifactType::kProblemFrame && run.topology == Topology::kMicro &&
      (next.phase == Phase::kAgent4Execute || next.phase == Phase::kAgent3Review)) {
    TELIC_ASSIGN_OR_RETURN(std::vector<Companion> pack, BuildMicroPack(snapshot, id, body));
    for (Companion& companion : pack) {
      TELIC_RETURN_IF_ERROR(ValidateArtifactBody(std::string(domain::Name(companion.type)), companion.body));
      change.artifacts.push_back(store::MakeArtifact(
          {companion.id, run.run_id, companion.type, "1.0", companion.producer, "", companion.source_refs, "none", now},
          companion.body));
    }
  }
  if ((run.topology == Topology::kMicro || run.topology == Topology::kStandard) && kind == ArtifactType::kQualityReview &&
      body.value("decision", "") == "pass" && !snapshot.Latest(ArtifactType::kReceiptAudit)) {
    TELIC_ASSIGN_OR_RETURN(Receipt receipt, CertifyReview(snapshot, id, body, now));
    TELIC_RETURN_IF_ERROR(ValidateArtifactBody(std::string(domain::Name(ArtifactType::kReceiptAudit)), receipt.artifact.body));
    change.artifacts.push_back(store::MakeArtifact({receipt.artifact.id, run.run_id, ArtifactType::kReceiptAudit, "1.0", "controller", "",
                                                    receipt.artifact.source_refs, "none", now},
                                                   receipt.artifact.body));
    if (receipt.verified) {
      auto digest = NewEvent(event_run, "controller", "digest_verified", DigestSummaryForRefs(receipt.verified_refs), now);
      digest.input_refs = receipt.verified_refs;
      digest.output_refs = {uri};
      change.events.push_back(std::move(digest));
    }
  }
  if (run.topology == Topology::kMicro && next.topology == Topology::kStandard && kind == ArtifactType::kQualityReview) {
    std::string reason = body.value("decision", "") == "remediate" ? "MICRO_SPOT_REMEDIATE" : "MICRO_SPOT_PARTIAL";
    auto escalated = NewEvent(event_run, "controller", "topology_escalated", reason, now);
    escalated.input_refs = {uri};
    escalated.output_refs = {uri};
    change.events.push_back(std::move(escalated));
  }
  snapshot.Release();  // so the run's cached index can take the append in place (ArtifactIndexCache)
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run.run_id, run.version, change));
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(next));
  std::optional<Json> note;
  if (!observed.note.is_null()) note = std::move(observed.note);
  return SubmitResult{std::move(next), std::move(action), std::nullopt, std::move(note)};
}

Status RunService::RecordDenial(const store::RunRecord& run, RunSnapshot& snapshot, const PermissionDenial& denial,
                                const std::string& message, const std::string& now) {
  // The store redacts what it appends (RedactTraceEvent); an earlier record
  // of this denial is found by its redacted form.
  Json decision = store::RedactedJson(denial.decision);
  std::string summary = RedactedText(message);
  // A DENY record does not advance the run, so the version check does not
  // order two racing identical denials: the trace length does. The loser
  // re-reads the trace, finds the winner's record and stores nothing.
  constexpr int kMaxAttempts = 16;
  for (int attempt = 1;; ++attempt) {
    TELIC_ASSIGN_OR_RETURN(const std::vector<store::TraceEventRecord>* trace, snapshot.Trace());
    bool exists = std::any_of(trace->begin(), trace->end(), [&](const store::TraceEventRecord& e) {
      return e.event_type == "permission_checked" && e.permission_decision && *e.permission_decision == decision &&
             e.summary == summary && e.phase == domain::Name(run.phase);
    });
    if (exists) return Ok();
    store::Change change;
    change.run = run;
    change.expected_trace_length = trace->empty() ? 0 : trace->back().sequence;
    auto event = NewEvent(run, "controller", "permission_checked", message, now);
    event.input_refs = denial.input_refs;
    event.permission_decision = denial.decision;
    change.events.push_back(std::move(event));
    Status applied = store_.ApplyChange(run.run_id, run.version, change);
    if (applied || attempt == kMaxAttempts || applied.error().code() != ErrorCode::kConflict ||
        applied.error().message() != store::kConcurrentTraceAppend) {
      return applied;
    }
    snapshot.ForgetTrace();
  }
}

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
  if (evidence) {
    std::string content = body.value("content", "");
    if (body.value("encoding", "") == "base64") {
      TELIC_ASSIGN_OR_RETURN(content, DecodeCanonicalBase64(content));
    }
    if (ContainsSecretInValue(body) || grounding::ContainsLikelySecret(content) || ContainsSecretInValue(Json(source_refs))) {
      return Reject("Evidence contains a likely credential; redact the value before submission");
    }
  }
  TELIC_RETURN_IF_ERROR(CheckArtifactReferences(snapshot, std::string(domain::Name(type)), body, source_refs));
  if (evidence) {
    for (const auto& ref : StringArray(body, "sourceRefs")) {
      if (ref.rfind("artifact://", 0) != 0) continue;
      auto aid = ArtifactIdFromUri(ref);
      if (!aid || ref != snapshot.Uri(*aid) || !snapshot.Find(*aid)) {
        return Reject(fmt::format("Evidence source reference is missing or belongs to another run: {}", ref));
      }
    }
  } else {
    auto fid = ArtifactIdFromUri(body.value("problemFrameRef", ""));
    const store::ArtifactMeta* frame = fid ? snapshot.Find(*fid) : nullptr;
    if (!frame || body.value("problemFrameRef", "") != snapshot.Uri(*fid) || frame->type != ArtifactType::kProblemFrame) {
      return Reject("ScenarioSpec must reference an existing ProblemFrame in the same run");
    }
    TELIC_ASSIGN_OR_RETURN(const Json* frame_body, snapshot.Body(*frame));
    TELIC_RETURN_IF_ERROR(CheckScenarioSourceMap(body, snapshot.Uri(*fid), *frame_body));
  }
  std::string producer = evidence ? "executor" : "scenario_author";
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::StoredArtifact artifact =
      store::MakeArtifact({id, run.run_id, type, "1.0", producer, "", source_refs, "none", now}, body);
  if (const store::ArtifactMeta* existing = snapshot.Find(id)) {
    if (existing->type == type && existing->schema_version == "1.0" && existing->producer == producer &&
        existing->sha256 == artifact.meta.sha256 && existing->source_refs == source_refs && existing->redaction == "none") {
      TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(run));
      return SubmitResult{run, std::move(action), *existing, std::nullopt};
    }
    return Fail(ErrorCode::kAlreadyExists, fmt::format("Supporting artifact replay conflicts with immutable artifact: {}", id));
  }
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
  } else {
    for (const auto* meta : snapshot.All(ArtifactType::kScenarioSpec)) {
      TELIC_ASSIGN_OR_RETURN(const Json* spec, snapshot.Body(*meta));
      if (spec->value("problemFrameRef", "") == body.value("problemFrameRef", "")) {
        return Fail(ErrorCode::kResourceExhausted, "Only one ScenarioSpec may be stored for the current ProblemFrame");
      }
    }
  }
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
