#include "schema/validator.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/ids.h"
#include "base/text.h"

namespace telic::schema {
namespace {

// ---------------------------------------------------------------------------
// Types and numbers
// ---------------------------------------------------------------------------

enum TypeBit : uint8_t {
  kNull = 1 << 0,
  kBoolean = 1 << 1,
  kObject = 1 << 2,
  kArray = 1 << 3,
  kNumber = 1 << 4,
  kInteger = 1 << 5,
  kString = 1 << 6,
};

constexpr std::pair<std::string_view, uint8_t> kTypeNames[] = {
    {"string", kString}, {"number", kNumber}, {"integer", kInteger}, {"boolean", kBoolean},
    {"object", kObject}, {"array", kArray},   {"null", kNull},
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
uint8_t TypeFromName(std::string_view name) {
  for (const auto& [type_name, bit] : kTypeNames) {
    if (type_name == name) return bit;
  }
  return 0;
}

// "string | null" for a type mask, in kTypeNames order.
std::string TypeListText(uint8_t mask) {
  std::string out;
  for (const auto& [name, bit] : kTypeNames) {
    if (!(mask & bit)) continue;
    if (!out.empty()) out += " | ";
    out += name;
  }
  return out;
}

// The JSON type name of a value as reported in "received ..." messages.
std::string_view ReceivedType(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

// The type bit of an instance; every number maps to kNumber.
uint8_t TypeOf(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return kNull;
    case Json::value_t::boolean:
      return kBoolean;
    case Json::value_t::object:
      return kObject;
    case Json::value_t::array:
      return kArray;
    case Json::value_t::string:
      return kString;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return kNumber;
    default:
      return 0;
  }
}

// True for a JSON number with an integral value (1.0 included).
bool IsIntegral(const Json& number) {
  if (number.is_number_integer()) return true;
  double d = number.get<double>();
  return std::isfinite(d) && std::trunc(d) == d;
}

// True for an integral number with |n| <= 2^53-1.
bool IsSafeInteger(const Json& number) {
  if (number.is_number_unsigned()) return number.get<uint64_t>() <= static_cast<uint64_t>(kMaxSafeInt);
  if (number.is_number_integer()) {
    int64_t n = number.get<int64_t>();
    return n >= -kMaxSafeInt && n <= kMaxSafeInt;
  }
  return std::fabs(number.get<double>()) <= kMaxSafeDouble;
}

bool IsNegative(const Json& number) {
  if (number.is_number_unsigned()) return false;
  if (number.is_number_integer()) return number.get<int64_t>() < 0;
  return number.get<double>() < 0;
}

// Three-way comparison of two JSON numbers: exact when both are integers,
// otherwise as doubles.
int CompareNumbers(const Json& a, const Json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    if (IsNegative(a) != IsNegative(b)) return IsNegative(a) ? -1 : 1;
    if (IsNegative(a)) {
      int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      return (x > y) - (x < y);
    }
    uint64_t x = a.get<uint64_t>(), y = b.get<uint64_t>();
    return (x > y) - (x < y);
  }
  double x = a.get<double>(), y = b.get<double>();
  return (x > y) - (x < y);
}

// A number as JavaScript would print it.
std::string NumberText(const Json& number) {
  if (number.is_number_unsigned()) return std::to_string(number.get<uint64_t>());
  if (number.is_number_integer()) return std::to_string(number.get<int64_t>());
  return FormatJsNumber(number.get<double>());
}

std::string Plural(size_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------

enum class Format : uint8_t { kNone, kDateTime, kUuid };

// Reads `count` ASCII digits at s[pos] into `out`; advances pos.
bool ReadDigits(std::string_view s, size_t& pos, size_t count, int& out) {
  if (pos + count > s.size()) return false;
  out = 0;
  for (size_t i = 0; i < count; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += count;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// YYYY-MM-DD with a real calendar date.
bool ReadDate(std::string_view s, size_t& pos) {
  int year, month, day;
  if (!ReadDigits(s, pos, 4, year) || !Expect(s, pos, '-')) return false;
  if (!ReadDigits(s, pos, 2, month) || !Expect(s, pos, '-')) return false;
  if (!ReadDigits(s, pos, 2, day)) return false;
  return month >= 1 && month <= 12 && day >= 1 && day <= DaysInMonth(year, month);
}

// HH:MM with hours 00-23 and minutes 00-59.
bool ReadHourMinute(std::string_view s, size_t& pos) {
  int hour, minute;
  if (!ReadDigits(s, pos, 2, hour) || !Expect(s, pos, ':')) return false;
  if (!ReadDigits(s, pos, 2, minute)) return false;
  return hour <= 23 && minute <= 59;
}

// Optional ":SS" then, only after seconds, an optional ".fraction" (1+ digits).
bool ReadSeconds(std::string_view s, size_t& pos) {
  if (pos >= s.size() || s[pos] != ':') return true;
  ++pos;
  int second;
  if (!ReadDigits(s, pos, 2, second) || second > 59) return false;
  if (pos >= s.size() || s[pos] != '.') return true;
  size_t start = ++pos;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
  return pos > start;
}

// "Z" or "+HH:MM" / "-HH:MM", ending the string.
bool ReadOffset(std::string_view s, size_t& pos) {
  if (pos >= s.size()) return false;
  char c = s[pos++];
  if (c == 'Z') return pos == s.size();
  if (c != '+' && c != '-') return false;
  return ReadHourMinute(s, pos) && pos == s.size();
}

// The wire's date-time grammar: YYYY-MM-DDTHH:MM[:SS[.f+]](Z|±HH:MM).
bool IsDateTime(std::string_view s) {
  size_t pos = 0;
  return ReadDate(s, pos) && Expect(s, pos, 'T') && ReadHourMinute(s, pos) && ReadSeconds(s, pos) && ReadOffset(s, pos);
}

// ---------------------------------------------------------------------------
// Patterns (PCRE2)
// ---------------------------------------------------------------------------

// Limits applied to every pattern match (shared, read-only after creation).
class MatchLimits {
 public:
  MatchLimits() : context_(pcre2_match_context_create(nullptr)) {
    pcre2_set_match_limit(context_, 10'000'000);
    pcre2_set_depth_limit(context_, 1'000'000);
    pcre2_set_heap_limit(context_, 16 * 1024);  // KiB
  }
  ~MatchLimits() { pcre2_match_context_free(context_); }
  MatchLimits(const MatchLimits&) = delete;
  MatchLimits& operator=(const MatchLimits&) = delete;

  static pcre2_match_context* Get() {
    static MatchLimits limits;
    return limits.context_;
  }

 private:
  pcre2_match_context* context_;
};

// Per-thread match data (pcre2_match_data is not shareable across threads).
class ThreadMatchData {
 public:
  ThreadMatchData() : data_(pcre2_match_data_create(1, nullptr)) {}
  ~ThreadMatchData() { pcre2_match_data_free(data_); }
  ThreadMatchData(const ThreadMatchData&) = delete;
  ThreadMatchData& operator=(const ThreadMatchData&) = delete;

  static pcre2_match_data* Get() {
    thread_local ThreadMatchData data;
    return data.data_;
  }

 private:
  pcre2_match_data* data_;
};

enum class MatchResult { kMatch, kNoMatch, kLimit };

// A compiled `pattern` (unanchored search, ECMAScript-like: `$` only at the
// very end, \uXXXX escapes, `.` stops at CR and LF; ASCII-only \d \w \s
// classes as in non-unicode JS). Thread-safe to match concurrently.
class Pattern {
 public:
  ~Pattern() { pcre2_code_free(code_); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Compiles `source`; on failure returns PCRE2's error text.
  static std::expected<std::unique_ptr<Pattern>, std::string> Compile(const std::string& source) {
    pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
    pcre2_set_compile_extra_options(context, PCRE2_EXTRA_ALT_BSUX);
    pcre2_set_newline(context, PCRE2_NEWLINE_ANYCRLF);  // like JS, `.` matches neither CR nor LF
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                     PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX, &error, &offset, context);
    pcre2_compile_context_free(context);
    if (!code) return std::unexpected(fmt::format("{} at offset {}", ErrorText(error), offset));
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // failure leaves the interpreter in use
    return std::unique_ptr<Pattern>(new Pattern(code, source));
  }

  MatchResult Match(std::string_view subject) const {
    int rc = Run(subject, 0);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) rc = Run(subject, PCRE2_NO_JIT);
    if (rc >= 0) return MatchResult::kMatch;
    return rc == PCRE2_ERROR_NOMATCH ? MatchResult::kNoMatch : MatchResult::kLimit;
  }

  const std::string& source() const { return source_; }

 private:
  Pattern(pcre2_code* code, std::string source) : code_(code), source_(std::move(source)) {}

  int Run(std::string_view subject, uint32_t options) const {
    return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, options,
                       ThreadMatchData::Get(), MatchLimits::Get());
  }

  static std::string ErrorText(int error) {
    PCRE2_UCHAR buffer[256];
    int length = pcre2_get_error_message(error, buffer, sizeof buffer);
    return length < 0 ? "invalid pattern" : std::string(reinterpret_cast<char*>(buffer), length);
  }

  pcre2_code* code_;
  std::string source_;
};

// ---------------------------------------------------------------------------
// Compiled nodes
// ---------------------------------------------------------------------------

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
std::vector<const Node*> InPlaceChildren(const Node& node) {
  std::vector<const Node*> out(node.all_of);
  out.insert(out.end(), node.any_of.begin(), node.any_of.end());
  out.insert(out.end(), node.one_of.begin(), node.one_of.end());
  if (node.ref) out.push_back(node.ref);
  if (node.not_schema) out.push_back(node.not_schema);
  return out;
}

void ComputeKeywordFlags(Node& n) {
  n.string_keywords =
      n.min_length || n.max_length || n.max_utf8_bytes || n.non_blank || n.pattern || n.format != Format::kNone;
  n.number_keywords = n.minimum || n.maximum || n.exclusive_minimum || n.exclusive_maximum;
  n.object_keywords = !n.properties.empty() || !n.required.empty() || n.additional != Extra::kAllow;
  n.array_keywords = n.items || n.min_items || n.max_items || n.unique_items;
  n.applicators = !n.all_of.empty() || !n.any_of.empty() || !n.one_of.empty() || n.not_schema;
}

// Follows the $ref chain (bounded) for a default and a type set.
void ComputeRefDerived(Node& n) {
  const Node* p = &n;
  for (int hops = 0; p && hops < 64; ++hops, p = p->ref) {
    if (!n.effective_default && p->default_value) n.effective_default = &*p->default_value;
    if (!n.effective_types && p->types) n.effective_types = p->types;
  }
}

// ---------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

// One step of the instance path: an object key or an array index.
struct PathToken {
  const std::string* key;  // nullptr for an array index
  size_t index;
};

// A default inserted into an object, recorded so a failed union branch can
// take it back. Inserted defaults are never descended into, so the object of
// an earlier entry is never inside a later entry's value.
struct Insertion {
  Json::object_t* object;
  Json::object_t::iterator member;
};

size_t MixHash(size_t seed, size_t value) { return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

// A hash consistent with Json equality: equal values (1 and 1.0 included)
// hash alike, because numbers hash by their double value.
size_t EqualityHash(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      size_t seed = 1;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        seed = MixHash(MixHash(seed, std::hash<std::string>()(key)), EqualityHash(member));
      }
      return seed;
    }
    case Json::value_t::array: {
      size_t seed = 2;
      for (const Json& item : value) seed = MixHash(seed, EqualityHash(item));
      return seed;
    }
    case Json::value_t::string:
      return std::hash<std::string>()(value.get_ref<const std::string&>());
    case Json::value_t::boolean:
      return value.get<bool>() ? 3 : 4;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return std::hash<double>()(value.get<double>());
    default:
      return 0;
  }
}

// True when no two items are equal (JSON equality: 1 == 1.0).
bool AllUnique(const Json::array_t& items) {
  if (items.size() <= 16) {
    for (size_t i = 0; i < items.size(); ++i) {
      for (size_t j = i + 1; j < items.size(); ++j) {
        if (items[i] == items[j]) return false;
      }
    }
    return true;
  }
  std::unordered_multimap<size_t, const Json*> seen;
  seen.reserve(items.size());
  for (const Json& item : items) {
    size_t hash = EqualityHash(item);
    auto [begin, end] = seen.equal_range(hash);
    if (std::any_of(begin, end, [&item](const auto& entry) { return *entry.second == item; })) return false;
    seen.emplace(hash, &item);
  }
  return true;
}

// Walks an instance against compiled nodes, collecting issues. The path
// stack and the insertion journal are shared with nested walkers (union
// branches); the path is rendered to a pointer only when an issue is recorded.
class Walker {
 public:
  Walker(bool apply_defaults, size_t cap, std::vector<PathToken>& path, std::vector<Insertion>& journal)
      : apply_defaults_(apply_defaults), cap_(std::max<size_t>(cap, 1)), path_(path), journal_(journal) {}

