// CPU-side steps of grounding on bench-shaped paths (no file system): path
// checks of the inventory, the candidate classification and the ranking of
// a 10,000-candidate window. bench/grounding_bench.sh times the whole
// command against `git ls-files`; this isolates the parts that are ours.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grounding/paths.h"
#include "grounding/secrets.h"
#include "grounding/selection.h"

namespace {

using namespace telic::grounding;

// Paths shaped like bench/grounding_bench.sh's generated repository, sorted.
std::vector<std::string> BenchPaths(int count) {
  static const char* kAreas[] = {"api", "auth", "session", "billing", "search", "ui", "storage", "jobs", "metrics", "admin"};
  static const char* kKinds[] = {"client", "server", "handler", "model", "util", "config", "view", "store", "test", "types"};
  std::vector<std::string> paths;
  for (int i = 0; i < count; ++i) {
    int folder = i / 100;
    paths.push_back(fmt::format("packages/pkg-{:03}/{}/mod-{}/{}{:06}.ts", folder / 100, kAreas[folder % 10],
                                (folder / 10) % 10, kKinds[(i / 7) % 10], i));
  }
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) { return Utf16Before(a, b); });
  return paths;
}

void BM_PlainPathChecks(benchmark::State& state) {
  const std::vector<std::string> paths = BenchPaths(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    size_t plain = 0;
    for (const std::string& path : paths) plain += IsPlainRepositoryPath(path) ? 1 : 0;
    bool sorted = std::is_sorted(paths.begin(), paths.end(),
                                 [](const std::string& a, const std::string& b) { return Utf16Before(a, b); });
    benchmark::DoNotOptimize(plain);
    benchmark::DoNotOptimize(sorted);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PlainPathChecks)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_ClassifyCandidates(benchmark::State& state) {
  const std::vector<std::string> paths = BenchPaths(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    size_t eligible = 0;
    for (const std::string& path : paths) {
      eligible += !IsExcludedDirectoryPath(path) && !IsSecretLikePath(path) && !IsInstructionPath(path) ? 1 : 0;
    }
    benchmark::DoNotOptimize(eligible);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ClassifyCandidates)->Arg(10'000)->Unit(benchmark::kMillisecond);

void BM_RankCandidates(benchmark::State& state) {
  const std::vector<std::string> paths = BenchPaths(static_cast<int>(state.range(0)));
  const std::vector<std::string_view> views(paths.begin(), paths.end());
  for (auto _ : state) {
    auto ranked = RankCandidates(views, "fix the session token refresh in the api client", {});
    benchmark::DoNotOptimize(ranked.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RankCandidates)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
