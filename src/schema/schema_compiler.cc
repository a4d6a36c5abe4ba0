#include "schema/schema_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace telic::schema::internal {
namespace {

// Where a schema value sits: its document and RFC 6901 pointer inside it.
struct Location {
  const Json* document;
  std::string document_name;  // "" for the schema given to Compile
  std::string pointer;

  std::string Text() const { return document_name + "#" + pointer; }
  Location Child(std::string_view token) const {
    Location child{document, document_name, pointer};
    child.pointer += '/';
    child.pointer += EscapePointerToken(token);
    return child;
  }
  Location Child(size_t index) const { return Child(std::to_string(index)); }
};

// Decodes %XX escapes of a URI fragment.
std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The value at an RFC 6901 pointer ("" or "/a/0"), or nullptr.
const Json* FindPointer(const Json& document, std::string_view pointer) {
  const Json* at = &document;
  while (!pointer.empty()) {
    if (pointer[0] != '/') return nullptr;
    size_t end = pointer.find('/', 1);
    std::string token = UnescapePointerToken(pointer.substr(1, end == std::string_view::npos ? end : end - 1));
    pointer = end == std::string_view::npos ? std::string_view() : pointer.substr(end);
    if (at->is_object()) {
      auto it = at->find(token);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array() && !token.empty() &&
               std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      size_t index = std::strtoull(token.c_str(), nullptr, 10);
      if (index >= at->size()) return nullptr;
      at = &(*at)[index];
    } else {
      return nullptr;
    }
  }
  return at;
}

class Compiler {
 public:
  Compiler(SchemaResolver resolver, std::vector<std::unique_ptr<Node>>& nodes)
      : resolver_(std::move(resolver)), nodes_(nodes) {}

  // Compiles the schema at `at` once (memoised by document and pointer).
  Result<const Node*> CompileAt(const Location& at, const Json& schema);

  // Derives per-node data and rejects $ref cycles that consume no input.
  Status Finish();

 private:
  using Handler = Status (Compiler::*)(Node&, const Json&, const Location&);
  struct KeywordEntry {
    std::string_view name;
    Handler handler;
  };
  static const KeywordEntry kKeywords[];

  static std::unexpected<Error> Bad(const Location& at, std::string_view what) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("invalid schema at {}: {}", at.Text(), what));
  }

  Status Keyword(Node& node, std::string_view name, const Json& value, const Location& at);
  Result<const Node*> Resolve(std::string_view ref, const Location& at);
  Result<std::vector<const Node*>> SchemaList(const Json& value, const Location& at);
  Result<size_t> Count(const Json& value, const Location& at);
  Status TypeName(Node& node, const Json& name, const Location& at);
  Status CheckCycles() const;

  Status Annotation(Node&, const Json& value, const Location& at);
  Status ArrayAnnotation(Node&, const Json& value, const Location& at);
  Status Default(Node& node, const Json& value, const Location&);
  Status Defs(Node&, const Json& value, const Location& at);
  Status Ref(Node& node, const Json& value, const Location& at);
  Status Type(Node& node, const Json& value, const Location& at);
  Status Enum(Node& node, const Json& value, const Location& at);
  Status Const(Node& node, const Json& value, const Location& at);
  Status Properties(Node& node, const Json& value, const Location& at);
  Status Required(Node& node, const Json& value, const Location& at);
  Status AdditionalProperties(Node& node, const Json& value, const Location& at);
  Status Items(Node& node, const Json& value, const Location& at);
  Status MinItems(Node& node, const Json& value, const Location& at);
  Status MaxItems(Node& node, const Json& value, const Location& at);
  Status UniqueItems(Node& node, const Json& value, const Location& at);
  Status MinLength(Node& node, const Json& value, const Location& at);
  Status MaxLength(Node& node, const Json& value, const Location& at);
  Status MaxUtf8Bytes(Node& node, const Json& value, const Location& at);
  Status NonBlank(Node& node, const Json& value, const Location& at);
  Status PatternKeyword(Node& node, const Json& value, const Location& at);
  Status FormatKeyword(Node& node, const Json& value, const Location& at);
  Status Minimum(Node& node, const Json& value, const Location& at);
  Status Maximum(Node& node, const Json& value, const Location& at);
  Status ExclusiveMinimum(Node& node, const Json& value, const Location& at);
  Status ExclusiveMaximum(Node& node, const Json& value, const Location& at);
  Status AllOf(Node& node, const Json& value, const Location& at);
  Status AnyOf(Node& node, const Json& value, const Location& at);
  Status OneOf(Node& node, const Json& value, const Location& at);
  Status Not(Node& node, const Json& value, const Location& at);

  Status Bool(bool& field, const Json& value, const Location& at) {
    if (!value.is_boolean()) return Bad(at, "must be a boolean");
    field = value.get<bool>();
    return Ok();
  }
  Status Size(std::optional<size_t>& field, const Json& value, const Location& at) {
    TELIC_ASSIGN_OR_RETURN(field, Count(value, at));
    return Ok();
  }
  Status Bound(std::optional<Json>& field, const Json& value, const Location& at) {
    if (!value.is_number()) return Bad(at, "must be a number");
    field = value;
    return Ok();
  }

  SchemaResolver resolver_;
  std::vector<std::unique_ptr<Node>>& nodes_;
  std::map<std::pair<const Json*, std::string>, Node*> memo_;
};

