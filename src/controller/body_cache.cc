#include "controller/body_cache.h"

#include <fmt/format.h>

#include "base/json_parse.h"

namespace telic::controller {

std::shared_ptr<const Json> BodyCache::Find(const std::string& digest) {
  std::lock_guard lock(mutex_);
  auto found = entries_.find(digest);
  if (found == entries_.end()) return nullptr;
  recent_.splice(recent_.begin(), recent_, found->second.position);
  return found->second.body;
}

// Counts the load from the store that produced `body`, and keeps it.
void BodyCache::Keep(const std::string& digest, std::shared_ptr<const Json> body, size_t bytes) {
  std::lock_guard lock(mutex_);
  ++loads_from_store_;
  KeepLocked(digest, std::move(body), bytes);
}

void BodyCache::Put(const std::string& digest, std::shared_ptr<const Json> body, size_t bytes) {
  std::lock_guard lock(mutex_);
  KeepLocked(digest, std::move(body), bytes);
}

// Keeps the body unless it is too large or the digest is kept already.
void BodyCache::KeepLocked(const std::string& digest, std::shared_ptr<const Json> body, size_t bytes) {
  if (bytes > budget_bytes_ / 4 || entries_.contains(digest)) return;
  recent_.push_front(digest);
  entries_.emplace(digest, Entry{std::move(body), bytes, recent_.begin()});
  kept_bytes_ += bytes;
  while (kept_bytes_ > budget_bytes_) {
    auto oldest = entries_.find(recent_.back());
    kept_bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
    recent_.pop_back();
  }
}

namespace {

// Reads and parses `meta`'s body; `stored` receives what the store returned.
Result<std::shared_ptr<const Json>> ReadAndParse(store::Store& store, const store::ArtifactMeta& meta,
                                                 store::StoredArtifact& stored) {
  TELIC_ASSIGN_OR_RETURN(stored, store.GetArtifact(meta.run_id, meta.id));
  auto parsed = ParseStoredJson(stored.canonical_body);
  if (!parsed) {
    return Fail(ErrorCode::kDataLoss,
                fmt::format("Stored {} artifact has an invalid body: {}", meta.type, parsed.error().message()));
  }
  return std::make_shared<const Json>(std::move(*parsed));
}

}  // namespace

Result<std::shared_ptr<const Json>> BodyCache::ReadFromStore(store::Store& store, const store::ArtifactMeta& meta) {
  store::StoredArtifact stored;
  return ReadAndParse(store, meta, stored);
}

Result<std::shared_ptr<const Json>> BodyCache::Load(store::Store& store, const store::ArtifactMeta& meta) {
  if (!meta.sha256.empty()) {
    if (std::shared_ptr<const Json> kept = Find(meta.sha256)) return kept;
  }
  store::StoredArtifact stored;
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<const Json> body, ReadAndParse(store, meta, stored));
  // Kept under the digest the store verified the bytes against.
  Keep(stored.meta.sha256, body, stored.canonical_body.size());
  return body;
}

void BodyCache::Clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  recent_.clear();
  kept_bytes_ = 0;
}

size_t BodyCache::loads_from_store() const {
  std::lock_guard lock(mutex_);
  return loads_from_store_;
}

size_t BodyCache::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return kept_bytes_;
}

}  // namespace telic::controller
