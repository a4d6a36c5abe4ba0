// The task-graph MCP tools (telic's own, beyond the reference): tasks,
// subtasks, dispatch, verdicts, reports and their decisions, approvals.
#pragma once

#include <vector>

#include "graph/task_service.h"
#include "mcp/server.h"

namespace telic::mcp {

// Every task-graph tool, in tools/list order. Handlers capture `service`.
std::vector<ToolSpec> BuildGraphTools(graph::TaskService& service);

// The JSON form of a Transition: task, nowReady, cascaded, stories.
Json TransitionToJson(const graph::Transition& transition);

}  // namespace telic::mcp
