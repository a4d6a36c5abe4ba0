// The telic_workflow prompt: host-side instructions; rendering changes no state.
#pragma once

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::mcp {

Json ListPrompts();

// prompts/get: `params` = {name, arguments}. kInvalidArgument with the
// violations for bad arguments; kNotFound for an unknown prompt.
Result<Json> GetPrompt(const Json& params);

// The instruction text for an exact request and mode.
std::string RenderWorkflowText(const std::string& original_request, const std::string& mode);

}  // namespace telic::mcp
