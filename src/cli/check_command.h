// `telic check --policy FILE --action JSON [--json]` (issue 4): one action
// decided by the permission engine against a policy file.
#pragma once

#include <iosfwd>
#include <string>

namespace telic::cli {

// FILE holds {"mode", "host", "authorization": {"granted", "denied"},
// "repositoryPolicy", "taskContract", "workPlanNode", "workPlanNodeId",
// "toolCapability", "repositoryRoot"} (policy/engine.h PolicyStackFromJson);
// ACTION is an action object such as {"capability": "repository.write",
// "path": "src/a.ts"}, or @FILE to read it from a file. With repositoryRoot,
// paths are resolved on disk (symlinks followed).
//
// Prints the decision: a short text (allow/deny, capability and scope, the
// deciding layer and rule, every layer's verdict), or with `json` one line
// {"decision", "allowed", "reasonCode", "decidingLayer", "rule", "scope",
// "summary", "deniedBy", "layers": [{"layer", "allowed", "rule"}]}.
// Returns 0 when allowed, 3 when denied, 2 on a usage error (unreadable or
// malformed policy or action; message on stderr as "telic: ...").
int RunCheckCommand(const std::string& policy_file, const std::string& action, bool json, std::ostream& out,
                    std::ostream& err);

}  // namespace telic::cli
