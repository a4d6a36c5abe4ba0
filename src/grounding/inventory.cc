#include "grounding/inventory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>

#include <git2.h>

#include "base/sha256.h"
#include "base/text.h"
#include "grounding/paths.h"

namespace telic::grounding {
namespace {

// Work-tree digests of dirty files: files above this size, and every file
// once this many bytes have been hashed in one fingerprint, are represented
// by their size and modification time instead of their content.
constexpr int64_t kMaxDigestFileBytes = 64LL * 1024 * 1024;
constexpr int64_t kMaxDigestTotalBytes = 256LL * 1024 * 1024;

void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // Only the repository's own configuration counts (see inventory.h).
    for (int level : {GIT_CONFIG_LEVEL_PROGRAMDATA, GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
                      GIT_CONFIG_LEVEL_GLOBAL}) {
      git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
    }
  });
}

struct RepoDeleter {
  void operator()(git_repository* repo) const { git_repository_free(repo); }
};
struct IndexDeleter {
  void operator()(git_index* index) const { git_index_free(index); }
};
struct StatusDeleter {
  void operator()(git_status_list* list) const { git_status_list_free(list); }
};
using RepoPtr = std::unique_ptr<git_repository, RepoDeleter>;
using IndexPtr = std::unique_ptr<git_index, IndexDeleter>;
using StatusPtr = std::unique_ptr<git_status_list, StatusDeleter>;

std::optional<std::string> RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  free(resolved);
  return out;
}

// The real path of the work tree of the repository containing `dir`.
std::optional<std::string> GitTopLevel(const std::string& dir) {
  InitLibgit2();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, dir.c_str(), 0, std::getenv("GIT_CEILING_DIRECTORIES")) != 0) return std::nullopt;
  RepoPtr repo(raw);
  const char* workdir = git_repository_workdir(repo.get());
  if (workdir == nullptr) return std::nullopt;
  return RealPath(workdir);
}

std::string OidHex(const git_oid& oid) {
  char buffer[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buffer, sizeof buffer, &oid);
  return buffer;
}

char IndexColumn(unsigned status) {
  if (status & GIT_STATUS_INDEX_NEW) return 'A';
  if (status & GIT_STATUS_INDEX_MODIFIED) return 'M';
  if (status & GIT_STATUS_INDEX_DELETED) return 'D';
  if (status & GIT_STATUS_INDEX_RENAMED) return 'R';
  if (status & GIT_STATUS_INDEX_TYPECHANGE) return 'T';
  return ' ';
}

char WorktreeColumn(unsigned status) {
  if (status & (GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_UNREADABLE)) return 'M';
  if (status & GIT_STATUS_WT_DELETED) return 'D';
  if (status & GIT_STATUS_WT_TYPECHANGE) return 'T';
  if (status & GIT_STATUS_WT_RENAMED) return 'R';
  return ' ';
}

const char* DeltaPath(const git_diff_delta* delta) {
  if (delta == nullptr) return nullptr;
  return delta->new_file.path != nullptr ? delta->new_file.path : delta->old_file.path;
}

RepoPtr OpenWorkTree(const std::string& root) {
  InitLibgit2();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return nullptr;
  RepoPtr repo(raw);
  const char* workdir = git_repository_workdir(repo.get());
  if (workdir == nullptr || RealPath(workdir) != root) return nullptr;
  return repo;
}

// Tracked paths: the index, one entry per path (conflict stages collapse).
bool ReadIndexPaths(const std::string& root, std::vector<std::string>& paths) {
  RepoPtr repo = OpenWorkTree(root);
  if (!repo) return false;
  git_index* raw_index = nullptr;
  if (git_repository_index(&raw_index, repo.get()) != 0) return false;
  IndexPtr index(raw_index);
  size_t count = git_index_entrycount(index.get());
  paths.reserve(paths.size() + count);
  std::string_view last;
  for (size_t i = 0; i < count; ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.get(), i);
    if (entry == nullptr || entry->path == nullptr) continue;
    std::string_view path(entry->path);
    if (i > 0 && path == last) continue;
    paths.emplace_back(path);
    last = path;  // libgit2 keeps the entry alive while the index is
  }
  return true;
}

struct StatusResult {
  bool ok = false;
  std::vector<StatusRecord> status;
  std::vector<std::string> untracked;
  std::optional<std::string> head_commit;
};

