// The capability table of the permission engine (policy/engine.h): each
// capability's PermissionSet family and field, the kind of its field and of
// its scope entries, and the defensive reading of those fields (a field of
// the wrong shape is "malformed", never an exception). Shared by
// authorization (engine.cc), the set algebra (permission_algebra.cc) and the
// JSON inputs (engine_json.cc).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::policy::capabilities {

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

inline constexpr std::array<CapabilitySpec, 12> kSpecs = {{
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

// The spec of a capability name, or nullptr when unknown.
const CapabilitySpec* FindSpec(std::string_view capability);

// Reading PermissionSet fields defensively

enum class FieldState { kAbsent, kMalformed, kPresent };

struct FieldView {
  FieldState state = FieldState::kAbsent;
  const Json* value = nullptr;   // the field (list or boolean)
  const Json* family = nullptr;  // its family object
};

// A limit is an integer >= 0.
bool IsLimit(const Json& value);

// The field `family`.`field` of a PermissionSet (null: absent), checked
// against its type (a list of strings, a boolean, or spawn with its limits).
FieldView GetField(const Json& set, const char* family, const char* field, FieldType type);

// The strings of a list field (none for nullptr).
std::vector<std::string> Strings(const Json* list);

// A limit of a family object; 0 when absent, malformed or no family.
int64_t Limit(const Json* family, const char* name);

// A service name is exact: printable ASCII without spaces or glob characters.
[[nodiscard]] Status CheckServiceName(std::string_view name);

}  // namespace telic::policy::capabilities
