// telic_run_check: telic runs one allowed verification command in its
// sandbox and stores what it observed as Evidence (controller/run_check.h);
// bound to a task awaiting verification, the result is also that task's
// verification (docs/API.md "telic_run_check").
#pragma once

#include "controller/run_check.h"
#include "graph/task_service.h"
#include "mcp/server.h"

namespace telic::mcp {

// The tool; it may run as a task of the tasks extension (progress in its
// status message, tasks/cancel kills the sandbox's process group). Handlers
// capture the services by reference.
ToolSpec RunCheckTool(controller::RunService& runs, graph::TaskService& tasks, controller::CheckSettings settings);

}  // namespace telic::mcp
