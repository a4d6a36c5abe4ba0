// BodyCache: parsed artifact bodies, shared by every operation of a service.
//
// An artifact's body is immutable and named by the digest of its canonical
// bytes, so a body parsed once is the body for as long as the ledger lives.
// Computing a NextAction reads the run's plans, results, envelope and input
// closure; before this cache each submission read every one of them from the
// store again, re-hashed it and parsed it (issue 18: half the instructions of
// an Evidence submission). Entries are kept least recently used first out,
// within a budget of canonical bytes.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/canonical_json.h"
#include "base/status.h"
#include "store/store.h"

namespace telic::controller {

class BodyCache {
 public:
  // `budget_bytes`: the canonical bytes of the bodies kept; a body larger
  // than a quarter of it is parsed for its caller but not kept.
  explicit BodyCache(size_t budget_bytes = kDefaultBudgetBytes) : budget_bytes_(budget_bytes) {}
  static constexpr size_t kDefaultBudgetBytes = 512 * 1024;

  // The parsed body of `meta`: the kept one for its digest, else read from
  // `store` (which re-hashes it: kDataLoss when the bytes do not match) and
  // parsed (kDataLoss when they are not JSON). Thread-safe.
  Result<std::shared_ptr<const Json>> Load(store::Store& store, const store::ArtifactMeta& meta);

  // The same read and parse without a cache (what Load does on a miss).
  static Result<std::shared_ptr<const Json>> ReadFromStore(store::Store& store, const store::ArtifactMeta& meta);

  // Keeps `body` under `digest`, the digest of its canonical bytes as just
  // written by the caller (a body it holds in memory, so the first reads of
  // it do not parse the bytes back). Same budget rules as a load.
  void Put(const std::string& digest, std::shared_ptr<const Json> body, size_t bytes);

  // Drops every kept body (after runs were deleted in this process: their
  // bodies are unreachable, a load starts from a run's index, but need not
  // stay in memory).
  void Clear();

  size_t loads_from_store() const;  // misses so far (for tests)
  size_t kept_bytes() const;

 private:
  struct Entry {
    std::shared_ptr<const Json> body;
    size_t bytes = 0;
    std::list<std::string>::iterator position;  // in recent_
  };
  std::shared_ptr<const Json> Find(const std::string& digest);
  void Keep(const std::string& digest, std::shared_ptr<const Json> body, size_t bytes);
  void KeepLocked(const std::string& digest, std::shared_ptr<const Json> body, size_t bytes);

  const size_t budget_bytes_;
  mutable std::mutex mutex_;
  std::list<std::string> recent_;  // digests, most recently used first
  std::unordered_map<std::string, Entry> entries_;
  size_t kept_bytes_ = 0;
  size_t loads_from_store_ = 0;
};

}  // namespace telic::controller
