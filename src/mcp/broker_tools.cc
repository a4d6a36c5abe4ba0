#include "mcp/broker_tools.h"

#include "controller/broker.h"

namespace telic::mcp {

ToolSpec CheckToolActionTool(controller::RunService& service) {
  ToolSpec spec;
  spec.name = "telic_check_tool_action";
  spec.title = "Check host tool action";
  spec.description =
      "Ask whether the run's permissions allow a host-native tool call before making it; the decision is traced as "
      "a broker_decision event.";
  spec.schema_path = "tools/telic_check_tool_action.json";
  spec.read_only = true;    // as the reference annotates it, although it appends a trace event
  spec.idempotent = false;  // every call appends another event
  spec.handler = [&service](const Json& args) -> Result<Json> {
    TELIC_ASSIGN_OR_RETURN(store::RunRecord run,
                           service.CheckTokens(args["run_id"].get<std::string>(), args["action_id"].get<std::string>(),
                                               args["expected_run_version"].get<int64_t>()));
    std::optional<std::string> target;
    if (args.contains("target")) target = args["target"].get<std::string>();
    TELIC_ASSIGN_OR_RETURN(controller::BrokerDecision decision,
                           controller::DecideAndRecord(service.store(), service.clock(), service.ids(), run,
                                                       args["capability"].get<std::string>(), target, "Broker"));
    return Json{{"decision", controller::BrokerDecisionToJson(decision)},
                {"explanation", controller::BrokerExplanationToJson(decision)}};
  };
  return spec;
}

}  // namespace telic::mcp
