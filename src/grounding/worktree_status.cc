#include "grounding/worktree_status.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <thread>

#include "grounding/git_index.h"
#include "grounding/git_repo.h"
#include "grounding/worktree_scan.h"

namespace telic::grounding {
namespace {

struct IndexDeleter {
  void operator()(git_index* index) const { git::index_free(index); }
};
struct DiffDeleter {
  void operator()(git_diff* diff) const { git::diff_free(diff); }
};
struct TreeDeleter {
  void operator()(git_tree* tree) const { git::tree_free(tree); }
};
struct ConfigDeleter {
  void operator()(git_config* config) const { git::config_free(config); }
};
using IndexPtr = std::unique_ptr<git_index, IndexDeleter>;
using DiffPtr = std::unique_ptr<git_diff, DiffDeleter>;
using TreePtr = std::unique_ptr<git_tree, TreeDeleter>;
using ConfigPtr = std::unique_ptr<git_config, ConfigDeleter>;

// Index entries with conflict stages folded into one entry per path.
using Entry = IndexEntry;

// The index with the stages of each conflict folded into one entry (stage
// 1-3 then marks the conflict), sorted by path in byte order (libgit2 sorts
// case-insensitively under core.ignorecase).
IndexFile Fold(const IndexFile& index) {
  std::vector<Entry> folded;
  folded.reserve(index.size());
  for (size_t i = 0; i < index.size(); ++i) {
    Entry entry = index.entry(i);
    if (!folded.empty() && folded.back().path == entry.path) {
      folded.back().stage = std::max(folded.back().stage, entry.stage);
      continue;
    }
    folded.push_back(entry);
  }
  std::stable_sort(folded.begin(), folded.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return IndexFile::FromEntries(folded, index.mtime());
}

std::vector<Entry> EntriesOf(git_index* index) {
  std::vector<Entry> entries;
  size_t count = git::index_entrycount(index);
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const git_index_entry* raw = git::index_get_byindex(index, i);
    if (raw == nullptr || raw->path == nullptr) continue;
    Entry entry;
    entry.path = raw->path;
    entry.mode = raw->mode;
    std::copy(std::begin(raw->id.id), std::begin(raw->id.id) + entry.id.size(), entry.id.begin());
    entry.ctime = {static_cast<uint32_t>(raw->ctime.seconds), raw->ctime.nanoseconds};
    entry.mtime = {static_cast<uint32_t>(raw->mtime.seconds), raw->mtime.nanoseconds};
    entry.ino = raw->ino;
    entry.uid = raw->uid;
    entry.gid = raw->gid;
    entry.size = raw->file_size;
    entry.stage = static_cast<uint8_t>(GIT_INDEX_ENTRY_STAGE(raw));
    entry.skip_worktree = (raw->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) != 0;
    entry.intent_to_add = (raw->flags_extended & GIT_INDEX_ENTRY_INTENT_TO_ADD) != 0;
    entry.assume_unchanged = (raw->flags & GIT_INDEX_ENTRY_VALID) != 0;
    entries.push_back(entry);
  }
  return entries;
}

scan::Settings ReadSettings(git_repository* repo) {
  scan::Settings settings;
  git_config* raw = nullptr;
  if (git::repository_config_snapshot(&raw, repo) == 0) {
    ConfigPtr config(raw);
    int value = 0;
    if (git::config_get_bool(&value, config.get(), "core.filemode") == 0) settings.filemode = value != 0;
    if (git::config_get_bool(&value, config.get(), "core.trustctime") == 0) settings.trustctime = value != 0;
  }
  return settings;
}

// The index as the scan reads it: from the file directly when the reader
// allows (git_index.h), else through libgit2; one entry per path.
struct IndexStorage {
  std::optional<IndexFile> file;
  IndexPtr libgit2;  // loaded for the fallback or the staged diff
};

// The index as git_index.h reads it, folded to one entry per path in byte
// order; nullopt when that reader cannot read it.
std::optional<IndexFile> ReadFolded(const std::string& path) {
  auto file = IndexFile::Read(path);
  if (!file) return std::nullopt;
  if (file->has_conflicts() || !file->sorted()) return Fold(*file);
  return std::move(*file);
}

// Fills `storage`, from `early` when it read this repository's index path;
// false when no reader can read the index.
bool LoadIndex(git_repository* repo, EarlyIndex* early, IndexStorage& storage) {
  const std::string path = std::string(git::repository_path(repo)) + "index";
  if (early != nullptr && early->path == path && early->file) {
    storage.file = std::move(*early->file);
    early->file.reset();
    return true;
  }
  auto file = ReadFolded(path);
  if (file) {
    storage.file = std::move(*file);
  } else {
    git_index* raw = nullptr;
    if (git::repository_index(&raw, repo) != 0) return false;
    storage.libgit2.reset(raw);
    IndexTime mtime;
    struct stat info;
    const char* path = git::index_path(raw);
    if (path != nullptr && stat(path, &info) == 0) {
      mtime = {static_cast<uint32_t>(info.st_mtim.tv_sec), static_cast<uint32_t>(info.st_mtim.tv_nsec)};
    }
    storage.file = IndexFile::FromEntries(EntriesOf(raw), mtime);
    if (storage.file->has_conflicts() || !storage.file->sorted()) storage.file = Fold(*storage.file);
  }
  return true;
}

struct Head {
  std::optional<git_oid> commit;  // nullopt: unborn
  git_oid tree{};
};

// False when HEAD exists but its commit cannot be read.
bool ReadHead(git_repository* repo, Head& head) {
  git_oid id;
  int error = git::reference_name_to_id(&id, repo, "HEAD");
  if (error == GIT_ENOTFOUND || error == GIT_EUNBORNBRANCH) return true;
  if (error != 0) return false;
  git_commit* commit = nullptr;
  if (git::commit_lookup(&commit, repo, &id) != 0) return false;
  head.commit = id;
  head.tree = *git::commit_tree_id(commit);
  git::commit_free(commit);
  return true;
}

// Whether the index may differ from HEAD. When git's cache tree says the
// whole index is HEAD's tree, it cannot, and the diff is skipped.
bool MayHaveStagedChanges(const Head& head, const IndexStorage& storage) {
  if (!head.commit) return storage.file->size() != 0;
  if (!storage.file->cache_tree_root()) return true;
  const ObjectId& root = *storage.file->cache_tree_root();
  return !std::equal(root.begin(), root.end(), head.tree.id);
}

// The index column: HEAD tree against the index, renames detected as
// `git status` does. Conflicts are left to the caller.
bool ReadStaged(git_repository* repo, IndexStorage& storage, const Head& head,
                std::map<std::string, StatusRecord>& records) {
  if (!storage.libgit2) {
    git_index* raw = nullptr;
    if (git::repository_index(&raw, repo) != 0) return false;
    storage.libgit2.reset(raw);
  }
  git_index* index = storage.libgit2.get();
  TreePtr tree;
  if (head.commit) {
    git_tree* raw = nullptr;
    if (git::tree_lookup(&raw, repo, &head.tree) != 0) return false;
    tree.reset(raw);
  }
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  options.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* raw = nullptr;
  if (git::diff_tree_to_index(&raw, repo, tree.get(), index, &options) != 0) return false;
  DiffPtr diff(raw);
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_AND_BREAK_REWRITES | GIT_DIFF_FIND_RENAMES_FROM_REWRITES |
               GIT_DIFF_BREAK_REWRITES_FOR_RENAMES_ONLY;
  if (git::diff_find_similar(diff.get(), &find) != 0) return false;
  size_t count = git::diff_num_deltas(diff.get());
  for (size_t i = 0; i < count; ++i) {
    const git_diff_delta* delta = git::diff_get_delta(diff.get(), i);
    char x = ' ';
    switch (delta->status) {
      case GIT_DELTA_ADDED: x = 'A'; break;
      case GIT_DELTA_MODIFIED: x = 'M'; break;
      case GIT_DELTA_DELETED: x = 'D'; break;
      case GIT_DELTA_RENAMED: x = 'R'; break;
      case GIT_DELTA_TYPECHANGE: x = 'T'; break;
      default: continue;  // conflicts, unmodified
    }
    const char* path = x == 'D' ? delta->old_file.path : delta->new_file.path;
    StatusRecord& record = records[path];
    record.path = path;
    record.x = x;
    if (x == 'R') record.orig_path = delta->old_file.path;
    if (x != 'D') record.index_id = OidHex(delta->new_file.id);
  }
  return true;
}

unsigned WorkerCount(unsigned requested) {
  if (requested != 0) return requested;
  return std::clamp(std::thread::hardware_concurrency(), 2u, 8u);
}

}  // namespace

EarlyIndex ReadIndexEarly(std::string path) {
  EarlyIndex early;
  early.file = ReadFolded(path);
  early.path = std::move(path);
  return early;
}

WorktreeStatus ReadWorktreeStatus(const std::string& root, const ScanOptions& options,
                                  const std::function<void(const IndexFile&)>& while_scanning) {
  WorktreeStatus status;
  RepoPtr repo = OpenWorkTree(root);
  if (!repo) return status;
  auto storage = std::make_shared<IndexStorage>();
  if (!LoadIndex(repo.get(), options.early_index, *storage)) return status;
  const IndexFile& index = *storage->file;
  scan::Settings settings = ReadSettings(repo.get());
  settings.index_mtime = index.mtime();

  scan::Scanner scanner(root, index, settings, options.io_uring);
  scanner.Start(WorkerCount(options.threads));
  // While the workers list the work tree: the caller's work, the index column.
  if (while_scanning) while_scanning(index);
  std::map<std::string, StatusRecord> records;
  Head head;
  bool staged = ReadHead(repo.get(), head);
  if (staged && MayHaveStagedChanges(head, *storage)) staged = ReadStaged(repo.get(), *storage, head, records);
  scanner.Join();
  status.stats_batched = scanner.StatsBatched();
  if (!staged) return status;
  if (head.commit) status.head_commit = OidHex(*head.commit);

  for (StatusRecord& found : scanner.TakeRecords()) {
    StatusRecord& record = records[found.path];
    record.path = found.path;
    record.y = found.y;
    record.worktree = found.worktree;
  }
  for (size_t i = 0; i < index.size(); ++i) {
    if (scanner.Seen(i) && !index.has_conflicts()) continue;
    const Entry entry = index.entry(i);
    std::string path(entry.path);
    if (entry.stage != 0) {
      records[path] = StatusRecord{path, "", 'U', 'U', "", true};
    } else if (!scanner.Seen(i) && !entry.skip_worktree && !entry.assume_unchanged) {
      StatusRecord& record = records[path];
      record.path = path;
      record.y = 'D';
    }
  }
  status.untracked = scanner.TakeUntracked();
  std::sort(status.untracked.begin(), status.untracked.end());
  status.records.reserve(records.size() + status.untracked.size());
  for (auto& [path, record] : records) status.records.push_back(std::move(record));
  for (const std::string& path : status.untracked) status.records.push_back(StatusRecord{path, "", '?', '?', "", true});
  status.index = std::shared_ptr<const IndexFile>(storage, &index);
  status.ok = true;
  return status;
}

}  // namespace telic::grounding
