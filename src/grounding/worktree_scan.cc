#include "grounding/worktree_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <system_error>

namespace telic::grounding::scan {
namespace {

// e69de29bb2d1d6434b8b29ae775ad8c2e48c5391, the blob of no bytes.
constexpr ObjectId kEmptyBlob = {0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b,
                                 0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91};

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

}  // namespace

void Scanner::Start(unsigned threads) {
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

void Scanner::Join() {
  if (threads_.empty() && !workers_.empty() && !joined_) Loop(workers_.front());
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  joined_ = true;
}

std::vector<StatusRecord> Scanner::TakeRecords() {
  std::vector<StatusRecord> out;
  for (Worker& worker : workers_) std::move(worker.records.begin(), worker.records.end(), std::back_inserter(out));
  return out;
}

std::vector<std::string> Scanner::TakeUntracked() {
  std::vector<std::string> out;
  for (Worker& worker : workers_) std::move(worker.untracked.begin(), worker.untracked.end(), std::back_inserter(out));
  return out;
}

bool Scanner::StatsBatched() const {
  return std::any_of(workers_.begin(), workers_.end(),
                     [](const Worker& worker) { return worker.stats && worker.stats->batched(); });
}

void Scanner::Push(DirTask task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void Scanner::Loop(Worker& worker) {
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

git_repository* Scanner::Repo(Worker& worker) {
  if (!worker.repo && !worker.repo_failed) {
    worker.repo = OpenWorkTree(root_);
    worker.repo_failed = !worker.repo;
  }
  return worker.repo.get();
}

bool Scanner::Ignored(Worker& worker, const std::string& rel) {
  git_repository* repo = Repo(worker);
  int ignored = 0;
  return repo != nullptr && git::ignore_path_is_ignored(&ignored, repo, rel.c_str()) == 0 && ignored == 1;
}

size_t Scanner::LowerBound(size_t lo, size_t hi, std::string_view key, size_t common) const {
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

Match Scanner::Find(const DirTask& task, const std::string& rel, std::string& key, bool folder) const {
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

void Scanner::ScanDirectory(const DirTask& task, Worker& worker) {
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

void Scanner::MarkTracked(Worker& worker, size_t index, std::string_view name) {
  seen_[index] = 1;
  const Entry entry = index_.entry(index);
  // Like git: skip-worktree and assume-unchanged entries are not looked at.
  if (entry.stage != 0 || entry.skip_worktree || entry.assume_unchanged) return;
  worker.pending.push_back(PendingFile{index, std::string(name)});
}

void Scanner::CheckPending(const DirTask& task, Worker& worker, int dir_fd) {
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

void Scanner::ScanSubdirectory(Worker& worker, const std::string& rel, const std::string& absolute, const Match& match) {
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

char Scanner::WorktreeColumn(Worker& worker, const Entry& entry, const std::string& rel, int dir_fd, const char* name,
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

bool Scanner::ContentMatches(Worker& worker, const Entry& entry, const std::string& rel, int dir_fd, const char* name,
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

void Scanner::CheckSubmodule(Worker& worker, const Entry& entry, const std::string& absolute) {
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

}  // namespace telic::grounding::scan