  void Check(const Node& node, Json& value);
  std::vector<Issue> TakeIssues() && { return std::move(issues_); }

 private:
  std::string Pointer() const;
  void Add(std::string_view code, std::string message, const std::string* missing_member = nullptr);
  void Descend(const Node& node, Json& value, PathToken token);

  bool CheckType(const Node& node, const Json& value);
  void CheckEnum(const Node& node, const Json& value);
  void CheckString(const Node& node, const std::string& text);
  void CheckLength(const Node& node, const std::string& text);
  void CheckPattern(const Node& node, const std::string& text);
  void CheckFormat(const Node& node, const std::string& text);
  void CheckNumber(const Node& node, const Json& value);
  void CheckObject(const Node& node, Json::object_t& object);
  void CheckExtraMember(const Node& node, const std::string& key, Json& value);
  void CheckRequired(const Node& node, const Json::object_t& object);
  void CheckArray(const Node& node, Json::array_t& items);
  void CheckApplicators(const Node& node, Json& value);
  std::vector<Issue> TryBranch(const Node& node, Json& value, bool match_only);
  void Rollback(size_t mark);
  void CheckAnyOf(const Node& node, Json& value);
  void CheckOneOf(const Node& node, Json& value);
  void CheckNot(const Node& node, Json& value);
  const std::vector<Issue>& Closest(const std::vector<std::vector<Issue>>& failures) const;
  std::string UnionMessage(std::string_view head, const std::vector<Issue>& closest) const;

