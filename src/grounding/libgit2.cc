#include "grounding/libgit2.h"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

#include "base/runtime_library.h"

namespace telic::grounding::git {
namespace {

using Loaded = RuntimeLibrary<Api>;

Loaded LoadOnce() {
  Loaded out;
  dlerror();
  // Kept open for the life of the process.
  void* handle = dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    out.error = fmt::format("reading git repositories needs {} (Debian package libgit2-{}), which could not be "
                            "loaded: {}",
                            kLibraryName, LIBGIT2_SOVERSION, DlErrorMessage());
    return out;
  }
#define TELIC_LIBGIT2_RESOLVE(name)                                                                        \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(handle, "git_" #name));                   \
  if (out.api.name == nullptr) {                                                                           \
    out.error = fmt::format("{} has no function git_{}: {}", kLibraryName, #name, DlErrorMessage());       \
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

Status Load() { return Library().status(); }

const Api& Table() { return Library().TableOrAbort(); }

}  // namespace telic::grounding::git