const Compiler::KeywordEntry Compiler::kKeywords[] = {
    {"$schema", &Compiler::Annotation},
    {"$id", &Compiler::Annotation},
    {"$comment", &Compiler::Annotation},
    {"title", &Compiler::Annotation},
    {"description", &Compiler::Annotation},
    {"examples", &Compiler::ArrayAnnotation},
    {"default", &Compiler::Default},
    {"$defs", &Compiler::Defs},
    {"definitions", &Compiler::Defs},
    {"$ref", &Compiler::Ref},
    {"type", &Compiler::Type},
    {"enum", &Compiler::Enum},
    {"const", &Compiler::Const},
    {"properties", &Compiler::Properties},
    {"required", &Compiler::Required},
    {"additionalProperties", &Compiler::AdditionalProperties},
    {"items", &Compiler::Items},
    {"minItems", &Compiler::MinItems},
    {"maxItems", &Compiler::MaxItems},
    {"uniqueItems", &Compiler::UniqueItems},
    {"minLength", &Compiler::MinLength},
    {"maxLength", &Compiler::MaxLength},
    {"x-maxUtf8Bytes", &Compiler::MaxUtf8Bytes},
    {"x-nonBlank", &Compiler::NonBlank},
    {"pattern", &Compiler::PatternKeyword},
    {"format", &Compiler::FormatKeyword},
    {"minimum", &Compiler::Minimum},
    {"maximum", &Compiler::Maximum},
    {"exclusiveMinimum", &Compiler::ExclusiveMinimum},
    {"exclusiveMaximum", &Compiler::ExclusiveMaximum},
    {"allOf", &Compiler::AllOf},
    {"anyOf", &Compiler::AnyOf},
    {"oneOf", &Compiler::OneOf},
    {"not", &Compiler::Not},
};

Result<const Node*> Compiler::CompileAt(const Location& at, const Json& schema) {
  auto key = std::make_pair(at.document, at.pointer);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  if (!schema.is_object() && !schema.is_boolean()) return Bad(at, "a schema must be an object or a boolean");
  Node& node = *nodes_.emplace_back(std::make_unique<Node>());
  node.location = at.Text();
  memo_.emplace(std::move(key), &node);
  if (schema.is_boolean()) {
    node.reject_all = !schema.get<bool>();
    return &node;
  }
  for (const auto& [name, value] : schema.get_ref<const Json::object_t&>()) {
    TELIC_RETURN_IF_ERROR(Keyword(node, name, value, at.Child(name)));
  }
  std::sort(node.properties.begin(), node.properties.end(),
            [](const Property& a, const Property& b) { return a.name < b.name; });
  ComputeKeywordFlags(node);
  return &node;
}

