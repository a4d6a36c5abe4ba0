// libgit2 handles shared by the grounding layer.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "grounding/libgit2.h"

namespace telic::grounding {

// Initialises libgit2 once per process and shuts out the system, XDG and
// global configuration: only the repository's own configuration counts (the
// reference runs git with GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null).
void InitLibgit2();

struct RepoDeleter {
  void operator()(git_repository* repo) const { git::repository_free(repo); }
};
using RepoPtr = std::unique_ptr<git_repository, RepoDeleter>;

// The repository whose work tree top is exactly `root` (a real path), or
// null. Each thread that calls into libgit2 needs its own handle.
RepoPtr OpenWorkTree(const std::string& root);

std::string OidHex(const git_oid& oid);

}  // namespace telic::grounding
