// The production Grounder: repository grounding (src/grounding) bound to the
// run's effective permissions and the state directory.
#pragma once

#include <string>
#include <vector>

#include "controller/run_service.h"

namespace telic::controller {

// Grounds with grounding::GroundRepository. Only paths matched by a
// repository.read scope of the grounding action's effectivePermissions are
// ever listed, read or hashed (deny by default: no scope, no file).
// `excluded_roots` (the state directory) are never inventoried.
Grounder MakeRepositoryGrounder(std::vector<std::string> excluded_roots);

}  // namespace telic::controller
