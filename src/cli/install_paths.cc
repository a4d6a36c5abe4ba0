#include "cli/install_paths.h"

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/canonical_json.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;

bool IsWithin(const fs::path& inner, const fs::path& outer) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

std::unexpected<Error> Outside(const std::string& what, const std::string& relative, const fs::path& base,
                               const std::string& reason) {
  return Fail(ErrorCode::kPermissionDenied,
              fmt::format("refusing {} {}: {}; telic only touches files inside {}", what,
                          Json(relative).dump(-1, ' ', false, Json::error_handler_t::replace), reason, base.string()));
}

std::optional<fs::path> RealPathOf(const fs::path& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) return std::nullopt;
  return fs::path(buffer);
}

}  // namespace

Result<fs::path> ConfinePath(const fs::path& base, const std::string& relative, const std::string& what) {
  if (relative.empty()) return Outside(what, relative, base, "the path is empty");
  if (relative.find('\0') != std::string::npos) return Outside(what, relative, base, "the path has a NUL byte");
  const fs::path rel(relative);
  if (rel.is_absolute() || relative.front() == '/') return Outside(what, relative, base, "the path is absolute");
  fs::path current = base;
  bool exists = true;
  for (const fs::path& part : rel) {
    if (part.empty()) continue;  // a trailing or doubled slash
    if (part == "." || part == "..") return Outside(what, relative, base, "the path has a . or .. component");
    current /= part;
    if (!exists) continue;
    struct stat st;
    if (::lstat(current.c_str(), &st) != 0) {
      exists = false;  // nothing below a missing component exists either
      continue;
    }
    if (!S_ISLNK(st.st_mode)) continue;
    std::optional<fs::path> target = RealPathOf(current);
    if (!target) {
      return Outside(what, relative, base, fmt::format("{} is a symlink that does not resolve", current.string()));
    }
    if (!IsWithin(*target, base)) {
      return Outside(what, relative, base,
                     fmt::format("{} is a symlink to {}, outside the scope", current.string(), target->string()));
    }
  }
  return base / rel;
}

Result<fs::path> RealFolder(const std::string& path, const std::string& what) {
  std::optional<fs::path> real = RealPathOf(path);
  std::error_code ec;
  if (!real || !fs::is_directory(*real, ec)) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} {} is not an existing folder", what, path));
  }
  return *real;
}

}  // namespace telic::cli
