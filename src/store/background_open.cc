#include "store/background_open.h"

#include <exception>
#include <utility>

namespace telic::store {

BackgroundOpenedStore::BackgroundOpenedStore(Opener open)
    : thread_([this, open = std::move(open)] {
        Result<std::unique_ptr<Store>> opened = std::unexpected(Error(ErrorCode::kInternal, "the store was not opened"));
        try {
          opened = open();
        } catch (const std::exception& ex) {
          opened = std::unexpected(Error(ErrorCode::kInternal, std::string("opening the store failed: ") + ex.what()));
        }
        Finish(std::move(opened));
      }) {}

BackgroundOpenedStore::~BackgroundOpenedStore() {
  if (thread_.joinable()) thread_.join();
}

void BackgroundOpenedStore::Finish(Result<std::unique_ptr<Store>> opened) {
  std::lock_guard lock(mutex_);
  if (opened && *opened) {
    store_ = std::move(*opened);
  } else {
    error_ = opened ? Error(ErrorCode::kInternal, "the store opener returned no store") : opened.error();
  }
  finished_.store(true, std::memory_order_release);
  finished_changed_.notify_all();
}

Result<Store*> BackgroundOpenedStore::Opened() {
  if (!finished_.load(std::memory_order_acquire)) {
    std::unique_lock lock(mutex_);
    finished_changed_.wait(lock, [this] { return finished_.load(std::memory_order_acquire); });
  }
  if (error_) return std::unexpected(*error_);
  return store_.get();
}

Status BackgroundOpenedStore::CreateRun(const Change& change) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->CreateRun(change);
}

Status BackgroundOpenedStore::ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->ApplyChange(run_id, expected_version, change);
}

Result<RunRecord> BackgroundOpenedStore::GetRun(std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->GetRun(run_id);
}

Result<std::vector<RunRecord>> BackgroundOpenedStore::ListRuns(int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->ListRuns(limit);
}

Result<RunPage> BackgroundOpenedStore::QueryRuns(const RunQuery& query) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->QueryRuns(query);
}

Result<std::vector<ArtifactMeta>> BackgroundOpenedStore::ListArtifactsAfter(std::string_view run_id,
                                                                            int64_t after_seq) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->ListArtifactsAfter(run_id, after_seq);
}

Result<Store::RunAndArtifacts> BackgroundOpenedStore::GetRunAndArtifactsAfter(std::string_view run_id,
                                                                              int64_t after_seq) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->GetRunAndArtifactsAfter(run_id, after_seq);
}

Result<StoredArtifact> BackgroundOpenedStore::GetArtifact(std::string_view run_id, std::string_view artifact_id) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->GetArtifact(run_id, artifact_id);
}

Result<TracePage> BackgroundOpenedStore::GetTrace(std::string_view run_id, int64_t after_sequence, int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->GetTrace(run_id, after_sequence, limit);
}

Result<RunTombstone> BackgroundOpenedStore::DeleteRun(std::string_view run_id, int64_t expected_version,
                                                      const DeletionRequest& request) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->DeleteRun(run_id, expected_version, request);
}

Result<std::vector<RunTombstone>> BackgroundOpenedStore::ListTombstones(int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->ListTombstones(limit);
}

Result<int64_t> BackgroundOpenedStore::RecordRefusedCall(const RefusedCall& call) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->RecordRefusedCall(call);
}

Result<std::vector<RefusedCall>> BackgroundOpenedStore::ListRefusedCalls(std::string_view run_id, int64_t after_seq,
                                                                         int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->ListRefusedCalls(run_id, after_seq, limit);
}

Status BackgroundOpenedStore::AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->AddContextCost(run_id, costs);
}

Result<std::vector<ContextCost>> BackgroundOpenedStore::GetContextCost(std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Opened());
  return store->GetContextCost(run_id);
}

}  // namespace telic::store
