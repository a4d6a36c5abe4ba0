#include "grounding/libgit2.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace telic::grounding::git {
namespace {

struct Loaded {
  Api api;
  std::string error;  // empty when loaded
};

std::string DlError() {
  const char* reason = dlerror();
  return reason != nullptr ? reason : "unknown reason";
}

Loaded LoadOnce() {
  Loaded out;
  dlerror();
  // Kept open for the life of the process.
  void* handle = dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    out.error = fmt::format("reading git repositories needs {} (Debian package libgit2-{}), which could not be "
                            "loaded: {}",
                            kLibraryName, LIBGIT2_SOVERSION, DlError());
    return out;
  }
#define TELIC_LIBGIT2_RESOLVE(name)                                                                        \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(handle, "git_" #name));                   \
  if (out.api.name == nullptr) {                                                                           \
    out.error = fmt::format("{} has no function git_{}: {}", kLibraryName, #name, DlError());             \
    dlclose(handle);                                                                                       \
    return out;                                                                                            \
  }
  TELIC_LIBGIT2_FUNCTIONS(TELIC_LIBGIT2_RESOLVE)
#undef TELIC_LIBGIT2_RESOLVE
  return out;
}

const Loaded& Library() {
  static const Loaded loaded = LoadOnce();
  return loaded;
}

}  // namespace

Status Load() {
  const Loaded& loaded = Library();
  if (!loaded.error.empty()) return Fail(ErrorCode::kFailedPrecondition, loaded.error);
  return Ok();
}

const Api& Table() {
  const Loaded& loaded = Library();
  if (!loaded.error.empty()) {
    std::fprintf(stderr, "telic: %s\n", loaded.error.c_str());
    std::abort();
  }
  return loaded.api;
}

}  // namespace telic::grounding::git
