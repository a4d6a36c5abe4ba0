#include "store/store_wrapper.h"

namespace telic::store {

Result<Store*> StoreWrapper::Target() {
  if (!target_) return Fail(ErrorCode::kInternal, "the store wrapper has no store to forward to");
  return target_;
}

Status StoreWrapper::CreateRun(const Change& change) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->CreateRun(change);
}

Status StoreWrapper::ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->ApplyChange(run_id, expected_version, change);
}

Result<RunRecord> StoreWrapper::GetRun(std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->GetRun(run_id);
}

Result<std::vector<RunRecord>> StoreWrapper::ListRuns(int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->ListRuns(limit);
}

Result<RunPage> StoreWrapper::QueryRuns(const RunQuery& query) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->QueryRuns(query);
}

Result<std::vector<ArtifactMeta>> StoreWrapper::ListArtifactsAfter(std::string_view run_id, int64_t after_seq) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->ListArtifactsAfter(run_id, after_seq);
}

Result<Store::RunAndArtifacts> StoreWrapper::GetRunAndArtifactsAfter(std::string_view run_id, int64_t after_seq) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->GetRunAndArtifactsAfter(run_id, after_seq);
}

Result<StoredArtifact> StoreWrapper::GetArtifact(std::string_view run_id, std::string_view artifact_id) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->GetArtifact(run_id, artifact_id);
}

Result<TracePage> StoreWrapper::GetTrace(std::string_view run_id, int64_t after_sequence, int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->GetTrace(run_id, after_sequence, limit);
}

Result<RunTombstone> StoreWrapper::DeleteRun(std::string_view run_id, int64_t expected_version,
                                             const DeletionRequest& request) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->DeleteRun(run_id, expected_version, request);
}

Result<std::vector<RunTombstone>> StoreWrapper::ListTombstones(int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->ListTombstones(limit);
}

Result<int64_t> StoreWrapper::RecordRefusedCall(const RefusedCall& call) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->RecordRefusedCall(call);
}

Result<std::vector<RefusedCall>> StoreWrapper::ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->ListRefusedCalls(run_id, after_seq, limit);
}

Status StoreWrapper::AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->AddContextCost(run_id, costs);
}

void StoreWrapper::DeferContextCost(std::string_view run_id, std::vector<ContextCost> costs) {
  if (auto store = Target()) (*store)->DeferContextCost(run_id, std::move(costs));
}

Status StoreWrapper::FlushContextCosts() {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->FlushContextCosts();
}

Result<std::vector<ContextCost>> StoreWrapper::GetContextCost(std::string_view run_id) {
  TELIC_ASSIGN_OR_RETURN(Store * store, Target());
  return store->GetContextCost(run_id);
}

}  // namespace telic::store
