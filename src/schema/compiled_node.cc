#include "schema/compiled_node.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace telic::schema::internal {
namespace {

constexpr std::pair<std::string_view, uint8_t> kTypeNames[] = {
    {"string", kString}, {"number", kNumber}, {"integer", kInteger}, {"boolean", kBoolean},
    {"object", kObject}, {"array", kArray},   {"null", kNull},
};

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

}  // namespace

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

// The wire's date-time grammar: YYYY-MM-DDTHH:MM[:SS[.f+]](Z|±HH:MM).
bool IsDateTime(std::string_view s) {
  size_t pos = 0;
  return ReadDate(s, pos) && Expect(s, pos, 'T') && ReadHourMinute(s, pos) && ReadSeconds(s, pos) && ReadOffset(s, pos);
}

Pattern::~Pattern() { pcre2_code_free(code_); }

std::expected<std::unique_ptr<Pattern>, std::string> Pattern::Compile(const std::string& source) {
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

MatchResult Pattern::Match(std::string_view subject) const {
  int rc = Run(subject, 0);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) rc = Run(subject, PCRE2_NO_JIT);
  if (rc >= 0) return MatchResult::kMatch;
  return rc == PCRE2_ERROR_NOMATCH ? MatchResult::kNoMatch : MatchResult::kLimit;
}

int Pattern::Run(std::string_view subject, uint32_t options) const {
  return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, options,
                     ThreadMatchData::Get(), MatchLimits::Get());
}

std::string Pattern::ErrorText(int error) {
  PCRE2_UCHAR buffer[256];
  int length = pcre2_get_error_message(error, buffer, sizeof buffer);
  return length < 0 ? "invalid pattern" : std::string(reinterpret_cast<char*>(buffer), length);
}

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

}  // namespace telic::schema::internal
