// RunService::SubmitArtifact and its phase artifacts; the other submissions
// (supporting artifacts, clarification answers) are in submit_supporting.cc.
#include <algorithm>
#include <functional>
#include <optional>
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


// Makes one trace event of the submission (RunService::NewEvent, bound to the
// run and the time of the submission).
using EventMaker = std::function<store::TraceEventRecord(std::string actor, std::string type, std::string summary)>;

// The clarification rules of a phase artifact: a phase that does not accept
// another ClarificationRequest refuses one over the run's budget, and a
// resumed phase artifact cites the clarification request and answer it
// resumes from (PROTOCOL §10.5). Returns whether the artifact is a
// ClarificationRequest over the budget.
Result<bool> CheckClarificationBoundary(const RunSnapshot& snapshot, const store::RunRecord& run,
                                        std::optional<ArtifactType> kind, const std::vector<std::string>& source_refs) {
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
  return clarification_exhausted;
}

struct Escalation {
  Topology topology;
  Phase phase;
  const char* reason;
};

// A micro run's UserReport with a user_reported claim, or a standard run's
// ReleaseAudit with a user_reported basis, is refused by escalating the run.
std::optional<Escalation> EscalationForUserReported(const store::RunRecord& run, std::optional<ArtifactType> kind,
                                                    const Json& body) {
  if (run.topology == Topology::kMicro && kind == ArtifactType::kUserReport) {
    for (const Json& claim : body.value("completionClaims", Json::array())) {
      if (claim.value("status", "") == "user_reported") {
        return Escalation{Topology::kStandard, Phase::kAgent1Review, "MICRO_USER_REPORTED"};
      }
    }
  }
  if (run.topology == Topology::kStandard && kind == ArtifactType::kReleaseAudit) {
    for (const Json& entry : body.value("claimEvidenceMatrix", Json::array())) {
      if (entry.value("basis", "") == "user_reported") {
        return Escalation{Topology::kForensic, Phase::kAgent5Audit, "STANDARD_USER_REPORTED_CLAIMS"};
      }
    }
  }
  return std::nullopt;
}

struct WorkResultChecks {
  std::vector<Json> permission_decisions;
  std::optional<bool> execution_complete;  // set for a WorkResult only
};

// A WorkResult's permission decisions and whether it completes the plan.
Result<WorkResultChecks> CheckWorkResult(RunSnapshot& snapshot, std::optional<ArtifactType> kind, const Json& body) {
  WorkResultChecks checks;
  if (kind == ArtifactType::kWorkResult) {
    TELIC_ASSIGN_OR_RETURN(checks.permission_decisions, WorkResultPermissionDecisions(snapshot, body));
    TELIC_ASSIGN_OR_RETURN(ExecutionProgress progress, ComputeExecutionProgress(snapshot, &body));
    checks.execution_complete = progress.remaining_after == 0;
  }
  return checks;
}

// The run record after `transition`, one version on; a topology change
// spends one of the run's escalations.
Result<store::RunRecord> NextRunRecord(const store::RunRecord& run, const Transition& transition, const std::string& now) {
  store::RunRecord next = transition.run;
  next.version = run.version + 1;
  next.updated_at = now;
  if (next.topology != run.topology) {
    if (run.escalation_count >= kMaxEscalationsPerRun) return Fail(ErrorCode::kResourceExhausted, "escalation budget exhausted");
    next.escalation_count = run.escalation_count + 1;
  }
  return next;
}

// The permission checks that authorized the artifact at `uri`, then telic's
// own evidence of it (provenance observed): these events come before the
// submission's, so a terminal report's event stays the last. Returns the
// observed artifacts, which are stored after the submitted one.
std::vector<store::StoredArtifact> AppendCheckedAndObserved(store::Change& change, const RunSnapshot& snapshot,
                                                            const std::string& uri,
                                                            const std::vector<Json>& permission_decisions,
                                                            ObservedSubmission& observed, const EventMaker& new_event) {
  for (const Json& decision : permission_decisions) {
    auto event = new_event("controller", "permission_checked", PermissionEventSummary(decision));
    event.input_refs = decision.value("policyRefs", std::vector<std::string>{});
    event.output_refs = {uri};  // PROTOCOL §17.1: the checks name the artifact they authorized
    event.permission_decision = decision;  // the store redacts it and says so (RedactTraceEvent)
    change.events.push_back(std::move(event));
  }
  std::vector<store::StoredArtifact> observed_artifacts;
  for (size_t i = 0; i < observed.artifacts.size(); ++i) {
    auto event = new_event("controller", std::string(store::kEvidenceObservedEvent), observed.summaries[i]);
    event.input_refs = {uri};
    event.output_refs = {snapshot.Uri(observed.artifacts[i].meta.id)};
    observed_artifacts.push_back(std::move(observed.artifacts[i]));
    change.events.push_back(std::move(event));
  }
  return observed_artifacts;
}

std::string PhaseEventType(bool clarification_exhausted, std::optional<ArtifactType> kind) {
  return clarification_exhausted                     ? "budget_consumed"
         : kind == ArtifactType::kClarificationRequest ? "clarification_requested"
                                                       : "phase_submitted";
}

