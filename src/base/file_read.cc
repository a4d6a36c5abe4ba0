#include "base/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace telic {
namespace {

// What kind of non-regular file `mode` describes, or "" for a regular file.
std::string_view KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "it is a directory, not a file";
  if (S_ISFIFO(mode)) return "it is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
  return "it is not a regular file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes, std::string_view what) {
  auto fail = [&](ErrorCode code, std::string_view reason) {
    return Fail(code, fmt::format("cannot read {} {}: {}", what, path, reason));
  };
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return fail(ErrorCode::kNotFound, "no such file");
    return fail(ErrorCode::kFailedPrecondition, std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return fail(ErrorCode::kFailedPrecondition, std::strerror(errno));
  if (std::string_view kind = KindOf(st.st_mode); !kind.empty()) return fail(ErrorCode::kInvalidArgument, kind);
  auto too_big = [&] { return fail(ErrorCode::kInvalidArgument, fmt::format("it is larger than {} bytes", max_bytes)); };
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) return too_big();
  std::string content;
  content.resize(static_cast<size_t>(st.st_size) + 1);  // one more byte shows growth
  size_t used = 0;
  while (true) {
    if (used == content.size()) {
      if (content.size() > max_bytes) return too_big();
      content.resize(std::min(content.size() * 2 + 4096, max_bytes + 1));
    }
    ssize_t n = ::read(fd.get(), content.data() + used, content.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(ErrorCode::kFailedPrecondition, std::strerror(errno));
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  if (used > max_bytes) return too_big();
  content.resize(used);
  return content;
}

std::string NonRegularFileReason(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::string(KindOf(st.st_mode));
}

}  // namespace telic
