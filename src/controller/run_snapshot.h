// RunSnapshot: one run's stored state as read at the start of an operation —
// the run record, its artifact metadata in insertion order, and bodies loaded
// (and re-hashed by the store) on first use, then cached for the operation.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/artifact_index.h"
#include "controller/body_cache.h"
#include "store/store.h"

namespace telic::controller {

// Every string element of body[key] when it is an array (others skipped).
std::vector<std::string> StringArray(const Json& body, std::string_view key);
// The reference's equalStringSets: `left` has no duplicates, the same size as
// `right`, and every element of `left` occurs in `right`.
bool EqualStringSets(const std::vector<std::string>& left, const std::vector<std::string>& right);
bool ContainsString(const std::vector<std::string>& list, std::string_view item);
// The id in "artifact://<anyRun>/<id>" (exactly two segments), or nullopt.
std::optional<std::string> ArtifactIdFromUri(std::string_view uri);

class RunSnapshot {
 public:
  static Result<RunSnapshot> Load(store::Store& store, const std::string& run_id);
  // The snapshot a write decided at `checked` (a run read whose tokens were
  // checked) must be judged on: the artifacts are read first, then the run
  // again; if the version moved in between (another writer won), the result
  // is kStaleVersion, so a rule is never evaluated on a newer artifact list
  // beside an older run record.
  // With `cache`, the artifacts come from it (only what was appended since
  // its last read is fetched); with `bodies`, bodies are loaded through it.
  static Result<RunSnapshot> LoadAt(store::Store& store, const store::RunRecord& checked,
                                    ArtifactIndexCache* cache = nullptr, BodyCache* bodies = nullptr);
  RunSnapshot(store::Store& store, store::RunRecord run, std::vector<store::ArtifactMeta> artifacts)
      : store_(&store), run_(std::move(run)), index_(std::make_shared<ArtifactIndex>(std::move(artifacts))) {}
  RunSnapshot(store::Store& store, store::RunRecord run, std::shared_ptr<const ArtifactIndex> index)
      : store_(&store), run_(std::move(run)), index_(std::move(index)) {}

  const store::RunRecord& run() const { return run_; }
  const std::string& run_id() const { return run_.run_id; }
  const std::vector<store::ArtifactMeta>& artifacts() const { return index_->list(); }
  store::Store& store() { return *store_; }

  const store::ArtifactMeta* Find(std::string_view id) const;
  const store::ArtifactMeta* Latest(std::string_view type) const;
  size_t Count(std::string_view type) const;
  std::string Uri(std::string_view id) const;
  // "artifact://<run>/<id>" of the latest artifact of `type`, or "" if none.
  std::string LatestRef(std::string_view type) const;
  // Like LatestRef, but kFailedPrecondition "Run is missing required <type> artifact".
  Result<std::string> RequireLatestRef(std::string_view type) const;
  std::vector<std::string> AllRefs(std::string_view type) const;
  std::vector<const store::ArtifactMeta*> All(std::string_view type) const;
  // The same lookups by domain::ArtifactType.
  const store::ArtifactMeta* Latest(domain::ArtifactType type) const { return Latest(domain::Name(type)); }
  size_t Count(domain::ArtifactType type) const { return Count(domain::Name(type)); }
  std::string LatestRef(domain::ArtifactType type) const { return LatestRef(domain::Name(type)); }
  std::vector<const store::ArtifactMeta*> All(domain::ArtifactType type) const { return All(domain::Name(type)); }

  // The canonical body (parsed), loaded once. Fails when the stored blob does
  // not re-hash to its digest.
  Result<const Json*> Body(const store::ArtifactMeta& meta);
  // The latest body of `type`: kFailedPrecondition "Run is missing required <type> artifact" if none.
  Result<const Json*> LatestBody(std::string_view type);
  // The latest body of `type`, or nullptr.
  Result<const Json*> LatestBodyOrNull(std::string_view type);
  Result<const Json*> LatestBody(domain::ArtifactType type) { return LatestBody(domain::Name(type)); }
  Result<const Json*> LatestBodyOrNull(domain::ArtifactType type) { return LatestBodyOrNull(domain::Name(type)); }
  // The body of an artifact of this run named by its id, or nullptr.
  Result<const Json*> BodyById(std::string_view id);

  // Every trace event of the run (loaded once).
  Result<const std::vector<store::TraceEventRecord>*> Trace();
  // Drops the loaded trace, so the next Trace() reads the store again (after
  // another writer appended to it).
  void ForgetTrace() { trace_.reset(); }
  // Drops the artifact index, the loaded bodies and the trace; afterwards
  // only run(), run_id() and Uri() may be used, and no pointer or reference
  // obtained from the snapshot before (Find, Latest, All, Body, artifacts())
  // may be: the index they point into may be extended in place by the next
  // reader (ArtifactIndexCache::AppendInPlace). Lets a caller that is done
  // with the snapshot stop holding the run's shared index.
  void Release() {
    index_.reset();
    bodies_.clear();
    trace_.reset();
  }

 private:
  store::Store* store_;
  store::RunRecord run_;
  std::shared_ptr<const ArtifactIndex> index_;
  BodyCache* body_cache_ = nullptr;  // shared across operations when set
  std::map<std::string, std::shared_ptr<const Json>, std::less<>> bodies_;  // this snapshot's, by id
  std::optional<std::vector<store::TraceEventRecord>> trace_;
};

}  // namespace telic::controller
