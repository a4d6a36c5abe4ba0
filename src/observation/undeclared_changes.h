// Item 2 of issue 38: changes in the work tree since grounding that no
// accepted FileChange declares. Pure: the digests come from a
// WorkTreeObserver (observer.h), the classification from the run's contract.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"

namespace telic::observation {

// Why a changed path is listed.
enum class UndeclaredKind {
  kUndeclared,            // changed, no accepted FileChange names it
  kChangedAfterDeclared,  // named, but its content now differs from the last declared afterHash
  kExcludedByContract,    // under a path the run's contract excludes
  kOutsideWriteScope,     // outside the run's repository.write / repository.delete scope
};
std::string_view UndeclaredKindName(UndeclaredKind kind);

struct UndeclaredChange {
  std::string path;
  std::string grounded;  // digest at grounding (sha256:… or "absent")
  std::string now;       // digest now
  UndeclaredKind kind = UndeclaredKind::kUndeclared;

  Json ToJson() const;  // {"path", "groundedHash", "currentHash", "kind"}
};

// A path's digest at grounding and now.
struct PathDigests {
  std::string grounded;
  std::string now;
};

// The undeclared changes among `candidates` (every path that may have
// changed since grounding, with both digests), in path order: a path whose
// digests differ and whose content now is not what the last accepted
// FileChange of it declared (`declared`: path -> that afterHash, "absent"
// for a deletion). `classify` says, for a path no FileChange names, whether
// it is kUndeclared, kExcludedByContract or kOutsideWriteScope.
std::vector<UndeclaredChange> FindUndeclaredChanges(const std::map<std::string, PathDigests>& candidates,
                                                    const std::map<std::string, std::string>& declared,
                                                    const std::function<UndeclaredKind(std::string_view)>& classify);

// "src/a.ts (undeclared), build/x (outside_write_scope)": the list for a message, at most `limit` named.
std::string DescribeUndeclared(const std::vector<UndeclaredChange>& changes, size_t limit = 20);

}  // namespace telic::observation
