#include "observation/work_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/sha256.h"
#include "grounding/paths.h"
#include "grounding/worktree_status.h"
#include "policy/path_scope.h"

namespace telic::observation {
namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

std::unexpected<Error> Denied(const std::string& path, std::string_view reason) {
  return Fail(ErrorCode::kPermissionDenied, fmt::format("Cannot observe {}: {}", path, reason));
}

Result<std::string> ReadAll(int fd, const std::string& path) {
  struct stat info;
  if (fstat(fd, &info) != 0) return Fail(ErrorCode::kInternal, fmt::format("Cannot observe {}: {}", path, strerror(errno)));
  if (!S_ISREG(info.st_mode)) return Denied(path, "not a regular file");
  if (info.st_size > kMaxObservedFileBytes) {
    return Fail(ErrorCode::kResourceExhausted,
                fmt::format("Cannot observe {}: larger than {} bytes", path, kMaxObservedFileBytes));
  }
  std::string bytes;
  bytes.resize(static_cast<size_t>(info.st_size) + 1);
  size_t filled = 0;
  while (true) {
    if (filled == bytes.size()) {
      if (static_cast<int64_t>(filled) > kMaxObservedFileBytes) {
        return Fail(ErrorCode::kResourceExhausted,
                    fmt::format("Cannot observe {}: larger than {} bytes", path, kMaxObservedFileBytes));
      }
      bytes.resize(bytes.size() + 65536);
    }
    ssize_t n = read(fd, bytes.data() + filled, bytes.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(ErrorCode::kInternal, fmt::format("Cannot observe {}: {}", path, strerror(errno)));
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  bytes.resize(filled);
  return bytes;
}

FileState StateOf(std::string bytes, bool with_bytes) {
  FileState state;
  state.exists = true;
  state.sha256 = Sha256Ref(bytes);
  if (with_bytes) state.bytes = std::move(bytes);
  return state;
}

struct TreeDeleter {
  void operator()(git_tree* tree) const { grounding::git::tree_free(tree); }
};
struct CommitDeleter {
  void operator()(git_commit* commit) const { grounding::git::commit_free(commit); }
};
struct BlobDeleter {
  void operator()(git_blob* blob) const { grounding::git::blob_free(blob); }
};
struct EntryDeleter {
  void operator()(git_tree_entry* entry) const { grounding::git::tree_entry_free(entry); }
};
struct DiffDeleter {
  void operator()(git_diff* diff) const { grounding::git::diff_free(diff); }
};
using TreePtr = std::unique_ptr<git_tree, TreeDeleter>;

// The tree of commit `hex` (null for nullopt: the empty tree).
Result<TreePtr> CommitTree(git_repository* repo, const std::optional<std::string>& hex) {
  if (!hex) return TreePtr();
  git_oid oid;
  if (grounding::git::oid_fromstr(&oid, hex->c_str()) != 0) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("Not a commit id: {}", *hex));
  }
  git_commit* raw_commit = nullptr;
  if (grounding::git::commit_lookup(&raw_commit, repo, &oid) != 0) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("The grounded commit {} is no longer in the repository", *hex));
  }
  std::unique_ptr<git_commit, CommitDeleter> commit(raw_commit);
  git_tree* raw_tree = nullptr;
  if (grounding::git::tree_lookup(&raw_tree, repo, grounding::git::commit_tree_id(commit.get())) != 0) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("The tree of commit {} cannot be read", *hex));
  }
  return TreePtr(raw_tree);
}

}  // namespace

Result<std::unique_ptr<GitWorkTree>> GitWorkTree::Open(const std::string& root,
                                                       const std::vector<std::string>& excluded_roots) {
  grounding::RepoPtr repo = grounding::OpenWorkTree(root);
  if (!repo) return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} is not the top of a Git work tree", root));
  std::vector<std::string> excluded;
  for (const std::string& absolute : excluded_roots) {
    if (absolute.size() > root.size() + 1 && absolute.compare(0, root.size(), root) == 0 && absolute[root.size()] == '/') {
      std::string rel = absolute.substr(root.size() + 1);
      while (!rel.empty() && rel.back() == '/') rel.pop_back();
      if (!rel.empty()) excluded.push_back(std::move(rel));
    }
  }
  return std::unique_ptr<GitWorkTree>(new GitWorkTree(root, std::move(excluded), std::move(repo)));
}

bool GitWorkTree::Excluded(std::string_view path) const {
  for (const std::string& prefix : excluded_) {
    if (path == prefix || (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix && path[prefix.size()] == '/')) {
      return true;
    }
  }
  return false;
}

