#include "controller/artifact_index.h"

#include <algorithm>
#include <atomic>

namespace telic::controller {

void ArtifactIndex::Append(std::vector<store::ArtifactMeta> more) {
  list_.reserve(list_.size() + more.size());
  for (store::ArtifactMeta& meta : more) {
    size_t position = list_.size();
    by_id_.emplace(meta.id, position);
    by_type_[std::string(domain::Name(meta.type))].push_back(position);
    last_seq_ = std::max(last_seq_, meta.seq);
    list_.push_back(std::move(meta));
  }
}

const store::ArtifactMeta* ArtifactIndex::Find(std::string_view id) const {
  auto found = by_id_.find(std::string(id));
  return found == by_id_.end() ? nullptr : &list_[found->second];
}

const std::vector<size_t>& ArtifactIndex::OfType(std::string_view type) const {
  static const std::vector<size_t> kNone;
  auto found = by_type_.find(type);
  return found == by_type_.end() ? kNone : found->second;
}

std::shared_ptr<const ArtifactIndex> ArtifactIndexCache::Cached(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  auto found = entries_.find(run_id);
  return found != entries_.end() ? found->second : nullptr;
}

bool ArtifactIndexCache::AppendInPlace(const std::string& run_id, const std::shared_ptr<const ArtifactIndex>& cached,
                                       std::vector<store::ArtifactMeta>& appended) {
  std::lock_guard lock(mutex_);
  auto found = entries_.find(run_id);
  // Owners: the entry and `cached`. Nobody else can gain one meanwhile: an
  // index is handed out only from entries_ (under mutex_) or by an owner.
  if (found == entries_.end() || found->second != cached || cached.use_count() != 2) return false;
  // Every former owner's reads happen before this append (their release of
  // the count, read above, synchronises with this fence).
  std::atomic_thread_fence(std::memory_order_acquire);
  // Made non-const (make_shared<ArtifactIndex> in Extend), so this is allowed.
  std::const_pointer_cast<ArtifactIndex>(cached)->Append(std::move(appended));
  recent_.remove(run_id);
  recent_.push_front(run_id);
  return true;
}

std::shared_ptr<const ArtifactIndex> ArtifactIndexCache::Extend(const std::string& run_id,
                                                                std::shared_ptr<const ArtifactIndex> cached,
                                                                std::vector<store::ArtifactMeta> appended) {
  if (cached && !appended.empty() && AppendInPlace(run_id, cached, appended)) return cached;
  std::shared_ptr<const ArtifactIndex> current = cached;
  if (!cached || !appended.empty()) {
    auto extended = cached ? std::make_shared<ArtifactIndex>(*cached) : std::make_shared<ArtifactIndex>();
    extended->Append(std::move(appended));
    current = std::move(extended);
  }
  std::lock_guard lock(mutex_);
  auto& slot = entries_[run_id];
  // A concurrent caller may have stored a longer index meanwhile; keep it.
  if (!slot || slot->last_seq() <= current->last_seq()) slot = current;
  recent_.remove(run_id);
  recent_.push_front(run_id);
  while (recent_.size() > capacity_) {
    entries_.erase(recent_.back());
    recent_.pop_back();
  }
  return current;
}

Result<std::shared_ptr<const ArtifactIndex>> ArtifactIndexCache::Get(const std::string& run_id) {
  std::shared_ptr<const ArtifactIndex> cached = Cached(run_id);
  int64_t after = cached ? cached->last_seq() : 0;
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> appended, store_.ListArtifactsAfter(run_id, after));
  return Extend(run_id, std::move(cached), std::move(appended));
}

Result<ArtifactIndexCache::RunAndIndex> ArtifactIndexCache::GetWithRun(const std::string& run_id) {
  std::shared_ptr<const ArtifactIndex> cached = Cached(run_id);
  int64_t after = cached ? cached->last_seq() : 0;
  TELIC_ASSIGN_OR_RETURN(store::Store::RunAndArtifacts read, store_.GetRunAndArtifactsAfter(run_id, after));
  return RunAndIndex{std::move(read.run), Extend(run_id, std::move(cached), std::move(read.appended))};
}

}  // namespace telic::controller
