#include "cli/jsonc_edit.h"

#include <fmt/format.h>

#include "base/json_parse.h"

namespace telic::cli::jsonc {
namespace {

constexpr size_t kMaxDepth = kMaxJsonDepth;
constexpr size_t kNone = std::string::npos;

struct Entry;

// A value of the text: an object ('{'), array ('['), string ('s') or other scalar ('v').
struct Node {
  char kind = 'v';
  Span span;
  std::vector<Entry> entries;  // members or items
};

struct Entry {
  std::string key;     // members only
  size_t start = 0;    // the key (members) or the value (items)
  Node value;
  size_t comma = kNone;  // the comma after the value, if any
};

std::unexpected<Error> Malformed(size_t offset, const std::string& reason) {
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("not valid JSONC at byte {}: {}", offset, reason));
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The text with its comments blanked, line breaks kept.
Result<std::string> MaskComments(const std::string& text) {
  std::string out = text;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == '"') {
      const size_t open = i++;
      while (i < n && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (i >= n) return Malformed(open, "unterminated string");
      ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      for (; i < n && text[i] != '\n'; ++i) {
        if (text[i] != '\r') out[i] = ' ';
      }
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      const size_t close = text.find("*/", i + 2);
      if (close == kNone) return Malformed(i, "unterminated comment");
      for (; i < close + 2; ++i) {
        if (text[i] != '\n' && text[i] != '\r') out[i] = ' ';
      }
    } else {
      ++i;
    }
  }
  return out;
}

// Reads the structure of comment-masked text.
class Parser {
 public:
  explicit Parser(const std::string& masked) : m_(masked) {}

  Result<Node> Document() {
    SkipSpace();
    TELIC_ASSIGN_OR_RETURN(Node root, Value(0));
    SkipSpace();
    if (pos_ != m_.size()) return Malformed(pos_, "text after the value");
    return root;
  }

 private:
  void SkipSpace() {
    while (pos_ < m_.size() && IsSpace(m_[pos_])) ++pos_;
  }
  bool At(char c) const { return pos_ < m_.size() && m_[pos_] == c; }

  Result<Node> Value(size_t depth) {
    if (depth > kMaxDepth) return Malformed(pos_, "nested too deeply");
    if (pos_ >= m_.size()) return Malformed(pos_, "unexpected end");
    Node node;
    node.span.begin = pos_;
    const char c = m_[pos_];
    if (c == '{' || c == '[') {
      node.kind = c;
      ++pos_;
      TELIC_RETURN_IF_ERROR(Entries(node, depth));
    } else if (c == '"') {
      node.kind = 's';
      TELIC_RETURN_IF_ERROR(String());
    } else {
      while (pos_ < m_.size() && !IsSpace(m_[pos_]) && std::string_view(",]}:{[\"").find(m_[pos_]) == kNone) ++pos_;
      if (pos_ == node.span.begin) return Malformed(pos_, "expected a value");
    }
    node.span.end = pos_;
    return node;
  }

  Status String() {
    const size_t open = pos_++;
    while (pos_ < m_.size() && m_[pos_] != '"') pos_ += m_[pos_] == '\\' ? 2 : 1;
    if (pos_ >= m_.size()) return Malformed(open, "unterminated string");
    ++pos_;
    return Ok();
  }

  Status Entries(Node& node, size_t depth) {
    const char close = node.kind == '{' ? '}' : ']';
    while (true) {
      SkipSpace();
      if (At(close)) {
        ++pos_;
        return Ok();
      }
      Entry entry;
      entry.start = pos_;
      if (node.kind == '{') {
        if (!At('"')) return Malformed(pos_, "expected a key");
        TELIC_RETURN_IF_ERROR(String());
        OrderedJson key = OrderedJson::parse(m_.substr(entry.start, pos_ - entry.start), nullptr, false);
        if (!key.is_string()) return Malformed(entry.start, "invalid key");
        entry.key = key.get<std::string>();
        SkipSpace();
        if (!At(':')) return Malformed(pos_, "expected ':'");
        ++pos_;
        SkipSpace();
      }
      TELIC_ASSIGN_OR_RETURN(entry.value, Value(depth + 1));
      SkipSpace();
      const bool more = At(',');
      if (more) entry.comma = pos_++;
      node.entries.push_back(std::move(entry));
      if (!more) {
        SkipSpace();
        if (!At(close)) return Malformed(pos_, fmt::format("expected ',' or '{}'", close));
      }
    }
  }