Status Compiler::Keyword(Node& node, std::string_view name, const Json& value, const Location& at) {
  for (const KeywordEntry& entry : kKeywords) {
    if (entry.name == name) return (this->*entry.handler)(node, value, at);
  }
  return Bad(at, fmt::format("unknown keyword \"{}\"", name));
}

Status Compiler::Finish() {
  for (auto& node : nodes_) ComputeRefDerived(*node);
  return CheckCycles();
}

// Depth-first search over in-place edges; a back edge is an endless loop.
Status Compiler::CheckCycles() const {
  enum class Mark : uint8_t { kNew, kActive, kDone };
  std::map<const Node*, Mark> marks;
  std::function<Status(const Node*)> visit = [&](const Node* node) -> Status {
    Mark& mark = marks[node];
    if (mark == Mark::kDone) return Ok();
    if (mark == Mark::kActive) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("invalid schema at {}: $ref/applicator cycle that never descends into the instance",
                              node->location));
    }
    mark = Mark::kActive;
    for (const Node* child : InPlaceChildren(*node)) TELIC_RETURN_IF_ERROR(visit(child));
    marks[node] = Mark::kDone;
    return Ok();
  };
  for (const auto& node : nodes_) TELIC_RETURN_IF_ERROR(visit(node.get()));
  return Ok();
}

// A $ref: "#/pointer" in the same document, or "<document>#/pointer" through
// the resolver (whole document when the fragment is empty).
Result<const Node*> Compiler::Resolve(std::string_view ref, const Location& at) {
  size_t hash = ref.find('#');
  std::string_view document_name = ref.substr(0, hash);
  std::string fragment = hash == std::string_view::npos ? "" : PercentDecode(ref.substr(hash + 1));
  Location target{at.document, at.document_name, fragment};
  if (!document_name.empty()) {
    target.document = resolver_ ? resolver_(document_name) : nullptr;
    target.document_name = std::string(document_name);
    if (!target.document) return Bad(at, fmt::format("unresolvable $ref \"{}\" (unknown document)", ref));
  }
  if (!fragment.empty() && fragment[0] != '/') return Bad(at, fmt::format("unsupported $ref \"{}\"", ref));
  const Json* schema = FindPointer(*target.document, fragment);
  if (!schema) return Bad(at, fmt::format("unresolvable $ref \"{}\" (no such pointer)", ref));
  return CompileAt(target, *schema);
}

Result<std::vector<const Node*>> Compiler::SchemaList(const Json& value, const Location& at) {
  if (!value.is_array() || value.empty()) return Bad(at, "must be a non-empty array of schemas");
  std::vector<const Node*> out;
  for (size_t i = 0; i < value.size(); ++i) {
    TELIC_ASSIGN_OR_RETURN(const Node* child, CompileAt(at.Child(i), value[i]));
    out.push_back(child);
  }
  return out;
}

Result<size_t> Compiler::Count(const Json& value, const Location& at) {
  if (!value.is_number() || !IsIntegral(value)) return Bad(at, "must be a non-negative integer");
  if (IsNegative(value)) return Bad(at, "must not be negative");
  if (!IsSafeInteger(value)) return Bad(at, "must be a safe integer");
  return value.get<size_t>();
}

Status Compiler::Annotation(Node&, const Json& value, const Location& at) {
  if (!value.is_string()) return Bad(at, "must be a string");
  return Ok();
}

Status Compiler::ArrayAnnotation(Node&, const Json& value, const Location& at) {
  if (!value.is_array()) return Bad(at, "must be an array");
  return Ok();
}

Status Compiler::Default(Node& node, const Json& value, const Location&) {
  node.default_value = value;
  return Ok();
}

