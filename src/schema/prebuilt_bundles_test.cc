// The bundles made at build time are the run-time bundles, serialised.
#include "schema/prebuilt_bundles.h"

#include <gtest/gtest.h>

#include "schema/bundle.h"
#include "schema/registry.h"

namespace telic::schema {
namespace {

TEST(PrebuiltBundlesTest, EveryToolAndResultSchemaHasItsRunTimeBundle) {
  const Registry& registry = Registry::Default();
  size_t expected = 0;
  for (const std::string& path : registry.Paths()) {
    bool tool = path.starts_with("tools/"), result = path.starts_with("results/");
    if (!tool && !result) {
      EXPECT_EQ(FindPrebuiltBundle(path), nullptr) << path;
      continue;
    }
    ++expected;
    const PrebuiltBundle* prebuilt = FindPrebuiltBundle(path);
    ASSERT_NE(prebuilt, nullptr) << path;
    auto bundle = tool ? BundleToolInputForListing(registry, path) : BundleToolOutputForListing(registry, path);
    ASSERT_TRUE(bundle) << path;
    // The generator writes with WriteJson; this compares with nlohmann's own dump.
    EXPECT_EQ(prebuilt->text, bundle->dump(-1, ' ', false, Json::error_handler_t::replace)) << path;
  }
  EXPECT_EQ(PrebuiltBundles().size(), expected);
  EXPECT_EQ(FindPrebuiltBundle("tools/no_such_tool.json"), nullptr);
}

}  // namespace
}  // namespace telic::schema
