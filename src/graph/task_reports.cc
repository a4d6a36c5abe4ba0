// TaskService's reports and verifications: a running task's report and the
// dispatcher's decision on it, the verifier's result, and arbitration
// verdicts (task_service.h).
#include <optional>
#include <variant>

#include <fmt/format.h>

#include "graph/task_scope.h"
#include "graph/task_service.h"

namespace telic::graph {
namespace {

std::string SummaryOf(const reports::Report& report) {
  if (auto* u = std::get_if<reports::UpwardReport>(&report)) return u->notes.value_or("");
  if (auto* e = std::get_if<reports::ExecutionEnvelope>(&report)) return e->task;
  return fmt::format("review {}", reports::ReviewStatusName(std::get<reports::ReviewEnvelope>(report).status));
}

Status RequireRunning(const TaskRecord& t, bool allow_hold = false) {
  if (t.state != domain::TaskState::kRunning) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Task {} is {}, not running; only a dispatched task can do this", t.task_id, t.state));
  }
  if (!allow_hold && t.hold) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Task {} is waiting ({}); resolve that first", t.task_id, *t.hold));
  }
  return Ok();
}

}  // namespace

Status TaskService::Scope::ApplyReportDecision(int index, const reports::Decision& decision, Transition& tr) {
  TaskRecord& t = task(index);
  using reports::Action;
  switch (decision.action) {
    case Action::kRunVerifier:
      t.hold = "awaiting_verification";
      t.pending = {{"rule", decision.rule},
                   {"ablationRequired", decision.ablation_required},
                   {"concernsMustBeWeighed", decision.concerns_must_be_weighed},
                   {"concerns", decision.concerns}};
      break;
    case Action::kRedispatch:
    case Action::kSupplyContext:
      t.retries_used += 1;
      t.hold.reset();
      t.pending = Json::object();
      t.brief = {{"keyTasks", decision.key_tasks}, {"missingContext", decision.missing_context}};
      graph_.Requeue(index);
      SyncState(index);
      break;
    case Action::kEscalateToUser:
      if (decision.task_fails) {
        for (int c : Terminate(index, TaskState::kFailed, decision.reason, "system")) tr.cascaded.push_back(task(c));
      } else {
        t.hold = "awaiting_user";
        t.pending = {{"rule", decision.rule}, {"reason", decision.reason}, {"blockers", decision.blockers}};
      }
      break;
    case Action::kSurfaceBlocker:
      t.hold = "awaiting_user";
      t.pending = {{"rule", decision.rule}, {"reason", decision.reason}, {"blockers", decision.blockers}};
      break;
    case Action::kGateActions: {
      t.hold = "awaiting_approval";
      Json actions = Json::array();
      for (const auto& a : decision.pending_actions) actions.push_back({{"action", a}, {"actionSha256", reports::ActionDigest(a)}});
      t.pending = {{"rule", decision.rule}, {"pendingActions", actions}};
      break;
    }
    case Action::kRouteFindings:
    case Action::kAccept: {
      TELIC_ASSIGN_OR_RETURN(auto completed, Complete(index));
      tr.now_ready = Records(completed.first);
      tr.stories = completed.second;
      break;
    }
  }
  return Ok();
}

Result<ReportOutcome> TaskService::SubmitReport(const std::string& task_id, const reports::Report& report,
                                                std::optional<bool> new_mechanism) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord record, tasks_.GetTask(task_id));
  Scope scope(*this, record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  auto found = scope.Find(task_id);
  if (!found) return Fail(ErrorCode::kConflict, "the task changed while reporting; retry");
  int index = *found;
  TaskRecord& t = scope.task(index);
  TELIC_RETURN_IF_ERROR(RequireRunning(t));
  reports::DispatchContext context{t.retries_allowed, t.retries_used, new_mechanism};
  reports::Decision decision = reports::Decide(report, context);
  t.summary = SummaryOf(report);
  scope.Touch(index);
  scope.AddEvent(index, "report_submitted", "agent",
                 {{"report", reports::ReportToJson(report)}, {"decision", reports::DecisionToJson(decision)}});
  ReportOutcome outcome{{}, report, decision};
  Transition& tr = outcome.transition;
  tr.action = std::string(reports::ActionName(decision.action));
  TELIC_RETURN_IF_ERROR(scope.ApplyReportDecision(index, decision, tr));
  TELIC_RETURN_IF_ERROR(scope.Commit());
  tr.task = scope.task(index);
  for (auto& c : tr.cascaded) c = scope.task(*scope.Find(c.task_id));
  for (auto& r : tr.now_ready) r = scope.task(*scope.Find(r.task_id));
  return outcome;
}

