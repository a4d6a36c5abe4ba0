#include "controller/run_check.h"

#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "controller/broker.h"
#include "controller/views.h"
#include "grounding/secrets.h"

namespace telic::controller {
namespace {

// The Evidence content bound (common.json Text: 32768 UTF-8 bytes).
constexpr size_t kMaxEvidenceContentBytes = 32768;

Result<Json> LatestBody(RunService& service, const std::string& run_id, const std::string& type,
                        std::string* uri = nullptr) {
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, service.store().ListArtifacts(run_id));
  for (auto it = artifacts.rbegin(); it != artifacts.rend(); ++it) {
    if (domain::Name(it->type) != type) continue;
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact stored, service.store().GetArtifact(run_id, it->id));
    if (uri) *uri = store::ArtifactUri(run_id, it->id);
    return Json::parse(stored.canonical_body);
  }
  return Json(nullptr);
}

Status CheckBinding(RunService& service, const CheckRunRequest& request, std::string* plan_uri) {
  if (request.node_id.has_value() == request.task_id.has_value()) {
    return Fail(ErrorCode::kInvalidArgument, "name exactly one of node_id (a WorkPlan node) or task_id (a task "
                                             "awaiting verification)",
                {{"", "custom", "exactly one of node_id and task_id is required"}});
  }
  if (!request.node_id) return Ok();
  TELIC_ASSIGN_OR_RETURN(Json plan, LatestBody(service, request.run_id, "WorkPlan", plan_uri));
  if (plan.is_object()) {
    for (const Json& node : plan.value("nodes", Json::array())) {
      if (node.is_object() && node.value("id", "") == *request.node_id) return Ok();
    }
  }
  return Fail(ErrorCode::kFailedPrecondition,
              fmt::format("node {} is not a node of the run's latest WorkPlan", *request.node_id),
              {{"/node_id", "custom", "no such node in the latest WorkPlan"}});
}

// The run as it is now, not ended: observed Evidence may be stored in any
// phase of a live run (RunService::RecordObservedEvidence).
Result<store::RunRecord> LiveRun(RunService& service, const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, service.store().GetRun(run_id));
  if (run.status != domain::RunStatus::kRunning) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("checks run for a live run; run {} is {}", run_id, run.status));
  }
  return run;
}

Result<BrokerDecision> AuthorizeCommand(RunService& service, const store::RunRecord& run, const std::string& command) {
  std::string envelope_ref;
  TELIC_ASSIGN_OR_RETURN(Json envelope, LatestBody(service, run.run_id, "RunEnvelope", &envelope_ref));
  BrokerDecision decision = EvaluateBrokerAction(run, envelope, envelope_ref, "shell.execute", command);
  if (!decision.allowed) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("shell.execute of this exact command is not allowed by the run's permissions ({}: {})",
                            decision.reason_code, decision.detail.rule.empty() ? decision.summary : decision.detail.rule),
                {{"/command", "custom", "not an exact shell.execute command of the run's contract"}});
  }
  return decision;
}

// Cuts `tail` at its start (on a UTF-8 boundary) to at most `bytes`.
std::string KeepEnd(const std::string& tail, size_t bytes) {
  if (tail.size() <= bytes) return tail;
  size_t start = tail.size() - bytes;
  while (start < tail.size() && (static_cast<unsigned char>(tail[start]) & 0xC0) == 0x80) ++start;
  return tail.substr(start);
}

std::string Binding(const CheckRunRequest& request) {
  return request.node_id ? "node " + *request.node_id : "task " + request.task_id.value_or("");
}

}  // namespace

