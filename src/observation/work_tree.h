// GitWorkTree: the WorkTreeObserver of a Git work tree on this machine (the
// host's, when telic shares it: the stdio default, TELIC_REPOSITORY_ROOT).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "grounding/git_repo.h"
#include "observation/observer.h"

namespace telic::observation {

class GitWorkTree final : public WorkTreeObserver {
 public:
  // `root` must be the real path of the top of a Git work tree
  // (kFailedPrecondition naming the reason otherwise). Paths under any of
  // `excluded_roots` (absolute, e.g. the state directory) are never listed.
  [[nodiscard]] static Result<std::unique_ptr<GitWorkTree>> Open(const std::string& root,
                                                                 const std::vector<std::string>& excluded_roots);

  // Opens the root directory, then each component with openat(O_NOFOLLOW)
  // relative to the one before, so a symlink swapped in after the path was
  // checked is refused (ELOOP), never followed; `.git` is never read.
  Result<FileState> ReadFile(const std::string& path, bool with_bytes) override;
  Result<FileState> ReadCommitted(const std::optional<std::string>& commit, const std::string& path,
                                  bool with_bytes) override;
  Result<WorkTreeState> ReadState() override;
  Result<std::vector<std::string>> CommittedChanges(const std::optional<std::string>& from,
                                                    const std::optional<std::string>& to) override;

  const std::string& root() const { return root_; }

 private:
  GitWorkTree(std::string root, std::vector<std::string> excluded, grounding::RepoPtr repo)
      : root_(std::move(root)), excluded_(std::move(excluded)), repo_(std::move(repo)) {}
  bool Excluded(std::string_view path) const;

  std::string root_;
  std::vector<std::string> excluded_;  // repository-relative prefixes, without a trailing '/'
  std::mutex repo_mutex_;              // one libgit2 handle, used by one thread at a time
  grounding::RepoPtr repo_;
};

// A GitWorkTree opened on first use, so that a server that never observes
// never loads libgit2 (src/grounding/libgit2.h: start-up time). When the
// root cannot be opened, every call fails with Open's kFailedPrecondition.
class LazyGitWorkTree final : public WorkTreeObserver {
 public:
  LazyGitWorkTree(std::string root, std::vector<std::string> excluded_roots)
      : root_(std::move(root)), excluded_roots_(std::move(excluded_roots)) {}

  Result<FileState> ReadFile(const std::string& path, bool with_bytes) override;
  Result<FileState> ReadCommitted(const std::optional<std::string>& commit, const std::string& path,
                                  bool with_bytes) override;
  Result<WorkTreeState> ReadState() override;
  Result<std::vector<std::string>> CommittedChanges(const std::optional<std::string>& from,
                                                    const std::optional<std::string>& to) override;

 private:
  Result<GitWorkTree*> Get();

  std::string root_;
  std::vector<std::string> excluded_roots_;
  std::mutex mutex_;
  std::optional<Result<std::unique_ptr<GitWorkTree>>> opened_;
};

}  // namespace telic::observation
