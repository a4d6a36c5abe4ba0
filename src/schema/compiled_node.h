// The compiled form of a JSON Schema (schema/validator.h): one Node per
// (sub)schema with its keywords decoded, plus what both the compiler
// (schema/schema_compiler.h) and the walker (schema/validator.cc) need about
// JSON types, numbers, the date-time format and PCRE2 patterns.
#pragma once

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/canonical_json.h"

namespace telic::schema::internal {

enum TypeBit : uint8_t {
  kNull = 1 << 0,
  kBoolean = 1 << 1,
  kObject = 1 << 2,
  kArray = 1 << 3,
  kNumber = 1 << 4,
  kInteger = 1 << 5,
  kString = 1 << 6,
};

constexpr double kMaxSafeDouble = 9007199254740991.0;
constexpr int64_t kMaxSafeInt = 9007199254740991;
// Instance nesting beyond this is reported instead of recursed into.
constexpr size_t kMaxInstanceDepth = 200;  // beyond any parser limit telic uses (128)
// Issues collected per union branch (enough to pick the closest branch).
constexpr size_t kBranchIssueCap = 8;
// Issues of the closest branch quoted in an invalid_union message.
constexpr size_t kQuotedBranchIssues = 3;
// Enums longer than this get a hash set for string lookups.
constexpr size_t kEnumHashThreshold = 8;

// The type bit of a schema type name, or 0 when unknown.
uint8_t TypeFromName(std::string_view name);

// "string | null" for a type mask, in kTypeNames order.
std::string TypeListText(uint8_t mask);

// The JSON type name of a value as reported in "received ..." messages.
std::string_view ReceivedType(const Json& value);

// The type bit of an instance; every number maps to kNumber.
uint8_t TypeOf(const Json& value);

// True for a JSON number with an integral value (1.0 included).
bool IsIntegral(const Json& number);

// True for an integral number with |n| <= 2^53-1.
bool IsSafeInteger(const Json& number);

bool IsNegative(const Json& number);

// Three-way comparison of two JSON numbers: exact when both are integers,
// otherwise as doubles.
int CompareNumbers(const Json& a, const Json& b);

// A number as JavaScript would print it.
std::string NumberText(const Json& number);

// "1 item", "2 items".
std::string Plural(size_t count, std::string_view noun);

enum class Format : uint8_t { kNone, kDateTime, kUuid };

// The wire's date-time grammar: YYYY-MM-DDTHH:MM[:SS[.f+]](Z|±HH:MM).
bool IsDateTime(std::string_view s);

enum class MatchResult { kMatch, kNoMatch, kLimit };

// A compiled `pattern` (unanchored search, ECMAScript-like: `$` only at the
// very end, \uXXXX escapes, `.` stops at CR and LF; ASCII-only \d \w \s
// classes as in non-unicode JS). Thread-safe to match concurrently.
class Pattern {
 public:
  ~Pattern();
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Compiles `source`; on failure returns PCRE2's error text.
  static std::expected<std::unique_ptr<Pattern>, std::string> Compile(const std::string& source);

  MatchResult Match(std::string_view subject) const;

  const std::string& source() const { return source_; }

 private:
  Pattern(pcre2_code* code, std::string source) : code_(code), source_(std::move(source)) {}

  int Run(std::string_view subject, uint32_t options) const;

  static std::string ErrorText(int error);

  pcre2_code* code_;
  std::string source_;
};

struct Node;

struct Property {
  std::string name;
  const Node* schema;
};

enum class Extra : uint8_t { kAllow, kReject, kSchema };

// One compiled (sub)schema. Every optional/empty member is an absent keyword.
struct Node {
  std::string location;     // "<document>#<pointer>", for compile errors
  bool reject_all = false;  // the `false` schema
  uint8_t types = 0;        // TypeBit mask; 0 means any type
  const Node* ref = nullptr;
  std::optional<Json> default_value;

  // enum / const
  std::vector<Json> enum_values;
  std::unordered_set<std::string> enum_strings;  // string members, for large enums
  std::string enum_message;
  std::optional<Json> const_value;
  std::string const_message;

  // strings
  std::optional<size_t> min_length, max_length, max_utf8_bytes;
  bool non_blank = false;
  std::unique_ptr<Pattern> pattern;
  Format format = Format::kNone;

  // numbers
  std::optional<Json> minimum, maximum, exclusive_minimum, exclusive_maximum;

  // objects
  std::vector<Property> properties;  // sorted by name (std::string order)
  std::vector<std::string> required;
  Extra additional = Extra::kAllow;
  const Node* additional_schema = nullptr;

  // arrays
  const Node* items = nullptr;
  std::optional<size_t> min_items, max_items;
  bool unique_items = false;

  // applicators
  std::vector<const Node*> all_of, any_of, one_of;
  const Node* not_schema = nullptr;

  // Derived after compilation.
  bool string_keywords = false, number_keywords = false, object_keywords = false, array_keywords = false,
       applicators = false;
  const Json* effective_default = nullptr;  // own default, else that of the $ref chain
  uint8_t effective_types = 0;              // own types, else those of the $ref chain
};

// Children validated against the same instance (cycles among them never end).
std::vector<const Node*> InPlaceChildren(const Node& node);

// Sets the node's string/number/object/array/applicator keyword flags.
void ComputeKeywordFlags(Node& n);

// Follows the $ref chain (bounded) for a default and a type set.
void ComputeRefDerived(Node& n);

}  // namespace telic::schema::internal

namespace telic::schema {

// The compiled form: the schema document, its nodes and the root node.
class CompiledSchema {
 public:
  Json schema;
  std::vector<std::unique_ptr<internal::Node>> nodes;
  const internal::Node* root = nullptr;
};

}  // namespace telic::schema
