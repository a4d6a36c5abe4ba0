// Benchmarks of the foundation: canonical JSON + sha256 of artifact bodies,
// and a telic_start_run round trip through the SQLite store.
#include <benchmark/benchmark.h>

#include <filesystem>

#include <fmt/format.h>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/sha256.h"
#include "controller/run_service.h"
#include "mcp/server.h"
#include "store/sqlite_store.h"

namespace {

using telic::Json;

// A body shaped like a mid-sized WorkPlan: `nodes` nodes with nested lists.
Json MakeBody(int nodes) {
  Json body = {{"schemaVersion", "1.0"}, {"id", "plan-1"}, {"runId", "00000000-0000-4000-8000-000000000001"}};
  Json list = Json::array();
  for (int i = 0; i < nodes; ++i) {
    list.push_back({{"id", fmt::format("node-{}", i)},
                    {"objective", "Make the change described by the contract and record evidence for it, ünïcödé"},
                    {"dependsOn", Json::array({fmt::format("node-{}", i > 0 ? i - 1 : 0)})},
                    {"budgets", {{"maximumToolCalls", 12}, {"maximumChildren", 0}}},
                    {"confidence", 0.875},
                    {"inputRefs", Json::array({"artifact://run/contract-1", "repo://src/main.cc"})}});
  }
  body["nodes"] = list;
  return body;
}

void BM_CanonicalizeAndHash(benchmark::State& state) {
  Json body = MakeBody(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string canonical = telic::CanonicalJson(body);
    std::string digest = telic::Sha256Ref(canonical);
    benchmark::DoNotOptimize(digest);
    bytes = canonical.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.counters["body_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_CanonicalizeAndHash)->Arg(1)->Arg(16)->Arg(64)->Arg(1024);

struct Fixture {
  std::filesystem::path dir;
  std::unique_ptr<telic::store::SqliteStore> store;
  telic::SystemClock clock;
  telic::RandomIdSource ids;
  std::unique_ptr<telic::controller::RunService> service;

  Fixture() {
    dir = std::filesystem::temp_directory_path() / fmt::format("telic-bench-{}", telic::RandomHex(6));
    std::filesystem::create_directories(dir);
    store = std::move(*telic::store::SqliteStore::Open((dir / "telic.sqlite3").string()));
    service = std::make_unique<telic::controller::RunService>(*store, clock, ids, dir.string());
  }
  ~Fixture() {
    service.reset();
    store.reset();
    std::filesystem::remove_all(dir);
  }
};

// start_run through the service: classification, two artifacts, two events,
// one durable (synchronous=FULL) transaction, then the NextAction.
void BM_StartRunService(benchmark::State& state) {
  Fixture f;
  telic::controller::StartRunRequest request;
  request.original_request = "Explain what src/app.ts does";
  request.mode = "report_only";
  for (auto _ : state) {
    auto result = f.service->StartRun(request);
    if (!result) state.SkipWithError(result.error().message().c_str());
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_StartRunService)->Unit(benchmark::kMicrosecond);

// The same through the MCP layer: a JSON-RPC line in, a JSON-RPC line out.
void BM_StartRunJsonRpc(benchmark::State& state) {
  Fixture f;
  telic::mcp::Server server(*f.service);
  std::string line =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"telic_start_run","arguments":{"original_request":"Explain what src/app.ts does","mode":"report_only"}}})";
  for (auto _ : state) {
    auto reply = server.HandleLine(line);
    benchmark::DoNotOptimize(reply);
  }
}
BENCHMARK(BM_StartRunJsonRpc)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
