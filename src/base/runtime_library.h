// A shared library opened with dlopen the first time it is needed (libpq in
// src/store/libpq.h, libgit2 in src/grounding/libgit2.h): its table of
// resolved functions, or why it could not be loaded.
#pragma once

#include <string>

#include "base/status.h"

namespace telic {

// dlerror()'s message, or "unknown reason" when it has none.
std::string DlErrorMessage();

// Prints "telic: <error>" on stderr and aborts.
[[noreturn]] void AbortWithLoadError(const std::string& error);

template <typename Api>
struct RuntimeLibrary {
  Api api;
  std::string error;  // empty when loaded

  // Ok, or kFailedPrecondition with `error`.
  Status status() const {
    if (!error.empty()) return Fail(ErrorCode::kFailedPrecondition, error);
    return Ok();
  }
  // The function table. When the library did not load, prints the error and
  // aborts: a call into a library that is not there has no other outcome
  // (callers check status() first to report it instead).
  const Api& TableOrAbort() const {
    if (!error.empty()) AbortWithLoadError(error);
    return api;
  }
};

}  // namespace telic
