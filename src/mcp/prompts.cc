#include "mcp/prompts.h"

#include <fmt/format.h>

#include "mcp/jsonrpc.h"
#include "schema/registry.h"

namespace telic::mcp {

Json ListPrompts() {
  return Json::array({{{"name", "telic_workflow"},
                       {"title", "Run a Telic workflow"},
                       {"description", "Drive the host-neutral Telic artifact workflow for one immutable user request."},
                       {"arguments",
                        Json::array({{{"name", "original_request"},
                                      {"description", "The exact user request to preserve as immutable input."},
                                      {"required", true}},
                                     {{"name", "mode"},
                                      {"description", "The requested authority mode. Missing permission remains denial."},
                                      {"required", true}}})}}});
}

std::string RenderWorkflowText(const std::string& original_request, const std::string& mode) {
  std::string literal;
  literal = Compact(Json(original_request));
  return fmt::format(
      R"(Drive this request through the Telic MCP workflow.

Exact original request (JSON string):
{}

Requested mode: {}

Workflow:
1. Call telic_start_run exactly once with the exact original_request and the requested mode. Report the real host name and capabilities, and pass only authority the user actually granted. For network.read, list only exact hostnames the user approved in network_read_domains. Never assume a permission that was not given.
2. Follow the returned nextAction. When its phase is context_discovery, call telic_ground_context with the current run_id, action_id and expected_run_version.
3. For every phase action, read the inputRefs you need with telic_get_artifact, produce exactly the requiredOutputType that matches requiredOutputSchema, and submit it with telic_submit_artifact using the current action_id and run version. Use telic_get_next_action only to refresh state.
4. Never skip, reorder or invent phases. Submit supporting artifacts only when the current action allows them, and keep evidence and source references attached to every claim.
5. Honour effectivePermissions yourself for every host-native tool call: Telic validates what you submit but cannot intercept tools you run directly. Never mutate in report_only, plan_only, or analyze_only mode.
6. On a clarification action, ask the user exactly that bounded question and submit the chosen choice id. On a terminal action, fetch the referenced UserReport and present its evidence-backed result.
7. Share concise decisions, scores, provenance and rationale summaries only. Never request, reveal or store hidden chain-of-thought.
8. Resume an earlier run only when the user asks: call telic_list_runs, let the user pick, then telic_get_run and follow its nextAction. To cancel, call telic_cancel_run with the latest action and version tokens. Send artifacts as the body object; if your host drops nested empty arrays, send the same JSON as the body_json string instead (never both).

Telic is a deterministic controller and ledger and calls no model. You author each requested artifact from the supplied schemas and evidence.)",
      literal, mode);
}

Result<Json> GetPrompt(const Json& params) {
  // A non-string name is simply an unknown prompt (value() would throw on it).
  std::string name = params.is_object() && params.contains("name") && params["name"].is_string()
                         ? params["name"].get<std::string>()
                         : "";
  if (name != "telic_workflow") return Fail(ErrorCode::kNotFound, fmt::format("Prompt {} not found", name));
  Json arguments = params.contains("arguments") ? params["arguments"] : Json();
  std::vector<Issue> issues;
  if (!arguments.is_object()) {
    issues.push_back({"", "invalid_type", "expected object, received " + std::string(arguments.is_null() ? "undefined" : arguments.type_name())});
  } else {
    auto validator = schema::Registry::Default().Find("prompts/telic_workflow.json");
    if (!validator) return std::unexpected(validator.error());
    issues = (*validator)->Validate(arguments);
  }
  if (!issues.empty()) {
    std::string summary;
    for (const Issue& issue : issues) {
      summary += fmt::format("{}{}: {}", summary.empty() ? "" : "; ", issue.pointer.empty() ? "/" : issue.pointer,
                             issue.message);
    }
    return Fail(ErrorCode::kInvalidArgument, fmt::format("Invalid arguments for prompt telic_workflow: {}", summary), issues);
  }
  std::string text = RenderWorkflowText(arguments["original_request"].get<std::string>(), arguments["mode"].get<std::string>());
  return Json{{"description", "Host-side instructions for driving Telic without a model API in the MCP server."},
              {"messages", Json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}})}};
}

}  // namespace telic::mcp
