// Context costs a store holds before writing them (D-C3, D-S28).
#include "store/held_costs.h"

#include <gtest/gtest.h>

namespace telic::store {
namespace {

using Costs = std::vector<ContextCost>;

// covers issue 41 item 1: costs are summed per run and tool while held.
TEST(HeldContextCostsTest, SumsPerRunAndToolAndHandsThemOverOnce) {
  HeldContextCosts held;
  EXPECT_TRUE(held.empty());
  held.Add("r1", {{"telic_get_run", 1, 10}});
  held.Add("r1", {{"telic_get_run", 2, 5}, {"telic_start_run", 1, 100}});
  held.Add("r2", {{"telic_get_run", 1, 7}});
  held.Add("r3", {});
  Costs shown = {{"telic_get_run", 1, 1}};
  held.AddHeldTo("r1", shown);
  EXPECT_EQ(shown, (Costs{{"telic_get_run", 4, 16}, {"telic_start_run", 1, 100}}));
  EXPECT_EQ(held.Take("r1"), (Costs{{"telic_get_run", 3, 15}, {"telic_start_run", 1, 100}}));
  EXPECT_FALSE(held.Take("r1")) << "taken once";
  EXPECT_FALSE(held.Take("r3")) << "nothing is held for an empty add";
  auto all = held.TakeAll();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all.at("r2"), (Costs{{"telic_get_run", 1, 7}}));
  EXPECT_TRUE(held.empty());
}

// covers issue 41 item 1: the held set is due once it is a second old or
// holds more than kMaxRuns runs, and not before.
TEST(HeldContextCostsTest, IsDueWhenOldOrLarge) {
  HeldContextCosts held;
  const auto now = HeldContextCosts::Clock::now();
  EXPECT_FALSE(held.Due(now + std::chrono::hours(1))) << "nothing held is never due";
  held.Add("r1", {{"t", 1, 1}});
  EXPECT_FALSE(held.Due(now));
  EXPECT_TRUE(held.Due(now + HeldContextCosts::kMaxAge + std::chrono::milliseconds(1)));
  (void)held.TakeAll();
  EXPECT_FALSE(held.Due(now + std::chrono::hours(1))) << "taking everything resets the age";
  for (size_t i = 0; i < HeldContextCosts::kMaxRuns; ++i) held.Add("r" + std::to_string(i), {{"t", 1, 1}});
  EXPECT_FALSE(held.Due(HeldContextCosts::Clock::now()));
  held.Add("one more", {{"t", 1, 1}});
  EXPECT_TRUE(held.Due(HeldContextCosts::Clock::now()));
}

}  // namespace
}  // namespace telic::store
