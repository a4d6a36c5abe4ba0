#include "cli/http_settings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace telic::cli {
namespace {

class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  ~FileCloser() { ::close(fd_); }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  int fd_;
};

std::unexpected<Error> Refuse(const std::string& path, std::string_view why) {
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("--auth-token-file {}: {}", path, why));
}

}  // namespace

Result<std::string> ReadTokenFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot read --auth-token-file {}: {}", path, std::strerror(errno)));
  FileCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Refuse(path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Refuse(path, "not a regular file");
  if (st.st_mode & 077) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("--auth-token-file {} is accessible by group or others; chmod 600 it", path));
  }
  if (static_cast<size_t>(st.st_size) > kMaxTokenFileBytes) {
    return Refuse(path, fmt::format("larger than {} bytes", kMaxTokenFileBytes));
  }
  std::string token(kMaxTokenFileBytes + 1, '\0');
  size_t size = 0;
  while (size < token.size()) {
    ssize_t n = ::read(fd, token.data() + size, token.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Refuse(path, std::strerror(errno));
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  if (size > kMaxTokenFileBytes) return Refuse(path, fmt::format("larger than {} bytes", kMaxTokenFileBytes));
  token.resize(size);
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  token.erase(token.begin(), std::find_if(token.begin(), token.end(), not_space));
  token.erase(std::find_if(token.rbegin(), token.rend(), not_space).base(), token.end());
  if (token.size() < 16) return Fail(ErrorCode::kFailedPrecondition, "the token in --auth-token-file must have at least 16 characters");
  return token;
}

void AddHttpLimitOptions(CLI::App& command, HttpLimitFlags& flags) {
  command.add_option("--http-head-timeout", flags.head_timeout_s,
                     "seconds for a whole request head to arrive (default 10)")->check(CLI::Range(1, 3600));
  command.add_option("--http-body-timeout", flags.body_timeout_s,
                     "seconds for a whole request body to arrive (default 10)")->check(CLI::Range(1, 3600));
  command.add_option("--http-max-connections", flags.max_connections,
                     "connections waiting for a request (default 1024; beyond, the longest waiting is closed)")
      ->check(CLI::Range(1, 100000));
  command.add_option("--http-max-sessions", flags.max_sessions,
                     "MCP sessions (default 4096; beyond, the least recently used idle one is evicted)")
      ->check(CLI::Range(1, 1000000));
  command.add_option("--http-session-init-timeout", flags.session_init_timeout_s,
                     "seconds a session may stay uninitialized (default 10)")->check(CLI::Range(1, 86400));
  command.add_option("--http-session-idle-timeout", flags.session_idle_timeout_s,
                     "seconds an idle session is kept (default 1800)")->check(CLI::Range(1, 604800));
}

void ApplyHttpLimits(const HttpLimitFlags& flags, mcp::HttpOptions& http) {
  if (flags.head_timeout_s > 0) http.head_timeout_ms = flags.head_timeout_s * 1000;
  if (flags.body_timeout_s > 0) http.body_timeout_ms = flags.body_timeout_s * 1000;
  if (flags.max_connections > 0) http.max_connections = flags.max_connections;
  if (flags.max_sessions > 0) http.max_sessions = flags.max_sessions;
  if (flags.session_init_timeout_s > 0) http.session_init_timeout_s = flags.session_init_timeout_s;
  if (flags.session_idle_timeout_s > 0) http.session_idle_timeout_s = flags.session_idle_timeout_s;
}

}  // namespace telic::cli