  bool apply_defaults_;
  size_t cap_;
  std::vector<PathToken>& path_;
  std::vector<Insertion>& journal_;
  std::vector<Issue> issues_;
  bool stopped_ = false;
};

std::string Walker::Pointer() const {
  std::string out;
  for (const PathToken& token : path_) {
    out += '/';
    out += token.key ? EscapePointerToken(*token.key) : std::to_string(token.index);
  }
  return out;
}

// Records an issue at the current path (plus `missing_member`). At the cap
// the last slot becomes a "stopped" notice and collection ends.
void Walker::Add(std::string_view code, std::string message, const std::string* missing_member) {
  if (stopped_) return;
  if (issues_.size() >= cap_) {
    issues_.back() = Issue{"", "custom", fmt::format("too many issues; only the first {} are listed", cap_ - 1)};
    stopped_ = true;
    return;
  }
  std::string pointer = Pointer();
  if (missing_member) {
    pointer += '/';
    pointer += EscapePointerToken(*missing_member);
  }
  issues_.push_back(Issue{std::move(pointer), std::string(code), std::move(message)});
}

void Walker::Descend(const Node& node, Json& value, PathToken token) {
  if (path_.size() >= kMaxInstanceDepth) {
    Add("too_big", fmt::format("nesting exceeds {} levels", kMaxInstanceDepth));
    return;
  }
  path_.push_back(token);
  Check(node, value);
  path_.pop_back();
}

void Walker::Check(const Node& node, Json& value) {
  if (stopped_) return;
  if (node.reject_all) return Add("invalid_type", fmt::format("expected never, received {}", ReceivedType(value)));
  if (node.ref) Check(*node.ref, value);
  if (node.types && !CheckType(node, value)) return;
  if (!node.enum_values.empty()) CheckEnum(node, value);
  if (node.const_value && value != *node.const_value) Add("invalid_value", node.const_message);
  if (value.is_string() && node.string_keywords) CheckString(node, value.get_ref<const std::string&>());
  if (value.is_number() && node.number_keywords) CheckNumber(node, value);
  if (value.is_object() && node.object_keywords) CheckObject(node, value.get_ref<Json::object_t&>());
  if (value.is_array() && node.array_keywords) CheckArray(node, value.get_ref<Json::array_t&>());
  if (node.applicators) CheckApplicators(node, value);
}

// False (after recording an issue) when `value` is not of the node's types.
// Integers must be integral and safe (|n| <= 2^53-1) unless "number" is allowed.
bool Walker::CheckType(const Node& node, const Json& value) {
  uint8_t type = TypeOf(value);
  if (type == kNumber && !(node.types & kNumber) && (node.types & kInteger) && IsIntegral(value)) {
    if (IsSafeInteger(value)) return true;
    Add(IsNegative(value) ? "too_small" : "too_big", "must be a safe integer");
    return false;
  }
  if (node.types & type) return true;
  Add("invalid_type", fmt::format("expected {}, received {}", TypeListText(node.types), ReceivedType(value)));
  return false;
}

void Walker::CheckEnum(const Node& node, const Json& value) {
  if (value.is_string() && !node.enum_strings.empty()) {
    if (node.enum_strings.contains(value.get_ref<const std::string&>())) return;
  } else if (std::find(node.enum_values.begin(), node.enum_values.end(), value) != node.enum_values.end()) {
    return;
  }
  Add("invalid_value", node.enum_message);
}

void Walker::CheckString(const Node& node, const std::string& text) {
  CheckLength(node, text);
  if (node.max_utf8_bytes && text.size() > *node.max_utf8_bytes) {
    Add("too_big", fmt::format("must be at most {} in UTF-8", Plural(*node.max_utf8_bytes, "byte")));
  }
  if (node.non_blank && !HasNonWhitespace(text)) Add("custom", "must contain a non-whitespace character");
  if (node.pattern) CheckPattern(node, text);
  if (node.format != Format::kNone) CheckFormat(node, text);
}

// minLength / maxLength in UTF-16 code units (never more than the byte count).
void Walker::CheckLength(const Node& node, const std::string& text) {
  bool need_max = node.max_length && text.size() > *node.max_length;
  if (!node.min_length && !need_max) return;
  size_t length = Utf16Length(text);
  if (node.min_length && length < *node.min_length) {
    Add("too_small", fmt::format("must be at least {}", Plural(*node.min_length, "character")));
  }
  if (node.max_length && length > *node.max_length) {
    Add("too_big", fmt::format("must be at most {}", Plural(*node.max_length, "character")));
  }
}

void Walker::CheckPattern(const Node& node, const std::string& text) {
  MatchResult result = node.pattern->Match(text);
  if (result == MatchResult::kMatch) return;
  std::string message = "must match pattern " + node.pattern->source();
  if (result == MatchResult::kLimit) message += " (the match exceeded its resource limit)";
  Add("invalid_format", std::move(message));
}

void Walker::CheckFormat(const Node& node, const std::string& text) {
  if (node.format == Format::kDateTime && !IsDateTime(text)) Add("invalid_format", "must be a valid date-time");
  if (node.format == Format::kUuid && !IsUuid(text)) Add("invalid_format", "must be a valid uuid");
}

void Walker::CheckNumber(const Node& node, const Json& value) {
  if (node.minimum && CompareNumbers(value, *node.minimum) < 0) {
    Add("too_small", "must be >= " + NumberText(*node.minimum));
  }
  if (node.exclusive_minimum && CompareNumbers(value, *node.exclusive_minimum) <= 0) {
    Add("too_small", "must be > " + NumberText(*node.exclusive_minimum));
  }
  if (node.maximum && CompareNumbers(value, *node.maximum) > 0) {
    Add("too_big", "must be <= " + NumberText(*node.maximum));
  }
  if (node.exclusive_maximum && CompareNumbers(value, *node.exclusive_maximum) >= 0) {
    Add("too_big", "must be < " + NumberText(*node.exclusive_maximum));
  }
}

// Merges the (sorted) members with the (sorted) declared properties: present
// ones are validated, absent ones gain a copy of their default (not itself
// validated, as in Zod v4), undeclared ones go to additionalProperties. `required` is checked after defaults are
// inserted.
void Walker::CheckObject(const Node& node, Json::object_t& object) {
  auto member = object.begin();
  auto property = node.properties.begin();
  while (!stopped_ && (member != object.end() || property != node.properties.end())) {
    if (property == node.properties.end() || (member != object.end() && member->first < property->name)) {
      CheckExtraMember(node, member->first, member->second);
      ++member;
    } else if (member == object.end() || property->name < member->first) {
      const Json* fallback = property->schema->effective_default;
      if (apply_defaults_ && fallback) {
        journal_.push_back(Insertion{&object, object.emplace_hint(member, property->name, *fallback)});
      }
      ++property;
    } else {
      Descend(*property->schema, member->second, PathToken{&member->first, 0});
      ++member;
      ++property;
    }
  }
  CheckRequired(node, object);
}

void Walker::CheckExtraMember(const Node& node, const std::string& key, Json& value) {
  if (node.additional == Extra::kSchema) return Descend(*node.additional_schema, value, PathToken{&key, 0});
  if (node.additional != Extra::kReject) return;
  std::string quoted;
  AppendJsonString(key, quoted);
  Add("unrecognized_keys", "unrecognized key " + quoted);
}

// A missing member is reported at its own pointer, typed when its schema has one type.
void Walker::CheckRequired(const Node& node, const Json::object_t& object) {
  for (const std::string& name : node.required) {
    if (object.contains(name)) continue;
    auto property = std::lower_bound(node.properties.begin(), node.properties.end(), name,
                                     [](const Property& p, const std::string& n) { return p.name < n; });
    uint8_t types = property != node.properties.end() && property->name == name ? property->schema->effective_types : 0;
    bool single = types && !(types & (types - 1));
    Add("invalid_type",
        single ? fmt::format("expected {}, received undefined", TypeListText(types))
               : std::string("required property is missing"),
        &name);
  }
}

void Walker::CheckArray(const Node& node, Json::array_t& items) {
  if (node.min_items && items.size() < *node.min_items) {
    Add("too_small", fmt::format("must contain at least {}", Plural(*node.min_items, "item")));
  }
  if (node.max_items && items.size() > *node.max_items) {
    Add("too_big", fmt::format("must contain at most {}", Plural(*node.max_items, "item")));
  }
  if (node.unique_items && !AllUnique(items)) Add("custom", "items must be unique");
  if (!node.items) return;
  for (size_t i = 0; i < items.size() && !stopped_; ++i) Descend(*node.items, items[i], PathToken{nullptr, i});
}

void Walker::CheckApplicators(const Node& node, Json& value) {
  for (const Node* schema : node.all_of) Check(*schema, value);
  if (!node.any_of.empty()) CheckAnyOf(node, value);
  if (!node.one_of.empty()) CheckOneOf(node, value);
  if (node.not_schema) CheckNot(*node.not_schema, value);
}

// Validates one union branch in place. `match_only` stops at the first issue
// and inserts no defaults; a failed branch's insertions are rolled back.
std::vector<Issue> Walker::TryBranch(const Node& node, Json& value, bool match_only) {
  size_t mark = journal_.size();
  Walker branch(apply_defaults_ && !match_only, match_only ? 1 : kBranchIssueCap, path_, journal_);
  branch.Check(node, value);
  std::vector<Issue> issues = std::move(branch).TakeIssues();
  if (!issues.empty()) Rollback(mark);
  return issues;
}

// Removes the defaults inserted since journal size `mark`, newest first.
void Walker::Rollback(size_t mark) {
  while (journal_.size() > mark) {
    journal_.back().object->erase(journal_.back().member);
    journal_.pop_back();
  }
}

std::string Walker::UnionMessage(std::string_view head, const std::vector<Issue>& closest) const {
  std::string out(head);
  for (size_t i = 0; i < closest.size() && i < kQuotedBranchIssues; ++i) {
    out += i ? "; " : "; closest branch: ";
    out += closest[i].pointer.empty() ? "(root)" : closest[i].pointer;
    out += ": " + TruncateUtf16(closest[i].message, 160);
  }
  if (closest.size() > kQuotedBranchIssues) out += fmt::format(" (+{} more)", closest.size() - kQuotedBranchIssues);
  return out;
}

// Succeeds on the first matching branch, keeping only that branch's defaults.
void Walker::CheckAnyOf(const Node& node, Json& value) {
  std::vector<std::vector<Issue>> failures;
  for (const Node* schema : node.any_of) {
    std::vector<Issue> issues = TryBranch(*schema, value, false);
    if (issues.empty()) return;
    failures.push_back(std::move(issues));
  }
  Add("invalid_union", UnionMessage("must match at least one anyOf schema", Closest(failures)));
}

// Needs exactly one matching branch; its defaults are kept. Branches after
// the first match are only tested for a match.
void Walker::CheckOneOf(const Node& node, Json& value) {
  std::vector<std::vector<Issue>> failures;
  std::optional<size_t> matched;
  size_t mark = journal_.size();
  for (size_t i = 0; i < node.one_of.size(); ++i) {
    std::vector<Issue> issues = TryBranch(*node.one_of[i], value, matched.has_value());
    if (issues.empty() && matched) {
      Rollback(mark);
      return Add("invalid_union",
                 fmt::format("must match exactly one oneOf schema, but matches schemas {} and {}", *matched, i));
    }
    if (issues.empty()) {
      matched = i;
    } else if (!matched) {
      failures.push_back(std::move(issues));
    }
  }
  if (!matched) Add("invalid_union", UnionMessage("must match exactly one oneOf schema", Closest(failures)));
}

// The failed branch to quote: one that accepted the instance's type beats one
// that did not; then the fewest issues; then the earliest.
const std::vector<Issue>& Walker::Closest(const std::vector<std::vector<Issue>>& failures) const {
  std::string here = Pointer();
  auto rank = [&here](const std::vector<Issue>& issues) {
    bool wrong_type = std::any_of(issues.begin(), issues.end(), [&here](const Issue& issue) {
      return issue.pointer == here && issue.code == "invalid_type";
    });
    return std::make_pair(wrong_type, issues.size());
  };
  return *std::min_element(failures.begin(), failures.end(),
                           [&rank](const auto& a, const auto& b) { return rank(a) < rank(b); });
}

void Walker::CheckNot(const Node& node, Json& value) {
  if (TryBranch(node, value, true).empty()) Add("custom", "must not match the schema in not");
}

}  // namespace

