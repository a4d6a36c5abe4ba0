#include "schema/bundle.h"

#include <map>
#include <set>
#include <vector>

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

// The wire's date-time shape (YYYY-MM-DDTHH:MM[:SS[.f+]] then Z or +-HH:MM,
// fields in range); telic's own check also rejects impossible calendar dates.
constexpr const char* kDateTimePattern =
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]"
    "(:[0-5][0-9](\\.[0-9]+)?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";
constexpr const char* kUuidPattern =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

void AddComment(Json& node, const std::string& text) {
  auto it = node.find("$comment");
  if (it == node.end() || !it->is_string()) {
    node["$comment"] = text;
  } else {
    *it = it->get<std::string>() + " " + text;
  }
}

// Rewrites one schema object's telic-only keywords (see bundle.h).
Status StockKeywords(Json& node) {
  if (auto it = node.find("x-maxUtf8Bytes"); it != node.end()) {
    std::string cap = it->dump();
    node.erase(it);
    AddComment(node, "At most " + cap + " UTF-8 bytes (telic checks this on submission).");
  }
  if (auto it = node.find("x-nonBlank"); it != node.end()) {
    bool required = it->is_boolean() && it->get<bool>();
    node.erase(it);
    if (required) AddComment(node, "Must hold a non-whitespace character (telic checks this on submission).");
  }
  if (auto it = node.find("format"); it != node.end() && it->is_string()) {
    std::string format = it->get<std::string>();
    if (format != "date-time" && format != "uuid") return Fail(ErrorCode::kInternal, "no stock form for format " + format);
    if (node.contains("pattern")) return Fail(ErrorCode::kInternal, "format " + format + " beside a pattern");
    node.erase(it);
    if (format == "date-time") {
      node["pattern"] = kDateTimePattern;
      AddComment(node, "An RFC 3339 date-time; telic also rejects impossible calendar dates.");
    } else {
      node["pattern"] = kUuidPattern;
      AddComment(node, "A UUID; telic also requires version 1-8 and the RFC 4122 variant (or the nil/max UUID).");
    }
  }
  return Ok();
}

}  // namespace

Status ToStockVocabulary(Json& schema) {
  if (schema.is_array()) {
    for (Json& item : schema) TELIC_RETURN_IF_ERROR(ToStockVocabulary(item));
    return Ok();
  }
  if (!schema.is_object()) return Ok();
  TELIC_RETURN_IF_ERROR(StockKeywords(schema));
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    // Values that are data, not subschemas, are left alone.
    if (it.key() == "const" || it.key() == "enum" || it.key() == "default" || it.key() == "examples") continue;
    if (it.key() == "properties" || it.key() == "$defs" || it.key() == "definitions") {
      for (auto member = it->begin(); member != it->end(); ++member) TELIC_RETURN_IF_ERROR(ToStockVocabulary(*member));
      continue;
    }
    TELIC_RETURN_IF_ERROR(ToStockVocabulary(*it));
  }
  return Ok();
}

Result<Json> BundleForStockValidators(const Registry& registry, std::string_view path) {
  TELIC_ASSIGN_OR_RETURN(Json bundle, BundleForHost(registry, path));
  TELIC_RETURN_IF_ERROR(ToStockVocabulary(bundle));
  return bundle;
}

namespace {

// The keywords tools/list leaves out of an inputSchema (BundleToolInputForListing):
// every bound (patterns, lengths, counts, numeric ranges),
// "additionalProperties": false and empty defaults.
// The server still validates every argument against the full schema and
// refuses a violation with its JSON pointer; a model does not need them to
// write a call (docs/API.md "tools/list").
bool ListingDropsKeyword(const std::string& key, const Json& value) {
  if (value.is_string() || value.is_number()) {
    if (key == "pattern" || key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems" ||
        key == "minimum" || key == "maximum") {
      return true;
    }
  }
  if (key == "additionalProperties") return value.is_boolean() && !value.get<bool>();
  if (key == "default") return (value.is_array() || value.is_string() || value.is_object()) && value.empty();
  return false;
}

// Removes those keywords from `schema` and every subschema inside it, and
// replaces each {"$ref": "#/$defs/X"} of a definition in `inlined` by it.
void TrimForListing(Json& schema, const Json& inlined) {
  if (schema.is_array()) {
    for (Json& item : schema) TrimForListing(item, inlined);
    return;
  }
  if (!schema.is_object()) return;
  if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
    const std::string& target = ref->get_ref<const std::string&>();
    if (target.starts_with("#/$defs/") && inlined.contains(target.substr(8))) {
      schema = inlined.at(target.substr(8));
      return;
    }
  }
  for (auto it = schema.begin(); it != schema.end();) {
    if (ListingDropsKeyword(it.key(), *it)) {
      it = schema.erase(it);
      continue;
    }
    ++it;
  }
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    if (it.key() == "const" || it.key() == "enum" || it.key() == "default" || it.key() == "examples") continue;
    if (it.key() == "properties" || it.key() == "$defs" || it.key() == "definitions") {
      for (auto member = it->begin(); member != it->end(); ++member) TrimForListing(*member, inlined);
      continue;
    }
    TrimForListing(*it, inlined);
  }
}

}  // namespace

