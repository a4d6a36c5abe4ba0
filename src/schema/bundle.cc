#include "schema/bundle.h"

#include <set>

#include <fmt/format.h>

namespace telic::schema {
namespace {

constexpr std::string_view kDefsPrefix = "#/$defs/";

// Rewrites refs in `node` in place; records definitions of `common` to copy.
Status Rewrite(Json& node, std::set<std::string>& wanted) {
  if (node.is_array()) {
    for (Json& item : node) TELIC_RETURN_IF_ERROR(Rewrite(item, wanted));
    return Ok();
  }
  if (!node.is_object()) return Ok();
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "$ref" && it->is_string()) {
      std::string ref = it->get<std::string>();
      auto hash = ref.find('#');
      if (hash != 0 && hash != std::string::npos) {
        std::string target = ref.substr(hash);
        if (target.rfind(kDefsPrefix, 0) != 0) return Fail(ErrorCode::kInternal, "cannot bundle $ref " + ref);
        wanted.insert(target.substr(kDefsPrefix.size()));
        *it = target;
      }
      continue;
    }
    TELIC_RETURN_IF_ERROR(Rewrite(*it, wanted));
  }
  return Ok();
}

// Collects local "#/$defs/X" names referenced inside `node`.
void LocalRefs(const Json& node, std::set<std::string>& out) {
  if (node.is_array()) {
    for (const Json& item : node) LocalRefs(item, out);
  } else if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "$ref" && it->is_string()) {
        std::string ref = it->get<std::string>();
        if (ref.rfind(kDefsPrefix, 0) == 0) out.insert(ref.substr(kDefsPrefix.size()));
      } else {
        LocalRefs(*it, out);
      }
    }
  }
}

}  // namespace

Result<Json> BundleForHost(const Registry& registry, std::string_view path) {
  const Json* document = registry.Document(path);
  if (!document) return Fail(ErrorCode::kNotFound, fmt::format("unknown schema {}", path));
  const Json* common = registry.Document("common.json");
  Json bundle = *document;
  bundle.erase("$id");
  std::set<std::string> wanted;
  TELIC_RETURN_IF_ERROR(Rewrite(bundle, wanted));
  Json& defs = bundle["$defs"];
  if (defs.is_null()) defs = Json::object();
  std::set<std::string> done;
  while (!wanted.empty()) {
    std::string name = *wanted.begin();
    wanted.erase(wanted.begin());
    if (!done.insert(name).second) continue;
    if (!common || !common->at("$defs").contains(name)) {
      return Fail(ErrorCode::kInternal, fmt::format("common.json has no definition {}", name));
    }
    if (defs.contains(name)) return Fail(ErrorCode::kInternal, fmt::format("definition {} is defined twice", name));
    const Json& definition = common->at("$defs").at(name);
    defs[name] = definition;
    LocalRefs(definition, wanted);
  }
  if (defs.empty()) bundle.erase("$defs");
  return bundle;
}

}  // namespace telic::schema