Status Compiler::Defs(Node&, const Json& value, const Location& at) {
  if (!value.is_object()) return Bad(at, "must be an object of schemas");
  for (const auto& [name, schema] : value.get_ref<const Json::object_t&>()) {
    TELIC_RETURN_IF_ERROR(CompileAt(at.Child(name), schema));
  }
  return Ok();
}

Status Compiler::Ref(Node& node, const Json& value, const Location& at) {
  if (!value.is_string()) return Bad(at, "must be a string");
  TELIC_ASSIGN_OR_RETURN(node.ref, Resolve(value.get_ref<const std::string&>(), at));
  return Ok();
}

Status Compiler::TypeName(Node& node, const Json& name, const Location& at) {
  if (!name.is_string()) return Bad(at, "type names must be strings");
  uint8_t bit = TypeFromName(name.get_ref<const std::string&>());
  if (!bit) return Bad(at, fmt::format("unknown type {}", name.dump()));
  if (node.types & bit) return Bad(at, fmt::format("duplicate type {}", name.dump()));
  node.types |= bit;
  return Ok();
}

Status Compiler::Type(Node& node, const Json& value, const Location& at) {
  if (value.is_string()) return TypeName(node, value, at);
  if (!value.is_array() || value.empty()) return Bad(at, "must be a type name or a non-empty array of them");
  for (const Json& name : value) TELIC_RETURN_IF_ERROR(TypeName(node, name, at));
  return Ok();
}

// Lists at most 20 allowed values, JSON-encoded, separated by '|'.
std::string AllowedValuesText(const std::vector<Json>& values) {
  std::string out;
  for (size_t i = 0; i < values.size() && i < 20; ++i) {
    if (i) out += '|';
    out += CanonicalJson(values[i]);
  }
  if (values.size() > 20) out += "|…";
  return out;
}

Status Compiler::Enum(Node& node, const Json& value, const Location& at) {
  if (!value.is_array() || value.empty()) return Bad(at, "must be a non-empty array");
  node.enum_values = value.get<std::vector<Json>>();
  if (node.enum_values.size() > kEnumHashThreshold) {
    for (const Json& member : node.enum_values) {
      if (member.is_string()) node.enum_strings.insert(member.get<std::string>());
    }
  }
  node.enum_message = "expected one of " + AllowedValuesText(node.enum_values);
  return Ok();
}

Status Compiler::Const(Node& node, const Json& value, const Location&) {
  node.const_value = value;
  node.const_message = "expected " + CanonicalJson(value);
  return Ok();
}

Status Compiler::Properties(Node& node, const Json& value, const Location& at) {
  if (!value.is_object()) return Bad(at, "must be an object of schemas");
  for (const auto& [name, schema] : value.get_ref<const Json::object_t&>()) {
    TELIC_ASSIGN_OR_RETURN(const Node* child, CompileAt(at.Child(name), schema));
    node.properties.push_back(Property{name, child});
  }
  return Ok();
}

Status Compiler::Required(Node& node, const Json& value, const Location& at) {
  if (!value.is_array()) return Bad(at, "must be an array of strings");
  for (const Json& name : value) {
    if (!name.is_string()) return Bad(at, "must be an array of strings");
    const auto& text = name.get_ref<const std::string&>();
    if (std::find(node.required.begin(), node.required.end(), text) != node.required.end()) {
      return Bad(at, fmt::format("duplicate name {}", name.dump()));
    }
    node.required.push_back(text);
  }
  return Ok();
}

Status Compiler::AdditionalProperties(Node& node, const Json& value, const Location& at) {
  if (value.is_boolean()) {
    node.additional = value.get<bool>() ? Extra::kAllow : Extra::kReject;
    return Ok();
  }
  node.additional = Extra::kSchema;
  TELIC_ASSIGN_OR_RETURN(node.additional_schema, CompileAt(at, value));
  return Ok();
}

Status Compiler::Items(Node& node, const Json& value, const Location& at) {
  if (value.is_array()) return Bad(at, "the array (tuple) form of items is not supported");
  TELIC_ASSIGN_OR_RETURN(node.items, CompileAt(at, value));
  return Ok();
}

