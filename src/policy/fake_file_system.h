// An in-memory FileSystem for tests of path resolution (tests only).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "policy/path_scope.h"

namespace telic::policy::fakes {

class FakeFileSystem final : public FileSystem {
 public:
  FakeFileSystem() { nodes_["/"] = Node{FileKind::kDirectory, {}}; }

  // Adds a directory (and its missing parents).
  void AddDir(const std::string& path) {
    AddParents(path);
    nodes_[path] = Node{FileKind::kDirectory, {}};
  }
  void AddFile(const std::string& path) {
    AddParents(path);
    nodes_[path] = Node{FileKind::kOther, {}};
  }
  void AddSymlink(const std::string& path, const std::string& target) {
    AddParents(path);
    nodes_[path] = Node{FileKind::kSymlink, target};
  }
  // Makes Lstat of `path` fail (e.g. EACCES).
  void FailLstat(const std::string& path) { failing_.insert({path, true}); }
  // What RealPath answers for `path` (default: nullopt, "cannot tell").
  void SetRealPath(const std::string& path, const std::string& answer) { realpaths_[path] = answer; }

  Result<FileKind> Lstat(const std::string& absolute_path) const override {
    ++lstat_calls;
    if (failing_.count(absolute_path) != 0) {
      return Fail(ErrorCode::kPermissionDenied, "cannot inspect " + absolute_path + ": Permission denied");
    }
    // The resolver only asks about paths whose parents are symlink-free.
    for (size_t slash = absolute_path.find('/', 1); slash != std::string::npos;
         slash = absolute_path.find('/', slash + 1)) {
      auto parent = nodes_.find(absolute_path.substr(0, slash));
      if (parent != nodes_.end() && parent->second.kind == FileKind::kSymlink) {
        return Fail(ErrorCode::kInternal, "fake: Lstat through a symlink " + absolute_path);
      }
    }
    auto it = nodes_.find(absolute_path);
    return it == nodes_.end() ? FileKind::kMissing : it->second.kind;
  }
  Result<std::string> ReadLink(const std::string& absolute_path) const override {
    auto it = nodes_.find(absolute_path);
    if (it == nodes_.end() || it->second.kind != FileKind::kSymlink) {
      return Fail(ErrorCode::kPermissionDenied, "not a symlink: " + absolute_path);
    }
    return it->second.link;
  }
  std::optional<std::string> RealPath(const std::string& absolute_path) const override {
    auto it = realpaths_.find(absolute_path);
    if (it == realpaths_.end()) return std::nullopt;
    return it->second;
  }

  mutable int lstat_calls = 0;

 private:
  struct Node {
    FileKind kind;
    std::string link;
  };
  void AddParents(const std::string& path) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      nodes_.try_emplace(path.substr(0, slash), Node{FileKind::kDirectory, {}});
    }
  }
  std::map<std::string, Node> nodes_;
  std::map<std::string, bool> failing_;
  std::map<std::string, std::string> realpaths_;
};

}  // namespace telic::policy::fakes
