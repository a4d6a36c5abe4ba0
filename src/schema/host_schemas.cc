#include "schema/host_schemas.h"

#include <map>
#include <memory>
#include <mutex>

#include "base/json_writer.h"
#include "schema/bundle.h"
#include "schema/registry.h"

namespace telic::schema {

HostSchema::HostSchema(Json json) : json_(std::move(json)) { WriteJson(json_, -1, compact_); }

std::string_view HostSchema::pretty(int depth) const {
  if (depth < 0 || depth >= kDepths) {
    thread_local std::string scratch;
    scratch.clear();
    WriteJson(json_, 2, scratch, nullptr, 0, depth);
    return scratch;
  }
  std::call_once(pretty_once_[depth], [&] { WriteJson(json_, 2, pretty_[depth], nullptr, 0, depth); });
  return pretty_[depth];
}

namespace {

// The inside of the string literal WriteJsonString writes for `text`.
std::string EscapedInside(std::string_view text) {
  std::string literal;
  WriteJsonString(text, literal);
  return literal.substr(1, literal.size() - 2);
}

}  // namespace

std::string_view HostSchema::pretty_escaped(int depth) const {
  if (depth < 0 || depth >= kDepths) {
    thread_local std::string scratch;
    scratch = EscapedInside(pretty(depth));
    return scratch;
  }
  std::call_once(pretty_escaped_once_[depth], [&] { pretty_escaped_[depth] = EscapedInside(pretty(depth)); });
  return pretty_escaped_[depth];
}

Result<const HostSchema*> ArtifactHostSchema(std::string_view type) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<HostSchema>, std::less<>> cache;
  std::lock_guard lock(mutex);
  auto found = cache.find(type);
  if (found != cache.end()) return found->second.get();
  TELIC_ASSIGN_OR_RETURN(Json bundled,
                         BundleForStockValidators(Registry::Default(), "artifacts/" + std::string(type) + ".json"));
  auto schema = std::make_unique<HostSchema>(std::move(bundled));
  const HostSchema* pointer = schema.get();
  cache.emplace(std::string(type), std::move(schema));
  return pointer;
}

Result<Json> ServedSchemaRef(std::string_view type) {
  TELIC_RETURN_IF_ERROR(ArtifactHostSchema(type));
  return Json::binary(Json::binary_t::container_type(type.begin(), type.end()), kServedSchemaRefSubtype);
}

const HostSchema* ReferencedServedSchema(const Json& value) {
  if (!value.is_binary()) return nullptr;
  const Json::binary_t& bytes = value.get_binary();
  if (!bytes.has_subtype() || bytes.subtype() != kServedSchemaRefSubtype) return nullptr;
  auto schema = ArtifactHostSchema(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return schema ? *schema : nullptr;
}

void ExpandServedSchemaRefs(Json& value) {
  if (value.is_binary()) {
    if (const HostSchema* schema = ReferencedServedSchema(value)) value = schema->json();
    return;
  }
  if (!value.is_structured()) return;
  for (Json& child : value) ExpandServedSchemaRefs(child);
}

}  // namespace telic::schema
