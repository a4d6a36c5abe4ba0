// ArtifactIndex: one run's artifact metadata in insertion order, indexed by
// id and by type. ArtifactIndexCache keeps the index of recently used runs
// and extends it with only the artifacts appended since (Store::
// ListArtifactsAfter), so reading a run's state costs what changed, not its
// whole history. Artifacts are immutable and append-only, so a cached prefix
// never goes stale; it can only be incomplete until extended.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "store/store.h"

namespace telic::controller {

class ArtifactIndex {
 public:
  ArtifactIndex() = default;
  explicit ArtifactIndex(std::vector<store::ArtifactMeta> list) { Append(std::move(list)); }

  // Adds artifacts that follow the current ones.
  void Append(std::vector<store::ArtifactMeta> more);

  const std::vector<store::ArtifactMeta>& list() const { return list_; }
  // The highest seq seen (0 when empty or when the metadata carried none).
  int64_t last_seq() const { return last_seq_; }
  const store::ArtifactMeta* Find(std::string_view id) const;
  // Positions in list() of the artifacts of `type`, in insertion order.
  const std::vector<size_t>& OfType(std::string_view type) const;

 private:
  std::vector<store::ArtifactMeta> list_;
  std::unordered_map<std::string, size_t> by_id_;
  std::map<std::string, std::vector<size_t>, std::less<>> by_type_;
  int64_t last_seq_ = 0;
};

class ArtifactIndexCache {
 public:
  explicit ArtifactIndexCache(store::Store& store, size_t capacity = 64) : store_(store), capacity_(capacity) {}

  // The run's index as stored now: the cached prefix extended by whatever was
  // appended since. Thread-safe; the returned index is never modified.
  Result<std::shared_ptr<const ArtifactIndex>> Get(const std::string& run_id);

  // The run's record with its index, read together (Store::
  // GetRunAndArtifactsAfter: one round trip on PostgreSQL). The index is
  // never older than the record.
  struct RunAndIndex {
    store::RunRecord run;
    std::shared_ptr<const ArtifactIndex> index;
  };
  Result<RunAndIndex> GetWithRun(const std::string& run_id);

 private:
  std::shared_ptr<const ArtifactIndex> Cached(const std::string& run_id);
  // Appends to `cached` itself when it is still the run's entry and no one
  // but the cache and the caller holds it (no copy of the whole index per
  // appended artifact); false when others may be reading it.
  bool AppendInPlace(const std::string& run_id, const std::shared_ptr<const ArtifactIndex>& cached,
                     std::vector<store::ArtifactMeta>& appended);
  // The cached prefix extended by `appended`, stored as the run's entry.
  std::shared_ptr<const ArtifactIndex> Extend(const std::string& run_id, std::shared_ptr<const ArtifactIndex> cached,
                                              std::vector<store::ArtifactMeta> appended);

  store::Store& store_;
  size_t capacity_;
  std::mutex mutex_;
  std::list<std::string> recent_;  // most recently used first
  std::unordered_map<std::string, std::shared_ptr<const ArtifactIndex>> entries_;
};

}  // namespace telic::controller
