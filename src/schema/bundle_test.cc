// What tools/list shows a model of a tool's arguments: the full schema less
// the validation keywords the server enforces itself (issue 39 item 3).
#include "schema/bundle.h"

#include <gtest/gtest.h>

#include "schema/registry.h"

namespace telic::schema {
namespace {

// Counts members named `key` anywhere in `value` for which `match` holds.
template <typename Match>
int CountMembers(const Json& value, const std::string& key, Match match) {
  int n = 0;
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() == key && match(*it)) ++n;
      n += CountMembers(*it, key, match);
    }
  } else if (value.is_array()) {
    for (const Json& item : value) n += CountMembers(item, key, match);
  }
  return n;
}

TEST(ListingBundleTest, DropsBoundsClosedObjectsAndEmptyDefaultsButKeepsWhatACallNeeds) {
  const Registry& registry = Registry::Default();
  auto full = BundleForHost(registry, "tools/telic_start_run.json");
  auto listed = BundleToolInputForListing(registry, "tools/telic_start_run.json");
  ASSERT_TRUE(full && listed);
  auto is_false = [](const Json& v) { return v.is_boolean() && !v.get<bool>(); };
  auto is_empty = [](const Json& v) { return (v.is_array() || v.is_string()) && v.empty(); };
  auto any = [](const Json&) { return true; };
  EXPECT_GT(CountMembers(*full, "additionalProperties", is_false), 0);
  EXPECT_EQ(CountMembers(*listed, "additionalProperties", is_false), 0);
  EXPECT_GT(CountMembers(*full, "default", is_empty), 0);
  EXPECT_EQ(CountMembers(*listed, "default", is_empty), 0);
  // Non-empty defaults, enums, types and required members stay.
  EXPECT_EQ((*listed)["properties"]["host_capabilities"]["default"], Json::array({"repository.read"}));
  EXPECT_EQ((*listed)["required"], (*full)["required"]);
  EXPECT_EQ((*listed)["properties"]["observation"]["enum"], Json::array({"checked", "require_observed"}));
  auto check = BundleToolInputForListing(registry, "tools/telic_run_check.json");
  ASSERT_TRUE(check);
  EXPECT_EQ((*check)["properties"]["wall_time_seconds"]["default"], 120);
  EXPECT_EQ((*check)["properties"]["wall_time_seconds"]["type"], "integer");
  for (const char* bound : {"maxLength", "minimum", "maximum", "pattern", "maxItems"}) {
    EXPECT_GT(CountMembers(*BundleForHost(registry, "tools/telic_run_check.json"), bound, any) +
                  CountMembers(*BundleForHost(registry, "tools/telic_get_run.json"), bound, any),
              0)
        << bound;
    EXPECT_EQ(CountMembers(*check, bound, any), 0) << bound;
  }
}

}  // namespace
}  // namespace telic::schema