Status Compiler::MinItems(Node& node, const Json& value, const Location& at) { return Size(node.min_items, value, at); }
Status Compiler::MaxItems(Node& node, const Json& value, const Location& at) { return Size(node.max_items, value, at); }
Status Compiler::UniqueItems(Node& node, const Json& value, const Location& at) {
  return Bool(node.unique_items, value, at);
}
Status Compiler::MinLength(Node& node, const Json& value, const Location& at) {
  return Size(node.min_length, value, at);
}
Status Compiler::MaxLength(Node& node, const Json& value, const Location& at) {
  return Size(node.max_length, value, at);
}
Status Compiler::MaxUtf8Bytes(Node& node, const Json& value, const Location& at) {
  return Size(node.max_utf8_bytes, value, at);
}
Status Compiler::NonBlank(Node& node, const Json& value, const Location& at) { return Bool(node.non_blank, value, at); }

Status Compiler::PatternKeyword(Node& node, const Json& value, const Location& at) {
  if (!value.is_string()) return Bad(at, "must be a string");
  auto pattern = Pattern::Compile(value.get<std::string>());
  if (!pattern) return Bad(at, fmt::format("invalid pattern {}: {}", value.dump(), pattern.error()));
  node.pattern = std::move(*pattern);
  return Ok();
}

Status Compiler::FormatKeyword(Node& node, const Json& value, const Location& at) {
  if (!value.is_string()) return Bad(at, "must be a string");
  if (value == "date-time") {
    node.format = Format::kDateTime;
  } else if (value == "uuid") {
    node.format = Format::kUuid;
  } else {
    return Bad(at, fmt::format("unknown format {}", value.dump()));
  }
  return Ok();
}

Status Compiler::Minimum(Node& node, const Json& value, const Location& at) { return Bound(node.minimum, value, at); }
Status Compiler::Maximum(Node& node, const Json& value, const Location& at) { return Bound(node.maximum, value, at); }
Status Compiler::ExclusiveMinimum(Node& node, const Json& value, const Location& at) {
  return Bound(node.exclusive_minimum, value, at);
}
Status Compiler::ExclusiveMaximum(Node& node, const Json& value, const Location& at) {
  return Bound(node.exclusive_maximum, value, at);
}

Status Compiler::AllOf(Node& node, const Json& value, const Location& at) {
  TELIC_ASSIGN_OR_RETURN(node.all_of, SchemaList(value, at));
  return Ok();
}
Status Compiler::AnyOf(Node& node, const Json& value, const Location& at) {
  TELIC_ASSIGN_OR_RETURN(node.any_of, SchemaList(value, at));
  return Ok();
}
Status Compiler::OneOf(Node& node, const Json& value, const Location& at) {
  TELIC_ASSIGN_OR_RETURN(node.one_of, SchemaList(value, at));
  return Ok();
}
Status Compiler::Not(Node& node, const Json& value, const Location& at) {
  TELIC_ASSIGN_OR_RETURN(node.not_schema, CompileAt(at, value));
  return Ok();
}

}  // namespace

std::string UnescapePointerToken(std::string_view token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out.push_back(token[i + 1] == '0' ? '~' : '/');
      ++i;
    } else {
      out.push_back(token[i]);
    }
  }
  return out;
}

Result<std::shared_ptr<CompiledSchema>> CompileSchema(const Json& schema, SchemaResolver resolver) {
  auto compiled = std::make_shared<CompiledSchema>();
  compiled->schema = schema;
  Compiler compiler(std::move(resolver), compiled->nodes);
  TELIC_ASSIGN_OR_RETURN(compiled->root, compiler.CompileAt(Location{&compiled->schema, "", ""}, compiled->schema));
  TELIC_RETURN_IF_ERROR(compiler.Finish());
  return compiled;
}

}  // namespace telic::schema::internal
