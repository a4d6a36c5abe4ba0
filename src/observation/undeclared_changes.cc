#include "observation/undeclared_changes.h"

#include <fmt/format.h>

namespace telic::observation {

std::string_view UndeclaredKindName(UndeclaredKind kind) {
  switch (kind) {
    case UndeclaredKind::kUndeclared: return "undeclared";
    case UndeclaredKind::kChangedAfterDeclared: return "changed_after_declared";
    case UndeclaredKind::kExcludedByContract: return "excluded_by_contract";
    case UndeclaredKind::kOutsideWriteScope: return "outside_write_scope";
  }
  return "undeclared";
}

Json UndeclaredChange::ToJson() const {
  return {{"path", path}, {"groundedHash", grounded}, {"currentHash", now}, {"kind", std::string(UndeclaredKindName(kind))}};
}

std::vector<UndeclaredChange> FindUndeclaredChanges(const std::map<std::string, PathDigests>& candidates,
                                                    const std::map<std::string, std::string>& declared,
                                                    const std::function<UndeclaredKind(std::string_view)>& classify) {
  std::vector<UndeclaredChange> out;
  for (const auto& [path, digests] : candidates) {
    auto named = declared.find(path);
    if (named != declared.end()) {
      if (named->second != digests.now) {
        out.push_back({path, digests.grounded, digests.now, UndeclaredKind::kChangedAfterDeclared});
      }
      continue;
    }
    if (digests.grounded == digests.now) continue;
    out.push_back({path, digests.grounded, digests.now, classify(path)});
  }
  return out;
}

std::string DescribeUndeclared(const std::vector<UndeclaredChange>& changes, size_t limit) {
  std::string out;
  for (size_t i = 0; i < changes.size() && i < limit; ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{} ({})", changes[i].path, UndeclaredKindName(changes[i].kind));
  }
  if (changes.size() > limit) out += fmt::format(" and {} more", changes.size() - limit);
  return out;
}

}  // namespace telic::observation
