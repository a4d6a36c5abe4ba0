#include "policy/engine.h"

#include <algorithm>
#include <array>

#include "policy/capabilities.h"
#include "policy/permission_set.h"
#include "policy/shell_command.h"
#include "policy/url_host.h"

namespace telic::policy {
namespace {

using capabilities::CapabilitySpec;
using capabilities::CheckServiceName;
using capabilities::FieldState;
using capabilities::FieldType;
using capabilities::FieldView;
using capabilities::FindSpec;
using capabilities::GetField;
using capabilities::kSpecs;
using capabilities::Limit;
using capabilities::ScopeKind;
using capabilities::Strings;

// ---------------------------------------------------------------------------
// Targets

struct Target {
  std::string scope;               // for the decision
  std::vector<std::string> paths;  // kPath: lexical, then resolved when different
  int64_t depth = 1;
  int64_t children = 1;
};

Result<Target> NormalizeTarget(const CapabilitySpec& spec, const ActionRequest& request, const RepoRoot& root) {
  Target target;
  const bool needs_target = spec.scope != ScopeKind::kNone && spec.scope != ScopeKind::kSubagent;
  if (needs_target && !request.target) {
    return Fail(ErrorCode::kPermissionDenied, std::string(spec.capability) + " needs a target");
  }
  switch (spec.scope) {
    case ScopeKind::kPath: {
      TELIC_ASSIGN_OR_RETURN(ResolvedPath path, ResolveRepoPath(*request.target, root));
      target.scope = path.lexical;
      target.paths.push_back(path.lexical);
      if (path.resolved != path.lexical) target.paths.push_back(path.resolved);
      break;
    }
    case ScopeKind::kCommand:
      TELIC_RETURN_IF_ERROR(CheckExactCommand(*request.target));
      target.scope = *request.target;
      break;
    case ScopeKind::kInspect:
      TELIC_RETURN_IF_ERROR(CheckShellInspectTarget(*request.target));
      target.scope = *request.target;
      break;
    case ScopeKind::kService:
      TELIC_RETURN_IF_ERROR(CheckServiceName(*request.target));
      target.scope = *request.target;
      break;
    case ScopeKind::kHost: {
      TELIC_ASSIGN_OR_RETURN(NetworkTarget url, ParseNetworkUrl(*request.target));
      target.scope = url.host;
      break;
    }
    case ScopeKind::kNone:
      break;
    case ScopeKind::kSubagent:
      target.depth = request.depth.value_or(1);
      target.children = request.children.value_or(1);
      if (target.depth < 0 || target.children < 0) {
        return Fail(ErrorCode::kPermissionDenied, "subagent depth and children must be >= 0");
      }
      target.scope = "depth " + std::to_string(target.depth) + ", children " + std::to_string(target.children);
      break;
  }
  return target;
}

// ---------------------------------------------------------------------------
// Matching one scope entry

// For an allow entry: does it cover the target? Invalid entries never do.
bool AllowEntryCovers(const CapabilitySpec& spec, const std::string& entry, const Target& target,
                      const std::string& path) {
  if (entry == "**") return true;
  switch (spec.scope) {
    case ScopeKind::kPath: {
      auto glob = Glob::Compile(entry);
      return glob && glob->Matches(path);  // allow: always exact case
    }
    case ScopeKind::kHost: {
      auto host = NormalizeHostScope(entry);
      return host && *host == target.scope;
    }
    case ScopeKind::kCommand:
    case ScopeKind::kService:
      return entry == target.scope;
    default:
      return false;
  }
}

// For a deny entry: does it match the target? An entry that cannot be
// understood (an invalid glob or host) denies everything: we cannot tell
// what it was meant to exclude.
bool DenyEntryMatches(const CapabilitySpec& spec, const std::string& entry, const Target& target,
                      const RepoRoot& root, bool& invalid) {
  invalid = false;
  if (entry == "**") return true;
  switch (spec.scope) {
    case ScopeKind::kPath: {
      auto glob = Glob::Compile(entry);
      if (!glob) {
        invalid = true;
        return true;
      }
      // On a case-insensitive filesystem a deny entry matches exactly or
      // case-folded, whichever matches more.
      return std::any_of(target.paths.begin(), target.paths.end(), [&](const std::string& path) {
        return glob->Matches(path) || (root.match.case_insensitive && glob->Matches(path, root.match));
      });
    }
    case ScopeKind::kHost: {
      auto host = NormalizeHostScope(entry);
      if (!host) {
        invalid = true;
        return true;
      }
      return *host == target.scope;
    }
    case ScopeKind::kCommand:
      // A deny entry that is not an exact command ("rm *", "npm test; x")
      // names a pattern we do not match: it denies every command.
      if (!CheckExactCommand(entry)) {
        invalid = true;
        return true;
      }
      return entry == target.scope;
    case ScopeKind::kService:
      if (!CheckServiceName(entry)) {
        invalid = true;
        return true;
      }
      return entry == target.scope;
    default:
      return false;
  }
}

std::string NoGrant(const CapabilitySpec& spec) {
  std::string rule = "no grant for " + std::string(spec.capability);
  if (spec.destructive) rule += " (it needs its own explicit grant)";
  return rule;
}

// Rule 1, deny wins: the rule of the layer's deny set that denies the
// target (a malformed set denies), or "" when none does.
std::string DenyingRule(const Layer& layer, const CapabilitySpec& spec, const Target& target, const RepoRoot& root) {
  const std::string cap(spec.capability);
  FieldView deny = GetField(layer.deny, spec.family, spec.field, spec.type);
  if (deny.state == FieldState::kMalformed) return "malformed deny set for " + cap + " in " + layer.name + " (treated as denying)";
  if (deny.state != FieldState::kPresent) return "";
  if (spec.type != FieldType::kList) return deny.value->get<bool>() ? "explicit deny of " + cap + " in " + layer.name : "";
  for (const auto& entry : Strings(deny.value)) {
    bool invalid = false;
    if (DenyEntryMatches(spec, entry, target, root, invalid)) {
      std::string rule = "denied entry " + entry + " in " + layer.name;
      if (invalid) rule += " (an invalid entry denies every target)";
      return rule;
    }
  }
  return "";
}

// A granted subagent capability within its depth and children limits.
LayerVerdict SubagentVerdict(LayerVerdict verdict, const CapabilitySpec& spec, const FieldView& allow,
                             const Target& target) {
  int64_t max_depth = Limit(allow.family, "maximumDepth");
  int64_t max_children = Limit(allow.family, "maximumChildren");
  if (target.depth > max_depth) {
    verdict.rule = "depth " + std::to_string(target.depth) + " exceeds maximumDepth " + std::to_string(max_depth);
  } else if (target.children > max_children) {
    verdict.rule = "children " + std::to_string(target.children) + " exceeds maximumChildren " +
                   std::to_string(max_children);
  } else {
    verdict.allowed = true;
    verdict.rule = std::string(spec.capability) + " granted within its limits";
  }
  return verdict;
}

// A list grant: every form of the target (for paths: as named and as
// resolved through symlinks) must be covered by an entry.
LayerVerdict ListVerdict(LayerVerdict verdict, const CapabilitySpec& spec, const FieldView& allow,
                         const Target& target) {
  const std::vector<std::string> entries = Strings(allow.value);
  if (entries.empty()) {
    verdict.rule = NoGrant(spec);
    return verdict;
  }
  std::vector<std::string> forms = spec.scope == ScopeKind::kPath ? target.paths : std::vector{target.scope};
  std::vector<std::string> covering;
  for (const auto& form : forms) {
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const std::string& entry) { return AllowEntryCovers(spec, entry, target, form); });
    if (it == entries.end()) {
      verdict.rule = "no " + std::string(spec.capability) + " entry covers " + form;
      if (form != target.scope) verdict.rule += " (where " + target.scope + " leads through a symlink)";
      return verdict;
    }
    covering.push_back(*it);
  }
  verdict.allowed = true;
  verdict.rule = "entry " + covering.front() + " covers " + target.scope;
  return verdict;
}

