#include "policy/engine.h"

#include <algorithm>
#include <array>

#include "policy/permission_set.h"
#include "policy/shell_command.h"
#include "policy/url_host.h"

namespace telic::policy {
namespace {

enum class FieldType { kList, kBool, kSubagents };
enum class ScopeKind { kPath, kCommand, kInspect, kService, kHost, kNone, kSubagent };

struct CapabilitySpec {
  std::string_view capability;
  const char* family;
  const char* field;
  FieldType type;
  ScopeKind scope;
  bool destructive;
};

constexpr std::array<CapabilitySpec, 12> kSpecs = {{
    {"repository.read", "repository", "read", FieldType::kList, ScopeKind::kPath, false},
    {"repository.write", "repository", "write", FieldType::kList, ScopeKind::kPath, false},
    {"repository.delete", "repository", "delete", FieldType::kList, ScopeKind::kPath, true},
    {"shell.inspect", "shell", "inspect", FieldType::kBool, ScopeKind::kInspect, false},
    {"shell.execute", "shell", "executeAllowlist", FieldType::kList, ScopeKind::kCommand, true},
    {"runtime.inspect", "runtime", "inspect", FieldType::kList, ScopeKind::kService, false},
    {"runtime.restart", "runtime", "restart", FieldType::kList, ScopeKind::kService, true},
    {"browser.inspect", "browser", "inspect", FieldType::kBool, ScopeKind::kNone, false},
    {"browser.mutate", "browser", "mutateState", FieldType::kBool, ScopeKind::kNone, true},
    {"network.read", "network", "readDomains", FieldType::kList, ScopeKind::kHost, false},
    {"external.write", "network", "externalWrite", FieldType::kBool, ScopeKind::kNone, true},
    {"subagent.spawn", "subagents", "spawn", FieldType::kSubagents, ScopeKind::kSubagent, false},
}};

const CapabilitySpec* FindSpec(std::string_view capability) {
  for (const auto& spec : kSpecs) {
    if (spec.capability == capability) return &spec;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Reading PermissionSet fields defensively

enum class FieldState { kAbsent, kMalformed, kPresent };

struct FieldView {
  FieldState state = FieldState::kAbsent;
  const Json* value = nullptr;   // the field (list or boolean)
  const Json* family = nullptr;  // its family object
};

bool IsLimit(const Json& value) { return value.is_number_integer() && value.get<int64_t>() >= 0; }

FieldView GetField(const Json& set, const char* family, const char* field, FieldType type) {
  FieldView view;
  if (set.is_null()) return view;
  if (!set.is_object()) return {FieldState::kMalformed, nullptr, nullptr};
  auto fam = set.find(family);
  if (fam == set.end()) return view;
  if (!fam->is_object()) return {FieldState::kMalformed, nullptr, nullptr};
  auto it = fam->find(field);
  if (it == fam->end()) return view;
  bool ok = false;
  if (type == FieldType::kList) {
    ok = it->is_array() && std::all_of(it->begin(), it->end(), [](const Json& e) { return e.is_string(); });
  } else {
    ok = it->is_boolean();
    if (type == FieldType::kSubagents) {
      for (const char* limit : {"maximumChildren", "maximumDepth"}) {
        auto l = fam->find(limit);
        if (l != fam->end() && !IsLimit(*l)) ok = false;
      }
    }
  }
  if (!ok) return {FieldState::kMalformed, nullptr, nullptr};
  return {FieldState::kPresent, &*it, &*fam};
}

std::vector<std::string> Strings(const Json* list) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (const auto& e : *list) out.push_back(e.get<std::string>());
  return out;
}

int64_t Limit(const Json* family, const char* name) {
  if (family == nullptr) return 0;
  auto it = family->find(name);
  return it != family->end() && IsLimit(*it) ? it->get<int64_t>() : 0;
}

// ---------------------------------------------------------------------------
// Targets

struct Target {
  std::string scope;               // for the decision
  std::vector<std::string> paths;  // kPath: lexical, then resolved when different
  int64_t depth = 1;
  int64_t children = 1;
};

Status CheckServiceName(std::string_view name) {
  auto deny = [](std::string reason) { return Fail(ErrorCode::kPermissionDenied, std::move(reason)); };
  if (name.empty()) return deny("empty service name");
  if (name.size() > 255) return deny("service name longer than 255 characters");
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return deny("service name must be printable ASCII without spaces");
    if (std::string_view("*?[]{}\\%").find(c) != std::string_view::npos) {
      return deny(std::string("character '") + c + "' not allowed in a service name (names are exact)");
    }
  }
  return Ok();
}

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

LayerVerdict EvaluateLayer(const Layer& layer, const CapabilitySpec& spec, const Target& target,
                           const RepoRoot& root) {
  LayerVerdict verdict{layer.name, false, ""};
  const std::string cap(spec.capability);

  // 1. Deny wins.
  FieldView deny = GetField(layer.deny, spec.family, spec.field, spec.type);
  if (deny.state == FieldState::kMalformed) {
    verdict.rule = "malformed deny set for " + cap + " in " + layer.name + " (treated as denying)";
    return verdict;
  }
  if (deny.state == FieldState::kPresent) {
    if (spec.type != FieldType::kList) {
      if (deny.value->get<bool>()) {
        verdict.rule = "explicit deny of " + cap + " in " + layer.name;
        return verdict;
      }
    } else {
      for (const auto& entry : Strings(deny.value)) {
        bool invalid = false;
        if (DenyEntryMatches(spec, entry, target, root, invalid)) {
          verdict.rule = "denied entry " + entry + " in " + layer.name;
          if (invalid) verdict.rule += " (an invalid entry denies every target)";
          return verdict;
        }
      }
    }
  }

  // 2. Absence is denial.
  FieldView allow = GetField(layer.allow, spec.family, spec.field, spec.type);
  if (allow.state == FieldState::kMalformed) {
    verdict.rule = "malformed grant for " + cap + " in " + layer.name;
    return verdict;
  }
  if (allow.state == FieldState::kAbsent) {
    verdict.rule = NoGrant(spec);
    return verdict;
  }
  switch (spec.type) {
    case FieldType::kBool:
      if (!allow.value->get<bool>()) {
        verdict.rule = NoGrant(spec);
        return verdict;
      }
      verdict.allowed = true;
      verdict.rule = cap + " granted";
      return verdict;
    case FieldType::kSubagents: {
      if (!allow.value->get<bool>()) {
        verdict.rule = NoGrant(spec);
        return verdict;
      }
      int64_t max_depth = Limit(allow.family, "maximumDepth");
      int64_t max_children = Limit(allow.family, "maximumChildren");
      if (target.depth > max_depth) {
        verdict.rule = "depth " + std::to_string(target.depth) + " exceeds maximumDepth " + std::to_string(max_depth);
        return verdict;
      }
      if (target.children > max_children) {
        verdict.rule = "children " + std::to_string(target.children) + " exceeds maximumChildren " +
                       std::to_string(max_children);
        return verdict;
      }
      verdict.allowed = true;
      verdict.rule = cap + " granted within its limits";
      return verdict;
    }
    case FieldType::kList:
      break;
  }
  const std::vector<std::string> entries = Strings(allow.value);
  if (entries.empty()) {
    verdict.rule = NoGrant(spec);
    return verdict;
  }
  // Every form of the target (for paths: as named and as resolved through
  // symlinks) must be covered.
  std::vector<std::string> forms = spec.scope == ScopeKind::kPath ? target.paths : std::vector{target.scope};
  std::vector<std::string> covering;
  for (const auto& form : forms) {
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const std::string& entry) { return AllowEntryCovers(spec, entry, target, form); });
    if (it == entries.end()) {
      verdict.rule = "no " + cap + " entry covers " + form;
      if (form != target.scope) verdict.rule += " (where " + target.scope + " leads through a symlink)";
      return verdict;
    }
    covering.push_back(*it);
  }
  verdict.allowed = true;
  verdict.rule = "entry " + covering.front() + " covers " + target.scope;
  return verdict;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Set algebra helpers

struct ListSpec {
  const char* family;
  const char* field;
  ScopeKind scope;
};
constexpr std::array<ListSpec, 7> kLists = {{
    {"repository", "read", ScopeKind::kPath},
    {"repository", "write", ScopeKind::kPath},
    {"repository", "delete", ScopeKind::kPath},
    {"shell", "executeAllowlist", ScopeKind::kCommand},
    {"runtime", "inspect", ScopeKind::kService},
    {"runtime", "restart", ScopeKind::kService},
    {"network", "readDomains", ScopeKind::kHost},
}};
struct FlagSpec {
  const char* family;
  const char* field;
};
constexpr std::array<FlagSpec, 4> kFlags = {{
    {"shell", "inspect"},
    {"browser", "inspect"},
    {"browser", "mutateState"},
    {"network", "externalWrite"},
}};

// An entry in the form used for comparisons; nullopt when invalid.
std::optional<std::string> CanonicalEntry(ScopeKind scope, const std::string& entry) {
  if (entry == "**") return entry;
  switch (scope) {
    case ScopeKind::kPath: {
      auto glob = Glob::Compile(entry);
      if (!glob) return std::nullopt;
      return entry;
    }
    case ScopeKind::kHost: {
      auto host = NormalizeHostScope(entry);
      if (!host) return std::nullopt;
      return *host;
    }
    case ScopeKind::kCommand:
      if (!CheckExactCommand(entry)) return std::nullopt;
      return entry;
    case ScopeKind::kService:
      if (!CheckServiceName(entry)) return std::nullopt;
      return entry;
    default:
      return std::nullopt;
  }
}

// Does `other` provably cover every target `entry` allows? (Both canonical.)
bool EntryCoveredBy(ScopeKind scope, const std::string& entry, const std::vector<std::string>& other) {
  return std::any_of(other.begin(), other.end(), [&](const std::string& candidate) {
    if (candidate == "**" || candidate == entry) return true;
    return scope == ScopeKind::kPath && entry != "**" && GlobSubset(entry, candidate);
  });
}

std::vector<std::string> CanonicalList(ScopeKind scope, const Json& set, const char* family, const char* field) {
  std::vector<std::string> out;
  FieldView view = GetField(set, family, field, FieldType::kList);
  if (view.state != FieldState::kPresent) return out;
  for (const auto& entry : Strings(view.value)) {
    if (auto canonical = CanonicalEntry(scope, entry)) out.push_back(*canonical);
  }
  return out;
}

bool Flag(const Json& set, const char* family, const char* field, FieldType type = FieldType::kBool) {
  FieldView view = GetField(set, family, field, type);
  return view.state == FieldState::kPresent && view.value->get<bool>();
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

Json IntersectPermissionSets(const Json& a, const Json& b) {
  Json out = EmptyPermissionSet();
  for (const auto& list : kLists) {
    const auto left = CanonicalList(list.scope, a, list.family, list.field);
    const auto right = CanonicalList(list.scope, b, list.family, list.field);
    std::vector<std::string> kept;
    auto keep = [&](const std::vector<std::string>& from, const std::vector<std::string>& other) {
      for (const auto& entry : from) {
        if (EntryCoveredBy(list.scope, entry, other) && std::find(kept.begin(), kept.end(), entry) == kept.end()) {
          kept.push_back(entry);
        }
      }
    };
    keep(left, right);
    keep(right, left);
    out[list.family][list.field] = kept;
  }
  for (const auto& flag : kFlags) {
    out[flag.family][flag.field] = Flag(a, flag.family, flag.field) && Flag(b, flag.family, flag.field);
  }
  FieldView left = GetField(a, "subagents", "spawn", FieldType::kSubagents);
  FieldView right = GetField(b, "subagents", "spawn", FieldType::kSubagents);
  bool spawn = left.state == FieldState::kPresent && right.state == FieldState::kPresent &&
               left.value->get<bool>() && right.value->get<bool>();
  if (spawn) {
    out["subagents"] = {
        {"spawn", true},
        {"maximumChildren", std::min(Limit(left.family, "maximumChildren"), Limit(right.family, "maximumChildren"))},
        {"maximumDepth", std::min(Limit(left.family, "maximumDepth"), Limit(right.family, "maximumDepth"))},
    };
  }
  return out;
}

bool PermissionSetIsSubset(const Json& a, const Json& b) {
  for (const auto& list : kLists) {
    FieldView requested = GetField(a, list.family, list.field, FieldType::kList);
    FieldView allowed = GetField(b, list.family, list.field, FieldType::kList);
    if (requested.state == FieldState::kMalformed || allowed.state == FieldState::kMalformed) return false;
    const auto parents = Strings(allowed.value);
    for (const auto& scope : Strings(requested.value)) {
      bool covered = std::any_of(parents.begin(), parents.end(), [&](const std::string& parent) {
        if (parent == "**" || parent == scope) return true;
        switch (list.scope) {
          case ScopeKind::kPath: {
            if (parent.size() >= 3 && parent.ends_with("/**")) {
              std::string prefix = parent.substr(0, parent.size() - 3);
              if (scope == prefix || scope.starts_with(prefix + "/")) return true;
            }
            return GlobSubset(scope, parent);
          }
          case ScopeKind::kHost: {
            auto x = NormalizeHostScope(scope);
            auto y = NormalizeHostScope(parent);
            return x && y && *x == *y;
          }
          default:
            return false;
        }
      });
      if (!covered) return false;
    }
  }
  for (const auto& flag : kFlags) {
    FieldView requested = GetField(a, flag.family, flag.field, FieldType::kBool);
    FieldView allowed = GetField(b, flag.family, flag.field, FieldType::kBool);
    if (requested.state == FieldState::kMalformed || allowed.state == FieldState::kMalformed) return false;
    if (Flag(a, flag.family, flag.field) && !Flag(b, flag.family, flag.field)) return false;
  }
  FieldView requested = GetField(a, "subagents", "spawn", FieldType::kSubagents);
  FieldView allowed = GetField(b, "subagents", "spawn", FieldType::kSubagents);
  if (requested.state == FieldState::kMalformed || allowed.state == FieldState::kMalformed) return false;
  if (Flag(a, "subagents", "spawn", FieldType::kSubagents) && !Flag(b, "subagents", "spawn", FieldType::kSubagents)) {
    return false;
  }
  auto family = [](const Json& set) -> const Json* {
    if (!set.is_object()) return nullptr;
    auto it = set.find("subagents");
    return it != set.end() && it->is_object() ? &*it : nullptr;
  };
  return Limit(family(a), "maximumChildren") <= Limit(family(b), "maximumChildren") &&
         Limit(family(a), "maximumDepth") <= Limit(family(b), "maximumDepth");
}

Json RemoveDeniedFields(const Json& granted, const Json& denied) {
  if (!granted.is_object()) return granted;
  Json out = granted;
  for (const auto& spec : kSpecs) {
    FieldView deny = GetField(denied, spec.family, spec.field, spec.type);
    bool remove = deny.state == FieldState::kMalformed;
    if (deny.state == FieldState::kPresent) {
      remove = spec.type == FieldType::kList ? !deny.value->empty() : deny.value->get<bool>();
    }
    if (!remove || !out.contains(spec.family) || !out[spec.family].is_object()) continue;
    if (spec.type == FieldType::kSubagents) {
      out[spec.family] = EmptyPermissionSet()["subagents"];
    } else if (out[spec.family].contains(spec.field)) {
      out[spec.family][spec.field] = spec.type == FieldType::kList ? Json::array() : Json(false);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// JSON inputs

Result<ActionRequest> ActionRequestFromJson(const Json& action) {
  auto bad = [](std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); };
  if (!action.is_object()) return bad("the action must be a JSON object");
  auto cap = action.find("capability");
  if (cap == action.end() || !cap->is_string()) return bad("the action needs a \"capability\" string");
  ActionRequest request;
  request.capability = cap->get<std::string>();
  const CapabilitySpec* spec = FindSpec(request.capability);
  if (spec == nullptr) return bad("unknown capability '" + request.capability + "'");
  std::string argument;
  switch (spec->scope) {
    case ScopeKind::kPath: argument = "path"; break;
    case ScopeKind::kCommand: argument = "command"; break;
    case ScopeKind::kInspect: argument = "target"; break;
    case ScopeKind::kService: argument = "service"; break;
    case ScopeKind::kHost: argument = "url"; break;
    case ScopeKind::kNone:
    case ScopeKind::kSubagent: break;
  }
  for (auto it = action.begin(); it != action.end(); ++it) {
    const std::string& key = it.key();
    if (key == "capability") continue;
    if (key == "depth" || key == "children") {
      if (spec->scope != ScopeKind::kSubagent) return bad("\"" + key + "\" applies only to subagent.spawn");
      if (!IsLimit(*it)) return bad("\"" + key + "\" must be an integer >= 0");
      (key == "depth" ? request.depth : request.children) = it->get<int64_t>();
      continue;
    }
    if (key == "target" || (!argument.empty() && key == argument)) {
      if (!it->is_string()) return bad("\"" + key + "\" must be a string");
      if (request.target) return bad("give the target once (\"" + argument + "\" or \"target\")");
      request.target = it->get<std::string>();
      continue;
    }
    return bad("unknown member \"" + key + "\" for " + request.capability);
  }
  return request;
}

Result<PolicyStack> PolicyStackFromJson(const Json& policy) {
  auto bad = [](std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); };
  if (!policy.is_object()) return bad("the policy must be a JSON object");
  static const std::array<std::string_view, 9> kKeys = {"mode",         "host",           "authorization",
                                                         "repositoryPolicy", "taskContract", "workPlanNode",
                                                         "workPlanNodeId",   "toolCapability", "repositoryRoot"};
  for (auto it = policy.begin(); it != policy.end(); ++it) {
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end()) {
      return bad("unknown member \"" + it.key() + "\" in the policy");
    }
  }
  auto permission_set = [&](const Json& parent, const char* key) -> Result<Json> {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return Json(nullptr);
    if (!it->is_object()) return bad(std::string("\"") + key + "\" must be a permission object");
    return *it;
  };
  auto text = [&](const char* key) -> Result<std::optional<std::string>> {
    auto it = policy.find(key);
    if (it == policy.end()) return std::optional<std::string>();
    if (!it->is_string()) return bad(std::string("\"") + key + "\" must be a string");
    return std::optional<std::string>(it->get<std::string>());
  };

  PolicyStack stack;
  TELIC_ASSIGN_OR_RETURN(auto mode, text("mode"));
  stack.layers.push_back(ModeCeilingLayer(mode.value_or("none")));
  TELIC_ASSIGN_OR_RETURN(Json host, permission_set(policy, "host"));
  stack.layers.push_back({"host_policy", host, nullptr});
  Json granted = nullptr, denied = nullptr;
  if (auto it = policy.find("authorization"); it != policy.end() && !it->is_null()) {
    if (!it->is_object()) return bad("\"authorization\" must be {\"granted\": ..., \"denied\": ...}");
    for (auto member = it->begin(); member != it->end(); ++member) {
      if (member.key() != "granted" && member.key() != "denied") {
        return bad("unknown member \"" + member.key() + "\" in \"authorization\"");
      }
    }
    TELIC_ASSIGN_OR_RETURN(granted, permission_set(*it, "granted"));
    TELIC_ASSIGN_OR_RETURN(denied, permission_set(*it, "denied"));
  }
  stack.layers.push_back({"user_authorization", RemoveDeniedFields(granted, denied), denied});
  TELIC_ASSIGN_OR_RETURN(Json repository, permission_set(policy, "repositoryPolicy"));
  stack.layers.push_back({"repository_policy", repository, nullptr});
  TELIC_ASSIGN_OR_RETURN(Json contract, permission_set(policy, "taskContract"));
  stack.layers.push_back({"task_contract", contract, nullptr});
  TELIC_ASSIGN_OR_RETURN(auto node_id, text("workPlanNodeId"));
  TELIC_ASSIGN_OR_RETURN(Json node, permission_set(policy, "workPlanNode"));
  stack.layers.push_back({node_id ? "work_node:" + *node_id : std::string("work_node"), node, nullptr});
  TELIC_ASSIGN_OR_RETURN(Json tool, permission_set(policy, "toolCapability"));
  stack.layers.push_back({"tool_capability", tool, nullptr});
  TELIC_ASSIGN_OR_RETURN(stack.repository_root, text("repositoryRoot"));
  return stack;
}

}  // namespace telic::policy
