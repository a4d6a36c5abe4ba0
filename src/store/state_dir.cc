#include "store/state_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "base/sha256.h"

extern char** environ;

namespace telic::store {
namespace {

namespace fs = std::filesystem;

std::string Get(const Environment& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

Result<std::string> RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("repository root {} cannot be resolved: {}", path, std::strerror(errno)));
  }
  return std::string(buffer);
}

// The nearest existing ancestor of `path`, resolved, with the rest re-appended.
fs::path ResolveThroughNearestAncestor(const fs::path& path) {
  fs::path existing = path;
  fs::path rest;
  while (!existing.empty() && !fs::exists(existing)) {
    rest = existing.filename() / rest;
    existing = existing.parent_path();
  }
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(existing, ec);
  if (ec) resolved = existing;
  return (resolved / rest).lexically_normal();
}

bool IsWithin(const fs::path& inner, const fs::path& outer) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

bool Overlaps(const fs::path& a, const fs::path& b) { return IsWithin(a, b) || IsWithin(b, a); }

// The current user's home from the password database (as Node's os.homedir()).
std::string PasswdHome() {
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(getuid(), &entry, buffer, sizeof buffer, &found) != 0 || !found || !found->pw_dir) return {};
  return found->pw_dir;
}

// Creates `dir` and every missing parent with mode 0700.
std::error_code CreatePrivateDirectories(const fs::path& dir) {
  fs::path current;
  for (const fs::path& part : dir) {
    current /= part;
    if (::mkdir(current.c_str(), 0700) != 0 && errno != EEXIST) return std::error_code(errno, std::generic_category());
  }
  return {};
}

}  // namespace

Environment CurrentEnvironment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string_view::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

Result<StateLocation> ResolveStateLocation(const Environment& env, const std::string& cwd) {
  std::string root_input = Get(env, "TELIC_REPOSITORY_ROOT");
  if (root_input.empty()) root_input = cwd;
  TELIC_ASSIGN_OR_RETURN(std::string root, RealPath(root_input));
  StateLocation location;
  location.repository_root = root;
  std::string explicit_dir = Get(env, "TELIC_STATE_DIR");
  if (!explicit_dir.empty()) {
    location.state_dir = fs::absolute(fs::path(explicit_dir)).lexically_normal().string();
  } else {
    std::string base = Get(env, "XDG_STATE_HOME");
    if (base.empty()) {
      std::string home = Get(env, "HOME");
      if (home.empty()) home = PasswdHome();
      if (home.empty()) {
        return Fail(ErrorCode::kFailedPrecondition,
                    "cannot find a state directory: set TELIC_STATE_DIR, XDG_STATE_HOME or HOME");
      }
      base = (fs::path(home) / ".local" / "state").string();
    }
    std::string key = Sha256Hex(root).substr(0, 24);
    location.state_dir = (fs::absolute(fs::path(base)) / "telic" / "repositories" / key).lexically_normal().string();
  }
  if (location.state_dir.size() > 1 && location.state_dir.back() == '/') location.state_dir.pop_back();
  location.ledger_path = location.state_dir + "/telic.sqlite3";
  return location;
}

Result<std::string> ResolveHomeStateDir(const Environment& env, const std::string& home) {
  TELIC_ASSIGN_OR_RETURN(std::string real, RealPath(home));
  std::string base = Get(env, "XDG_STATE_HOME");
  if (base.empty()) base = (fs::path(real) / ".local" / "state").string();
  const std::string key = Sha256Hex(real).substr(0, 24);
  return (fs::absolute(fs::path(base)) / "telic" / "homes" / key).lexically_normal().string();
}

Status PrepareStateDir(const StateLocation& location) {
  fs::path dir(location.state_dir);
  fs::path root(location.repository_root);
  if (Overlaps(dir.lexically_normal(), root) || Overlaps(ResolveThroughNearestAncestor(dir), root)) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("Telic state directory {} must be outside the repository {} and must not contain it",
                            location.state_dir, location.repository_root));
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("Telic state directory {} is a symlink", location.state_dir));
    }
    if (!S_ISDIR(st.st_mode)) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("Telic state directory {} is not a directory", location.state_dir));
    }
  } else {
    std::error_code ec = CreatePrivateDirectories(dir);
    if (ec) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("cannot create Telic state directory {}: {}", location.state_dir, ec.message()));
    }
    ::chmod(dir.c_str(), 0700);
  }
  for (const std::string suffix : {"", "-wal", "-shm"}) {
    std::string path = location.ledger_path + suffix;
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("Telic ledger file {} is not a regular file", path));
    }
  }
  return Ok();
}

namespace {

// <state_dir>/scratch, created (0700, with the state directory when that is
// missing too) when `create`; never a symlink.
Result<fs::path> ScratchFolder(const std::string& state_dir, bool create) {
  fs::path folder = fs::path(state_dir) / kScratchFolder;
  struct stat st;
  if (::lstat(folder.c_str(), &st) != 0) {
    if (!create) return folder;
    if (std::error_code ec = CreatePrivateDirectories(folder)) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot create {}: {}", folder.string(), ec.message()));
    }
    if (::lstat(folder.c_str(), &st) != 0) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot create {}: {}", folder.string(), std::strerror(errno)));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} is not a directory (or is a symlink)", folder.string()));
  }
  return folder;
}

// The same directory: `fd` (open) and `path` name one inode.
bool SameDirectory(int fd, const fs::path& path) {
  struct stat by_fd, by_path;
  return ::fstat(fd, &by_fd) == 0 && ::lstat(path.c_str(), &by_path) == 0 && by_fd.st_dev == by_path.st_dev &&
         by_fd.st_ino == by_path.st_ino;
}

}  // namespace

Result<std::unique_ptr<ScratchDir>> ScratchDir::Create(const std::string& state_dir) {
  TELIC_ASSIGN_OR_RETURN(fs::path folder, ScratchFolder(state_dir, /*create=*/true));
  // A cleaner may take the lock of a directory created an instant before its
  // creator did, and remove it: the creator then tries again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string pattern = (folder / "bundle-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot create a scratch directory in {}: {}", folder.string(),
                                                              std::strerror(errno)));
    }
    int fd = ::open(pattern.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX) == 0 && SameDirectory(fd, pattern)) {
      return std::unique_ptr<ScratchDir>(new ScratchDir(pattern, fd));
    }
    if (fd >= 0) ::close(fd);
  }
  return Fail(ErrorCode::kUnavailable, fmt::format("cannot hold a scratch directory in {}", folder.string()));
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
  ::close(lock_fd_);
}

Result<int> CleanStaleScratch(const std::string& state_dir) {
  TELIC_ASSIGN_OR_RETURN(fs::path folder, ScratchFolder(state_dir, /*create=*/false));
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(folder, ec))) return 0;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    int fd = ::open(entry.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);  // held by a live process
      continue;
    }
    std::error_code remove_ec;
    if (fs::remove_all(entry.path(), remove_ec) > 0 && !remove_ec) ++removed;
    if (fd >= 0) ::close(fd);
  }
  if (ec) return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot list {}: {}", folder.string(), ec.message()));
  return removed;
}

}  // namespace telic::store
