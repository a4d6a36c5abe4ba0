// The permission engine: one action checked against a stack of permission
// layers (docs/PERMISSIONS.md).
//
// Effective permission = the intersection of every layer (host policy, user
// authorization, repository policy, TaskContract, WorkPlan node, tool
// capability, intent-mode ceiling). Each layer is an allow PermissionSet and
// a deny PermissionSet in the wire shape of PROTOCOL §12.1. An action is
// allowed only when every layer grants it for its target and no layer denies
// it: absence is denial, a matching deny entry always wins, and an empty
// layer list denies everything ("no_policy").
//
// Capabilities are typed; a grant of one never implies another. In
// particular the destructive ones (repository.delete, runtime.restart,
// browser.mutate, external.write, shell.execute) need their own field to be
// granted in every layer, whatever `**` another field holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "policy/path_scope.h"

namespace telic::policy {

// One action: a capability of the twelve (Capabilities()) and its argument.
//   repository.read/write/delete: target = a path (relative, or absolute
//     inside the root)
//   shell.inspect: target = one of the six typed targets
//   shell.execute: target = the exact command
//   runtime.inspect/restart: target = the service name
//   network.read: target = the URL (http:// assumed without a scheme)
//   browser.inspect/mutate, external.write: no target (ignored if given)
//   subagent.spawn: depth (default 1) and children (default 1)
struct ActionRequest {
  std::string capability;
  std::optional<std::string> target;
  std::optional<int64_t> depth;
  std::optional<int64_t> children;
};

// A permission layer. `allow` and `deny` are PermissionSets (PROTOCOL §12.1); null,
// or a missing family or field, grants (denies) nothing. In allow sets a
// malformed field grants nothing; in deny sets a malformed field denies the
// capability. Scope lists: repository = globs (path_scope.h), shell
// allowlist = exact commands, runtime = exact service names, network = exact
// hosts (url_host.h); "**" in any list means every target.
struct Layer {
  std::string name;
  Json allow;
  Json deny;
};

struct LayerVerdict {
  std::string layer;
  bool allowed = false;
  std::string rule;
};

struct Decision {
  bool allowed = false;
  // allowed | policy_denied | invalid_target | unknown_capability | no_policy
  std::string reason_code;
  // The first layer (in the given order) that denied; "" when allowed.
  std::string deciding_layer;
  // Why: the deciding layer's rule, or for an allowed action a summary of
  // the grants, e.g. "no grant for repository.write", "denied entry src/**",
  // "path escapes the repository root: '..' segment in path".
  std::string rule;
  // The normalised target: repository path, command, inspect target,
  // hostname, service, or "" when the capability takes none; the raw target
  // when it could not be normalised.
  std::string scope;
  // "Allowed by all <n> policies." or "Denied by permission intersection:
  // <name>, <name>." (the reference's wording); "Denied: no policy grants
  // exist." for an empty stack.
  std::string summary;
  std::vector<std::string> denied_by;  // every denying layer, in order
  std::vector<LayerVerdict> verdicts;  // one per layer, in order
};

Decision Authorize(const ActionRequest& request, const std::vector<Layer>& layers, const RepoRoot& root);

// The intent-mode ceiling as a layer named "intent_mode:<mode>": allow is
// built from ModeAllows (lists ["**"], booleans true, subagents up to 16
// children and depth 4), deny holds the mode's deny list of PROTOCOL
// PROTOCOL §12.3. An unknown mode allows nothing.
Layer ModeCeilingLayer(std::string_view mode);

// A conservative intersection of two allow PermissionSets: a scope entry of
// either side is kept when the other side provably covers it (repository:
// GlobSubset; shell and runtime: equality; network: equal normalised hosts;
// "**" covers all), booleans are ANDed, subagent limits take the minimum
// (0 when spawn ends up false). Whatever the result allows, both allow.
Json IntersectPermissionSets(const Json& a, const Json& b);

// A ⊆ B (PROTOCOL §12.5): for repository lists an entry is covered by
// "**", an equal entry, "p/**" for p and p/..., or a GlobSubset; for shell,
// runtime and network lists only by "**" or equality (network: of the
// normalised hosts); booleans A ⇒ B; subagent limits A ≤ B. A malformed set
// is never a subset.
bool PermissionSetIsSubset(const Json& a, const Json& b);

// The user-authorization rule of PROTOCOL §12.4 without the mode part:
// `granted` with every list field cleared whose `denied` counterpart is
// non-empty, every boolean cleared that `denied` sets, and subagents emptied
// when `denied` sets spawn. Used as the allow set of the user_authorization
// layer (with `denied` as its deny set), so the engine is never wider than
// the run's effective permissions.
Json RemoveDeniedFields(const Json& granted, const Json& denied);

// The `telic check` inputs (issue 4). An action object:
//   {"capability": "...", "path" | "command" | "target" | "url" | "service": "...",
//    "depth": N, "children": N}
// (the argument key must fit the capability; "target" fits every one).
Result<ActionRequest> ActionRequestFromJson(const Json& action);

// A policy file: {"mode", "host", "authorization": {"granted", "denied"},
// "repositoryPolicy", "taskContract", "workPlanNode", "workPlanNodeId",
// "toolCapability", "repositoryRoot"} → the layers intent_mode:<mode>,
// host_policy, user_authorization (granted / denied), repository_policy,
// task_contract, work_node:<id> (or work_node), tool_capability. A missing
// layer is present and grants nothing. user_authorization is
// {RemoveDeniedFields(granted, denied), denied}.
struct PolicyStack {
  std::vector<Layer> layers;
  std::optional<std::string> repository_root;
};
Result<PolicyStack> PolicyStackFromJson(const Json& policy);

}  // namespace telic::policy