Json CheckEvidenceBody(const std::string& run_id, const std::string& evidence_id, const std::string& captured_at,
                       const observation::CheckRecord& record, const CheckRunRequest& request) {
  Json content = observation::CheckRecordToJson(record);
  content["binding"] = request.node_id ? Json{{"nodeId", *request.node_id}} : Json{{"taskId", *request.task_id}};
  std::string tail = record.redacted_tail;
  // A tail that still looks like a credential to the Evidence scanner is withheld, not stored.
  if (grounding::ContainsLikelySecret(tail)) tail = "[withheld: the output tail holds a likely credential]";
  std::string text;
  for (size_t keep = tail.size();; keep = keep / 2) {
    content["outputTail"] = KeepEnd(tail, keep);
    content["output"]["storedTailBytes"] = content["outputTail"].get_ref<const std::string&>().size();
    text = content.dump();
    if (text.size() <= kMaxEvidenceContentBytes || keep == 0) break;
  }
  const observation::SandboxOutcome& o = record.outcome;
  std::string end = o.timed_out   ? fmt::format("killed at the {} ms wall-time limit", record.limits.wall_time_ms)
                    : o.cancelled ? std::string("cancelled")
                    : o.signal    ? fmt::format("ended by signal {}", o.signal)
                                  : fmt::format("exit status {}", o.exit_code);
  std::vector<std::string> redactions;
  for (const std::string& category : record.redactions) redactions.push_back("output tail: " + category);
  return {{"schemaVersion", "1.0"},
          {"id", evidence_id},
          {"runId", run_id},
          {"kind", "test"},
          {"capturedAt", captured_at},
          {"summary", fmt::format("telic ran `{}` for {}: {} after {} ms ({}).", record.command.text, Binding(request), end,
                                  o.duration_ms, record.passed() ? "passed" : "failed")},
          {"contentType", "application/vnd.telic.check+json"},
          {"encoding", "utf8"},
          {"content", text},
          {"sourceRefs", Json::array()},
          {"redactions", redactions},
          {"rationaleSummary",
           fmt::format("Observed by telic, not reported by the host: the command ran in {} (read-only system, the work "
                       "tree the only writable place, no network, own PID namespace) within its stated limits.",
                       o.mode == observation::SandboxMode::kBubblewrap ? "a bubblewrap sandbox"
                                                                        : "no sandbox (the operator opted out)")}};
}

Json CheckResultToJson(const CheckRunResult& result, const CheckRunRequest& request) {
  Json check = observation::CheckRecordToJson(result.record);
  check["outputTail"] = result.record.redacted_tail;
  check["binding"] = request.node_id ? Json{{"nodeId", *request.node_id}} : Json{{"taskId", *request.task_id}};
  check["evidenceRef"] = store::ArtifactUri(result.evidence.run_id, result.evidence.id);
  check["provenance"] = "observed";
  return check;
}

Result<CheckRunResult> RunVerificationCheck(RunService& service, const CheckRunRequest& request,
                                            const CheckSettings& settings, const observation::RunControl& control) {
  TELIC_ASSIGN_OR_RETURN(observation::CheckCommand command, observation::ParseCheckCommand(request.command));
  TELIC_RETURN_IF_ERROR(observation::ValidateLimits(request.limits));
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, service.store().GetRun(request.run_id));
  if (request.expected_version && *request.expected_version != run.version) {
    return Fail(ErrorCode::kStaleVersion,
                fmt::format("Stale run version {}; the run is at version {}", *request.expected_version, run.version));
  }
  TELIC_ASSIGN_OR_RETURN(run, LiveRun(service, request.run_id));
  std::string plan_uri;
  TELIC_RETURN_IF_ERROR(CheckBinding(service, request, &plan_uri));
  TELIC_ASSIGN_OR_RETURN(BrokerDecision decision, AuthorizeCommand(service, run, command.text));
  TELIC_RETURN_IF_ERROR(observation::ResolveCheckDirectory(service.repository_root(), request.cwd));
  TELIC_RETURN_IF_ERROR(observation::ProbeSandbox(settings.sandbox));

  observation::CheckRequest check;
  check.command = std::move(command);
  check.repository_root = service.repository_root();
  check.cwd = request.cwd;
  check.protected_paths = settings.protected_paths;
  TELIC_ASSIGN_OR_RETURN(observation::CheckRecord record,
                         observation::RunCheck(check, request.limits, settings.sandbox, control));

  std::string evidence_id = "check-" + service.ids().NewUuid();
  Json body = CheckEvidenceBody(request.run_id, evidence_id, FormatIsoMillis(service.clock().NowMillis()), record,
                                request);
  if (!plan_uri.empty()) body["sourceRefs"].push_back(plan_uri);
  // Stored with provenance observed (producer controller, evidence_observed event).
  TELIC_ASSIGN_OR_RETURN(store::ArtifactMeta evidence, service.RecordObservedEvidence(request.run_id, std::move(body)));
  TELIC_ASSIGN_OR_RETURN(store::RunRecord after, service.store().GetRun(request.run_id));
  return CheckRunResult{std::move(after), std::move(evidence), std::move(record), decision.permission_decision};
}

}  // namespace telic::controller
