#include "mcp/lean_profile.h"

#include "base/sha256.h"
#include "controller/views.h"
#include "schema/compact_shape.h"
#include "schema/host_schemas.h"

namespace telic::mcp {
namespace {

thread_local Profile t_profile = Profile::kDefault;
thread_local bool t_session_active = false;
thread_local std::optional<Profile> t_session_profile;

constexpr std::string_view kSchemaScheme = "schema://";
// Written by telic_ground_context, never by a model: no shape is sent for it.
constexpr std::string_view kGroundedType = "ContextManifest";

bool IsStateChange(const std::string& tool) {
  return tool == "telic_start_run" || tool == "telic_submit_artifact" || tool == "telic_ground_context" ||
         tool == "telic_cancel_run" || tool == "telic_run_check";
}

// The artifact types a NextAction asks for or admits.
std::set<std::string> OfferedTypes(const Json& action) {
  std::set<std::string> types;
  if (!action.is_object() || action.value("kind", "") != "phase") return types;
  if (auto type = action.find("requiredOutputType"); type != action.end() && type->is_string()) {
    types.insert(type->get<std::string>());
  }
  if (auto extra = action.find("additionalOutputSchemas"); extra != action.end() && extra->is_object()) {
    for (const auto& [type, schema] : extra->items()) types.insert(type);
  }
  return types;
}

Result<Json> LeanSchema(const std::string& type, bool with_shape) {
  TELIC_ASSIGN_OR_RETURN(Json reference, SchemaReference(type));
  if (with_shape) {
    TELIC_ASSIGN_OR_RETURN(const std::string* shape,
                           schema::ArtifactCompactShape(type, schema::ShapeDefinitions::kBeyondGlossary));
    reference["shape"] = *shape;
  }
  return reference;
}

// `action` with each artifact schema as its reference, and the shapes of `shaped`.
Result<Json> LeanAction(Json action, const std::set<std::string>& shaped) {
  if (!action.is_object() || action.value("kind", "") != "phase") return action;
  if (auto type = action.find("requiredOutputType"); type != action.end() && type->is_string()) {
    std::string name = type->get<std::string>();
    TELIC_ASSIGN_OR_RETURN(action["requiredOutputSchema"], LeanSchema(name, shaped.contains(name)));
  }
  if (auto extra = action.find("additionalOutputSchemas"); extra != action.end() && extra->is_object()) {
    for (auto it = extra->begin(); it != extra->end(); ++it) {
      TELIC_ASSIGN_OR_RETURN(it.value(), LeanSchema(it.key(), shaped.contains(it.key())));
    }
  }
  return action;
}

// The ID of `ref` when it names an artifact of run `run_id`
// ("artifact://RUN/ID"), or nullopt.
std::optional<std::string> RunArtifactId(const Json& ref, const std::string& run_id) {
  if (!ref.is_string() || run_id.empty()) return std::nullopt;
  const std::string& text = ref.get_ref<const std::string&>();
  const std::string prefix = "artifact://" + run_id + "/";
  if (!text.starts_with(prefix) || text.size() == prefix.size()) return std::nullopt;
  return text.substr(prefix.size());
}

// `record` with its `refs_key` array as `ids_key`, the IDs of the
// artifacts it references, when every one is an artifact of run `run_id`
// ("artifact://RUN/ID"); as it is otherwise.
Json RefsAsIds(Json record, const char* refs_key, const char* ids_key, const std::string& run_id) {
  if (!record.is_object() || !record.contains(refs_key) || !record[refs_key].is_array()) return record;
  Json ids = Json::array();
  for (const Json& ref : record[refs_key]) {
    auto id = RunArtifactId(ref, run_id);
    if (!id) return record;
    ids.push_back(*id);
  }
  record.erase(refs_key);
  record[ids_key] = std::move(ids);
  return record;
}

// A NextAction with its `inputRefs` of the run as `inputIds`.
Json InputsAsIds(Json action) {
  if (!action.is_object()) return action;
  const std::string run_id = action.value("runId", "");
  return RefsAsIds(std::move(action), "inputRefs", "inputIds", run_id);
}

// An artifact record (or its metadata) with its `sourceRefs` of the run as `sourceIds`.
Json SourcesAsIds(Json record) {
  if (!record.is_object()) return record;
  const std::string run_id = record.value("runId", "");
  return RefsAsIds(std::move(record), "sourceRefs", "sourceIds", run_id);
}

// The members of a replay step, in the order of a lean step row.
constexpr const char* kReplayStepColumns[] = {"sequence", "artifactId", "artifactType", "phase", "digestStatus"};

// A replay step as a row of kReplayStepColumns, or nullopt when it has any
// other member (its `artifactRef` of the run counts as `artifactId`).
std::optional<Json> ReplayStepRow(const Json& step, const std::string& run_id) {
  if (!step.is_object()) return std::nullopt;
  Json members = step;
  if (auto ref = members.find("artifactRef"); ref != members.end()) {
    auto id = RunArtifactId(*ref, run_id);
    if (!id) return std::nullopt;
    members.erase(ref);
    members["artifactId"] = *id;
  }
  Json row = Json::array();
  for (const char* column : kReplayStepColumns) {
    auto value = members.find(column);
    if (value == members.end()) return std::nullopt;
    row.push_back(*value);
  }
  if (members.size() != row.size()) return std::nullopt;
  return row;
}

// A replay report with its steps as rows under `stepColumns`; as it is when
// any step does not fit the columns.
Json ReplayStepsAsRows(Json report) {
  if (!report.is_object() || !report.contains("steps") || !report["steps"].is_array()) return report;
  const std::string run_id = report.value("runId", "");
  Json rows = Json::array();
  for (const Json& step : report["steps"]) {
    auto row = ReplayStepRow(step, run_id);
    if (!row) return report;
    rows.push_back(std::move(*row));
  }
  report["stepColumns"] = Json::array();
  for (const char* column : kReplayStepColumns) report["stepColumns"].push_back(column);
  report["steps"] = std::move(rows);
  return report;
}

// The members a lean NextAction always carries: its identity and what it
// asks for. A schema member equal to the answered action's names the same
// types, so it carries no shape and is left out like any other.
bool AlwaysSent(const std::string& member) {
  return member == "id" || member == "kind" || member == "phase" || member == "requiredOutputType";
}

// `action` less the members equal to `answered`'s, which `unchanged` names.
Json ActionChanges(Json action, const Json& answered) {
  if (!action.is_object() || !answered.is_object()) return action;
  Json unchanged = Json::array();
  for (auto it = action.begin(); it != action.end();) {
    if (!AlwaysSent(it.key()) && answered.contains(it.key()) && answered[it.key()] == it.value()) {
      unchanged.push_back(it.key());
      it = action.erase(it);
    } else {
      ++it;
    }
  }
  if (!unchanged.empty()) action["unchanged"] = std::move(unchanged);
  return action;
}

// `record` without its `key` when the result's run changes `run` hold the
// same value as `run_key`: a lean state change says each fact once (telic
// stamps an action with the run's last update, and stores an artifact in
// its run).
Json SaidByRun(Json record, const char* key, const Json& run, const char* run_key) {
  if (!record.is_object() || !run.is_object() || !record.contains(key) || !run.contains(run_key)) return record;
  if (run[run_key] == record[key]) record.erase(key);
  return record;
}

// The members of a NextAction telic_get_run names in the lean profile (the
// whole action is telic_get_next_action's).
Json ActionSummary(const Json& action) {
  Json summary = Json::object();
  for (const char* key : {"id", "kind", "phase", "requiredOutputType", "status", "reportRef", "clarificationRequestRef"}) {
    if (action.contains(key)) summary[key] = action[key];
  }
  return summary;
}

// The run's state fields and every member of `after` that differs from `before`.
Json RunChanges(const Json& before, const Json& after) {
  if (!before.is_object() || !after.is_object()) return after;
  Json changes = Json::object();
  for (const char* key : {"runId", "version", "status", "phase"}) {
    if (after.contains(key)) changes[key] = after[key];
  }
  for (const auto& [key, value] : after.items()) {
    if (!before.contains(key) || before[key] != value) changes[key] = value;
  }
  return changes;
}

}  // namespace

std::optional<Profile> ProfileNamed(std::string_view name) {
  if (name == "default") return Profile::kDefault;
  if (name == "lean") return Profile::kLean;
  return std::nullopt;
}

std::string_view ProfileName(Profile profile) { return profile == Profile::kLean ? "lean" : "default"; }

std::optional<Profile> ProfileRequestedAt(const Json& params) {
  // The key holds a '/', which a JSON pointer would have to escape: walked by hand.
  const Json* node = &params;
  for (const char* key : {"capabilities", "experimental", kProfileCapability, "name"}) {
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    node = &(*node)[key];
  }
  if (!node->is_string()) return std::nullopt;
  return ProfileNamed(node->get<std::string>());
}

Profile CurrentProfile() { return t_profile; }

ProfileScope::ProfileScope(Profile profile) : previous_(t_profile) { t_profile = profile; }
ProfileScope::~ProfileScope() { t_profile = previous_; }

SessionProfileScope::SessionProfileScope(std::optional<Profile> requested)
    : previous_active_(t_session_active), previous_(t_session_profile) {
  t_session_active = true;
  t_session_profile = requested;
}
SessionProfileScope::~SessionProfileScope() {
  t_session_active = previous_active_;
  t_session_profile = previous_;
}
bool SessionProfileScope::Active() { return t_session_active; }
std::optional<Profile> SessionProfileScope::Requested() { return t_session_profile; }

std::string SchemaDigest(std::string_view schema_text) {
  return "sha256:" + Sha256Hex(schema_text).substr(0, kSchemaDigestHexDigits);
}

std::string SchemaUri(std::string_view type) { return std::string(kSchemaScheme) + std::string(type); }

std::optional<std::string> SchemaUriType(std::string_view uri) {
  if (!uri.starts_with(kSchemaScheme) || uri.size() == kSchemaScheme.size()) return std::nullopt;
  return std::string(uri.substr(kSchemaScheme.size()));
}

Result<Json> SchemaReference(std::string_view type) {
  TELIC_ASSIGN_OR_RETURN(const schema::HostSchema* schema, schema::ArtifactHostSchema(type));
  return Json{{"uri", SchemaUri(type)}, {"digest", SchemaDigest(schema->compact())}};
}

std::optional<LeanBefore> LeanStateBefore(controller::RunService& service, const std::string& tool,
                                          const Json& arguments) {
  if (!IsStateChange(tool)) return std::nullopt;
  LeanBefore before;
  if (tool == "telic_start_run") return before;
  auto run_id = arguments.find("run_id");
  if (run_id == arguments.end() || !run_id->is_string()) return std::nullopt;
  auto detail = service.GetRun(run_id->get<std::string>());
  if (!detail) return std::nullopt;
  before.run = controller::RunToJson(detail->run);
  before.offered = OfferedTypes(detail->next_action);
  before.action = std::move(detail->next_action);
  for (const auto& meta : detail->artifacts) before.stored.insert(std::string(domain::Name(meta.type)));
  return before;
}

Result<Json> LeanPayload(const std::string& tool, Json payload, const std::optional<LeanBefore>& before) {
  // The stored artifact of a submission, a read or a check.
  for (const char* stored : {"artifact", "evidence"}) {
    if (payload.contains(stored)) payload[stored] = SourcesAsIds(std::move(payload[stored]));
  }
  if (tool == "telic_replay_run" && payload.contains("report")) {
    payload["report"] = ReplayStepsAsRows(std::move(payload["report"]));
    return payload;
  }
  if (tool == "telic_get_run" && payload.contains("nextAction")) {
    payload["nextAction"] = ActionSummary(payload["nextAction"]);
    return payload;
  }
  std::set<std::string> shaped;
  if (before && payload.contains("nextAction")) {
    std::set<std::string> stored = before->stored;
    if (payload.contains("artifact") && payload["artifact"].is_object()) stored.insert(payload["artifact"].value("type", ""));
    for (const std::string& type : OfferedTypes(payload["nextAction"])) {
      if (!before->offered.contains(type) && !stored.contains(type) && type != kGroundedType) shaped.insert(type);
    }
  }
  if (before && payload.contains("run")) {
    payload["run"] = RunChanges(before->run, payload["run"]);
    for (const char* stored : {"artifact", "evidence"}) {
      if (payload.contains(stored)) payload[stored] = SaidByRun(std::move(payload[stored]), "runId", payload["run"], "runId");
    }
  }
  if (payload.contains("nextAction")) {
    Json action = InputsAsIds(std::move(payload["nextAction"]));
    if (before) {
      action = ActionChanges(std::move(action), InputsAsIds(before->action));
      if (payload.contains("run")) action = SaidByRun(std::move(action), "createdAt", payload["run"], "updatedAt");
    }
    TELIC_ASSIGN_OR_RETURN(action, LeanAction(std::move(action), shaped));
    if (tool == "telic_start_run" && action.is_object()) action["shapeGlossary"] = schema::ArtifactShapeGlossary().text;
    payload["nextAction"] = std::move(action);
  }
  return payload;
}

}  // namespace telic::mcp
