#include "policy/path_scope.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "policy/path_segments.h"
#include "policy/utf8_scan.h"

namespace telic::policy {
namespace {

using path_segments::JoinSegments;
using path_segments::SplitSlash;

constexpr size_t kMaxPathBytes = 4096;
constexpr int kMaxSymlinkHops = 40;

std::unexpected<Error> Deny(std::string reason) { return Fail(ErrorCode::kPermissionDenied, std::move(reason)); }

std::string AbsoluteFromSegments(const std::vector<std::string>& segments) { return "/" + JoinSegments(segments); }

// Segments of an absolute path with "" and "." dropped and ".." popped
// (used for the repository root only; targets may not contain "..").
std::vector<std::string> LexicalSegments(std::string_view absolute) {
  std::vector<std::string> out;
  for (auto part : SplitSlash(absolute)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    out.emplace_back(part);
  }
  return out;
}

// Resolves every symlink of an absolute path the way the kernel would: each
// existing component is lstat'ed, a symlink is replaced by its target (an
// absolute target restarts from "/", ".." in a target pops a component that
// is already symlink-free), and from the first missing component on the rest
// is taken lexically. Returns the canonical segments.
Result<std::vector<std::string>> ResolveSymlinks(const FileSystem& fs, std::string_view absolute) {
  std::vector<std::string> pending;  // components still to walk, last = next
  for (auto part : SplitSlash(absolute)) pending.emplace_back(part);
  std::reverse(pending.begin(), pending.end());
  std::vector<std::string> out;
  bool missing = false;
  int hops = 0;
  while (!pending.empty()) {
    std::string component = std::move(pending.back());
    pending.pop_back();
    if (component.empty() || component == ".") continue;
    if (component == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    if (missing) {
      out.push_back(std::move(component));
      continue;
    }
    out.push_back(component);
    std::string candidate = AbsoluteFromSegments(out);
    TELIC_ASSIGN_OR_RETURN(FileKind kind, fs.Lstat(candidate));
    if (kind == FileKind::kMissing) {
      missing = true;
      continue;
    }
    if (kind != FileKind::kSymlink) continue;
    if (++hops > kMaxSymlinkHops) return Deny("too many levels of symlinks at " + candidate);
    TELIC_ASSIGN_OR_RETURN(std::string target, fs.ReadLink(candidate));
    if (target.empty()) return Deny("empty symlink target at " + candidate);
    if (target.find('\0') != std::string::npos) return Deny("NUL byte in symlink target at " + candidate);
    out.pop_back();
    if (target.front() == '/') out.clear();
    auto parts = SplitSlash(target);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.emplace_back(*it);
  }
  return out;
}

bool HasPrefix(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  if (path.size() < prefix.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), path.begin());
}

// The checks on the raw text of a target path, in a fixed order so the
// reason names the most telling problem.
Status CheckPathText(std::string_view input, const MatchOptions& options) {
  if (input.empty()) return Deny("empty path");
  if (input.size() > kMaxPathBytes) return Deny("path longer than 4096 bytes");
  if (input.find('\0') != std::string_view::npos) return Deny("NUL byte in path");
  for (char c : input) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return Deny("control character in path");
  }
  if (input.find('\\') != std::string_view::npos) return Deny("backslash in path (only '/' separates segments)");
  if (input.find('%') != std::string_view::npos) return Deny("percent-encoding in path ('%' is not allowed)");
  if (input.find_first_of("*?") != std::string_view::npos) {
    return Deny("glob character in path (targets are literal paths, not patterns)");
  }
  if (!IsValidUtf8(input)) return Deny("invalid UTF-8 in path");
  for (size_t i = 0; i < input.size();) {
    char32_t cp;
    size_t length;
    DecodeUtf8At(input, i, cp, length);
    if (IsInvisibleOrBidi(cp)) {
      return Deny("invisible or bidirectional control character " + CodePointName(cp) + " in path");
    }
    i += length;
  }
  if (options.case_insensitive) {
    for (char c : input) {
      if (static_cast<unsigned char>(c) >= 0x80) return Deny("non-ASCII path on a case-insensitive filesystem");
    }
  }
  if (input.front() == '~') return Deny("path starts with '~' (home-directory expansion)");
  return Ok();
}

}  // namespace

