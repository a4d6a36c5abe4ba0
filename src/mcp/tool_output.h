// The output schema each MCP tool declares (issue 20 item 3).
//
// Every tool's structuredContent is `{ok: true, ...}` on success or the
// ToolError `{ok: false, code, error, issues?}` (with isError: true); its
// output schema (schemas/results/<tool>.json, JSON Schema 2020-12) is the
// oneOf of the two, served self-contained in tools/list as `outputSchema`.
#pragma once

#include <string>
#include <string_view>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::mcp {

// "results/<tool>.json": the embedded schema telic's own validator compiles.
std::string ToolOutputSchemaPath(std::string_view tool);

// The outputSchema served for `tool`, bundled once per process (every
// cross-document $ref inlined, stock 2020-12 vocabulary). kNotFound when the
// tool has no schema under schemas/results/.
Result<const Json*> ToolOutputSchema(std::string_view tool);

}  // namespace telic::mcp