  const std::string& m_;
  size_t pos_ = 0;
};

void BlankTrailingCommas(const Node& node, std::string& masked) {
  if (!node.entries.empty() && node.entries.back().comma != kNone) masked[node.entries.back().comma] = ' ';
  for (const Entry& entry : node.entries) BlankTrailingCommas(entry.value, masked);
}

struct Document {
  std::string masked;  // comments and trailing commas blanked
  Node root;
};

Result<Document> Load(const std::string& text) {
  TELIC_ASSIGN_OR_RETURN(std::string masked, MaskComments(text));
  TELIC_ASSIGN_OR_RETURN(Node root, Parser(masked).Document());
  BlankTrailingCommas(root, masked);
  if (!OrderedJson::accept(masked)) return Malformed(0, "not JSON once comments and trailing commas are ignored");
  return Document{std::move(masked), std::move(root)};
}

// The index of the (last, as JSON parsers read duplicates) member named `key`.
size_t MemberIndex(const Node& object, const std::string& key) {
  for (size_t i = object.entries.size(); i > 0; --i) {
    if (object.entries[i - 1].key == key) return i - 1;
  }
  return kNone;
}

std::string Pointer(const std::vector<std::string>& keys, size_t count) {
  std::string pointer;
  for (size_t i = 0; i < count && i < keys.size(); ++i) pointer += "/" + keys[i];
  return pointer;
}

// The node at keys[0..count), objects all the way; nullptr when absent.
Result<const Node*> Walk(const Node& root, const std::vector<std::string>& keys, size_t count) {
  const Node* node = &root;
  for (size_t i = 0; i < count; ++i) {
    if (node->kind != '{') {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} is not an object", Pointer(keys, i)));
    }
    const size_t at = MemberIndex(*node, keys[i]);
    if (at == kNone) return nullptr;
    node = &node->entries[at].value;
  }
  return node;
}

std::string LineBreak(const std::string& text) { return text.find("\r\n") != kNone ? "\r\n" : "\n"; }

size_t LineStart(const std::string& text, size_t pos) {
  while (pos > 0 && text[pos - 1] != '\n') --pos;
  return pos;
}

// The spaces and tabs that start the line holding `pos`.
std::string LineIndent(const std::string& text, size_t pos) {
  const size_t start = LineStart(text, pos);
  size_t end = start;
  while (end < pos && (text[end] == ' ' || text[end] == '\t')) ++end;
  return text.substr(start, end - start);
}

bool OwnLine(const std::string& text, size_t pos) { return LineIndent(text, pos).size() == pos - LineStart(text, pos); }

// How entries of a container are laid out.
struct Layout {
  bool multiline = true;
  std::string indent;  // of an entry's first line
  std::string unit;    // one nesting level
};

Layout LayoutOf(const std::string& text, const Node& node) {
  const std::string outer = LineIndent(text, node.span.begin);
  Layout layout;
  if (!node.entries.empty()) {
    const size_t first = node.entries.front().start;
    layout.multiline = OwnLine(text, first);
    layout.indent = LineIndent(text, first);
  }
  if (node.entries.empty() || !layout.multiline) {
    layout.indent = outer + (outer.find('\t') != kNone ? "\t" : "  ");
  }
  layout.unit = layout.indent.size() > outer.size() && layout.indent.starts_with(outer)
                    ? layout.indent.substr(outer.size())
                    : std::string("  ");
  return layout;
}

