#include "schema/compact_shape.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "domain/vocabulary.h"
#include "schema/host_schemas.h"

namespace telic::schema {
namespace {

constexpr std::string_view kShapeDefsPrefix = "#/$defs/";

// A constant or enum member: strings in single quotes (no JSON escapes in
// the text a model reads), anything else as JSON.
std::string ShapeLiteral(const Json& value) {
  if (!value.is_string()) return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out = "'";
  for (char c : value.get_ref<const std::string&>()) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// Caps at or above these are bounds against abuse, not rules an artifact
// meets by design: the shape leaves them out (the full schema has them).
constexpr int64_t kShapeItemCap = 256;
constexpr int64_t kShapeLengthCap = 1024;
// A longer pattern is shown by its literal start (`starting ...`).
constexpr size_t kShapePatternChars = 40;

bool GenericCap(const char* key, const Json& value) {
  if (!value.is_number_integer()) return false;
  int64_t cap = value.get<int64_t>();
  return (std::string_view(key) == "maxItems" && cap >= kShapeItemCap) ||
         (std::string_view(key) == "maxLength" && cap >= kShapeLengthCap);
}

// "(min..max)" of two numeric keywords of `schema`, or "" when it has neither.
std::string ShapeRange(const Json& schema, const char* min_key, const char* max_key) {
  auto min = schema.find(min_key), max = schema.find(max_key);
  bool has_min = min != schema.end() && min->is_number();
  bool has_max = max != schema.end() && max->is_number() && !GenericCap(max_key, *max);
  if (!has_min && !has_max) return "";
  return "(" + (has_min ? min->dump() : "") + ".." + (has_max ? max->dump() : "") + ")";
}

// " /re/", or for a long pattern " starting <its literal start>" (up to its
// first character class, `\/` read as `/`); a long pattern without one is
// told by `note` (the schema's description or $comment) when there is one.
std::string ShapePattern(const std::string& pattern, const std::string& note) {
  if (pattern.size() <= kShapePatternChars) return " /" + pattern + "/";
  std::string start;
  for (size_t i = pattern.starts_with('^') ? 1 : 0; i < pattern.size() && pattern[i] != '['; ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    start += pattern[i];
  }
  if (!start.empty()) return " starting " + start;
  return note.empty() ? " /" + pattern + "/" : " (" + note + ")";
}

// What a schema says of itself in words: its description, else its $comment.
std::string SchemaNote(const Json& schema) {
  for (const char* key : {"description", "$comment"}) {
    if (auto note = schema.find(key); note != schema.end() && note->is_string()) return note->get<std::string>();
  }
  return "";
}

class ShapeWriter {
 public:
  explicit ShapeWriter(const Json& defs, std::set<std::string> omitted = {}) : defs_(defs), omitted_(std::move(omitted)) {}

  std::string Write(const Json& schema) {
    if (schema.is_boolean()) return schema.get<bool>() ? "any" : "never";
    if (!schema.is_object()) return "any";
    if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) return Reference(*ref);
    if (auto value = schema.find("const"); value != schema.end()) return ShapeLiteral(*value);
    if (auto values = schema.find("enum"); values != schema.end() && values->is_array()) {
      std::string out;
      for (const Json& value : *values) out += (out.empty() ? "" : "|") + ShapeLiteral(value);
      return out;
    }
    for (const char* key : {"oneOf", "anyOf", "allOf"}) {
      auto branches = schema.find(key);
      if (branches == schema.end() || !branches->is_array()) continue;
      std::string out;
      for (const Json& branch : *branches) out += (out.empty() ? "" : std::string(key[1] == 'l' ? " & " : " | ")) + Write(branch);
      return out;
    }
    return Typed(schema);
  }

  // The definitions the written shapes referred to, in the order first met,
  // including those their own shapes refer to; none of `omitted`.
  std::string Definitions() {
    std::string out;
    for (size_t i = 0; i < order_.size(); ++i) {
      const std::string name = order_[i];  // Write may append to order_
      if (omitted_.contains(name)) continue;
      out += "\n  " + name + " = " + Write(defs_.at(name));
    }
    return out.empty() ? "" : "\nwhere" + out;
  }

  // The definitions referred to so far, in the order first met.
  const std::vector<std::string>& Referred() const { return order_; }

 private:
  std::string Reference(const Json& ref) {
    const std::string& target = ref.get_ref<const std::string&>();
    if (!target.starts_with(kShapeDefsPrefix)) return "any";
    std::string name = target.substr(kShapeDefsPrefix.size());
    if (!defs_.is_object() || !defs_.contains(name)) return "any";
    if (seen_.insert(name).second) order_.push_back(name);
    return name;
  }

  std::string Typed(const Json& schema) {
    auto type = schema.find("type");
    if (type == schema.end()) return schema.contains("properties") ? Object(schema) : "any";
    if (type->is_array()) {
      std::string out;
      for (const Json& one : *type) out += (out.empty() ? "" : " | ") + OfType(schema, one.get<std::string>());
      return out;
    }
    return type->is_string() ? OfType(schema, type->get<std::string>()) : "any";
  }

  std::string OfType(const Json& schema, const std::string& type) {
    if (type == "object") return Object(schema);
    if (type == "array") {
      auto items = schema.find("items");
      return "[" + (items == schema.end() ? std::string("any") : Write(*items)) + "]" + ShapeRange(schema, "minItems", "maxItems");
    }
    if (type == "string") {
      std::string out = "string" + ShapeRange(schema, "minLength", "maxLength");
      if (auto pattern = schema.find("pattern"); pattern != schema.end() && pattern->is_string()) {
        out += ShapePattern(pattern->get<std::string>(), SchemaNote(schema));
      }
      return out;
    }
    if (type == "integer") return "int" + ShapeRange(schema, "minimum", "maximum");
    if (type == "number") return "number" + ShapeRange(schema, "minimum", "maximum");
    if (type == "boolean") return "bool";
    return type;  // "null"
  }

  std::string Object(const Json& schema) {
    std::set<std::string> required;
    if (auto names = schema.find("required"); names != schema.end() && names->is_array()) {
      for (const Json& name : *names) {
        if (name.is_string()) required.insert(name.get<std::string>());
      }
    }
    std::string out;
    if (auto properties = schema.find("properties"); properties != schema.end() && properties->is_object()) {
      for (const auto& [name, member] : properties->items()) {
        out += (out.empty() ? "" : ", ") + name + (required.contains(name) ? ": " : "?: ") + Write(member);
        if (member.is_object() && member.contains("default")) out += " = " + ShapeLiteral(member["default"]);
      }
    }
    auto extra = schema.find("additionalProperties");
    if (extra != schema.end() && extra->is_object() && !extra->empty()) {
      out += (out.empty() ? "" : ", ") + std::string("string: ") + Write(*extra);
    } else if (extra == schema.end() || extra->is_object() || (extra->is_boolean() && extra->get<bool>())) {
      out += out.empty() ? "..." : ", ...";
    }
    return "{" + out + "}";
  }

  const Json& defs_;
  const std::set<std::string> omitted_;
  std::vector<std::string> order_;
  std::set<std::string> seen_;
};

// The definitions a shape of `schema` uses, directly or through others.
std::vector<std::string> DefinitionsUsed(const Json& schema) {
  static const Json kNoDefs = Json::object();
  auto defs = schema.find("$defs");
  ShapeWriter writer(defs != schema.end() ? *defs : kNoDefs);
  writer.Write(schema);
  writer.Definitions();
  return writer.Referred();
}

// The definitions `definition` refers to directly.
std::vector<std::string> DefinitionsReferred(const Json& definition, const Json& defs) {
  ShapeWriter writer(defs);
  writer.Write(definition);
  return writer.Referred();
}

// The definitions used by two or more of the model-written types' shapes,
// less any that is defined differently by two of them, and less any that
// refers to a definition left out (until none does): a closed set.
ShapeGlossary BuildGlossary() {
  Json defs = Json::object();
  std::map<std::string, int> users;
  std::set<std::string> conflicting;
  for (const std::string& type : ModelWrittenArtifactTypes()) {
    auto schema = ArtifactHostSchema(type);
    if (!schema) continue;
    const Json& json = (*schema)->json();
    for (const std::string& name : DefinitionsUsed(json)) {
      const Json& definition = json["$defs"][name];
      if (!defs.contains(name)) defs[name] = definition;
      if (defs[name] != definition) conflicting.insert(name);
      ++users[name];
    }
  }
  std::set<std::string> names;
  for (const auto& [name, count] : users) {
    if (count >= 2 && !conflicting.contains(name)) names.insert(name);
  }
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (auto it = names.begin(); it != names.end();) {
      auto referred = DefinitionsReferred(defs[*it], defs);
      bool open = std::any_of(referred.begin(), referred.end(), [&](const std::string& n) { return !names.contains(n); });
      it = open ? names.erase(it) : std::next(it);
      dropped = dropped || open;
    }
  }
  ShapeGlossary glossary{names, ""};
  for (const std::string& name : names) {
    ShapeWriter writer(defs);
    glossary.text += (glossary.text.empty() ? "" : "\n") + name + " = " + writer.Write(defs[name]);
  }
  return glossary;
}

}  // namespace

