// The HTTP listener's settings from the command line, shared by
// `telic serve --http` and `telic ui`: the bearer token file and the
// abuse limits (docs/API.md "Limits").
#pragma once

#include <string>

#include "base/status.h"
#include "mcp/http_transport.h"

namespace CLI {
class App;
}

namespace telic::cli {

// The token file is read only when it is a regular file of at most this size.
inline constexpr size_t kMaxTokenFileBytes = 4096;

// The bearer token from --auth-token-file: the file's content without
// surrounding whitespace. Refused (never blocking, never aborting): a path
// that does not exist or is not a regular file (a directory, FIFO or
// device), a file readable by group or others, one over
// kMaxTokenFileBytes, a token under 16 characters.
[[nodiscard]] Result<std::string> ReadTokenFile(const std::string& path);

// --http-* limit options; zero values keep mcp::HttpOptions' defaults.
struct HttpLimitFlags {
  int head_timeout_s = 0;
  int body_timeout_s = 0;
  size_t max_connections = 0;
  size_t max_sessions = 0;
  int session_init_timeout_s = 0;
  int session_idle_timeout_s = 0;
};

void AddHttpLimitOptions(CLI::App& command, HttpLimitFlags& flags);
void ApplyHttpLimits(const HttpLimitFlags& flags, mcp::HttpOptions& http);

}  // namespace telic::cli
