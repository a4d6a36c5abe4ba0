#include "grounding/inventory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>

#include "base/sha256.h"
#include "base/text.h"
#include "grounding/git_repo.h"
#include "grounding/paths.h"

namespace telic::grounding {
namespace {

// Work-tree digests of dirty files: files above this size, and every file
// once this many bytes have been hashed in one fingerprint, are represented
// by their size and modification time instead of their content.
constexpr int64_t kMaxDigestFileBytes = 64LL * 1024 * 1024;
constexpr int64_t kMaxDigestTotalBytes = 256LL * 1024 * 1024;

// The real path of the work tree of the repository containing `dir`.
std::optional<std::string> GitTopLevel(const std::string& dir) {
  InitLibgit2();
  git_repository* raw = nullptr;
  if (git::repository_open_ext(&raw, dir.c_str(), 0, std::getenv("GIT_CEILING_DIRECTORIES")) != 0) return std::nullopt;
  RepoPtr repo(raw);
  const char* workdir = git::repository_workdir(repo.get());
  if (workdir == nullptr) return std::nullopt;
  return RealPath(workdir);
}

bool ViewLess(std::string_view a, std::string_view b) { return Utf16Before(a, b); }

// Normalises, filters, sorts and de-duplicates `found` into `paths`, with
// rewritten paths kept in `inventory.owned` (paths already in normal form
// are kept as the views they are).
// The tracked paths of an index, as Collect reads them.
struct IndexPaths {
  const IndexFile& index;
  size_t size() const { return index.size(); }
  std::string_view operator[](size_t i) const { return index.path(i); }
};

template <typename Paths>
void Collect(const InventoryRequest& request, const Paths& found, Inventory& inventory,
             std::vector<std::string_view>& paths) {
  paths.reserve(found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    std::string_view path = found[i];
    if (!IsPlainRepositoryPath(path)) {
      auto normalized = NormalizeRepositoryPath(path);
      if (!normalized) {
        ++inventory.invalid_path_count;
        continue;
      }
      path = inventory.owned.emplace_back(std::move(*normalized));
    }
    if (request.is_excluded && request.is_excluded(path)) {
      ++inventory.excluded_path_count;
      continue;
    }
    if (request.may_read && !request.may_read(path)) {
      ++inventory.permission_skipped;
      continue;
    }
    paths.push_back(path);
  }
  // The index is already in this order almost always (byte order agrees with
  // UTF-16 order outside U+E000-U+FFFF): check in one pass before sorting.
  if (!std::is_sorted(paths.begin(), paths.end(), ViewLess)) std::sort(paths.begin(), paths.end(), ViewLess);
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
}

struct WalkState {
  const InventoryRequest* request;
  std::vector<std::string>* paths;
  Inventory* inventory;
  bool full = false;
};

bool Excluded(const PathPredicate& is_excluded, std::string_view path) {
  if (!is_excluded) return false;
  auto normalized = NormalizeRepositoryPath(path);
  return normalized && is_excluded(*normalized);
}

// The reference's bounded walk: entries sorted by UTF-16 code units, depth
// first, files and symlinks collected, excluded directory names skipped,
// stopping once max_walk_paths paths are found.
void Walk(WalkState& state, const std::string& absolute, const std::string& relative) {
  DIR* dir = opendir(absolute.c_str());
  if (dir == nullptr) return;
  std::vector<std::pair<std::string, unsigned char>> entries;
  while (dirent* entry = readdir(dir)) {
    std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    entries.emplace_back(std::string(name), entry->d_type);
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return Utf16Before(a.first, b.first); });
  for (auto& [name, type] : entries) {
    if (state.paths->size() >= state.request->max_walk_paths ||
        (state.request->cancelled && state.request->cancelled())) {
      state.full = true;
      return;
    }
    std::string rel = relative.empty() ? name : relative + "/" + name;
    std::string abs = absolute + "/" + name;
    if (Excluded(state.request->is_excluded, rel)) {
      ++state.inventory->excluded_path_count;
      continue;
    }
    if (type == DT_UNKNOWN) {
      struct stat info;
      if (lstat(abs.c_str(), &info) != 0) continue;
      type = S_ISDIR(info.st_mode) ? DT_DIR : S_ISREG(info.st_mode) ? DT_REG : S_ISLNK(info.st_mode) ? DT_LNK : DT_UNKNOWN;
    }
    if (type == DT_DIR) {
      if (!IsExcludedDirectoryPath(rel)) Walk(state, abs, rel);
      if (state.full) return;
    } else if (type == DT_REG || type == DT_LNK) {
      if (state.request->may_read) {
        auto normalized = NormalizeRepositoryPath(rel);
        if (normalized && !state.request->may_read(*normalized)) {
          ++state.inventory->permission_skipped;
          continue;
        }
      }
      state.paths->push_back(std::move(rel));
      if (state.request->progress && state.paths->size() % 1024 == 0) {
        state.request->progress(static_cast<int64_t>(state.paths->size()));
      }
    }
  }
}

std::string StatSignature(const struct stat& info) {
  return "stat:" + std::to_string(info.st_size) + ":" + std::to_string(info.st_mtim.tv_sec) + "." +
         std::to_string(info.st_mtim.tv_nsec);
}

// The digest of a dirty work-tree path (see FingerprintRepository).
std::string WorktreeDigest(const std::string& root, const std::string& path, int64_t& hashed_bytes) {
  std::string absolute = root + "/" + path;
  while (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
  struct stat info;
  if (lstat(absolute.c_str(), &info) != 0) return "absent";
  if (S_ISLNK(info.st_mode)) {
    std::string target(PATH_MAX, '\0');
    ssize_t length = readlink(absolute.c_str(), target.data(), target.size());
    if (length < 0) return "unreadable";
    target.resize(static_cast<size_t>(length));
    return "link:" + Sha256Hex(target);
  }
  if (S_ISDIR(info.st_mode)) return "dir";
  if (!S_ISREG(info.st_mode)) return "other";
  if (info.st_size > kMaxDigestFileBytes || hashed_bytes + info.st_size > kMaxDigestTotalBytes) {
    return StatSignature(info);
  }
  int fd = open(absolute.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "unreadable";
  std::string bytes;
  bytes.resize(static_cast<size_t>(info.st_size));
  size_t filled = 0;
  while (true) {
    if (filled == bytes.size()) bytes.resize(bytes.size() + 65536);
    ssize_t n = read(fd, bytes.data() + filled, bytes.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      if (n < 0) return "unreadable";
      break;
    }
    filled += static_cast<size_t>(n);
    if (static_cast<int64_t>(filled) > kMaxDigestFileBytes) {
      close(fd);
      return StatSignature(info);
    }
  }
  bytes.resize(filled);
  hashed_bytes += static_cast<int64_t>(filled);
  return "sha256:" + Sha256Hex(bytes);
}

bool Skip(const StatusRecord& record, const PathPredicate& may_read, const PathPredicate& is_excluded) {
  for (const std::string* path : {&record.path, &record.orig_path}) {
    if (path->empty()) continue;
    std::string_view trimmed(*path);
    while (!trimmed.empty() && trimmed.back() == '/') trimmed.remove_suffix(1);
    auto normalized = NormalizeRepositoryPath(trimmed);
    if (!normalized) continue;
    if (is_excluded && is_excluded(*normalized)) return true;
    if (may_read && !may_read(*normalized)) return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> SortedHashes(const std::map<std::string, std::string>& hashes) {
  std::vector<std::pair<std::string, std::string>> sorted(hashes.begin(), hashes.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return Utf16Before(a.first, b.first); });
  return sorted;
}

// The requested folder as a real path to a directory.
Result<std::string> ResolveRequestedFolder(std::string_view requested) {
  if (TrimJs(requested).empty()) {
    return Fail(ErrorCode::kInvalidArgument, "repository_root must be a non-empty directory path.");
  }
  auto resolved = RealPath(std::string(requested));
  if (!resolved) return Fail(ErrorCode::kInvalidArgument, "repository_root could not be resolved.");
  struct stat info;
  if (stat(resolved->c_str(), &info) != 0) {
    return Fail(ErrorCode::kInvalidArgument, "repository_root could not be resolved.");
  }
  if (!S_ISDIR(info.st_mode)) return Fail(ErrorCode::kInvalidArgument, "repository_root must resolve to a directory.");
  return *resolved;
}

// "<folder>/.git/index" for the nearest folder at or above `dir` (a real
// path) holding a ".git" directory: where libgit2 will most likely find the
// index. A guess only: libgit2 decides (ceilings, gitdir files, ownership).
std::optional<std::string> LikelyIndexPath(std::string dir) {
  for (;;) {
    struct stat info;
    if (lstat((dir + "/.git").c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) return std::nullopt;  // a gitdir file or link: left to libgit2
      return dir + "/.git/index";
    }
    if (dir.size() <= 1) return std::nullopt;
    const size_t slash = dir.rfind('/');
    dir.resize(slash == 0 ? 1 : slash);
  }
}

// What the thread loading libgit2 found.
struct TopLookup {
  Status loaded = Ok();
  std::optional<std::string> top;
};

TopLookup LookUpTop(const std::string& folder) {
  TopLookup lookup;
  lookup.loaded = git::Load();
  if (lookup.loaded) lookup.top = GitTopLevel(folder);
  return lookup;
}

}  // namespace

Result<RepositoryRoot> ResolveRepositoryRoot(std::string_view requested) {
  Result<std::string> folder = ResolveRequestedFolder(requested);
  if (!folder) {
    // Without libgit2, that clear error comes first, rather than a git
    // repository read as a plain folder.
    TELIC_RETURN_IF_ERROR(git::Load());
    return std::unexpected(folder.error());
  }
  TopLookup lookup;
  RepositoryRoot root;
  {
    std::jthread finder;  // joined at the end of this block, however it is left
    try {
      finder = std::jthread([&lookup, &folder] { lookup = LookUpTop(*folder); });
    } catch (const std::system_error&) {
      lookup = LookUpTop(*folder);  // no thread: one after the other
    }
    if (auto index_path = LikelyIndexPath(*folder)) root.early_index = ReadIndexEarly(std::move(*index_path));
  }
  TELIC_RETURN_IF_ERROR(lookup.loaded);
  root.path = lookup.top && IsPathContained(*lookup.top, *folder) ? *lookup.top : *folder;
  return root;
}

Inventory DiscoverRepositoryFiles(const InventoryRequest& request) {
  Inventory inventory;
  // The tracked paths are collected while the work tree is scanned.
  ScanOptions options;
  options.early_index = request.early_index;
  WorktreeStatus status = ReadWorktreeStatus(request.root, options, [&](const IndexFile& index) {
    Collect(request, IndexPaths{index}, inventory, inventory.paths);
  });
  if (status.ok) {
    inventory.source = "git";
    inventory.git = true;
    inventory.index = status.index;
    inventory.status = std::move(status.records);
    inventory.head_commit = std::move(status.head_commit);
    if (!status.untracked.empty()) {
      std::vector<std::string_view> found;
      for (std::string& path : status.untracked) found.push_back(inventory.owned.emplace_back(std::move(path)));
      std::vector<std::string_view> untracked;
      Collect(request, found, inventory, untracked);
      std::vector<std::string_view> merged;
      merged.reserve(inventory.paths.size() + untracked.size());
      std::merge(inventory.paths.begin(), inventory.paths.end(), untracked.begin(), untracked.end(),
                 std::back_inserter(merged), ViewLess);
      merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
      inventory.paths = std::move(merged);
    }
    if (request.progress) request.progress(static_cast<int64_t>(inventory.paths.size()));
    return inventory;
  }

  inventory = Inventory{};
  std::vector<std::string> found;
  inventory.source = "filesystem";
  inventory.warnings.push_back(
      "Git inventory was unavailable; repository files were discovered with the bounded filesystem fallback.");
  WalkState state{&request, &found, &inventory};
  Walk(state, request.root, "");
  // The walk applied the excluded roots and permissions already.
  for (std::string& path : found) {
    auto normalized = NormalizeRepositoryPath(path);
    if (normalized) {
      inventory.paths.push_back(inventory.owned.emplace_back(std::move(*normalized)));
    } else {
      ++inventory.invalid_path_count;
    }
  }
  std::sort(inventory.paths.begin(), inventory.paths.end(), ViewLess);
  inventory.paths.erase(std::unique(inventory.paths.begin(), inventory.paths.end()), inventory.paths.end());
  if (request.progress) request.progress(static_cast<int64_t>(inventory.paths.size()));
  return inventory;
}

Fingerprint FingerprintRepository(const std::string& root, const Inventory& inventory,
                                  const std::vector<std::string_view>& inventory_paths,
                                  const std::map<std::string, std::string>& read_hashes,
                                  const PathPredicate& may_read, const PathPredicate& is_excluded) {
  Fingerprint fingerprint;
  std::string data;
  if (inventory.git) {
    int64_t hashed_bytes = 0;
    for (const StatusRecord& record : inventory.status) {
      if (Skip(record, may_read, is_excluded)) continue;
      data.push_back(record.x);
      data.push_back(record.y);
      data.push_back(' ');
      data += record.path;
      data.push_back('\0');
      if (!record.orig_path.empty()) {
        data += record.orig_path;
        data.push_back('\0');
      }
      data += record.index_id.empty() ? std::string("-") : record.index_id;
      data.push_back('\0');
      data += record.worktree ? WorktreeDigest(root, record.path, hashed_bytes) : std::string("-");
      data.push_back('\0');
    }
    bool first = true;
    for (const auto& [path, hash] : SortedHashes(read_hashes)) {
      if (!first) data.push_back('\0');
      first = false;
      data += path;
      data.push_back('\0');
      data += hash;
    }
    fingerprint.head_commit = inventory.head_commit;
  } else {
    std::vector<std::string> sorted;
    for (std::string_view path : inventory_paths) {
      if (auto normalized = NormalizeRepositoryPath(path)) sorted.push_back(*normalized);
    }
    std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) { return Utf16Before(a, b); });
    bool first = true;
    for (const std::string& path : sorted) {
      if (!first) data.push_back('\0');
      first = false;
      data += path;
      data.push_back('\0');
      auto it = read_hashes.find(path);
      data += it == read_hashes.end() ? std::string("unread") : it->second;
    }
    fingerprint.warnings.push_back(
        "Git metadata was unavailable; the repository fingerprint uses the discovered file projection.");
  }
  fingerprint.dirty_worktree_hash = Sha256Ref(data);
  return fingerprint;
}

}  // namespace telic::grounding
