#include "base/malloc_arenas.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace telic {

namespace {

constexpr int kMinArenas = 4;
constexpr int kArenasPerCore = 2;

bool NamesArenaMax(std::string_view tunables) {
  // GLIBC_TUNABLES is "name=value:name=value"; a name is matched whole.
  constexpr std::string_view kName = "glibc.malloc.arena_max=";
  for (size_t start = 0; start <= tunables.size();) {
    size_t end = tunables.find(':', start);
    if (end == std::string_view::npos) end = tunables.size();
    if (tunables.substr(start, end - start).starts_with(kName)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::optional<int> MallocArenaLimit(const char* malloc_arena_max_env, const char* glibc_tunables_env, unsigned cores) {
  if (malloc_arena_max_env != nullptr && *malloc_arena_max_env != '\0') return std::nullopt;
  if (glibc_tunables_env != nullptr && NamesArenaMax(glibc_tunables_env)) return std::nullopt;
  const unsigned bounded = std::min(cores, 1024u);  // no overflow on any machine
  return std::max(kMinArenas, kArenasPerCore * static_cast<int>(bounded));
}

std::optional<int> LimitMallocArenas() {
  std::optional<int> limit =
      MallocArenaLimit(std::getenv("MALLOC_ARENA_MAX"), std::getenv("GLIBC_TUNABLES"), std::thread::hardware_concurrency());
  if (!limit || mallopt(M_ARENA_MAX, *limit) != 1) return std::nullopt;
  return limit;
}

}  // namespace telic