// `value` as JSON text continuing at `layout`'s indent.
std::string Render(const OrderedJson& value, const Layout& layout, const std::string& br) {
  if (!layout.multiline) return value.dump();
  const bool uniform = layout.unit.find_first_not_of(layout.unit.front()) == kNone;
  const std::string dumped = uniform ? value.dump(static_cast<int>(layout.unit.size()), layout.unit.front())
                                     : value.dump(2);
  std::string out;
  for (char c : dumped) {
    if (c == '\n') {
      out += br + layout.indent;
    } else {
      out += c;
    }
  }
  return out;
}

std::string EntryText(const Node& container, const std::string& key, const OrderedJson& value, const Layout& layout,
                      const std::string& br) {
  std::string rendered = Render(value, layout, br);
  return container.kind == '{' ? OrderedJson(key).dump() + ": " + rendered : rendered;
}

// Inserts an entry after the container's last one.
std::string InsertEntry(const std::string& text, const Node& node, const std::string& key, const OrderedJson& value) {
  const std::string br = LineBreak(text);
  const Layout layout = LayoutOf(text, node);
  const std::string entry = EntryText(node, key, value, layout, br);
  std::string out = text;
  if (!node.entries.empty()) {
    const size_t after = node.entries.back().value.span.end;
    out.insert(after, (layout.multiline ? "," + br + layout.indent : std::string(", ")) + entry);
    return out;
  }
  const size_t open = node.span.begin + 1;
  const size_t close = node.span.end - 1;
  const bool blank = text.find_first_not_of(" \t\r\n", open) >= close;
  const std::string lead = br + layout.indent + entry;
  if (blank) {
    out.replace(open, close - open, lead + br + LineIndent(text, node.span.begin));
  } else {
    out.insert(open, lead);
  }
  return out;
}

// Removes entry `index` with its separating comma (the inverse of InsertEntry).
std::string RemoveEntry(const std::string& text, const Node& node, size_t index) {
  const Entry& entry = node.entries[index];
  size_t begin = entry.start;
  while (begin > 0 && (text[begin - 1] == ' ' || text[begin - 1] == '\t')) --begin;
  const bool own_line = begin > 0 && text[begin - 1] == '\n';
  if (own_line) {
    --begin;
    if (begin > 0 && text[begin - 1] == '\r') --begin;
  }
  size_t end = entry.value.span.end;
  std::string out = text;
  const bool last = index + 1 == node.entries.size();
  if (index > 0 && (last || entry.comma == kNone)) {
    // The last entry goes with the comma before it (its own, if any, is a
    // trailing one and stays): the inverse of InsertEntry.
    out.erase(begin, end - begin);
    out.erase(node.entries[index - 1].comma, 1);
  } else {
    // A first or middle entry goes with its own comma: the comma before it
    // may sit before a line comment.
    if (entry.comma != kNone) {
      end = entry.comma + 1;
      if (!own_line && index == 0) {
        while (end < out.size() && (out[end] == ' ' || out[end] == '\t')) ++end;
      }
    }
    out.erase(begin, end - begin);
  }
  if (node.entries.size() == 1) {
    // Nothing left but blanks: the container goes back to `{}` / `[]`.
    const size_t open = node.span.begin + 1;
    const size_t close = node.span.end - 1 - (text.size() - out.size());
    if (out.find_first_not_of(" \t\r\n", open) >= close) out.erase(open, close - open);
  }
  return out;
}

Result<const Node*> ContainerAt(const Node& root, const std::vector<std::string>& keys, char kind) {
  TELIC_ASSIGN_OR_RETURN(const Node* node, Walk(root, keys, keys.size()));
  if (node == nullptr || node->kind != kind) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not an {}", Pointer(keys, keys.size()), kind == '[' ? "array" : "object"));
  }
  return node;
}

Status CheckItem(const Node& array, size_t index, const std::vector<std::string>& keys) {
  if (index >= array.entries.size()) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} has no item {}", Pointer(keys, keys.size()), index));
  }
  return Ok();
}

