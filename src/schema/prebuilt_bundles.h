// Schema bundles computed at build time (telic_schema_bundles_gen), so that
// serving them costs no parsing, bundling or serialising: tools/list's
// inputSchema of every tool and outputSchema of every tool result.
#pragma once

#include <span>
#include <string_view>

namespace telic::schema {

struct PrebuiltBundle {
  std::string_view path;  // under schemas/, e.g. "tools/telic_get_run.json"
  // Compact JSON text (nlohmann's dump(), invalid UTF-8 replaced) of
  // BundleForHost for tools/*.json, or of BundleAllForStockValidators for
  // results/*.json: byte for byte what serialising the run-time bundle writes.
  std::string_view text;
};

// Every prebuilt bundle, sorted by path (the generated table).
std::span<const PrebuiltBundle> PrebuiltBundles();

// The bundle of `path`, or nullptr when none was built for it.
const PrebuiltBundle* FindPrebuiltBundle(std::string_view path);

}  // namespace telic::schema