// ---------------------------------------------------------------------------
// Filesystem

Result<FileKind> RealFileSystem::Lstat(const std::string& absolute_path) const {
  struct stat st;
  if (::lstat(absolute_path.c_str(), &st) != 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR) return FileKind::kMissing;
    return Deny("cannot inspect " + absolute_path + ": " + std::strerror(error));
  }
  if (S_ISLNK(st.st_mode)) return FileKind::kSymlink;
  if (S_ISDIR(st.st_mode)) return FileKind::kDirectory;
  return FileKind::kOther;
}

Result<std::string> RealFileSystem::ReadLink(const std::string& absolute_path) const {
  std::string buffer(256, '\0');
  while (buffer.size() <= 65536) {
    ssize_t n = ::readlink(absolute_path.c_str(), buffer.data(), buffer.size());
    if (n < 0) return Deny("cannot read symlink " + absolute_path + ": " + std::strerror(errno));
    if (static_cast<size_t>(n) < buffer.size()) {
      buffer.resize(static_cast<size_t>(n));
      return buffer;
    }
    buffer.resize(buffer.size() * 2);
  }
  return Deny("symlink target too long at " + absolute_path);
}

std::optional<std::string> RealFileSystem::RealPath(const std::string& absolute_path) const {
  char* resolved = ::realpath(absolute_path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  std::free(resolved);
  return out;
}

const FileSystem& HostFileSystem() {
  static const RealFileSystem kFileSystem;
  return kFileSystem;
}

std::optional<bool> ProbeCaseInsensitive(const std::string& absolute_dir) {
  struct stat original;
  if (absolute_dir.empty() || absolute_dir.front() != '/' || ::stat(absolute_dir.c_str(), &original) != 0) {
    return std::nullopt;
  }
  // Swap the case of the last component that has letters.
  std::string swapped = absolute_dir;
  while (swapped.size() > 1 && swapped.back() == '/') swapped.pop_back();
  size_t end = swapped.size();
  while (end > 0) {
    size_t slash = swapped.rfind('/', end - 1);
    size_t begin = slash == std::string::npos ? 0 : slash + 1;
    bool changed = false;
    for (size_t i = begin; i < end; ++i) {
      char c = swapped[i];
      if (c >= 'a' && c <= 'z') {
        swapped[i] = static_cast<char>(c - 'a' + 'A');
        changed = true;
      } else if (c >= 'A' && c <= 'Z') {
        swapped[i] = static_cast<char>(c - 'A' + 'a');
        changed = true;
      }
    }
    if (changed) break;
    if (slash == std::string::npos || slash == 0) return std::nullopt;
    end = slash;
  }
  struct stat other;
  if (::stat(swapped.c_str(), &other) != 0) return errno == ENOENT ? std::optional<bool>(false) : std::nullopt;
  return other.st_dev == original.st_dev && other.st_ino == original.st_ino;
}

RepoRoot RepoRoot::OnDisk(std::string path) {
  MatchOptions match{ProbeCaseInsensitive(path).value_or(false)};
  return OnDisk(std::move(path), match);
}

RepoRoot RepoRoot::OnDisk(std::string path, MatchOptions match) {
  return RepoRoot{std::move(path), &HostFileSystem(), match};
}

// ---------------------------------------------------------------------------
// Target paths

namespace {

// The segments of `input` without empty and "." ones; ".." is denied, and on
// a case-insensitive filesystem so is a segment ending in '.' or ' '.
Result<std::vector<std::string>> InputSegments(std::string_view input, const RepoRoot& root) {
  std::vector<std::string> segments;
  for (auto part : SplitSlash(input)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return Deny("'..' segment in path");
    if (root.match.case_insensitive && (part.back() == '.' || part.back() == ' ')) {
      return Deny("segment ending in '.' or ' ' on a case-insensitive filesystem");
    }
    segments.emplace_back(part);
  }
  return segments;
}

// The repository root's real (symlink-resolved) segments, resolved on first use.
class CanonicalRoot {
 public:
  explicit CanonicalRoot(const RepoRoot& root) : root_(root) {}
  Result<std::vector<std::string>> Get() {
    if (!segments_) {
      auto resolved = ResolveSymlinks(*root_.fs, root_.path);
      if (!resolved) return Deny("cannot resolve the repository root: " + resolved.error().message());
      segments_ = std::move(*resolved);
    }
    return *segments_;
  }

 private:
  const RepoRoot& root_;
  std::optional<std::vector<std::string>> segments_;
};

// An absolute input's segments made relative to the root, as written or as
// its real path; denied when it is under neither.
Status StripRootPrefix(std::vector<std::string>& segments, const RepoRoot& root,
                       const std::vector<std::string>& root_segments, CanonicalRoot& canonical) {
  if (root.path.empty()) return Deny("absolute path with no known repository root");
  if (HasPrefix(segments, root_segments)) {
    segments.erase(segments.begin(), segments.begin() + static_cast<std::ptrdiff_t>(root_segments.size()));
    return Ok();
  }
  if (root.fs != nullptr) {
    TELIC_ASSIGN_OR_RETURN(auto real_root, canonical.Get());
    if (HasPrefix(segments, real_root)) {
      segments.erase(segments.begin(), segments.begin() + static_cast<std::ptrdiff_t>(real_root.size()));
      return Ok();
    }
  }
  return Deny("absolute path outside the repository root");
}

}  // namespace

Result<ResolvedPath> ResolveRepoPath(std::string_view input, const RepoRoot& root) {
  TELIC_RETURN_IF_ERROR(CheckPathText(input, root.match));
  if (!root.path.empty() && root.path.front() != '/') return Deny("repository root is not an absolute path");
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> segments, InputSegments(input, root));
  const std::vector<std::string> root_segments = LexicalSegments(root.path);
  CanonicalRoot canonical(root);
  if (input.front() == '/') TELIC_RETURN_IF_ERROR(StripRootPrefix(segments, root, root_segments, canonical));
  // "./~/x" or "/repo/~/x" would otherwise normalise to "~/x".
  if (!segments.empty() && segments.front().front() == '~') {
    return Deny("path starts with '~' (home-directory expansion)");
  }

  ResolvedPath out;
  out.lexical = segments.empty() ? "." : JoinSegments(segments);
  out.resolved = out.lexical;
  if (root.fs == nullptr || root.path.empty()) return out;

  TELIC_ASSIGN_OR_RETURN(auto real_root, canonical.Get());
  std::vector<std::string> full = root_segments;
  full.insert(full.end(), segments.begin(), segments.end());
  const std::string target = AbsoluteFromSegments(full);
  auto resolved = ResolveSymlinks(*root.fs, target);
  if (!resolved) return Deny("cannot resolve path: " + resolved.error().message());
  if (!HasPrefix(*resolved, real_root)) return Deny("path leaves the repository root through a symlink");
  // Defence in depth: where the filesystem can answer realpath(3) for the
  // target, it must agree with the walk above.
  if (auto real = root.fs->RealPath(target); real && *real != AbsoluteFromSegments(*resolved)) {
    return Deny("symlink resolution of the path is ambiguous (realpath disagrees)");
  }
  out.resolved = resolved->size() == real_root.size() ? "." : JoinSegments(*resolved, real_root.size());
  return out;
}

Result<std::string> NormalizeRepoPath(std::string_view input, const RepoRoot& root) {
  TELIC_ASSIGN_OR_RETURN(ResolvedPath path, ResolveRepoPath(input, root));
  return std::move(path.lexical);
}

}  // namespace telic::policy