// One `git status --porcelain=v1 --untracked-files=all` pass, on its own
// repository handle (it runs on a second thread while the index is read).
StatusResult ReadStatus(const std::string& root) {
  StatusResult result;
  RepoPtr repo = OpenWorkTree(root);
  if (!repo) return result;
  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX | GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
  git_status_list* raw_list = nullptr;
  if (git_status_list_new(&raw_list, repo.get(), &options) != 0) return result;
  StatusPtr list(raw_list);
  size_t entries = git_status_list_entrycount(list.get());
  for (size_t i = 0; i < entries; ++i) {
    const git_status_entry* entry = git_status_byindex(list.get(), i);
    if (entry == nullptr) continue;
    unsigned status = entry->status;
    if (status == GIT_STATUS_CURRENT || (status & GIT_STATUS_IGNORED)) continue;
    const char* path = DeltaPath(entry->head_to_index);
    if (path == nullptr) path = DeltaPath(entry->index_to_workdir);
    if (path == nullptr) continue;
    if (status & GIT_STATUS_CONFLICTED) {
      result.status.push_back(StatusRecord{path, "", 'U', 'U', "", true});
      continue;
    }
    unsigned tracked = status & ~static_cast<unsigned>(GIT_STATUS_WT_NEW);
    if (tracked != 0) {
      StatusRecord record;
      record.path = path;
      record.x = IndexColumn(status);
      record.y = WorktreeColumn(status);
      if ((status & GIT_STATUS_INDEX_RENAMED) && entry->head_to_index->old_file.path != nullptr) {
        record.orig_path = entry->head_to_index->old_file.path;
      }
      if (entry->head_to_index != nullptr && !(status & GIT_STATUS_INDEX_DELETED) &&
          (status & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_RENAMED |
                     GIT_STATUS_INDEX_TYPECHANGE))) {
        record.index_id = OidHex(entry->head_to_index->new_file.id);
      }
      record.worktree = (status & (GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_TYPECHANGE | GIT_STATUS_WT_RENAMED |
                                   GIT_STATUS_WT_UNREADABLE)) != 0;
      result.status.push_back(std::move(record));
    }
    if (status & GIT_STATUS_WT_NEW) {
      const char* untracked = DeltaPath(entry->index_to_workdir);
      if (untracked == nullptr) untracked = path;
      result.status.push_back(StatusRecord{untracked, "", '?', '?', "", true});
      result.untracked.emplace_back(untracked);
    }
  }
  git_oid head;
  if (git_reference_name_to_id(&head, repo.get(), "HEAD") == 0) result.head_commit = OidHex(head);
  result.ok = true;
  return result;
}

bool PathLess(const std::string& a, const std::string& b) { return Utf16Before(a, b); }

// Normalises, filters and sorts `found` into `inventory`.
void Collect(const InventoryRequest& request, std::vector<std::string>& found, Inventory& inventory) {
  std::vector<std::string> kept;
  kept.reserve(found.size());
  for (std::string& path : found) {
    auto normalized = NormalizeRepositoryPath(path);
    if (!normalized) {
      ++inventory.invalid_path_count;
      continue;
    }
    if (request.is_excluded && request.is_excluded(*normalized)) {
      ++inventory.excluded_path_count;
      continue;
    }
    if (request.may_read && !request.may_read(*normalized)) {
      ++inventory.permission_skipped;
      continue;
    }
    kept.push_back(std::move(*normalized));
  }
  // The index is already in this order almost always (byte order agrees with
  // UTF-16 order outside U+E000-U+FFFF): check in one pass before sorting.
  if (!std::is_sorted(kept.begin(), kept.end(), PathLess)) std::sort(kept.begin(), kept.end(), PathLess);
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  inventory.paths = std::move(kept);
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
    if (state.paths->size() >= state.request->max_walk_paths) {
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

}  // namespace

Result<std::string> ResolveRepositoryRoot(std::string_view requested) {
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
  auto top = GitTopLevel(*resolved);
  if (top && IsPathContained(*top, *resolved)) return *top;
  return *resolved;
}

Inventory DiscoverRepositoryFiles(const InventoryRequest& request) {
  Inventory inventory;
  std::vector<std::string> found;
  InitLibgit2();
  // The status pass (the work-tree walk, the slow part) runs beside the
  // index read and the sort of the tracked paths.
  std::future<StatusResult> status = std::async(std::launch::async, ReadStatus, request.root);
  if (ReadIndexPaths(request.root, found)) {
    Collect(request, found, inventory);
    StatusResult result = status.get();
    if (result.ok) {
      inventory.source = "git";
      inventory.git = true;
      inventory.status = std::move(result.status);
      inventory.head_commit = std::move(result.head_commit);
      if (!result.untracked.empty()) {
        Inventory untracked;
        Collect(request, result.untracked, untracked);
        std::vector<std::string> merged;
        merged.reserve(inventory.paths.size() + untracked.paths.size());
        std::merge(std::make_move_iterator(inventory.paths.begin()), std::make_move_iterator(inventory.paths.end()),
                   std::make_move_iterator(untracked.paths.begin()), std::make_move_iterator(untracked.paths.end()),
                   std::back_inserter(merged), PathLess);
        merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
        inventory.paths = std::move(merged);
        inventory.invalid_path_count += untracked.invalid_path_count;
        inventory.excluded_path_count += untracked.excluded_path_count;
        inventory.permission_skipped += untracked.permission_skipped;
      }
      if (request.progress) request.progress(static_cast<int64_t>(inventory.paths.size()));
      return inventory;
    }
  } else {
    status.wait();
  }

  inventory = Inventory{};
  found.clear();
  inventory.source = "filesystem";
  inventory.warnings.push_back(
      "Git inventory was unavailable; repository files were discovered with the bounded filesystem fallback.");
  WalkState state{&request, &found, &inventory};
  Walk(state, request.root, "");
  // The walk applied the excluded roots and permissions already.
  for (std::string& path : found) {
    auto normalized = NormalizeRepositoryPath(path);
    if (normalized) {
      inventory.paths.push_back(std::move(*normalized));
    } else {
      ++inventory.invalid_path_count;
    }
  }
  std::sort(inventory.paths.begin(), inventory.paths.end(), PathLess);
  inventory.paths.erase(std::unique(inventory.paths.begin(), inventory.paths.end()), inventory.paths.end());
  if (request.progress) request.progress(static_cast<int64_t>(inventory.paths.size()));
  return inventory;
}

Fingerprint FingerprintRepository(const std::string& root, const Inventory& inventory,
                                  const std::vector<std::string>& inventory_paths,
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
    for (const std::string& path : inventory_paths) {
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
