// The run's one bounded clarification as a multi round-trip request
// (2026-07-28 basic/patterns/mrtr + client/elicitation; docs/API.md
// "Clarification as a multi round-trip request"; D-MCPB1..D-MCPB3).
//
// Only telic_get_next_action on a run awaiting clarification answers with an
// InputRequiredResult, and only for a 2026-07-28 request whose client
// declares form elicitation. The retry (the same call with inputResponses and
// the requestState telic issued) records the answer by calling
// telic_submit_artifact's clarification path, so the artifacts and trace
// events are those of today's clarification submission.
#include <fmt/format.h>

#include <filesystem>
#include <mutex>

#include "base/json_parse.h"
#include "controller/run_service.h"
#include "mcp/jsonrpc.h"
#include "mcp/request_state.h"
#include "mcp/server.h"

namespace telic::mcp {

// The run as the clarification round trip sees it: the record, its current
// action id, and its latest ClarificationRequest when it awaits one.
struct ClarificationState {
  store::RunRecord run;
  std::string action_id;
  std::optional<store::StoredArtifact> request;
};

namespace {

constexpr const char* kClarificationTool = "telic_get_next_action";
constexpr const char* kSubmitTool = "telic_submit_artifact";
constexpr const char* kInputKey = "clarification";

std::string Refusal(const Json& id, std::string_view reason, std::string_view message) {
  return ErrorResponse(id, kInvalidParams, fmt::format("Invalid params: {}", message), Json{{"reason", reason}});
}

// The form elicitation of a ClarificationRequest: one required single-select
// string `choice` whose values are the request's choice ids (titled by label).
Json ClarificationElicitation(const Json& request) {
  Json one_of = Json::array();
  std::string message = request.value("question", "");
  for (const Json& choice : request.value("responseChoices", Json::array())) {
    one_of.push_back({{"const", choice.value("id", "")}, {"title", choice.value("label", "")}});
    message += fmt::format("\n- {}: {}", choice.value("label", ""), choice.value("consequence", ""));
  }
  Json choice_schema = {{"type", "string"},
                        {"title", "Choice"},
                        {"description", request.value("responseConstraints", "")},
                        {"oneOf", std::move(one_of)}};
  return {{"method", "elicitation/create"},
          {"params",
           {{"mode", "form"},
            {"message", std::move(message)},
            {"requestedSchema",
             {{"type", "object"}, {"properties", {{"choice", std::move(choice_schema)}}}, {"required", {"choice"}}}}}}};
}

// Reads the whole run only when it awaits clarification or a requestState
// must be checked (`need_run`); otherwise the next action alone says there is
// nothing to ask.
Result<ClarificationState> LoadClarificationState(controller::RunService& service, const std::string& run_id, bool need_run) {
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> action, service.GetNextAction(run_id));
  if (!need_run && action->value("kind", "") != "clarification") return ClarificationState{};
  TELIC_ASSIGN_OR_RETURN(controller::RunDetail detail, service.GetRun(run_id));
  ClarificationState state{detail.run, detail.next_action.value("id", ""), std::nullopt};
  if (detail.run.status != domain::RunStatus::kAwaitingClarification) return state;
  for (auto it = detail.artifacts.rbegin(); it != detail.artifacts.rend(); ++it) {
    if (it->type != domain::ArtifactType::kClarificationRequest) continue;
    TELIC_ASSIGN_OR_RETURN(state.request, service.GetArtifact(run_id, it->id));
    break;
  }
  return state;
}

// The key file's directory (a PostgreSQL-backed server may not have created
// its state directory yet), private to this user.
void EnsurePrivateDirectory(const std::string& key_file) {
  std::filesystem::path parent = std::filesystem::path(key_file).parent_path();
  std::error_code ec;
  if (parent.empty() || std::filesystem::exists(parent, ec)) return;
  if (std::filesystem::create_directories(parent, ec)) {
    std::filesystem::permissions(parent, std::filesystem::perms::owner_all, ec);
  }
}

}  // namespace

void Server::set_request_state_key_file(std::string path) {
  std::lock_guard lock(signer_mutex_);
  key_file_ = std::move(path);
  signer_.reset();
}

Result<const RequestStateSigner*> Server::Signer() {
  std::lock_guard lock(signer_mutex_);
  if (!signer_) {
    if (key_file_.empty()) return Fail(ErrorCode::kFailedPrecondition, "no request-state key is configured");
    EnsurePrivateDirectory(key_file_);
    TELIC_ASSIGN_OR_RETURN(RequestStateKey key, LoadOrCreateRequestStateKey(key_file_));
    static SystemClock clock;
    signer_ = std::make_unique<RequestStateSigner>(key, clock);
  }
  return signer_.get();
}

