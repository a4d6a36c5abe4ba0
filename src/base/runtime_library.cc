#include "base/runtime_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace telic {

std::string DlErrorMessage() {
  const char* reason = dlerror();
  return reason != nullptr ? reason : "unknown reason";
}

void AbortWithLoadError(const std::string& error) {
  std::fprintf(stderr, "telic: %s\n", error.c_str());
  std::abort();
}

}  // namespace telic
