#include "store/task_records.h"

#include <fmt/format.h>

#include "base/json_parse.h"
#include "base/redact.h"
#include "store/records.h"

namespace telic::store {

namespace {
Json Optional(const std::optional<std::string>& value) { return value ? Json(*value) : Json(nullptr); }
std::optional<std::string> OptionalFrom(const Json& json, const char* key) {
  if (!json.contains(key) || json[key].is_null()) return std::nullopt;
  return json[key].get<std::string>();
}
}  // namespace

// Caller-supplied text (names, instructions, briefs, pending decisions,
// summaries, failure and verdict reasons, event payloads, approval actions)
// is redacted wherever a record is rendered, so it is neither stored nor
// returned with a credential in it. Ids, states and digests are left alone:
// approvals bind to the sha256 of the raw action, computed before this.
Json TaskToJson(const TaskRecord& t) {
  return {{"taskId", t.task_id},
          {"runId", Optional(t.run_id)},
          {"parentTaskId", Optional(t.parent_task_id)},
          {"name", RedactedText(t.name)},
          {"instructions", RedactedText(t.instructions)},
          {"role", t.role},
          {"dependsOn", t.depends_on},
          {"state", t.state},
          {"priority", t.priority},
          {"attempts", t.attempts},
          {"retriesAllowed", t.retries_allowed},
          {"retriesUsed", t.retries_used},
          {"depth", t.depth},
          {"subagents",
           {{"spawn", t.subagents.spawn},
            {"maximumChildren", t.subagents.maximum_children},
            {"maximumDepth", t.subagents.maximum_depth}}},
          {"children", t.children},
          {"hold", Optional(t.hold)},
          {"failureReason", RedactedJson(Optional(t.failure_reason))},
          {"failedDependency", Optional(t.failed_dependency)},
          {"brief", RedactedJson(t.brief)},
          {"pending", RedactedJson(t.pending)},
          {"summary", RedactedText(t.summary)},
          {"version", t.version},
          {"createdAt", t.created_at},
          {"updatedAt", t.updated_at}};
}

Result<TaskRecord> TaskFromJson(const Json& j) {
  try {
    TaskRecord t;
    t.task_id = j.at("taskId").get<std::string>();
    t.run_id = OptionalFrom(j, "runId");
    t.parent_task_id = OptionalFrom(j, "parentTaskId");
    t.name = j.at("name").get<std::string>();
    t.instructions = j.at("instructions").get<std::string>();
    t.role = j.at("role").get<std::string>();
    t.depends_on = j.at("dependsOn").get<std::vector<std::string>>();
    auto state = domain::ParseTaskState(j.at("state").get<std::string>(), "/state");
    if (!state) {
      return Fail(ErrorCode::kDataLoss,
                  fmt::format("graph_tasks row {}: state is not readable ({})", t.task_id, state.error().message()));
    }
    t.state = *state;
    t.priority = j.at("priority").get<std::string>();
    t.attempts = j.at("attempts").get<int>();
    t.retries_allowed = j.at("retriesAllowed").get<int>();
    t.retries_used = j.at("retriesUsed").get<int>();
    t.depth = j.at("depth").get<int>();
    const Json& s = j.at("subagents");
    t.subagents = {s.at("spawn").get<bool>(), s.at("maximumChildren").get<int>(), s.at("maximumDepth").get<int>()};
    t.children = j.at("children").get<int>();
    t.hold = OptionalFrom(j, "hold");
    t.failure_reason = OptionalFrom(j, "failureReason");
    t.failed_dependency = OptionalFrom(j, "failedDependency");
    t.brief = j.at("brief");
    t.pending = j.at("pending");
    t.summary = j.at("summary").get<std::string>();
    t.version = j.at("version").get<int64_t>();
    t.created_at = j.at("createdAt").get<std::string>();
    t.updated_at = j.at("updatedAt").get<std::string>();
    return t;
  } catch (const std::exception& ex) {
    return Fail(ErrorCode::kDataLoss, fmt::format("stored task record is unreadable: {}", ex.what()));
  }
}

Json TaskEventToJson(const TaskEventRecord& e) {
  return {{"seq", e.seq},        {"eventId", e.event_id}, {"subjectId", e.subject_id}, {"runId", Optional(e.run_id)},
          {"kind", e.kind},      {"actor", e.actor},      {"payload", RedactedJson(e.payload)},      {"createdAt", e.created_at}};
}

Json StoryToJson(const StoryRecord& s) {
  return {{"storyId", s.story_id},
          {"runId", Optional(s.run_id)},
          {"name", RedactedText(s.name)},
          {"status", s.status},
          {"arbitrationTaskId", s.arbitration_task_id},
          {"evaluatorTaskIds", s.evaluator_task_ids},
          {"version", s.version},
          {"createdAt", s.created_at},
          {"updatedAt", s.updated_at}};
}

Json ApprovalToJson(const ApprovalRecord& a) {
  return {{"approvalId", a.approval_id},     {"taskId", a.task_id},
          {"action", RedactedText(a.action)}, {"actionSha256", a.action_sha256},
          {"policyVersion", a.policy_version}, {"bindingSha256", a.binding_sha256},
          {"userDecision", RedactedText(a.user_decision)}, {"createdAt", a.created_at},
          {"usedAt", Optional(a.used_at)}};
}

// The stored body omits seq (the row's own column).
std::string StoredTaskBody(const TaskRecord& task) { return CanonicalJson(TaskToJson(task)); }

Result<TaskRecord> TaskFromStored(const std::string& text, int64_t seq) {
  auto parsed = ParseStoredJson(text);
  if (!parsed) return Fail(ErrorCode::kDataLoss, "stored task record is not JSON: " + parsed.error().message());
  Json body = std::move(*parsed);
  TELIC_ASSIGN_OR_RETURN(TaskRecord task, TaskFromJson(body));
  task.seq = seq;
  return task;
}

Result<StoryRecord> StoryFromStored(const std::string& text) {
  try {
    Json j = StoredJsonOrThrow(text);
    StoryRecord s;
    s.story_id = j.at("storyId").get<std::string>();
    if (!j.at("runId").is_null()) s.run_id = j["runId"].get<std::string>();
    s.name = j.at("name").get<std::string>();
    s.status = j.at("status").get<std::string>();
    s.arbitration_task_id = j.at("arbitrationTaskId").get<std::string>();
    s.evaluator_task_ids = j.at("evaluatorTaskIds").get<std::vector<std::string>>();
    s.version = j.at("version").get<int64_t>();
    s.created_at = j.at("createdAt").get<std::string>();
    s.updated_at = j.at("updatedAt").get<std::string>();
    return s;
  } catch (const std::exception& ex) {
    return Fail(ErrorCode::kDataLoss, fmt::format("stored story record is unreadable: {}", ex.what()));
  }
}

Result<ApprovalRecord> ApprovalFromStored(const std::string& text, std::optional<std::string> used_at) {
  try {
    Json j = StoredJsonOrThrow(text);
    ApprovalRecord a;
    a.approval_id = j.at("approvalId").get<std::string>();
    a.task_id = j.at("taskId").get<std::string>();
    a.action = j.at("action").get<std::string>();
    a.action_sha256 = j.at("actionSha256").get<std::string>();
    a.policy_version = j.at("policyVersion").get<std::string>();
    a.binding_sha256 = j.at("bindingSha256").get<std::string>();
    a.user_decision = j.at("userDecision").get<std::string>();
    a.created_at = j.at("createdAt").get<std::string>();
    a.used_at = std::move(used_at);
    return a;
  } catch (const std::exception& ex) {
    return Fail(ErrorCode::kDataLoss, fmt::format("stored approval is unreadable: {}", ex.what()));
  }
}

std::string StoredEventPayload(const TaskEventRecord& event) { return CanonicalJson(RedactedJson(event.payload)); }

std::string StoredApprovalBody(ApprovalRecord a) {
  a.used_at.reset();  // the mutable column lives outside the immutable body
  return CanonicalJson(ApprovalToJson(a));
}

}  // namespace telic::store
