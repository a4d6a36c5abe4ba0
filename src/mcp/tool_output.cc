#include "mcp/tool_output.h"

#include <map>
#include <memory>
#include <mutex>

#include "schema/bundle.h"
#include "schema/registry.h"

namespace telic::mcp {
namespace {

// Bundled schemas by tool name; entries are never removed, so the pointers
// handed out stay valid for the process.
struct OutputSchemaCache {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<const Json>, std::less<>> bundles;
};

OutputSchemaCache& Cache() {
  static OutputSchemaCache cache;
  return cache;
}

}  // namespace

std::string ToolOutputSchemaPath(std::string_view tool) { return "results/" + std::string(tool) + ".json"; }

Result<const Json*> ToolOutputSchema(std::string_view tool) {
  OutputSchemaCache& cache = Cache();
  std::lock_guard lock(cache.mutex);
  if (auto it = cache.bundles.find(tool); it != cache.bundles.end()) return it->second.get();
  TELIC_ASSIGN_OR_RETURN(Json bundle,
                         schema::BundleAllForStockValidators(schema::Registry::Default(), ToolOutputSchemaPath(tool)));
  auto [it, added] = cache.bundles.emplace(std::string(tool), std::make_unique<const Json>(std::move(bundle)));
  return it->second.get();
}

}  // namespace telic::mcp