Result<Json> BundleToolInputForListing(const Registry& registry, std::string_view path) {
  TELIC_ASSIGN_OR_RETURN(Json bundle, BundleForHost(registry, path));
  bundle.erase("$schema");
  TrimForListing(bundle, Json::object());
  if (!bundle.contains("$defs")) return bundle;
  Json inlined = Json::object();  // definitions that are only a type now
  for (auto& [name, definition] : bundle["$defs"].items()) {
    if (definition.is_object() && definition.size() == 1 && definition.contains("type")) inlined[name] = definition;
  }
  for (auto& [name, definition] : inlined.items()) bundle["$defs"].erase(name);
  if (bundle["$defs"].empty()) bundle.erase("$defs");
  TrimForListing(bundle, inlined);
  return bundle;
}

namespace {

// Removes the annotation keywords (title, description, $comment) from
// `schema` and every subschema; members of "properties" maps keep their names.
void DropAnnotations(Json& schema) {
  if (schema.is_array()) {
    for (Json& item : schema) DropAnnotations(item);
    return;
  }
  if (!schema.is_object()) return;
  for (const char* key : {"title", "description", "$comment"}) {
    if (auto it = schema.find(key); it != schema.end() && it->is_string()) schema.erase(it);
  }
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    if (it.key() == "const" || it.key() == "enum" || it.key() == "default" || it.key() == "examples") continue;
    if (it.key() == "properties" || it.key() == "$defs" || it.key() == "definitions") {
      for (auto member = it->begin(); member != it->end(); ++member) DropAnnotations(*member);
      continue;
    }
    DropAnnotations(*it);
  }
}

}  // namespace

Result<Json> BundleToolOutputForListing(const Registry& registry, std::string_view path) {
  TELIC_ASSIGN_OR_RETURN(Json bundle, BundleAllForStockValidators(registry, path));
  DropAnnotations(bundle);
  bundle.erase("$schema");  // 2020-12, MCP's default dialect since 2025-11-25
  return bundle;
}

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

namespace telic::schema {
namespace {

// `relative` resolved against the directory of `referrer` ("a/b.json" +
// "../c.json" = "c.json"), "." and ".." collapsed.
std::string JoinSchemaPath(std::string_view referrer, std::string_view relative) {
  size_t slash = referrer.rfind('/');
  std::string joined = slash == std::string_view::npos ? std::string() : std::string(referrer.substr(0, slash + 1));
  joined += relative;
  std::vector<std::string> parts;
  size_t from = 0;
  while (from <= joined.size()) {
    size_t next = joined.find('/', from);
    if (next == std::string::npos) next = joined.size();
    std::string part = joined.substr(from, next - from);
    if (part == ".." && !parts.empty()) {
      parts.pop_back();
    } else if (!part.empty() && part != "." && part != "..") {
      parts.push_back(std::move(part));
    }
    from = next + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "/") + part;
  return out;
}

// Inlines cross-document refs into one root (BundleAllForStockValidators).
class DocumentInliner {
 public:
  DocumentInliner(const Registry& registry, std::string root) : registry_(registry), root_(std::move(root)) {}

