#include "grounding/git_repo.h"

#include <climits>
#include <cstdlib>
#include <mutex>

#include "grounding/paths.h"

namespace telic::grounding {

void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git::libgit2_init();
    for (int level : {GIT_CONFIG_LEVEL_PROGRAMDATA, GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
                      GIT_CONFIG_LEVEL_GLOBAL}) {
      git::libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
    }
  });
}

RepoPtr OpenWorkTree(const std::string& root) {
  InitLibgit2();
  git_repository* raw = nullptr;
  if (git::repository_open_ext(&raw, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return nullptr;
  RepoPtr repo(raw);
  const char* workdir = git::repository_workdir(repo.get());
  if (workdir == nullptr || RealPath(workdir) != root) return nullptr;
  return repo;
}

std::string OidHex(const git_oid& oid) {
  char buffer[GIT_OID_HEXSZ + 1];
  git::oid_tostr(buffer, sizeof buffer, &oid);
  return buffer;
}

}  // namespace telic::grounding