std::string CompactShape(std::string_view name, const Json& schema, const std::set<std::string>& omitted) {
  static const Json kNoDefs = Json::object();
  auto defs = schema.is_object() ? schema.find("$defs") : schema.end();
  ShapeWriter writer(schema.is_object() && defs != schema.end() ? *defs : kNoDefs, omitted);
  std::string out(name);
  if (schema.is_object() && schema.contains("description") && schema["description"].is_string()) {
    out += " (" + schema["description"].get<std::string>() + ")";
  }
  out += ": " + writer.Write(schema);
  return out + writer.Definitions();
}

const std::vector<std::string>& ModelWrittenArtifactTypes() {
  static const std::vector<std::string> types = [] {
    using domain::ArtifactType;
    std::vector<std::string> names;
    for (ArtifactType type : {ArtifactType::kClarificationRequest, ArtifactType::kProblemFrame, ArtifactType::kScenarioSpec,
                              ArtifactType::kTaskContract, ArtifactType::kPromptReview, ArtifactType::kWorkPlan,
                              ArtifactType::kWorkResult, ArtifactType::kQualityReview, ArtifactType::kReleaseAudit,
                              ArtifactType::kUserReport, ArtifactType::kEvidence}) {
      names.emplace_back(domain::Name(type));
    }
    return names;
  }();
  return types;
}

const ShapeGlossary& ArtifactShapeGlossary() {
  static const ShapeGlossary glossary = BuildGlossary();
  return glossary;
}

Result<const std::string*> ArtifactCompactShape(std::string_view type, ShapeDefinitions definitions) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, ShapeDefinitions>, std::unique_ptr<const std::string>> shapes;
  TELIC_ASSIGN_OR_RETURN(const HostSchema* schema, ArtifactHostSchema(type));
  static const std::set<std::string> kNone;
  const std::set<std::string>& omitted =
      definitions == ShapeDefinitions::kBeyondGlossary ? ArtifactShapeGlossary().names : kNone;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(std::string(type), definitions);
  if (auto it = shapes.find(key); it != shapes.end()) return it->second.get();
  auto [it, added] = shapes.emplace(key, std::make_unique<const std::string>(CompactShape(type, schema->json(), omitted)));
  return it->second.get();
}

}  // namespace telic::schema