Result<Transition> TaskService::RecordVerification(const VerificationRequest& request) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord record, tasks_.GetTask(request.task_id));
  Scope scope(*this, record.run_id, FormatIsoMillis(clock_.NowMillis()));
  TELIC_RETURN_IF_ERROR(scope.Load());
  int index = *scope.Find(request.task_id);
  TaskRecord& t = scope.task(index);
  TELIC_RETURN_IF_ERROR(RequireRunning(t, true));
  if (t.hold != "awaiting_verification") {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Task {} is not awaiting verification; submit its report first", t.task_id));
  }
  TELIC_RETURN_IF_ERROR(CheckVerificationProvenance(t, request));
  Transition tr;
  Json payload = {{"passed", request.passed},
                  {"evidence", request.evidence},
                  {"provenance", std::string(store::ProvenanceName(request.provenance))}};
  if (request.evidence_ref) payload["evidenceRef"] = *request.evidence_ref;
  if (request.passed) {
    if (t.pending.value("ablationRequired", false) && request.ablation_passed != true) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the ablation check is required for this completion (confidence < 0.7, new mechanism); report "
                  "ablation_passed: true once it passed");
    }
    if (t.pending.value("concernsMustBeWeighed", false) && !request.concerns_addressed) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "every listed concern must be weighed before the work is settled; pass concerns_addressed: true");
    }
    scope.AddEvent(index, "verification_recorded", "system", payload);
    TELIC_ASSIGN_OR_RETURN(auto completed, scope.Complete(index));
    tr.now_ready = scope.Records(completed.first);
    tr.stories = completed.second;
    tr.action = "accept";
  } else {
    scope.AddEvent(index, "verification_recorded", "system", payload);
    if (t.retries_used < t.retries_allowed) {
      t.retries_used += 1;
      t.hold.reset();
      t.pending = Json::object();
      Json key_tasks = Json::array({"the deterministic verifier failed; fix what it reports"});
      for (const auto& e : request.evidence) key_tasks.push_back(e);
      t.brief = {{"keyTasks", key_tasks}, {"missingContext", Json::array()}};
      scope.graph().Requeue(index);
      scope.SyncState(index);
      tr.action = "redispatch";
    } else {
      for (int c : scope.Terminate(index, TaskState::kFailed,
                                   "the deterministic verifier failed and the retry budget is spent", "system")) {
        tr.cascaded.push_back(scope.task(c));
      }
      tr.action = "escalate_to_user";
    }
  }
  TELIC_RETURN_IF_ERROR(scope.Commit());
  tr.task = scope.task(index);
  for (auto& c : tr.cascaded) c = scope.task(*scope.Find(c.task_id));
  for (auto& r : tr.now_ready) r = scope.task(*scope.Find(r.task_id));
  return tr;
}

Result<store::TaskEventRecord> TaskService::ReportVerdict(const std::string& task_id, bool approved,
                                                          const std::string& reasoning) {
  TELIC_ASSIGN_OR_RETURN(TaskRecord t, tasks_.GetTask(task_id));
  TELIC_RETURN_IF_ERROR(RequireRunning(t));
  std::string now = FormatIsoMillis(clock_.NowMillis());
  store::TaskChange change;
  change.now = now;
  // The verdict bumps the task's version so a concurrent completion cannot
  // finalise arbitration without seeing it.
  TaskRecord updated = t;
  updated.version += 1;
  updated.updated_at = now;
  change.updated_tasks.push_back(updated);
  change.events.push_back(
      Event(task_id, t.run_id, "verdict_reported", "agent", {{"approved", approved}, {"reasoning", reasoning}}, now));
  TELIC_RETURN_IF_ERROR(tasks_.Apply(change));
  return change.events.front();
}


}  // namespace telic::graph