std::string ReplaceSpan(const std::string& text, const Node& container, const Entry& entry, const OrderedJson& value) {
  Layout layout = LayoutOf(text, container);
  layout.indent = LineIndent(text, entry.start);
  std::string out = text;
  out.replace(entry.value.span.begin, entry.value.span.end - entry.value.span.begin,
              Render(value, layout, LineBreak(text)));
  return out;
}

}  // namespace

Result<std::string> Mask(const std::string& text) {
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  return std::move(doc.masked);
}

Result<OrderedJson> Parse(const std::string& text) {
  TELIC_ASSIGN_OR_RETURN(std::string masked, Mask(text));
  auto parsed = ParseOrderedJson(masked, {}, /*comments=*/true);
  if (!parsed) return Malformed(0, "not JSON once comments and trailing commas are ignored: " + parsed.error().message());
  return std::move(*parsed);
}

bool IsJsoncOnly(const std::string& text) { return !OrderedJson::accept(text) && Load(text).has_value(); }

Result<std::optional<Span>> Find(const std::string& text, const std::vector<std::string>& keys) {
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  TELIC_ASSIGN_OR_RETURN(const Node* node, Walk(doc.root, keys, keys.size()));
  if (node == nullptr) return std::optional<Span>();
  return std::optional<Span>(node->span);
}

Result<std::string> SetValue(const std::string& text, const std::vector<std::string>& keys, const OrderedJson& value) {
  if (keys.empty()) return Fail(ErrorCode::kInvalidArgument, "no key to set");
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  const Node* node = &doc.root;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (node->kind != '{') {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} is not an object", Pointer(keys, i)));
    }
    const size_t at = MemberIndex(*node, keys[i]);
    if (at == kNone) {
      OrderedJson nested = value;
      for (size_t j = keys.size() - 1; j > i; --j) nested = OrderedJson{{keys[j], std::move(nested)}};
      return InsertEntry(text, *node, keys[i], nested);
    }
    if (i + 1 == keys.size()) return ReplaceSpan(text, *node, node->entries[at], value);
    node = &node->entries[at].value;
  }
  return text;  // not reached: the loop returns at the last key
}

Result<std::string> AppendItem(const std::string& text, const std::vector<std::string>& keys, const OrderedJson& item) {
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  TELIC_ASSIGN_OR_RETURN(const Node* array, ContainerAt(doc.root, keys, '['));
  return InsertEntry(text, *array, "", item);
}

Result<std::string> ReplaceItem(const std::string& text, const std::vector<std::string>& keys, size_t index,
                                const OrderedJson& item) {
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  TELIC_ASSIGN_OR_RETURN(const Node* array, ContainerAt(doc.root, keys, '['));
  TELIC_RETURN_IF_ERROR(CheckItem(*array, index, keys));
  return ReplaceSpan(text, *array, array->entries[index], item);
}

Result<std::string> RemoveMember(const std::string& text, const std::vector<std::string>& keys) {
  if (keys.empty()) return Fail(ErrorCode::kInvalidArgument, "no key to remove");
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  const std::vector<std::string> parent_keys(keys.begin(), keys.end() - 1);
  TELIC_ASSIGN_OR_RETURN(const Node* parent, ContainerAt(doc.root, parent_keys, '{'));
  const size_t at = MemberIndex(*parent, keys.back());
  if (at == kNone) return Fail(ErrorCode::kNotFound, fmt::format("{} is absent", Pointer(keys, keys.size())));
  return RemoveEntry(text, *parent, at);
}

Result<std::string> RemoveItem(const std::string& text, const std::vector<std::string>& keys, size_t index) {
  TELIC_ASSIGN_OR_RETURN(Document doc, Load(text));
  TELIC_ASSIGN_OR_RETURN(const Node* array, ContainerAt(doc.root, keys, '['));
  TELIC_RETURN_IF_ERROR(CheckItem(*array, index, keys));
  return RemoveEntry(text, *array, index);
}

}  // namespace telic::cli::jsonc
