// Controller latency against run history (issue 5): get_next_action and
// submit on a run holding N stored artifacts. The per-run cap is 2,048
// artifacts (PROTOCOL §18), so N stops there; 10,000 stored artifacts
// are 5 runs of 2,000 (the measured run is the last one).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "controller/run_service.h"
#include "store/sqlite_store.h"

namespace {

using telic::Json;

struct HistoryFixture {
  std::filesystem::path dir;
  std::unique_ptr<telic::store::SqliteStore> store;
  telic::SystemClock clock;
  telic::RandomIdSource ids;
  std::unique_ptr<telic::controller::RunService> service;
  telic::store::RunRecord run;

  explicit HistoryFixture(int artifacts, int runs = 1) {
    dir = std::filesystem::temp_directory_path() / fmt::format("telic-bench-{}", telic::RandomHex(6));
    std::filesystem::create_directories(dir);
    store = std::move(*telic::store::SqliteStore::Open((dir / "telic.sqlite3").string()));
    service = std::make_unique<telic::controller::RunService>(*store, clock, ids, dir.string());
    for (int r = 0; r < runs; ++r) AddRun(artifacts);
  }
  // A run holding `artifacts` Evidence, parked in quality review; it becomes `run`.
  void AddRun(int artifacts) {
    telic::controller::StartRunRequest request;
    request.original_request = "Explain what src/app.ts does";
    request.mode = "report_only";
    run = service->StartRun(request)->run;
    // History: N Evidence artifacts, written in batches, with the run parked in quality review.
    for (int i = 0; i < artifacts;) {
      telic::store::Change change;
      change.run = run;
      change.run.phase = telic::domain::Phase::kAgent3Review;
      for (int batch = 0; batch < 200 && i < artifacts; ++batch, ++i) {
        std::string id = fmt::format("evidence-{:05d}", i);
        Json body = {{"schemaVersion", "1.0"}, {"id", id}, {"runId", run.run_id}, {"kind", "log"},
                     {"capturedAt", "2026-12-02T10:00:00.000Z"}, {"summary", "A log line."},
                     {"contentType", "text/plain"}, {"encoding", "utf8"}, {"content", fmt::format("line {}", i)},
                     {"sourceRefs", Json::array()}, {"redactions", Json::array()}, {"rationaleSummary", "Captured."}};
        change.artifacts.push_back(telic::store::MakeArtifact(
            {id, run.run_id, telic::domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none", run.updated_at}, body));
      }
      (void)store->ApplyChange(run.run_id, run.version, change);
      run.phase = telic::domain::Phase::kAgent3Review;
    }
  }
  ~HistoryFixture() {
    service.reset();
    store.reset();
    std::filesystem::remove_all(dir);
  }
};

// Per-call latencies, reported as the p50 and p99 counters (microseconds).
class Latencies {
 public:
  template <typename Call>
  void Time(Call&& call) {
    auto start = std::chrono::steady_clock::now();
    call();
    samples_.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  void Report(benchmark::State& state) {
    if (samples_.empty()) return;
    std::sort(samples_.begin(), samples_.end());
    auto at = [&](double q) { return samples_[std::min(samples_.size() - 1, static_cast<size_t>(q * samples_.size()))]; };
    state.counters["p50_us"] = at(0.50);
    state.counters["p99_us"] = at(0.99);
  }

 private:
  std::vector<double> samples_;
};

// Artifacts per run x runs: 10, 1,000, 2,000 in one run, and 10,000 stored.
void HistorySizes(benchmark::internal::Benchmark* b) {
  b->Args({10, 1})->Args({1000, 1})->Args({2000, 1})->Args({2000, 5});
  b->ArgNames({"per_run", "runs"})->Unit(benchmark::kMicrosecond);
}

void BM_GetNextAction(benchmark::State& state) {
  HistoryFixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  Latencies latencies;
  for (auto _ : state) {
    latencies.Time([&] {
      auto action = f.service->GetNextAction(f.run.run_id);
      if (!action) state.SkipWithError(action.error().message().c_str());
      benchmark::DoNotOptimize(action);
    });
  }
  latencies.Report(state);
  state.counters["stored"] = static_cast<double>(state.range(0) * state.range(1));
}
BENCHMARK(BM_GetNextAction)->Apply(HistorySizes);

// A QualityReview submission through every check up to the cross-artifact
// rules (tokens, schema, stored source refs, reference rules); it is then
// refused because the run has no TaskContract, so the run stays unchanged
// and every iteration measures the same work.
void BM_SubmitThroughRules(benchmark::State& state) {
  HistoryFixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  std::string uri = "artifact://" + f.run.run_id + "/evidence-00000";
  Json acceptance = {{"criterionId", "AC-1"}, {"status", "pass"}, {"evidenceRefs", {uri}}, {"rationaleSummary", "ok"}};
  Json review = {{"schemaVersion", "1.0"}, {"id", "quality-01"}, {"runId", f.run.run_id},
                 {"taskContractRef", "artifact://" + f.run.run_id + "/contract-01"}, {"workPlanRefs", Json::array()},
                 {"workResultRefs", Json::array({"artifact://" + f.run.run_id + "/result-01"})},
                 {"rubricId", "execution-quality-v1"}, {"acceptanceResults", {acceptance}},
                 {"ruleCompliance", Json::array()}, {"regressionChecks", Json::array()},
                 {"verificationResults", Json::array()}, {"findings", Json::array()},
                 {"hardGates", {{{"id", "HG-1"}, {"passed", true}, {"description", "d"}, {"evidenceRefs", {uri}},
                                 {"rationaleSummary", "r"}}}},
                 {"score", 90}, {"remainingRemediations", 1}, {"reviewKind", "spot"}, {"decision", "pass"},
                 {"diagnosisGate", nullptr}, {"remediationWorkOrder", nullptr}, {"rationaleSummary", "r"}};
  telic::controller::SubmitRequest request;
  request.run_id = f.run.run_id;
  request.action_id = fmt::format("action:{}:{}", f.run.run_id, f.run.version);
  request.expected_version = f.run.version;
  request.artifact_type = "QualityReview";
  request.body = review;
  Latencies latencies;
  for (auto _ : state) {
    latencies.Time([&] {
      auto result = f.service->SubmitArtifact(request);
      benchmark::DoNotOptimize(result);
    });
  }
  latencies.Report(state);
  state.counters["stored"] = static_cast<double>(state.range(0) * state.range(1));
}
BENCHMARK(BM_SubmitThroughRules)->Apply(HistorySizes);

// Schema + refinement validation of an artifact file (bench/validation_compare.sh
// writes the inputs and compares with ajv on the same files).
void ValidateFile(benchmark::State& state, const char* type) {
  const char* dir = std::getenv("TELIC_VALIDATION_INPUTS");
  if (!dir) {
    state.SkipWithError("set TELIC_VALIDATION_INPUTS (see bench/validation_compare.sh)");
    return;
  }
  std::ifstream file(std::string(dir) + "/" + type + ".json");
  Json body = Json::parse(file);
  size_t bytes = body.dump().size();
  for (auto _ : state) {
    Json copy = body;
    auto status = telic::controller::ValidateArtifactBody(type, copy);
    benchmark::DoNotOptimize(status);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}
void BM_ValidateWorkPlan(benchmark::State& state) { ValidateFile(state, "WorkPlan"); }
void BM_ValidateQualityReview(benchmark::State& state) { ValidateFile(state, "QualityReview"); }
BENCHMARK(BM_ValidateWorkPlan)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ValidateQualityReview)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