// The compiled form: the schema document, its nodes and the root node.
class CompiledSchema {
 public:
  Json schema;
  std::vector<std::unique_ptr<Node>> nodes;
  const Node* root = nullptr;
};

Result<Validator> Validator::Compile(const Json& schema, SchemaResolver resolver) {
  auto compiled = std::make_shared<CompiledSchema>();
  compiled->schema = schema;
  Compiler compiler(std::move(resolver), compiled->nodes);
  TELIC_ASSIGN_OR_RETURN(compiled->root, compiler.CompileAt(Location{&compiled->schema, "", ""}, compiled->schema));
  TELIC_RETURN_IF_ERROR(compiler.Finish());
  return Validator(std::move(compiled));
}

std::vector<Issue> Validator::Validate(Json& instance, const ValidateOptions& options) const {
  std::vector<PathToken> path;
  std::vector<Insertion> journal;
  Walker walker(options.apply_defaults, options.max_issues, path, journal);
  walker.Check(*compiled_->root, instance);
  return std::move(walker).TakeIssues();
}

const Json& Validator::schema() const { return compiled_->schema; }

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string PointerToDottedPath(std::string_view pointer) {
  std::string out;
  if (pointer.empty()) return out;
  size_t start = pointer[0] == '/' ? 1 : 0;
  while (true) {
    size_t end = pointer.find('/', start);
    out += UnescapePointerToken(pointer.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    out += '.';
    start = end + 1;
  }
  return out;
}

}  // namespace telic::schema
