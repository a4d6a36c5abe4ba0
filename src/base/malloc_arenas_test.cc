#include "base/malloc_arenas.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

namespace telic {
namespace {

TEST(MallocArenaLimitTest, TwoArenasPerCoreAndAtLeastFour) {
  EXPECT_EQ(MallocArenaLimit(nullptr, nullptr, 0), 4);  // processors unknown
  EXPECT_EQ(MallocArenaLimit(nullptr, nullptr, 1), 4);
  EXPECT_EQ(MallocArenaLimit(nullptr, nullptr, 2), 4);
  EXPECT_EQ(MallocArenaLimit(nullptr, nullptr, 3), 6);
  EXPECT_EQ(MallocArenaLimit(nullptr, nullptr, 16), 32);
  EXPECT_EQ(MallocArenaLimit(nullptr, nullptr, 100000), 2048);  // bounded, no overflow
}

TEST(MallocArenaLimitTest, TheUsersMallocArenaMaxIsLeftAlone) {
  EXPECT_EQ(MallocArenaLimit("1", nullptr, 2), std::nullopt);
  EXPECT_EQ(MallocArenaLimit("64", nullptr, 2), std::nullopt);
  // An empty variable is no choice (glibc ignores it too).
  EXPECT_EQ(MallocArenaLimit("", nullptr, 2), 4);
}

TEST(MallocArenaLimitTest, AGlibcTunableNamingArenaMaxIsLeftAlone) {
  EXPECT_EQ(MallocArenaLimit(nullptr, "glibc.malloc.arena_max=2", 2), std::nullopt);
  EXPECT_EQ(MallocArenaLimit(nullptr, "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=8", 2), std::nullopt);
  // Other tunables, or a name that only contains it, are no choice of arenas.
  EXPECT_EQ(MallocArenaLimit(nullptr, "glibc.malloc.tcache_count=0", 2), 4);
  EXPECT_EQ(MallocArenaLimit(nullptr, "x.glibc.malloc.arena_max=2", 2), 4);
  EXPECT_EQ(MallocArenaLimit(nullptr, "glibc.malloc.arena_maxx=2", 2), 4);
  EXPECT_EQ(MallocArenaLimit(nullptr, "", 2), 4);
}

TEST(MallocArenaLimitTest, LimitMallocArenasAppliesTheLimitForThisProcess) {
  std::optional<int> expected =
      MallocArenaLimit(std::getenv("MALLOC_ARENA_MAX"), std::getenv("GLIBC_TUNABLES"), std::thread::hardware_concurrency());
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator replaces glibc's, and its mallopt refuses.
  expected = std::nullopt;
#endif
  EXPECT_EQ(LimitMallocArenas(), expected);
}

}  // namespace
}  // namespace telic