// An accepted ProblemFrame of a micro run that goes on to review or execute
// brings the run's companion pack (BuildMicroPack).
Status AppendMicroPack(store::Change& change, RunSnapshot& snapshot, const store::RunRecord& run,
                       const store::RunRecord& next, std::optional<ArtifactType> kind, const std::string& id,
                       const Json& body, const std::string& now) {
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
  return Ok();
}

// A passing QualityReview of a micro or standard run without a receipt audit
// yet brings one (CertifyReview), and digest_verified when it verified.
Status AppendReceipt(store::Change& change, RunSnapshot& snapshot, const store::RunRecord& run,
                     std::optional<ArtifactType> kind, const std::string& id, const Json& body, const std::string& uri,
                     const std::string& now, const EventMaker& new_event) {
  if ((run.topology == Topology::kMicro || run.topology == Topology::kStandard) && kind == ArtifactType::kQualityReview &&
      body.value("decision", "") == "pass" && !snapshot.Latest(ArtifactType::kReceiptAudit)) {
    TELIC_ASSIGN_OR_RETURN(Receipt receipt, CertifyReview(snapshot, id, body, now));
    TELIC_RETURN_IF_ERROR(ValidateArtifactBody(std::string(domain::Name(ArtifactType::kReceiptAudit)), receipt.artifact.body));
    change.artifacts.push_back(store::MakeArtifact({receipt.artifact.id, run.run_id, ArtifactType::kReceiptAudit, "1.0", "controller", "",
                                                    receipt.artifact.source_refs, "none", now},
                                                   receipt.artifact.body));
    if (receipt.verified) {
      auto digest = new_event("controller", "digest_verified", DigestSummaryForRefs(receipt.verified_refs));
      digest.input_refs = receipt.verified_refs;
      digest.output_refs = {uri};
      change.events.push_back(std::move(digest));
    }
  }
  return Ok();
}

// A micro run's QualityReview that moved the run to standard records why.
void AppendMicroEscalation(store::Change& change, const store::RunRecord& run, const store::RunRecord& next,
                           std::optional<ArtifactType> kind, const Json& body, const std::string& uri,
                           const EventMaker& new_event) {
  if (run.topology == Topology::kMicro && next.topology == Topology::kStandard && kind == ArtifactType::kQualityReview) {
    std::string reason = body.value("decision", "") == "remediate" ? "MICRO_SPOT_REMEDIATE" : "MICRO_SPOT_PARTIAL";
    auto escalated = new_event("controller", "topology_escalated", reason);
    escalated.input_refs = {uri};
    escalated.output_refs = {uri};
    change.events.push_back(std::move(escalated));
  }
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
  TELIC_ASSIGN_OR_RETURN(bool clarification_exhausted, CheckClarificationBoundary(snapshot, run, kind, source_refs));
  TELIC_RETURN_IF_ERROR(CheckArtifactReferences(snapshot, type, body, source_refs));
  if (std::optional<Escalation> escalation = EscalationForUserReported(run, kind, body)) {
    return EscalateByRejection(run, uri, escalation->topology, escalation->phase, escalation->reason);
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
  TELIC_ASSIGN_OR_RETURN(WorkResultChecks work, CheckWorkResult(snapshot, kind, body));
  TELIC_ASSIGN_OR_RETURN(Transition transition,
                         clarification_exhausted ? Result<Transition>(ClarificationBudgetExhausted(run))
                                                 : AdvanceRun(run, type, body, work.execution_complete));
  TELIC_ASSIGN_OR_RETURN(store::RunRecord next, NextRunRecord(run, transition, now));
  store::Change change;
  change.run = next;
  std::string producer = ProducerFor(run, kind);
  // Every type a phase accepts is an artifact type: AdvanceRun refused any other.
  change.artifacts.push_back(
      store::MakeArtifact({id, run.run_id, *kind, "1.0", producer, "", source_refs, "none", now}, body));
  store::RunRecord event_run = next;
  event_run.phase = run.phase;  // events carry the phase the artifact was submitted in
  EventMaker new_event = [&](std::string actor, std::string event_type, std::string summary) {
    return NewEvent(event_run, std::move(actor), std::move(event_type), std::move(summary), now);
  };
  std::vector<store::StoredArtifact> observed_artifacts =
      AppendCheckedAndObserved(change, snapshot, uri, work.permission_decisions, observed, new_event);
  auto main_event = new_event(producer, PhaseEventType(clarification_exhausted, kind), transition.summary);
  main_event.input_refs = source_refs;
  main_event.output_refs = {uri};
  change.events.push_back(std::move(main_event));
  for (auto& artifact : observed_artifacts) change.artifacts.push_back(std::move(artifact));
  TELIC_RETURN_IF_ERROR(AppendMicroPack(change, snapshot, run, next, kind, id, body, now));
  TELIC_RETURN_IF_ERROR(AppendReceipt(change, snapshot, run, kind, id, body, uri, now, new_event));
  AppendMicroEscalation(change, run, next, kind, body, uri, new_event);
  snapshot.Release();  // so the run's cached index can take the append in place (ArtifactIndexCache)
  TELIC_RETURN_IF_ERROR(store_.ApplyChange(run.run_id, run.version, change));
  TELIC_ASSIGN_OR_RETURN(Json action, NextActionFor(next));
  std::optional<Json> note = observed.note.is_null() ? std::nullopt : std::optional<Json>(std::move(observed.note));
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

}  // namespace telic::controller