LayerVerdict EvaluateLayer(const Layer& layer, const CapabilitySpec& spec, const Target& target,
                           const RepoRoot& root) {
  LayerVerdict verdict{layer.name, false, DenyingRule(layer, spec, target, root)};
  if (!verdict.rule.empty()) return verdict;
  // Rule 2, absence is denial.
  FieldView allow = GetField(layer.allow, spec.family, spec.field, spec.type);
  if (allow.state == FieldState::kMalformed) {
    verdict.rule = "malformed grant for " + std::string(spec.capability) + " in " + layer.name;
    return verdict;
  }
  if (allow.state == FieldState::kAbsent || (spec.type != FieldType::kList && !allow.value->get<bool>())) {
    verdict.rule = NoGrant(spec);
    return verdict;
  }
  switch (spec.type) {
    case FieldType::kBool:
      verdict.allowed = true;
      verdict.rule = std::string(spec.capability) + " granted";
      return verdict;
    case FieldType::kSubagents:
      return SubagentVerdict(std::move(verdict), spec, allow, target);
    case FieldType::kList:
      break;
  }
  return ListVerdict(std::move(verdict), spec, allow, target);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

Decision Authorize(const ActionRequest& request, const std::vector<Layer>& layers, const RepoRoot& root) {
  Decision decision;
  if (layers.empty()) {
    decision.reason_code = "no_policy";
    decision.deciding_layer = "no_policy";
    decision.rule = "no policy layers: nothing is granted";
    decision.scope = request.target.value_or("");
    decision.summary = "Denied: no policy grants exist.";
    decision.denied_by = {"no_policy"};
    return decision;
  }

  auto deny_all = [&](std::string reason_code, std::string rule) {
    decision.reason_code = std::move(reason_code);
    decision.rule = std::move(rule);
    for (const auto& layer : layers) {
      decision.verdicts.push_back({layer.name, false, decision.rule});
      decision.denied_by.push_back(layer.name);
    }
    decision.deciding_layer = layers.front().name;
    decision.summary = "Denied by permission intersection: " + JoinNames(decision.denied_by) + ".";
    return decision;
  };

  const CapabilitySpec* spec = FindSpec(request.capability);
  if (spec == nullptr) {
    decision.scope = request.target.value_or("");
    return deny_all("unknown_capability", "unknown capability '" + request.capability + "'");
  }
  auto target = NormalizeTarget(*spec, request, root);
  if (!target) {
    decision.scope = spec->scope == ScopeKind::kHost ? "invalid_network_target" : request.target.value_or("");
    return deny_all("invalid_target",
                    "invalid target for " + request.capability + ": " + target.error().message());
  }
  decision.scope = target->scope;

  for (const auto& layer : layers) {
    LayerVerdict verdict = EvaluateLayer(layer, *spec, *target, root);
    if (!verdict.allowed) {
      if (decision.denied_by.empty()) {
        decision.deciding_layer = layer.name;
        decision.rule = verdict.rule;
      }
      decision.denied_by.push_back(layer.name);
    }
    decision.verdicts.push_back(std::move(verdict));
  }
  if (decision.denied_by.empty()) {
    decision.allowed = true;
    decision.reason_code = "allowed";
    decision.rule = "every layer grants " + request.capability +
                    (decision.scope.empty() ? std::string() : " for " + decision.scope);
    decision.summary = "Allowed by all " + std::to_string(layers.size()) + " policies.";
  } else {
    decision.reason_code = "policy_denied";
    decision.summary = "Denied by permission intersection: " + JoinNames(decision.denied_by) + ".";
  }
  return decision;
}

Layer ModeCeilingLayer(std::string_view mode) {
  Layer layer{"intent_mode:" + std::string(mode), EmptyPermissionSet(), EmptyPermissionSet()};
  const Json everything = Json::array({"**"});
  for (const auto& spec : kSpecs) {
    // ModeAllows spells runtime.restart as runtime.mutate.
    std::string_view kind = spec.capability == "runtime.restart" ? "runtime.mutate" : spec.capability;
    if (!ModeAllows(mode, kind)) continue;
    Json& field = layer.allow[spec.family][spec.field];
    if (spec.type == FieldType::kList) {
      field = everything;
    } else {
      field = true;
    }
    if (spec.type == FieldType::kSubagents) {
      layer.allow["subagents"]["maximumChildren"] = 16;
      layer.allow["subagents"]["maximumDepth"] = 4;
    }
  }
  if (std::optional<domain::Mode> known = domain::ModeNamed(mode)) {
    const bool fixes = ModeFixes(*known);
    if (!fixes) {
      layer.deny["repository"]["write"] = everything;
      layer.deny["repository"]["delete"] = everything;
      layer.deny["runtime"]["restart"] = everything;
      layer.deny["browser"]["mutateState"] = true;
    }
    layer.deny["network"]["externalWrite"] = true;
  }
  return layer;
}

}  // namespace telic::policy
