// A compiled JSON Schema validator with JSON-pointer error paths.
//
// Why our own and not valijson: the wire contract counts string lengths in
// UTF-16 code units (JavaScript semantics), caps some strings in UTF-8 bytes,
// requires safe integers (|n| <= 2^53-1), materialises `default` values into
// the validated document (the stored body includes them), and reports
// Zod-compatible issue codes. Patterns run on PCRE2 (no backtracking stack
// overflow, match limits set), never std::regex.
//
// Supported keywords (anything else in a schema is a compile error, so a
// schema can never silently mean less than it says):
//   $schema $id $comment title description examples default   (annotations)
//   $defs definitions $ref (local "#/..." pointers, or "<file>#/..." through
//   the resolver), type (string or array of: null boolean object array number
//   integer string), enum, const, properties, required,
//   additionalProperties (bool or schema), propertyNames? (no),
//   items (single schema), minItems, maxItems, uniqueItems,
//   minLength, maxLength (UTF-16 units), pattern, format (date-time, uuid),
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers),
//   anyOf, oneOf, allOf, not, and the telic extensions
//   x-maxUtf8Bytes (int: UTF-8 byte cap), x-nonBlank (bool: needs a
//   non-whitespace character).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::schema {

// Returns the schema document named by `document` (the part of a $ref before
// '#'), or nullptr when unknown.
using SchemaResolver = std::function<const Json*(std::string_view document)>;

struct ValidateOptions {
  // Insert missing properties that declare a `default` (a deep copy of it).
  bool apply_defaults = true;
  // Stop collecting after this many issues (the result says so in its last issue).
  size_t max_issues = 256;
};

class CompiledSchema;

class Validator {
 public:
  // Compiles `schema`. Unknown keywords, malformed keyword values, unknown
  // formats, invalid patterns and unresolvable $refs are compile errors
  // (ErrorCode::kInvalidArgument naming the schema pointer).
  static Result<Validator> Compile(const Json& schema, SchemaResolver resolver = nullptr);

  // Validates `instance` against the schema. Returns every violation (up to
  // options.max_issues), each with the JSON pointer of the offending value
  // (for a missing required property: the pointer of the missing member),
  // a Zod-compatible code and a readable message. An empty vector means valid.
  // With apply_defaults, `instance` gains the defaults of absent properties
  // wherever the value is an object; inserted defaults are not themselves
  // validated (as in Zod). When the issue cap is reached, the last entry is
  // replaced by a marker {"", "custom", "too many issues; ..."}.
  std::vector<Issue> Validate(Json& instance, const ValidateOptions& options = {}) const;

  // The schema this validator was compiled from.
  const Json& schema() const;

 private:
  explicit Validator(std::shared_ptr<const CompiledSchema> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const CompiledSchema> compiled_;
};

// RFC 6901: escapes '~' and '/' in one reference token.
std::string EscapePointerToken(std::string_view token);

// "a/b/0" style pointer ("/a/b/0") to the reference's dotted path ("a.b.0").
std::string PointerToDottedPath(std::string_view pointer);

}  // namespace telic::schema
