// RunService::RecordObservedEvidence: provenance observed, stored outside the
// body, covered by the trace's hash chain; refusals store nothing.
#include "controller/observed_evidence.h"

#include <gtest/gtest.h>

#include "controller/run_service.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::controller {
namespace {

class ObservedEvidenceTest : public ::testing::Test {
 protected:
  ObservedEvidenceTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<RunService>(*store_, clock_, ids_, "/repo");
    StartRunRequest request;
    request.original_request = "Explain what src/app.ts does";
    request.mode = "report_only";
    run_id_ = service_->StartRun(request)->run.run_id;
  }
  Json Body(std::string id, std::string content = "--- a/x\n+++ b/x\n") {
    return {{"schemaVersion", "1.0"}, {"id", std::move(id)}, {"runId", run_id_}, {"kind", "diff"},
            {"capturedAt", "2025-12-02T08:00:00.000Z"}, {"summary", "telic's diff of x"},
            {"contentType", "text/x-diff"}, {"encoding", "utf8"}, {"content", std::move(content)},
            {"sourceRefs", Json::array()}, {"redactions", Json::array()}, {"rationaleSummary", "observed"}};
  }
  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<RunService> service_;
  std::string run_id_;
};

TEST_F(ObservedEvidenceTest, StoresObservedProvenanceWithAHashedEvent) {
  auto version_before = store_->GetRun(run_id_)->version;
  auto stored = service_->RecordObservedEvidence(run_id_, Body("diff-1"));
  ASSERT_TRUE(stored) << stored.error().message();
  EXPECT_EQ(stored->producer, store::kObservedEvidenceProducer);
  EXPECT_EQ(store::ProvenanceOf(*stored), store::Provenance::kObserved);
  EXPECT_EQ(store_->GetRun(run_id_)->version, version_before);
  auto artifact = store_->GetArtifact(run_id_, "diff-1");
  ASSERT_TRUE(artifact);
  EXPECT_EQ(Json::parse(artifact->canonical_body), Body("diff-1"));  // the body is exactly the wire schema's
  auto trace = store_->GetTrace(run_id_, 0, 100);
  const store::TraceEventRecord& event = trace->events.back();
  EXPECT_EQ(event.event_type, store::kEvidenceObservedEvent);
  EXPECT_EQ(event.actor, "controller");
  EXPECT_EQ(event.output_refs, std::vector<std::string>{"artifact://" + run_id_ + "/diff-1"});
  EXPECT_EQ(event.hash, store::ComputeTraceEventHash(event));
  store::TraceEventRecord claimed = event;
  claimed.event_type = std::string(store::kEvidenceClaimedEvent);
  EXPECT_NE(store::ComputeTraceEventHash(claimed), event.hash);  // the chain covers which one it was
}

TEST_F(ObservedEvidenceTest, ReplayIsIdempotentAndAChangedBodyConflicts) {
  ASSERT_TRUE(service_->RecordObservedEvidence(run_id_, Body("diff-1")));
  ASSERT_TRUE(service_->RecordObservedEvidence(run_id_, Body("diff-1")));
  EXPECT_EQ(store_->ListArtifacts(run_id_)->size(), 3u);
  auto changed = service_->RecordObservedEvidence(run_id_, Body("diff-1", "other"));
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().code(), ErrorCode::kAlreadyExists);
}

TEST_F(ObservedEvidenceTest, RefusalsStoreNothing) {
  auto artifacts = store_->ListArtifacts(run_id_)->size();
  auto events = store_->GetTrace(run_id_, 0, 100)->events.size();
  Json foreign = Body("diff-2");
  foreign["runId"] = "other-run";
  EXPECT_EQ(service_->RecordObservedEvidence(run_id_, foreign).error().code(), ErrorCode::kInvalidArgument);
  Json invalid = Body("diff-3");
  invalid["kind"] = "guess";
  EXPECT_EQ(service_->RecordObservedEvidence(run_id_, invalid).error().code(), ErrorCode::kInvalidArgument);
  auto secret = service_->RecordObservedEvidence(run_id_, Body("diff-4", "token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"));
  ASSERT_FALSE(secret);
  EXPECT_NE(secret.error().message().find("credential"), std::string::npos);
  EXPECT_EQ(service_->RecordObservedEvidence("no-such-run", Body("diff-5")).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->ListArtifacts(run_id_)->size(), artifacts);
  EXPECT_EQ(store_->GetTrace(run_id_, 0, 100)->events.size(), events);
}

TEST_F(ObservedEvidenceTest, HostEvidenceIsClaimedAndOtherTypesHaveNoProvenance) {
  store::ArtifactMeta host{"e", run_id_, domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none", ""};
  EXPECT_EQ(store::ProvenanceOf(host), store::Provenance::kClaimed);
  store::ArtifactMeta plan{"p", run_id_, domain::ArtifactType::kWorkPlan, "1.0", "controller", "", {}, "none", ""};
  EXPECT_EQ(store::ProvenanceOf(plan), std::nullopt);
  EXPECT_EQ(store::ProvenanceName(store::Provenance::kObserved), "observed");
  EXPECT_EQ(store::ProvenanceName(store::Provenance::kClaimed), "claimed");
}

}  // namespace
}  // namespace telic::controller