std::optional<std::string> Server::ClarificationRoundTrip(const Json& id, const std::string& name, const Json* arguments,
                                                          const Json& params, const RequestContext& context) {
  bool has_state = params.contains("requestState"), has_responses = params.contains("inputResponses");
  if (!has_state && !has_responses && (name != kClarificationTool || !context.SupportsFormElicitation())) return std::nullopt;
  if (name != kClarificationTool) {
    return Refusal(id, "other_tool", fmt::format("telic issues requestState and inputRequests only for {}", kClarificationTool));
  }
  if (has_responses && !has_state) return Refusal(id, "missing_state", "inputResponses require the requestState telic issued");
  if (has_state && !params["requestState"].is_string()) return Refusal(id, "malformed", "requestState must be a string");
  if (!arguments || !arguments->is_object() || !arguments->contains("run_id") || !(*arguments)["run_id"].is_string()) {
    if (has_state) return Refusal(id, "other_run", "requestState needs arguments.run_id naming its run");
    return std::nullopt;  // the tool reports the invalid arguments
  }
  std::string run_id = (*arguments)["run_id"].get<std::string>();
  auto state = LoadClarificationState(service_, run_id, has_state);
  if (!state) {
    if (has_state) return Refusal(id, "other_run", fmt::format("requestState names no stored run {}", run_id));
    return std::nullopt;  // the tool reports the missing run
  }
  if (!has_state && !state->request) return std::nullopt;  // nothing to ask: today's result
  auto signer = Signer();
  if (!signer) return ErrorResponse(id, kInternalError, fmt::format("Internal error: {}", signer.error().message()));
  if (has_state) {
    auto verified = (*signer)->Verify(params["requestState"].get<std::string>(),
                                      {kClarificationTool, run_id, state->action_id, state->run.version});
    if (!verified) return Refusal(id, verified.error().reason, fmt::format("requestState refused: {}", verified.error().message));
    if (!state->request || state->request->meta.id != verified->request_artifact_id) {
      return Refusal(id, "replayed", "requestState names a clarification the run no longer awaits");
    }
    if (has_responses) {
      if (auto answered = AnswerClarification(id, params["inputResponses"], *state)) return answered;
    }
  }
  if (!state->request || !context.SupportsFormElicitation()) return std::nullopt;  // nothing to ask: today's result
  auto request = ParseStoredJson(state->request->canonical_body);
  if (!request) return ErrorResponse(id, kInternalError, fmt::format("Internal error: {}", request.error().message()));
  std::string token = (*signer)->Issue({kClarificationTool, run_id, state->action_id, state->run.version,
                                        state->request->meta.id, 0});
  return ResultResponse(id, ModernResult({{"resultType", "input_required"},
                                          {"inputRequests", {{kInputKey, ClarificationElicitation(*request)}}},
                                          {"requestState", token}}));
}

std::optional<std::string> Server::AnswerClarification(const Json& id, const Json& responses,
                                                       const ClarificationState& state) {
  if (!responses.is_object()) return Refusal(id, "malformed", "inputResponses must be an object");
  if (!responses.contains(kInputKey)) return std::nullopt;  // unanswered: asked again by the caller
  const Json& answer = responses[kInputKey];
  std::string action = answer.is_object() && answer.contains("action") && answer["action"].is_string()
                           ? answer["action"].get<std::string>() : "";
  if (action != "accept" && action != "decline" && action != "cancel") {
    return Refusal(id, "malformed", "inputResponses.clarification must be an ElicitResult with action accept, decline or cancel");
  }
  Json get_arguments = {{"run_id", state.run.run_id}};
  if (action != "accept") {  // the user chose nothing: today's clarification action, nothing stored
    auto result = CallTool(kClarificationTool, &get_arguments);
    return ResultResponse(id, ModernResult(std::move(*result)));
  }
  const Json content = answer.value("content", Json());
  if (!content.is_object() || !content.contains("choice") || !content["choice"].is_string()) {
    return Refusal(id, "malformed", "inputResponses.clarification.content.choice must be a string");
  }
  // The same path as a host's telic_submit_artifact with clarification_response.
  Json submit = {{"run_id", state.run.run_id},
                 {"action_id", state.action_id},
                 {"expected_run_version", state.run.version},
                 {"clarification_response", content["choice"]}};
  auto submitted = CallToolPayload(kSubmitTool, &submit);
  if (submitted->is_error) return ResultResponse(id, ModernResult(ToolResultFromPayload(std::move(submitted->payload), true)));
  return ResultResponse(id, ModernResult(ToolSuccessResult({{"nextAction", submitted->payload["nextAction"]}})));
}

}  // namespace telic::mcp
