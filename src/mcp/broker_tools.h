// The broker's MCP tool, telic_check_tool_action (PROTOCOL §6.10, PROTOCOL §17.2).
#pragma once

#include "controller/run_service.h"
#include "mcp/server.h"

namespace telic::mcp {

// telic_check_tool_action: checks the run's tokens (run exists, version,
// action id), evaluates the host-native action against the run-level
// authority through the permission engine (controller/broker.h), records a
// broker_decision trace event, and returns {decision: {allowed, reasonCode,
// summary, permissionDecision}, explanation: {decidingLayer, rule, scope,
// layers}}.
ToolSpec CheckToolActionTool(controller::RunService& service);

}  // namespace telic::mcp