  Result<Json> Bundle() {
    const Json* document = registry_.Document(root_);
    if (!document) return Fail(ErrorCode::kNotFound, fmt::format("unknown schema {}", root_));
    Json bundle = *document;
    bundle.erase("$id");
    if (bundle.contains("$defs")) {
      for (auto it = bundle["$defs"].begin(); it != bundle["$defs"].end(); ++it) sources_[it.key()] = root_ + "#/$defs/" + it.key();
    }
    TELIC_RETURN_IF_ERROR(Rewrite(bundle, root_));
    while (!pending_.empty()) {
      auto [key, target] = pending_.back();
      pending_.pop_back();
      TELIC_ASSIGN_OR_RETURN(Json definition, Load(target.first, target.second));
      TELIC_RETURN_IF_ERROR(Rewrite(definition, target.first));
      defs_[key] = std::move(definition);
    }
    for (auto it = defs_.begin(); it != defs_.end(); ++it) bundle["$defs"][it.key()] = std::move(it.value());
    return bundle;
  }

 private:
  using RefTarget = std::pair<std::string, std::string>;  // document path, fragment

  Result<Json> Load(const std::string& path, const std::string& fragment) const {
    const Json* document = registry_.Document(path);
    if (!document) return Fail(ErrorCode::kInternal, fmt::format("schema {} not embedded", path));
    if (fragment.empty()) {
      Json copy = *document;
      for (const char* key : {"$schema", "$id", "$defs"}) copy.erase(key);
      return copy;
    }
    const std::string name = fragment.substr(kDefsPrefix.size() - 1);
    if (!document->contains("$defs") || !document->at("$defs").contains(name)) {
      return Fail(ErrorCode::kInternal, fmt::format("schema {} has no definition {}", path, name));
    }
    return document->at("$defs").at(name);
  }

  // The local key of ref `ref` written in document `from`.
  Result<std::string> Local(const std::string& ref, const std::string& from) {
    size_t hash = ref.find('#');
    std::string document = ref.substr(0, hash);
    std::string fragment = hash == std::string::npos ? std::string() : ref.substr(hash + 1);
    std::string path = document.empty() ? from : JoinSchemaPath(from, document);
    if (!document.empty() && !registry_.Document(path)) path = JoinSchemaPath("", document);
    if (path == root_ && (fragment.empty() || fragment.rfind(kDefsPrefix.substr(1), 0) == 0)) {
      return fragment.empty() ? std::string() : fragment.substr(kDefsPrefix.size() - 1);
    }
    std::string key;
    if (fragment.empty()) {
      size_t slash = path.rfind('/');
      key = path.substr(slash == std::string::npos ? 0 : slash + 1);
      if (key.size() > 5 && key.ends_with(".json")) key.resize(key.size() - 5);
    } else if (fragment.rfind(kDefsPrefix.substr(1), 0) == 0 &&
               fragment.find('/', kDefsPrefix.size() - 1) == std::string::npos) {
      key = fragment.substr(kDefsPrefix.size() - 1);
    } else {
      return Fail(ErrorCode::kInternal, fmt::format("cannot bundle $ref {} in {}", ref, from));
    }
    std::string source = path + "#" + fragment;
    auto [it, added] = sources_.emplace(key, source);
    if (!added && it->second != source) {
      return Fail(ErrorCode::kInternal, fmt::format("definition {} comes from {} and {}", key, it->second, source));
    }
    if (added) pending_.push_back({key, {path, fragment}});
    return key;
  }

  Status Rewrite(Json& node, const std::string& from) {
    if (node.is_array()) {
      for (Json& item : node) TELIC_RETURN_IF_ERROR(Rewrite(item, from));
      return Ok();
    }
    if (!node.is_object()) return Ok();
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "const" || it.key() == "enum" || it.key() == "default" || it.key() == "examples") continue;
      if (it.key() == "$ref" && it->is_string()) {
        TELIC_ASSIGN_OR_RETURN(std::string key, Local(it->get<std::string>(), from));
        *it = key.empty() ? std::string("#") : std::string(kDefsPrefix) + key;
        continue;
      }
      TELIC_RETURN_IF_ERROR(Rewrite(*it, from));
    }
    return Ok();
  }

  const Registry& registry_;
  std::string root_;
  std::map<std::string, std::string> sources_;  // local key -> "path#fragment" it stands for
  std::vector<std::pair<std::string, RefTarget>> pending_;
  Json defs_ = Json::object();
};

}  // namespace

Result<Json> BundleAllForStockValidators(const Registry& registry, std::string_view path) {
  DocumentInliner inliner(registry, std::string(path));
  TELIC_ASSIGN_OR_RETURN(Json bundle, inliner.Bundle());
  TELIC_RETURN_IF_ERROR(ToStockVocabulary(bundle));
  return bundle;
}

}  // namespace telic::schema
