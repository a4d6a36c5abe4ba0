#include "grounding/worktree_status.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>

#include "grounding/git_index.h"
#include "grounding/git_repo.h"
#include "grounding/stat_batch.h"

namespace telic::grounding {
namespace {

constexpr uint32_t kTypeMask = 0170000;
constexpr uint32_t kRegular = 0100000;
constexpr uint32_t kSymlink = 0120000;
constexpr uint32_t kGitlink = 0160000;
constexpr size_t kNone = SIZE_MAX;
// e69de29bb2d1d6434b8b29ae775ad8c2e48c5391, the blob of no bytes.
constexpr ObjectId kEmptyBlob = {0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b,
                                 0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91};

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

// Scanner entries are IndexEntry values with conflict stages folded into
// one entry per path (stage != 0 then marks the conflict).
using Entry = IndexEntry;

struct Settings {
  bool filemode = true;          // core.filemode: the executable bit counts
  bool trustctime = true;        // core.trustctime
  IndexTime index_mtime;         // when the index file was written
};

bool TimeEqual(const IndexTime& cached, const struct timespec& now) {
  if (cached.seconds != static_cast<uint32_t>(now.tv_sec)) return false;
  // An index written without nanoseconds compares seconds only.
  return cached.nanoseconds == 0 || cached.nanoseconds == static_cast<uint32_t>(now.tv_nsec);
}

// Git's racy-entry rule, erring towards "racy": the file may have changed in
// the same instant the index recorded it, so its stat data proves nothing.
bool Racy(const Entry& entry, const Settings& settings) {
  const IndexTime& index = settings.index_mtime;
  if (index.seconds == 0) return false;
  if (entry.mtime.seconds != index.seconds) return entry.mtime.seconds > index.seconds;
  return entry.mtime.nanoseconds == 0 || index.nanoseconds == 0 || entry.mtime.nanoseconds >= index.nanoseconds;
}

bool StatMatches(const Entry& entry, const struct stat& info, const Settings& settings) {
  if (!TimeEqual(entry.mtime, info.st_mtim)) return false;
  if (settings.trustctime && !TimeEqual(entry.ctime, info.st_ctim)) return false;
  return entry.ino == static_cast<uint32_t>(info.st_ino) && entry.uid == info.st_uid && entry.gid == info.st_gid &&
         entry.size == static_cast<uint32_t>(info.st_size);
}

struct DirTask {
  std::string rel;        // "" for the root, else "a/b/" (with the slash)
  size_t lo = 0, hi = 0;  // the index entries under `rel` (empty: an untracked folder)
};

// Where a directory entry's path sits in the index.
struct Match {
  size_t exact = kNone;   // the entry with exactly this path
  size_t sub_lo = 0;      // entries under path + "/"
  size_t sub_hi = 0;
};

// Lists the work tree with a pool of directory workers (see the header).
class Scanner {
 public:
  Scanner(const std::string& root, const IndexFile& index, const Settings& settings, bool use_io_uring)
      : root_(root), index_(index), settings_(settings), use_io_uring_(use_io_uring), seen_(index.size(), 0) {}

  ~Scanner() { Join(); }

  void Start(unsigned threads) {
    Push(DirTask{"", 0, index_.size()});
    workers_.resize(std::max(threads, 1u));
    for (Worker& worker : workers_) {
      try {
        threads_.emplace_back([this, &worker] { Loop(worker); });
      } catch (const std::system_error&) {
        break;  // fewer workers; with none, Join scans on the calling thread
      }
    }
  }

  void Join() {
    if (threads_.empty() && !workers_.empty() && !joined_) Loop(workers_.front());
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    joined_ = true;
  }

  // After Join: work-tree records of tracked paths (unsorted).
  std::vector<StatusRecord> TakeRecords() {
    std::vector<StatusRecord> out;
    for (Worker& worker : workers_) std::move(worker.records.begin(), worker.records.end(), std::back_inserter(out));
    return out;
  }
  std::vector<std::string> TakeUntracked() {
    std::vector<std::string> out;
    for (Worker& worker : workers_) std::move(worker.untracked.begin(), worker.untracked.end(), std::back_inserter(out));
    return out;
  }
  // After Join: whether some worker's stats went through io_uring.
  bool StatsBatched() const {
    return std::any_of(workers_.begin(), workers_.end(),
                       [](const Worker& worker) { return worker.stats && worker.stats->batched(); });
  }
  // After Join: whether the work tree has a file (or submodule folder) for entry i.
  bool Seen(size_t i) const { return seen_[i] != 0; }

 private:
  // A tracked file of the folder being scanned, waiting for its stat.
  struct PendingFile {
    size_t index;
    std::string name;
  };

  struct Worker {
    std::vector<StatusRecord> records;
    std::vector<std::string> untracked;
    RepoPtr repo;  // this thread's own handle, opened on first use
    std::unique_ptr<StatBatch> stats;  // this thread's own, made on first use
    std::string key;  // scratch for index look-ups
    std::vector<PendingFile> pending;  // scratch, one folder at a time
    std::vector<const char*> names;
    std::vector<NameStat> results;
    bool repo_failed = false;
  };

