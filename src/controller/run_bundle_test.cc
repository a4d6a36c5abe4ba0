// Run bundles over real SQLite ledgers: export, parse, check, import, and
// bundles edited and resealed (every digest recomputed) so that the checks
// behind the digests are reached.
#include "controller/run_bundle.h"

#include <filesystem>

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
  std::string Resealed(const std::function<void(Json&)>& edit) { return Resealed(edit, "", ""); }

  // The same, with the string value `placeholder` (as a JSON string) replaced
  // by the raw text `raw` everywhere, digests included: a sealed bundle with
  // content no Json value here could hold (nesting far beyond the bound).
  std::string Resealed(const std::function<void(Json&)>& edit, const std::string& placeholder, const std::string& raw) {
    auto canonical = [&](const Json& value) {
      std::string text = CanonicalJson(value);
      if (placeholder.empty()) return text;
      std::string quoted = "\"" + placeholder + "\"";
      for (size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + raw.size())) {
        text.replace(at, quoted.size(), raw);
      }
      return text;
    };
    Json doc = Json::parse(bytes_.substr(0, bytes_.size() - 1));
    edit(doc);
    doc.erase("bundleDigest");
    for (const char* name : {"run", "artifacts", "trace", "verification"}) {
      doc["sections"][name] = Sha256Ref(canonical(doc[name]));
    }
    doc["bundleDigest"] = Sha256Ref(canonical(doc));
    return canonical(doc) + "\n";
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
  Json report = CheckBundle(*bundle, dir_.File("state"));
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
           {[](Json& d) { d["run"]["phase"] = "agent_9_dream"; }, "bundle /run/phase: unknown phase"},
           {[](Json& d) { d["run"]["requestedMode"] = "implement"; }, "bundle /run/requestedMode: unknown mode"},
           {[](Json& d) { d["run"]["topology"] = "huge"; }, "bundle /run/topology: unknown topology"},
           {[](Json& d) { d["run"]["outcomeHint"] = "fine"; }, "bundle /run/outcomeHint: unknown run status"},
           {[](Json& d) { d["artifacts"][0]["type"] = "Memo"; }, "bundle /artifacts/0/type: unknown artifact type"},
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
    Json report = CheckBundle(*parsed, dir_.File("state"));
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

std::string DeepArrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// covers issue 40 item 2: 50,000 nested arrays in run.extra are refused by the parser, before any recursive walk
TEST_F(RunBundleTest, DeepNestingInRunExtraIsRefusedWithAnOffset) {
  std::string bundle = Resealed([](Json& d) { d["run"]["extra"]["deep"] = "DEEP"; }, "DEEP", DeepArrays(50000));
  auto parsed = ParseBundle(bundle);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message().find("nesting exceeds depth 128 at /run/extra/deep/"), std::string::npos)
      << parsed.error().message();
  EXPECT_TRUE(parsed.error().message().starts_with("bundle: not valid JSON: invalid JSON at byte ")) << parsed.error().message();
}

// covers issue 40 item 2: an artifact body of 50,000 nested arrays (every digest right) is a problem, not a crash
TEST_F(RunBundleTest, DeepNestingInAnArtifactBodyIsAProblem) {
  std::string deep = DeepArrays(50000);
  std::string bundle = Resealed([&](Json& d) {
    d["artifacts"][0]["body"] = deep;
    d["artifacts"][0]["sha256"] = Sha256Ref(deep);
  });
  auto parsed = ParseBundle(bundle);
  ASSERT_TRUE(parsed) << parsed.error().message();
  Json report = CheckBundle(*parsed, dir_.File("state"));
  EXPECT_FALSE(report["ok"]);
  ASSERT_EQ(report["problems"].size(), 1u) << report.dump();
  EXPECT_NE(report["problems"][0].get<std::string>().find("(/artifacts/0/body) is not JSON: invalid JSON at byte 128: "
                                                          "nesting exceeds depth 128"),
            std::string::npos)
      << report.dump();
}

// covers issue 40 item 3: ids with escapes, NUL, '/', '../' or 100 KB are refused with their pointer
TEST_F(RunBundleTest, HostileIdsAreRefusedWithTheirPointer) {
  for (const std::string& id : {std::string("\x1b]0;pwned\a\x1b[2J"), std::string("run\0id", 6), std::string("a/b"),
                                std::string("../x"), std::string(100 * 1024, 'a')}) {
    auto run = ParseBundle(Resealed([&](Json& d) { d["runId"] = d["run"]["runId"] = id; }));
    ASSERT_FALSE(run);
    EXPECT_TRUE(run.error().message().starts_with("bundle /run/runId: is not an identifier: ")) << run.error().message();
    EXPECT_EQ(run.error().message().find('\x1b'), std::string::npos);
    EXPECT_LT(run.error().message().size(), 200u);
    auto artifact = ParseBundle(Resealed([&](Json& d) { d["artifacts"][0]["id"] = id; }));
    ASSERT_FALSE(artifact);
    EXPECT_TRUE(artifact.error().message().starts_with("bundle /artifacts/0/id: is not an identifier")) << artifact.error().message();
    auto event = ParseBundle(Resealed([&](Json& d) { d["trace"][1]["eventId"] = id; }));
    ASSERT_FALSE(event);
    EXPECT_TRUE(event.error().message().starts_with("bundle /trace/1/eventId: is not an identifier")) << event.error().message();
    auto prior = ParseBundle(Resealed([&](Json& d) { d["run"]["priorRunId"] = id; }));
    ASSERT_FALSE(prior);
    EXPECT_TRUE(prior.error().message().starts_with("bundle /run/priorRunId: is not an identifier")) << prior.error().message();
  }
}

// covers issue 40 item 7: the scratch ledger of a check lives under the state directory and is gone after
TEST_F(RunBundleTest, TheScratchLedgerLivesUnderTheStateDirectoryAndIsRemoved) {
  auto bundle = ParseBundle(bytes_);
  ASSERT_TRUE(bundle);
  Json report = CheckBundle(*bundle, dir_.File("state"));
  EXPECT_TRUE(report["ok"]) << report.dump();
  EXPECT_TRUE(std::filesystem::is_directory(dir_.File("state/scratch")));
  EXPECT_TRUE(std::filesystem::is_empty(dir_.File("state/scratch")));
}

}  // namespace
}  // namespace telic::controller
