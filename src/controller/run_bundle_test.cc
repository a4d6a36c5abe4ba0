// Run bundles over real SQLite ledgers: export, parse, check, import, and
// bundles edited and resealed (every digest recomputed) so that the checks
// behind the digests are reached.
#include "controller/run_bundle.h"

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::controller {
namespace {

class RunBundleTest : public ::testing::Test {
 protected:
  RunBundleTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("source.sqlite3")));
    service_ = std::make_unique<RunService>(*store_, clock_, ids_, "/repo");
    StartRunRequest request;
    request.original_request = "Explain what src/app.ts does";
    request.mode = "report_only";
    auto started = service_->StartRun(request);
    ASSERT_TRUE(started) << started.error().message();
    run_id_ = started->run.run_id;
    ASSERT_TRUE(service_->CancelRun(run_id_, started->next_action["id"], started->run.version));
    auto bytes = ExportBundle(*service_, run_id_);
    ASSERT_TRUE(bytes) << bytes.error().message();
    bytes_ = *bytes;
  }

  // The bundle with `edit` applied and every digest recomputed.
  std::string Resealed(const std::function<void(Json&)>& edit) {
    Json doc = Json::parse(bytes_.substr(0, bytes_.size() - 1));
    edit(doc);
    doc.erase("bundleDigest");
    for (const char* name : {"run", "artifacts", "trace", "verification"}) {
      doc["sections"][name] = Sha256Ref(CanonicalJson(doc[name]));
    }
    doc["bundleDigest"] = Sha256Ref(CanonicalJson(doc));
    return CanonicalJson(doc) + "\n";
  }

  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<RunService> service_;
  std::string run_id_;
  std::string bytes_;
};

// covers issue 22 §3 (round trip into another ledger with the same hashes)
TEST_F(RunBundleTest, ExportParseCheckImportRoundTrips) {
  auto bundle = ParseBundle(bytes_);
  ASSERT_TRUE(bundle) << bundle.error().message();
  Json report = CheckBundle(*bundle);
  EXPECT_TRUE(report["ok"]) << report.dump();
  EXPECT_EQ(report["traceEvents"], 3);
  auto target = store::SqliteStore::Open(dir_.File("target.sqlite3"));
  ASSERT_TRUE(target);
  ASSERT_TRUE(ImportBundle(**target, *bundle));
  EXPECT_EQ((*target)->GetRun(run_id_)->version, store_->GetRun(run_id_)->version);
  EXPECT_EQ((*target)->GetTrace(run_id_, 0, 10)->events.back().hash, store_->GetTrace(run_id_, 0, 10)->events.back().hash);
  auto again = ImportBundle(**target, *bundle);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kAlreadyExists);
}

// covers issue 22 §3 (precise errors: each names its JSON pointer)
TEST_F(RunBundleTest, StructuralErrorsNameTheirPointer) {
  struct Case {
    std::function<void(Json&)> edit;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {[](Json& d) { d["run"]["bogus"] = 1; }, "bundle /run/bogus: unknown field"},
           {[](Json& d) { d["run"].erase("status"); }, "bundle /run/status: is required"},
           {[](Json& d) { d["run"]["status"] = "exploded"; }, "bundle /run/status: unknown run status"},
           {[](Json& d) { d["trace"][1]["sequence"] = "2"; }, "bundle /trace/1/sequence: must be an integer"},
           {[](Json& d) { d["artifacts"][0]["sourceRefs"] = Json::array({1}); }, "bundle /artifacts/0/sourceRefs/0: must be a string"},
           {[](Json& d) { d["formatVersion"] = 2; }, "bundle /formatVersion: unsupported version (this telic reads 1)"},
           {[](Json& d) { d["runId"] = "other"; }, "bundle /runId: differs from /run/runId"},
       }) {
    auto parsed = ParseBundle(Resealed(c.edit));
    ASSERT_FALSE(parsed) << c.message;
    EXPECT_EQ(parsed.error().message(), c.message);
  }
}

// covers issue 22 §3 (digests are not the only check: a resealed edit is caught by the content checks)
TEST_F(RunBundleTest, AResealedEditIsCaughtByTheChainTheBodyDigestsOrTheReplay) {
  for (const auto& edit : std::vector<std::function<void(Json&)>>{
           [](Json& d) { d["trace"][0]["summary"] = "rewritten history"; },
           [](Json& d) {
             Json body = Json::parse(d["artifacts"][0]["body"].get<std::string>());
             body["content"] = "a different request";
             d["artifacts"][0]["body"] = CanonicalJson(body);
           },
           [](Json& d) { d["run"]["status"] = "completed"; },
           [](Json& d) { d["verification"]["verify"]["artifacts"] = 99; },
       }) {
    auto parsed = ParseBundle(Resealed(edit));
    ASSERT_TRUE(parsed) << parsed.error().message();
    Json report = CheckBundle(*parsed);
    EXPECT_FALSE(report["ok"]) << report.dump();
    EXPECT_FALSE(report["problems"].empty());
  }
}

TEST_F(RunBundleTest, AnyChangedByteFailsToParse) {
  for (size_t pos : {size_t{0}, bytes_.size() / 3, bytes_.size() / 2, bytes_.size() - 2, bytes_.size() - 1}) {
    std::string changed = bytes_;
    changed[pos] = changed[pos] == 'a' ? 'b' : (changed[pos] == ' ' ? '\t' : ' ');
    EXPECT_FALSE(ParseBundle(changed)) << "byte " << pos;
  }
}

}  // namespace
}  // namespace telic::controller