  void Push(DirTask task) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  void Loop(Worker& worker) {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return !queue_.empty() || active_ == 0; });
      if (queue_.empty()) return;  // nothing queued and nobody left to queue more
      DirTask task = std::move(queue_.back());
      queue_.pop_back();
      ++active_;
      lock.unlock();
      ScanDirectory(task, worker);
      lock.lock();
      if (--active_ == 0 && queue_.empty()) cv_.notify_all();
    }
  }

  git_repository* Repo(Worker& worker) {
    if (!worker.repo && !worker.repo_failed) {
      worker.repo = OpenWorkTree(root_);
      worker.repo_failed = !worker.repo;
    }
    return worker.repo.get();
  }

  // Unknown is "not ignored": a file is listed rather than silently dropped.
  bool Ignored(Worker& worker, const std::string& rel) {
    git_repository* repo = Repo(worker);
    int ignored = 0;
    return repo != nullptr && git::ignore_path_is_ignored(&ignored, repo, rel.c_str()) == 0 && ignored == 1;
  }

  // The first entry in [lo, hi) whose path is not before `key`. Every path
  // in the range and `key` share their first `common` bytes (the folder).
  size_t LowerBound(size_t lo, size_t hi, std::string_view key, size_t common) const {
    key.remove_prefix(common);
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (index_.path(mid).substr(common) < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // The entry with exactly the path `rel` under `task`, and with `folder`,
  // the entries under `rel` + "/" (a file needs only the first search).
  Match Find(const DirTask& task, const std::string& rel, std::string& key, bool folder) const {
    Match match;
    const size_t common = task.rel.size();
    size_t i = LowerBound(task.lo, task.hi, rel, common);
    if (i < task.hi && index_.path(i) == std::string_view(rel)) match.exact = i;
    if (!folder) return match;
    key.assign(rel);
    key.push_back('/');
    match.sub_lo = LowerBound(i, task.hi, key, common);
    key.back() = '0';  // the byte after '/'
    match.sub_hi = LowerBound(match.sub_lo, task.hi, key, common);
    return match;
  }

  // A folder's tracked files are stat'ed together once it is listed
  // (stat_batch.h), relative to the open folder, so the kernel does not
  // walk the whole path again for every file.
  void ScanDirectory(const DirTask& task, Worker& worker) {
    std::string dir_path = root_ + "/" + task.rel;
    DIR* dir = opendir(dir_path.c_str());
    if (dir == nullptr) return;  // its entries stay unseen: deleted
    int fd = dirfd(dir);
    std::string rel = task.rel;
    worker.pending.clear();
    while (dirent* item = readdir(dir)) {
      std::string_view name(item->d_name);
      if (name == "." || name == ".." || name == ".git") continue;
      rel.resize(task.rel.size());
      rel.append(name);
      unsigned char type = item->d_type;
      if (type == DT_UNKNOWN) {
        struct stat info;
        if (fstatat(fd, item->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(info.st_mode) ? DT_DIR : S_ISREG(info.st_mode) ? DT_REG : S_ISLNK(info.st_mode) ? DT_LNK : DT_UNKNOWN;
      }
      Match match = Find(task, rel, worker.key, type == DT_DIR);
      if (type == DT_DIR) {
        ScanSubdirectory(worker, rel, dir_path + std::string(name), match);
      } else if (type == DT_REG || type == DT_LNK) {
        if (match.exact != kNone) {
          MarkTracked(worker, match.exact, name);
        } else if (!Ignored(worker, rel)) {
          worker.untracked.push_back(rel);
        }
      }
      // Sockets, FIFOs and devices are never listed; a tracked path that is
      // one now stays unseen (deleted).
    }
    CheckPending(task, worker, fd);
    closedir(dir);
  }

  // Marks entry `index` seen; queues it for a stat unless git would not look.
  void MarkTracked(Worker& worker, size_t index, std::string_view name) {
    seen_[index] = 1;
    const Entry entry = index_.entry(index);
    // Like git: skip-worktree and assume-unchanged entries are not looked at.
    if (entry.stage != 0 || entry.skip_worktree || entry.assume_unchanged) return;
    worker.pending.push_back(PendingFile{index, std::string(name)});
  }

  void CheckPending(const DirTask& task, Worker& worker, int dir_fd) {
    if (worker.pending.empty()) return;
    if (!worker.stats) worker.stats = std::make_unique<StatBatch>(use_io_uring_ ? StatMode::kFastest : StatMode::kDirect);
    worker.names.clear();
    for (const PendingFile& file : worker.pending) worker.names.push_back(file.name.c_str());
    worker.stats->Stat(dir_fd, worker.names, worker.results);
    std::string rel = task.rel;
    for (size_t k = 0; k < worker.pending.size(); ++k) {
      const PendingFile& file = worker.pending[k];
      rel.resize(task.rel.size());
      rel.append(file.name);
      char y = WorktreeColumn(worker, index_.entry(file.index), rel, dir_fd, file.name.c_str(), worker.results[k]);
      if (y == ' ') continue;
      StatusRecord record;
      record.path = rel;
      record.y = y;
      record.worktree = true;
      worker.records.push_back(std::move(record));
    }
  }

  void ScanSubdirectory(Worker& worker, const std::string& rel, const std::string& absolute, const Match& match) {
    if (match.exact != kNone && (index_.entry(match.exact).mode & kTypeMask) == kGitlink) {
      seen_[match.exact] = 1;
      CheckSubmodule(worker, index_.entry(match.exact), absolute);
      return;
    }
    if (match.sub_lo < match.sub_hi) {
      Push(DirTask{rel + '/', match.sub_lo, match.sub_hi});
      return;
    }
    // Untracked: a nested repository is one record; other folders are
    // walked unless ignored as a whole.
    std::string dir_rel = rel + '/';
    struct stat info;
    if (lstat((absolute + "/.git").c_str(), &info) == 0) {
      if (!Ignored(worker, dir_rel)) worker.untracked.push_back(std::move(dir_rel));
      return;
    }
    if (Ignored(worker, dir_rel)) return;
    Push(DirTask{std::move(dir_rel), match.sub_hi, match.sub_hi});
  }

  // ' ' unchanged, 'M' modified (content or executable bit), 'T' type
  // change (file <-> symlink), 'D' gone.
  char WorktreeColumn(Worker& worker, const Entry& entry, const std::string& rel, int dir_fd, const char* name,
                      const NameStat& stat) {
    if (!stat.ok) return 'D';
    const struct stat& info = stat.info;
    uint32_t type = S_ISLNK(info.st_mode) ? kSymlink : S_ISREG(info.st_mode) ? kRegular : 0;
    if (type == 0) return 'D';
    if ((entry.mode & kTypeMask) != type) return 'T';
    if (type == kRegular && settings_.filemode && ((entry.mode & 0100) != 0) != ((info.st_mode & S_IXUSR) != 0)) {
      return 'M';
    }
    // Git leaves the size 0 in entries it could not vouch for: only a
    // known size that differs proves a change without reading the file.
    if (entry.size != static_cast<uint32_t>(info.st_size) && entry.size != 0) return 'M';
    // A cached size of 0 proves nothing either (a smudged racy entry): the
    // content decides unless the entry is the empty blob.
    bool unvouched = entry.size == 0 && entry.id != kEmptyBlob;
    if (!unvouched && StatMatches(entry, info, settings_) && !Racy(entry, settings_)) return ' ';
    return ContentMatches(worker, entry, rel, dir_fd, name, type) ? ' ' : 'M';
  }

  bool ContentMatches(Worker& worker, const Entry& entry, const std::string& rel, int dir_fd, const char* name,
                      uint32_t type) {
    git_oid id;
    if (type == kSymlink) {
      char target[PATH_MAX];
      ssize_t length = readlinkat(dir_fd, name, target, sizeof target);
      if (length < 0 || git::odb_hash(&id, target, static_cast<size_t>(length), GIT_OBJECT_BLOB) != 0) return false;
    } else {
      git_repository* repo = Repo(worker);
      // The repository's filters (.gitattributes eol, ident...) apply, as in git.
      std::string absolute = root_ + "/" + rel;
      if (repo == nullptr || git::repository_hashfile(&id, repo, absolute.c_str(), GIT_OBJECT_BLOB, rel.c_str()) != 0) {
        return false;
      }
    }
    return std::equal(entry.id.begin(), entry.id.end(), id.id);
  }

  // A submodule is modified when its checked-out commit is not the one the
  // index records. An uninitialised (empty) submodule folder is unchanged.
  void CheckSubmodule(Worker& worker, const Entry& entry, const std::string& absolute) {
    git_repository* raw = nullptr;
    if (git::repository_open_ext(&raw, absolute.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return;
    RepoPtr submodule(raw);
    git_oid head;
    if (git::reference_name_to_id(&head, submodule.get(), "HEAD") != 0 ||
        std::equal(entry.id.begin(), entry.id.end(), head.id)) {
      return;
    }
    StatusRecord record;
    record.path = std::string(entry.path);
    record.y = 'M';
    record.worktree = true;
    worker.records.push_back(std::move(record));
  }

  const std::string& root_;
  const IndexFile& index_;
  const Settings& settings_;
  const bool use_io_uring_;
  std::vector<uint8_t> seen_;  // one writer per element: the task listing its folder

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<DirTask> queue_;
  int active_ = 0;
  std::vector<Worker> workers_;
  std::vector<std::thread> threads_;
  bool joined_ = false;
};

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

Settings ReadSettings(git_repository* repo) {
  Settings settings;
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
  Settings settings = ReadSettings(repo.get());
  settings.index_mtime = index.mtime();

  Scanner scanner(root, index, settings, options.io_uring);
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
