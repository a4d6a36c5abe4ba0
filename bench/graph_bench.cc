// Benchmarks of the task graph (issue 7): scheduling a generated DAG through
// the ready set, cascade-failing a subtree in memory, and the same cascade
// through the SQLite task store as one transaction. Each runs at several
// sizes and reports the fitted complexity, to show the cost stays near
// linear. Run: build/telic_graph_bench
#include <benchmark/benchmark.h>

#include <filesystem>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "graph/graph.h"
#include "graph/task_service.h"
#include "store/sqlite_task_store.h"

namespace {

using telic::graph::Graph;
using telic::graph::TaskState;

// A layered DAG: task i depends on up to three earlier tasks.
std::vector<std::vector<std::string>> MakeDag(int n) {
  std::vector<std::vector<std::string>> deps(static_cast<size_t>(n));
  for (int i = 1; i < n; ++i) {
    std::vector<int> picks = {i - 1, i / 2, (i * 7919) % i};
    std::sort(picks.begin(), picks.end());
    picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
    for (int p : picks)
      if (p >= 0 && p < i && (i % 5 != 0 || p != i - 1)) deps[static_cast<size_t>(i)].push_back(fmt::format("t{}", p));
  }
  return deps;
}

Graph BuildGraph(const std::vector<std::vector<std::string>>& deps) {
  Graph g;
  for (size_t i = 0; i < deps.size(); ++i) (void)g.Add(fmt::format("t{}", i), deps[i]);
  return g;
}

// Builds the graph and runs it to completion, 16 workers at a time.
void BM_ScheduleDag(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  auto deps = MakeDag(n);
  for (auto _ : state) {
    Graph g = BuildGraph(deps);
    size_t completed = 0;
    while (completed < g.size()) {
      std::vector<int> running = g.Dispatch(16);
      if (running.empty()) break;
      for (int index : running) {
        g.Complete(index);
        ++completed;
      }
    }
    if (completed != g.size()) state.SkipWithError("graph did not drain");
  }
  state.SetComplexityN(n);
  state.counters["tasks"] = n;
}
BENCHMARK(BM_ScheduleDag)->Arg(1250)->Arg(2500)->Arg(5000)->Arg(10000)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);

// A graph of n tasks where half depend, transitively, on one root; failing
// the root cascades through that half.
std::vector<std::vector<std::string>> MakeSubtreeDag(int n) {
  std::vector<std::vector<std::string>> deps(static_cast<size_t>(n));
  int half = n / 2;
  for (int i = 1; i <= half; ++i) deps[static_cast<size_t>(i)].push_back(fmt::format("t{}", (i - 1) / 2));  // binary tree under t0
  for (int i = half + 1; i < n; ++i) {
    if (i > half + 1) deps[static_cast<size_t>(i)].push_back(fmt::format("t{}", i - 1));  // an unrelated chain
  }
  return deps;
}

void BM_CascadeFail(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  auto deps = MakeSubtreeDag(n);
  size_t cascaded = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Graph g = BuildGraph(deps);
    state.ResumeTiming();
    cascaded = g.Fail(0).size();
    benchmark::DoNotOptimize(cascaded);
  }
  state.SetComplexityN(n);
  state.counters["cascaded"] = static_cast<double>(cascaded);
}
BENCHMARK(BM_CascadeFail)->Arg(1250)->Arg(2500)->Arg(5000)->Arg(10000)->Complexity(benchmark::oN)->Unit(benchmark::kMicrosecond);

// The same cascade through TaskService and SQLite: a root and `n` tasks
// depending on it (a binary tree), failed by a user decision. The whole
// cascade (n updates + n events) is one transaction.
void BM_StoreCascadeFail(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  size_t cascaded = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto dir = std::filesystem::temp_directory_path() / fmt::format("telic-graph-bench-{}", telic::RandomHex(6));
    std::filesystem::create_directories(dir);
    {
      auto store = std::move(*telic::store::SqliteTaskStore::Open((dir / "telic.sqlite3").string()));
      telic::SystemClock clock;
      telic::SequentialIdSource ids;
      telic::graph::TaskService service(*store, clock, ids);
      telic::Json nodes = telic::Json::array();
      for (int i = 0; i <= n; ++i) {
        telic::Json deps = telic::Json::array();
        if (i > 0) deps.push_back(fmt::format("n{}", (i - 1) / 2));
        nodes.push_back({{"id", fmt::format("n{}", i)}, {"objective", "work"}, {"logicalRole", "worker"}, {"dependsOn", deps}});
      }
      auto imported = service.ImportWorkPlan("bench-run", telic::Json{{"nodes", nodes}}, 0);
      if (!imported) {
        state.SkipWithError(imported.error().message().c_str());
        break;
      }
      (void)service.Dispatch("bench-run", 1);
      std::string root = imported->front().task_id;
      state.ResumeTiming();
      auto result = service.ResolveTask({root, "fail", "bench", 0, {}});
      state.PauseTiming();
      if (!result) {
        state.SkipWithError(result.error().message().c_str());
        break;
      }
      cascaded = result->cascaded.size();
    }
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  state.SetComplexityN(n);
  state.counters["cascaded"] = static_cast<double>(cascaded);
}
BENCHMARK(BM_StoreCascadeFail)->Arg(1250)->Arg(2500)->Arg(5000)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