Result<FileState> GitWorkTree::ReadFile(const std::string& path, bool with_bytes) {
  auto normalized = policy::NormalizeRepoPath(path, policy::RepoRoot{root_, nullptr, {}});
  if (!normalized) return Denied(path, normalized.error().message());
  if (*normalized == ".") return Denied(path, "the repository root is not a file");
  std::vector<std::string> segments = Segments(*normalized);
  for (const std::string& segment : segments) {
    if (segment == ".git") return Denied(path, "telic does not read the repository's .git folder");
  }
  if (Excluded(*normalized)) return Denied(path, "the path lies in telic's state directory");
  Fd dir(open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("Cannot open the repository root: {}", strerror(errno)));
  for (size_t i = 0; i < segments.size(); ++i) {
    bool last = i + 1 == segments.size();
    int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    Fd next(openat(dir.get(), segments[i].c_str(), flags));
    if (next.get() < 0) {
      int error = errno;
      if (error == ENOENT) return FileState{};
      if (error == ELOOP) return Denied(path, "a symlink is on the way; telic never follows symlinks when it observes");
      if (error == ENOTDIR) {
        struct stat info;
        if (fstatat(dir.get(), segments[i].c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(info.st_mode)) {
          return Denied(path, "a symlink is on the way; telic never follows symlinks when it observes");
        }
        return FileState{};  // a file where a folder would be: nothing at this path
      }
      return Denied(path, strerror(error));
    }
    dir = std::move(next);
  }
  TELIC_ASSIGN_OR_RETURN(std::string bytes, ReadAll(dir.get(), path));
  return StateOf(std::move(bytes), with_bytes);
}

Result<FileState> GitWorkTree::ReadCommitted(const std::optional<std::string>& commit, const std::string& path,
                                             bool with_bytes) {
  if (!commit) return FileState{};
  std::lock_guard<std::mutex> lock(repo_mutex_);
  TELIC_ASSIGN_OR_RETURN(TreePtr tree, CommitTree(repo_.get(), commit));
  git_tree_entry* raw_entry = nullptr;
  if (grounding::git::tree_entry_bypath(&raw_entry, tree.get(), path.c_str()) != 0) return FileState{};
  std::unique_ptr<git_tree_entry, EntryDeleter> entry(raw_entry);
  if (grounding::git::tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return FileState{};
  git_blob* raw_blob = nullptr;
  if (grounding::git::blob_lookup(&raw_blob, repo_.get(), grounding::git::tree_entry_id(entry.get())) != 0) {
    return Fail(ErrorCode::kInternal, fmt::format("Cannot read {} at commit {}", path, *commit));
  }
  std::unique_ptr<git_blob, BlobDeleter> blob(raw_blob);
  auto size = grounding::git::blob_rawsize(blob.get());
  if (static_cast<int64_t>(size) > kMaxObservedFileBytes) {
    return Fail(ErrorCode::kResourceExhausted,
                fmt::format("Cannot observe {} at commit {}: larger than {} bytes", path, *commit, kMaxObservedFileBytes));
  }
  std::string bytes(static_cast<const char*>(grounding::git::blob_rawcontent(blob.get())), static_cast<size_t>(size));
  return StateOf(std::move(bytes), with_bytes);
}

Result<WorkTreeState> GitWorkTree::ReadState() {
  grounding::WorktreeStatus status = grounding::ReadWorktreeStatus(root_);
  if (!status.ok) return Fail(ErrorCode::kFailedPrecondition, fmt::format("Cannot read the Git status of {}", root_));
  WorkTreeState state;
  state.head_commit = status.head_commit;
  auto add = [&](std::string path) {
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (!path.empty() && !Excluded(path)) state.changed_paths.push_back(std::move(path));
  };
  for (const grounding::StatusRecord& record : status.records) {
    add(record.path);
    if (!record.orig_path.empty()) add(record.orig_path);
  }
  std::sort(state.changed_paths.begin(), state.changed_paths.end());
  state.changed_paths.erase(std::unique(state.changed_paths.begin(), state.changed_paths.end()), state.changed_paths.end());
  if (state.changed_paths.size() > kMaxChangedPaths) {
    state.changed_paths.clear();
    state.complete = false;
  }
  return state;
}

Result<std::vector<std::string>> GitWorkTree::CommittedChanges(const std::optional<std::string>& from,
                                                               const std::optional<std::string>& to) {
  std::lock_guard<std::mutex> lock(repo_mutex_);
  TELIC_ASSIGN_OR_RETURN(TreePtr old_tree, CommitTree(repo_.get(), from));
  TELIC_ASSIGN_OR_RETURN(TreePtr new_tree, CommitTree(repo_.get(), to));
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  git_diff* raw = nullptr;
  if (grounding::git::diff_tree_to_tree(&raw, repo_.get(), old_tree.get(), new_tree.get(), &options) != 0) {
    return Fail(ErrorCode::kInternal, "Cannot compare the grounded commit with HEAD");
  }
  std::unique_ptr<git_diff, DiffDeleter> diff(raw);
  std::vector<std::string> paths;
  size_t count = grounding::git::diff_num_deltas(diff.get());
  for (size_t i = 0; i < count; ++i) {
    const git_diff_delta* delta = grounding::git::diff_get_delta(diff.get(), i);
    for (const char* path : {delta->old_file.path, delta->new_file.path}) {
      if (path != nullptr && !Excluded(path)) paths.emplace_back(path);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

Result<GitWorkTree*> LazyGitWorkTree::Get() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!opened_) {
    auto real = grounding::RealPath(root_);
    opened_ = GitWorkTree::Open(real.value_or(root_), excluded_roots_);
  }
  if (!*opened_) return std::unexpected(opened_->error());
  return opened_->value().get();
}

Result<FileState> LazyGitWorkTree::ReadFile(const std::string& path, bool with_bytes) {
  TELIC_ASSIGN_OR_RETURN(GitWorkTree * tree, Get());
  return tree->ReadFile(path, with_bytes);
}

Result<FileState> LazyGitWorkTree::ReadCommitted(const std::optional<std::string>& commit, const std::string& path,
                                                 bool with_bytes) {
  TELIC_ASSIGN_OR_RETURN(GitWorkTree * tree, Get());
  return tree->ReadCommitted(commit, path, with_bytes);
}

Result<WorkTreeState> LazyGitWorkTree::ReadState() {
  TELIC_ASSIGN_OR_RETURN(GitWorkTree * tree, Get());
  return tree->ReadState();
}

Result<std::vector<std::string>> LazyGitWorkTree::CommittedChanges(const std::optional<std::string>& from,
                                                                   const std::optional<std::string>& to) {
  TELIC_ASSIGN_OR_RETURN(GitWorkTree * tree, Get());
  return tree->CommittedChanges(from, to);
}

}  // namespace telic::observation
