// `telic validate FILE [--type TYPE]` and `telic schema TYPE | --list`
// (issue 3): the artifact schemas and refinements, outside any run.
#pragma once

#include <iosfwd>
#include <string>

namespace telic::cli {

// Validates the artifact in `path`. The type is `type` when given, else the
// document's own "type" when it is a stored artifact ({"type", "body", …},
// as `telic artifact --json` prints it). Prints "valid <Type>" or one line per
// violation ("<pointer>: <reason>"); with `json`, {"valid", "type", "issues"}.
// Returns 0 valid, 1 invalid (or unreadable / not JSON), 2 usage error (no
// type could be determined, or an unknown type).
int RunValidateCommand(const std::string& path, const std::string& type, bool json, std::ostream& out,
                       std::ostream& err);

// Prints the host-facing JSON Schema of `type` (bundled with its shared
// definitions, as NextAction.requiredOutputSchema carries it), or with
// `list` every artifact type, one per line. 0, or 2 for an unknown type.
int RunSchemaCommand(const std::string& type, bool list, std::ostream& out, std::ostream& err);

}  // namespace telic::cli
