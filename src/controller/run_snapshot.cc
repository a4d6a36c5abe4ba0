#include "controller/run_snapshot.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace telic::controller {

std::vector<std::string> StringArray(const Json& body, std::string_view key) {
  std::vector<std::string> out;
  if (!body.is_object()) return out;
  auto it = body.find(key);
  if (it == body.end() || !it->is_array()) return out;
  for (const Json& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

bool EqualStringSets(const std::vector<std::string>& left, const std::vector<std::string>& right) {
  if (left.size() != right.size()) return false;
  std::set<std::string> unique(left.begin(), left.end());
  if (unique.size() != left.size()) return false;
  std::set<std::string> other(right.begin(), right.end());
  return std::all_of(left.begin(), left.end(), [&](const std::string& s) { return other.count(s) > 0; });
}

bool ContainsString(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::optional<std::string> ArtifactIdFromUri(std::string_view uri) {
  constexpr std::string_view kPrefix = "artifact://";
  if (uri.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = uri.substr(kPrefix.size());
  size_t slash = rest.find('/');
  if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
  std::string_view id = rest.substr(slash + 1);
  if (id.empty() || id.find('/') != std::string_view::npos) return std::nullopt;
  return std::string(id);
}

Result<RunSnapshot> RunSnapshot::Load(store::Store& store, const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store.GetRun(run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store.ListArtifacts(run_id));
  return RunSnapshot(store, std::move(run), std::move(artifacts));
}

Result<RunSnapshot> RunSnapshot::LoadAt(store::Store& store, const store::RunRecord& checked, ArtifactIndexCache* cache,
                                        BodyCache* bodies) {
  std::shared_ptr<const ArtifactIndex> index;
  if (cache) {
    TELIC_ASSIGN_OR_RETURN(index, cache->Get(checked.run_id));
  } else {
    TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, store.ListArtifacts(checked.run_id));
    index = std::make_shared<ArtifactIndex>(std::move(artifacts));
  }
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, store.GetRun(checked.run_id));
  if (run.version != checked.version) {
    return Fail(ErrorCode::kStaleVersion,
                fmt::format("Stale run version {}; current version is {}", checked.version, run.version));
  }
  RunSnapshot snapshot(store, std::move(run), std::move(index));
  snapshot.body_cache_ = bodies;
  return snapshot;
}

const store::ArtifactMeta* RunSnapshot::Find(std::string_view id) const { return index_->Find(id); }

const store::ArtifactMeta* RunSnapshot::Latest(std::string_view type) const {
  const std::vector<size_t>& positions = index_->OfType(type);
  return positions.empty() ? nullptr : &index_->list()[positions.back()];
}

size_t RunSnapshot::Count(std::string_view type) const { return index_->OfType(type).size(); }

std::string RunSnapshot::Uri(std::string_view id) const { return store::ArtifactUri(run_.run_id, std::string(id)); }

std::string RunSnapshot::LatestRef(std::string_view type) const {
  const store::ArtifactMeta* meta = Latest(type);
  return meta ? Uri(meta->id) : std::string();
}

Result<std::string> RunSnapshot::RequireLatestRef(std::string_view type) const {
  std::string ref = LatestRef(type);
  if (ref.empty()) return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run is missing required {} artifact", type));
  return ref;
}

std::vector<std::string> RunSnapshot::AllRefs(std::string_view type) const {
  std::vector<std::string> refs;
  for (size_t position : index_->OfType(type)) refs.push_back(Uri(index_->list()[position].id));
  return refs;
}

std::vector<const store::ArtifactMeta*> RunSnapshot::All(std::string_view type) const {
  std::vector<const store::ArtifactMeta*> out;
  for (size_t position : index_->OfType(type)) out.push_back(&index_->list()[position]);
  return out;
}

Result<const Json*> RunSnapshot::Body(const store::ArtifactMeta& meta) {
  auto found = bodies_.find(meta.id);
  if (found != bodies_.end()) return found->second.get();
  auto loaded = body_cache_ ? body_cache_->Load(*store_, meta) : BodyCache::ReadFromStore(*store_, meta);
  if (!loaded) return std::unexpected(loaded.error());
  std::shared_ptr<const Json> body = std::move(*loaded);
  if (!body->is_object()) {
    return Fail(ErrorCode::kDataLoss, fmt::format("Stored {} artifact has an invalid body", meta.type));
  }
  return bodies_.emplace(meta.id, std::move(body)).first->second.get();
}

Result<const Json*> RunSnapshot::LatestBody(std::string_view type) {
  const store::ArtifactMeta* meta = Latest(type);
  if (!meta) return Fail(ErrorCode::kFailedPrecondition, fmt::format("Run is missing required {} artifact", type));
  return Body(*meta);
}

Result<const Json*> RunSnapshot::LatestBodyOrNull(std::string_view type) {
  const store::ArtifactMeta* meta = Latest(type);
  if (!meta) return static_cast<const Json*>(nullptr);
  return Body(*meta);
}

Result<const Json*> RunSnapshot::BodyById(std::string_view id) {
  const store::ArtifactMeta* meta = Find(id);
  if (!meta) return static_cast<const Json*>(nullptr);
  return Body(*meta);
}

Result<const std::vector<store::TraceEventRecord>*> RunSnapshot::Trace() {
  if (!trace_) {
    std::vector<store::TraceEventRecord> events;
    int64_t after = 0;
    while (true) {
      TELIC_ASSIGN_OR_RETURN(store::TracePage page, store_->GetTrace(run_.run_id, after, 500));
      for (auto& event : page.events) {
        after = event.sequence;
        events.push_back(std::move(event));
      }
      if (!page.has_more) break;
    }
    trace_ = std::move(events);
  }
  return &*trace_;
}

}  // namespace telic::controller
