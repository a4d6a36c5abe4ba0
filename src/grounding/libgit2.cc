#include "grounding/libgit2.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

#include <fmt/format.h>

#include "base/runtime_library.h"

namespace telic::grounding::git {
namespace {

std::atomic<int> ca_bundle_parses_declined{0};

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

int CaBundleParsesDeclined() { return ca_bundle_parses_declined.load(); }

const Api& Table() { return Library().TableOrAbort(); }

}  // namespace telic::grounding::git

// Declines libgit2's parse of the system CA bundle (see libgit2.h). The
// executables export this definition (CMakeLists.txt), so the dynamic linker
// binds libgit2's call to it before libmbedx509's. The chain stays empty:
// success with no certificate, so libgit2 records no error, and an HTTPS
// peer checked against the chain would fail verification, never pass it.
extern "C" int mbedtls_x509_crt_parse_file(void* /*chain*/, const char* /*path*/) {
  telic::grounding::git::ca_bundle_parses_declined.fetch_add(1);
  return 0;
}
