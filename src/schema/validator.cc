#include "schema/validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>

#include "base/ids.h"
#include "base/text.h"
#include "schema/compiled_node.h"
#include "schema/schema_compiler.h"

namespace telic::schema::internal {
namespace {

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
}  // namespace telic::schema::internal

namespace telic::schema {

Result<Validator> Validator::Compile(const Json& schema, SchemaResolver resolver) {
  TELIC_ASSIGN_OR_RETURN(std::shared_ptr<CompiledSchema> compiled, internal::CompileSchema(schema, std::move(resolver)));
  return Validator(std::move(compiled));
}

std::vector<Issue> Validator::Validate(Json& instance, const ValidateOptions& options) const {
  std::vector<internal::PathToken> path;
  std::vector<internal::Insertion> journal;
  internal::Walker walker(options.apply_defaults, options.max_issues, path, journal);
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
    out += internal::UnescapePointerToken(pointer.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    out += '.';
    start = end + 1;
  }
  return out;
}

}  // namespace telic::schema
