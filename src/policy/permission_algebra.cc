// The set algebra of permission sets (policy/engine.h):
// IntersectPermissionSets, PermissionSetIsSubset and RemoveDeniedFields.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "policy/capabilities.h"
#include "policy/engine.h"
#include "policy/path_scope.h"
#include "policy/permission_set.h"
#include "policy/shell_command.h"
#include "policy/url_host.h"

namespace telic::policy {
namespace {

using capabilities::CapabilitySpec;
using capabilities::FieldState;
using capabilities::FieldType;
using capabilities::FieldView;
using capabilities::GetField;
using capabilities::kSpecs;
using capabilities::Limit;
using capabilities::ScopeKind;
using capabilities::Strings;
using capabilities::CheckServiceName;

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

}  // namespace telic::policy
