// Reading a file whose path came from a command line, an environment
// variable or a configuration: only a regular file (symbolic links are
// followed) of at most a given size. A directory, FIFO, socket or device is
// refused without blocking and without reading from it.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace telic {

// The whole content of the regular file at `path`, at most `max_bytes` bytes.
// Errors ("cannot read <what> <path>: <reason>", `what` e.g. "--policy"):
//   kNotFound           no such file
//   kInvalidArgument    a directory, FIFO, socket or device; more than
//                       `max_bytes` bytes (also when the file grows while read)
//   kFailedPrecondition any other open or read failure (permission, I/O)
// A FIFO is opened non-blocking, so a FIFO without a writer never hangs.
[[nodiscard]] Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes, std::string_view what);

// Why `path` is not usable as a regular file ("it is a directory, not a
// file", "it is a FIFO, …"), or "" when it is one or does not exist. Never
// opens the file.
std::string NonRegularFileReason(const std::string& path);

}  // namespace telic
