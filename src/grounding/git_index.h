// A direct reader of Git's index file (.git/index), versions 2, 3 and 4.
//
// libgit2's git_repository_index builds a full in-memory index (entry
// allocations, a path map) and took ~150 ms for a 100,000-entry index in
// bench/grounding_bench.sh, more than `git ls-files` needs end to end. The
// work-tree scan only needs each entry's path, mode, object id and cached
// stat data, plus the cache-tree root, so it reads the file itself: mapped
// read-only (as git does), paths viewed in place (v2/v3) or rebuilt into one
// arena (v4), the trailing SHA-1 verified like git does.
//
// Not read (kFailedPrecondition, so callers fall back to libgit2): split
// indexes (`link`), sparse indexes (`sdir`), any other required extension
// (a lower-case signature), and files that fail their checksum or are cut
// short (kDataLoss).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::grounding {

using ObjectId = std::array<unsigned char, 20>;

struct IndexTime {
  uint32_t seconds = 0;
  uint32_t nanoseconds = 0;
};

struct IndexEntry {
  std::string_view path;  // valid while the IndexFile lives
  IndexTime ctime;
  IndexTime mtime;
  uint32_t dev = 0;
  uint32_t ino = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t size = 0;
  ObjectId id{};
  uint8_t stage = 0;  // 0, or 1-3 for the sides of a conflict
  bool skip_worktree = false;
  bool intent_to_add = false;
};

// Unmaps an IndexFile's mapping.
struct IndexUnmap {
  size_t size = 0;
  void operator()(const char* address) const;
};

class IndexFile {
 public:
  // Reads and checks `path`. A missing file is an empty index (a new
  // repository has none until the first `git add`).
  static Result<IndexFile> Read(const std::string& path);
  // Parses index bytes held in memory (tests, fuzzing); same checks as Read.
  static Result<IndexFile> FromBytes(std::string_view bytes);

  uint32_t version() const { return version_; }
  // In file order: by path (byte order), then stage.
  const std::vector<IndexEntry>& entries() const { return entries_; }
  // The tree id of the whole index from the TREE extension, when it is
  // present and valid (git keeps it in step with the entries).
  const std::optional<ObjectId>& cache_tree_root() const { return cache_tree_root_; }
  // The file's modification time (racy-entry checks); zero when missing.
  IndexTime mtime() const { return mtime_; }

 private:
  Status Parse();
  Status ParseEntries(size_t& offset, size_t end);
  Status ParseExtensions(size_t offset, size_t end);
  void ParseCacheTree(std::string_view data);

  std::unique_ptr<const char, IndexUnmap> map_;  // the file, mapped read-only (moves keep views valid)
  std::vector<char> owned_;                      // or a copy (FromBytes)
  std::string_view bytes_;
  std::vector<char> arena_;  // v4 paths
  uint32_t version_ = 0;
  std::vector<IndexEntry> entries_;
  std::optional<ObjectId> cache_tree_root_;
  IndexTime mtime_;
  std::optional<uint32_t> empty_path_;  // the first entry without a path
};

}  // namespace telic::grounding
