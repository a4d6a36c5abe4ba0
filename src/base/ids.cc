#include "base/ids.h"

#include <cctype>
#include <cerrno>
#include <stdexcept>

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/text.h"

namespace telic {
namespace {

// Reads `count` bytes of /dev/urandom into `bytes` (the same kernel CSPRNG).
bool ReadUrandom(unsigned char* bytes, size_t count) {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = ::read(fd, bytes + filled, count - filled);
    if (got > 0) {
      filled += static_cast<size_t>(got);
    } else if (!(got < 0 && errno == EINTR)) {
      break;
    }
  }
  ::close(fd);
  return filled == count;
}

void FillRandom(unsigned char* bytes, size_t count) {
  if (!FillRandomBytes(bytes, count)) throw std::runtime_error("the OS random source failed");
}

}  // namespace

bool FillRandomBytes(unsigned char* bytes, size_t count) {
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = ::getrandom(bytes + filled, count - filled, 0);
    if (got > 0) {
      filled += static_cast<size_t>(got);
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      return ReadUrandom(bytes + filled, count - filled);
    }
  }
  return true;
}

std::string RandomIdSource::NewUuid() {
  unsigned char b[16];
  FillRandom(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
  std::string hex = LowerHex(std::string_view(reinterpret_cast<const char*>(b), sizeof b));
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) +
         "-" + hex.substr(20);
}

std::string SequentialIdSource::NewUuid() { return fmt::format("00000000-0000-4000-8000-{:012x}", next_++); }

std::string RandomHex(size_t count) {
  std::string bytes(count, '\0');
  FillRandom(reinterpret_cast<unsigned char*>(bytes.data()), count);
  return LowerHex(bytes);
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || s.size() > kMaxIdentifierLength) return false;
  if (!std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || !(std::isalnum(u) || c == '.' || c == '_' || c == ':' || c == '-')) return false;
  }
  return true;
}

std::string IdentifierProblem(std::string_view s) {
  if (s.empty()) return "is empty";
  if (s.size() > kMaxIdentifierLength) {
    return fmt::format("is {} bytes long; an identifier has at most {} characters", s.size(), kMaxIdentifierLength);
  }
  for (size_t i = 0; i < s.size(); ++i) {
    auto u = static_cast<unsigned char>(s[i]);
    bool alnum = u < 0x80 && std::isalnum(u);
    if (alnum || (i > 0 && (u == '.' || u == '_' || u == ':' || u == '-'))) continue;
    std::string shown = u > 0x20 && u < 0x7F ? fmt::format("'{}'", static_cast<char>(u)) : fmt::format("0x{:02x}", u);
    return fmt::format("character {} ({}) is not allowed: an identifier matches ^[A-Za-z0-9][A-Za-z0-9._:-]*$", i + 1, shown);
  }
  return "";
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (s[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  if (s == "00000000-0000-0000-0000-000000000000" || s == "ffffffff-ffff-ffff-ffff-ffffffffffff") return true;
  char version = s[14];
  char variant = static_cast<char>(std::tolower(static_cast<unsigned char>(s[19])));
  return version >= '1' && version <= '8' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
}

}  // namespace telic
