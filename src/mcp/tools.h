// The MCP tools telic serves, each bound to a RunService operation.
#pragma once

#include <vector>

#include "controller/run_service.h"
#include "mcp/server.h"

namespace telic::mcp {

// Every tool in tools/list order. Handlers capture `service` by reference.
std::vector<ToolSpec> BuildTools(controller::RunService& service);

}  // namespace telic::mcp
