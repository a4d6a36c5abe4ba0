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
  bool assume_unchanged = false;  // `git update-index --assume-unchanged`
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
  // An index of entries read elsewhere (libgit2) or rewritten (folded
  // conflicts); the paths are copied. Version 0, no cache tree.
  static IndexFile FromEntries(const std::vector<IndexEntry>& entries, IndexTime mtime);

  uint32_t version() const { return version_; }
  // Entries in file order: by path (byte order), then stage. Each entry is
  // decoded from the file when asked for; only its place is kept (a 100,000
  // entry index would otherwise cost 8 MB of fresh memory per read).
  size_t size() const { return slots_.size(); }
  std::string_view path(size_t i) const { return {path_base_ + slots_[i].path, slots_[i].length}; }
  IndexEntry entry(size_t i) const;
  // Whether some entry has a conflict stage, or paths are out of byte order.
  bool has_conflicts() const { return conflicts_; }
  bool sorted() const { return sorted_; }
  // The tree id of the whole index from the TREE extension, when it is
  // present and valid (git keeps it in step with the entries).
  const std::optional<ObjectId>& cache_tree_root() const { return cache_tree_root_; }
  // The file's modification time (racy-entry checks); zero when missing.
  IndexTime mtime() const { return mtime_; }

 private:
  // Where entry i is: its record in the file (or in `decoded_`), its path
  // in `path_base_` (the file for v2/v3, `arena_` for v4 and FromEntries).
  struct Slot {
    uint32_t record = 0;
    uint32_t path = 0;
    uint32_t length = 0;
  };

  Status Parse();
  Status ParseStructure(size_t end);
  Status ParseEntries(size_t& offset, size_t end);
  Status ParseExtensions(size_t offset, size_t end);
  void ParseCacheTree(std::string_view data);

  std::unique_ptr<const char, IndexUnmap> map_;  // the file, mapped read-only (moves keep views valid)
  std::vector<char> owned_;                      // or a copy (FromBytes)
  std::string_view bytes_;
  std::vector<char> arena_;  // v4 and FromEntries paths
  const char* path_base_ = nullptr;
  uint32_t version_ = 0;
  std::vector<Slot> slots_;
  std::vector<IndexEntry> decoded_;  // FromEntries only
  bool conflicts_ = false;
  bool sorted_ = true;
  std::optional<ObjectId> cache_tree_root_;
  IndexTime mtime_;
  std::optional<uint32_t> empty_path_;  // the first entry without a path
};

}  // namespace telic::grounding
