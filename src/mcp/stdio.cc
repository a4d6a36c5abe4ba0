#include "mcp/stdio.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "mcp/jsonrpc.h"

namespace telic::mcp {
namespace {

volatile std::sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

// Writes all of `parts` to `fd`, continuing after partial writes and
// interrupted calls (the stop signals are installed without SA_RESTART);
// false when the descriptor fails (the client went away).
bool WriteAll(int fd, iovec* parts, int count) {
  while (count > 0) {
    ssize_t written = ::writev(fd, parts, count);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    auto left = static_cast<size_t>(written);
    while (count > 0 && left >= parts->iov_len) {
      left -= parts->iov_len;
      ++parts;
      --count;
    }
    if (count > 0) {
      parts->iov_base = static_cast<char*>(parts->iov_base) + left;
      parts->iov_len -= left;
    }
  }
  return true;
}

// Reads one line (without '\n') into `line`. Returns false at EOF with no
// data. Sets `too_long` and keeps consuming when the line exceeds `limit`.
bool ReadLine(std::FILE* in, std::string& line, size_t limit, bool& too_long) {
  line.clear();
  too_long = false;
  bool any = false;
  int c;
  while ((c = getc_unlocked(in)) != EOF) {
    any = true;
    if (c == '\n') return true;
    if (too_long) continue;
    if (line.size() >= limit) {
      too_long = true;
      line.clear();
      continue;
    }
    line.push_back(static_cast<char>(c));
  }
  return any;
}

}  // namespace

// One writev(2) where the pipe takes it all: a 27 KB reply went out in three
// write(2) calls through stdio's buffer, waking the client up to three times.
// Whoever takes `out`'s lock sees only whole lines: telic serve's failed-open
// exit takes it before ending the process.
void WriteLine(std::FILE* out, const std::string& line) {
  ::flockfile(out);
  ::fflush_unlocked(out);  // nothing else writes to `out`; kept so that order would hold
  int fd = ::fileno_unlocked(out);
  if (fd >= 0) {
    char newline = '\n';
    iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {&newline, 1}};
    (void)WriteAll(fd, parts, 2);
  } else {  // a stream without a descriptor
    ::fwrite_unlocked(line.data(), 1, line.size(), out);
    ::fputc_unlocked('\n', out);
    ::fflush_unlocked(out);
  }
  ::funlockfile(out);
}

int ServeStdio(Server& server, std::FILE* in, std::FILE* out) {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a signal interrupts the blocking read
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // Replies and notifications share stdout; one line at a time.
  auto write_mutex = std::make_shared<std::mutex>();
  auto write = [out, write_mutex](const std::string& text) {
    std::lock_guard lock(*write_mutex);
    WriteLine(out, text);
  };
  server.set_output(write);
  std::string line;
  bool too_long = false;
  while (!g_stop && ReadLine(in, line, Server::kMaxMessageBytes, too_long)) {
    if (too_long) {
      write(ErrorResponse(nullptr, kInvalidRequest,
                                   fmt::format("Invalid Request: message exceeds {} bytes", Server::kMaxMessageBytes)));
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (auto reply = server.HandleLine(line)) write(*reply);
  }
  server.set_output(nullptr);
  return 0;
}

}  // namespace telic::mcp
