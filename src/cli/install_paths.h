// Confinement of the paths `telic install` / `telic uninstall` touch: every
// path read from a manifest (telic's own in the state directory, or a legacy
// one inside the repository) or computed from a host plan is a path relative
// to the scope's base folder (the repository root for project scope, $HOME
// for user scope) and must stay inside it (docs/HOSTS.md "Safety").
#pragma once

#include <filesystem>
#include <string>

#include "base/status.h"

namespace telic::cli {

// `relative` joined to `base` (a real, absolute, symlink-free folder) when it
// stays inside `base`: refused (kPermissionDenied, naming `what`, the path and
// the reason) when it is empty, absolute, has a NUL, a `.` or `..` component,
// or when one of its existing components is a symlink whose target resolves
// outside `base` (or does not resolve). A symlink that resolves inside `base`
// is followed (a dotfiles link inside $HOME). Components that do not exist
// yet are fine: what install creates under them is inside `base`.
[[nodiscard]] Result<std::filesystem::path> ConfinePath(const std::filesystem::path& base, const std::string& relative,
                                                        const std::string& what);

// The real path of an existing folder (symlinks resolved), or an error.
[[nodiscard]] Result<std::filesystem::path> RealFolder(const std::string& path, const std::string& what);

}  // namespace telic::cli
