#include "schema/prebuilt_bundles.h"

#include <algorithm>

namespace telic::schema {

const PrebuiltBundle* FindPrebuiltBundle(std::string_view path) {
  std::span<const PrebuiltBundle> bundles = PrebuiltBundles();
  auto it = std::lower_bound(bundles.begin(), bundles.end(), path,
                             [](const PrebuiltBundle& bundle, std::string_view key) { return bundle.path < key; });
  return it != bundles.end() && it->path == path ? &*it : nullptr;
}

}  // namespace telic::schema
