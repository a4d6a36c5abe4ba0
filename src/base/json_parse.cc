#include "base/json_parse.h"

#include <iterator>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/text.h"

namespace telic {
namespace {

// An input iterator over the text that publishes how far the lexer has read,
// so errors found in SAX callbacks (duplicate keys, depth) can name an offset.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char** cursor) : p_(p), cursor_(cursor) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    *cursor_ = ++p_;
    return *this;
  }
  bool operator==(const CountingIterator& other) const { return p_ == other.p_; }
  bool operator!=(const CountingIterator& other) const { return p_ != other.p_; }

 private:
  const char* p_;
  const char** cursor_;
};

// The reason part of a nlohmann parse_error: without the "[json.exception…]
// parse error at line L, column C: " prefix and without the echoed token
// ("; last read: '…'"), which can be as long as the input.
std::string ParseErrorReason(const std::string& what) {
  std::string reason = what;
  auto colon = reason.find(": ");
  if (reason.rfind("[json.exception", 0) == 0 && colon != std::string::npos) reason = reason.substr(colon + 2);
  auto last_read = reason.find("; last read: '");
  if (last_read != std::string::npos) {
    auto end = reason.rfind("'");
    std::string tail = end != std::string::npos && end > last_read + 13 ? reason.substr(end + 1) : std::string();
    reason = reason.substr(0, last_read) + tail;
  }
  return TruncateUtf16(reason, 200);
}

// Builds a Json value while enforcing duplicate-key and depth limits.
class StrictBuilder : public nlohmann::json_sax<Json> {
 public:
  StrictBuilder(size_t max_depth, const char* begin, const char** cursor)
      : max_depth_(max_depth), begin_(begin), cursor_(cursor) {}

  bool null() override { return Put(Json(nullptr)); }
  bool boolean(bool v) override { return Put(Json(v)); }
  bool number_integer(number_integer_t v) override { return Put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Put(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Put(Json(v)); }
  bool string(string_t& v) override { return Put(Json(std::move(v))); }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool key(string_t& k) override {
    Json& object = *stack_.back();
    if (object.contains(k)) {
      return Fail(fmt::format("duplicate object key \"{}\" in the object at {}", TruncateUtf16(k, 64), Pointer()));
    }
    pending_key_ = std::move(k);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    error_ = fmt::format("invalid JSON at byte {}: {}", position > 0 ? position - 1 : 0, ParseErrorReason(ex.what()));
    return false;
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  size_t Offset() const { return static_cast<size_t>(*cursor_ - begin_); }
  // The JSON pointer of the container being built (at most 256 characters).
  std::string Pointer() const {
    std::string pointer;
    for (const std::string& token : path_) pointer += "/" + token;
    return pointer.empty() ? std::string("\"\" (the root)") : TruncateUtf16(pointer, 256);
  }
  bool Fail(std::string message) {
    error_ = fmt::format("invalid JSON at byte {}: {}", Offset(), message);
    return false;
  }
  std::string ChildToken() const {
    if (stack_.empty()) return {};
    const Json& parent = *stack_.back();
    if (parent.is_array()) return std::to_string(parent.size());
    std::string escaped;
    for (char c : pending_key_) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return escaped;
  }
  Json* Insert(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    Json& slot = parent[pending_key_];
    slot = std::move(value);
    return &slot;
  }
  bool Put(Json value) {
    Insert(std::move(value));
    return true;
  }
  bool Open(Json container) {
    if (stack_.size() >= max_depth_) {  // named at its opening bracket, the last byte read
      error_ = fmt::format("invalid JSON at byte {}: nesting exceeds depth {} at {}", Offset() > 0 ? Offset() - 1 : 0,
                           max_depth_, Pointer());
      return false;
    }
    std::string token = ChildToken();
    if (!stack_.empty()) path_.push_back(std::move(token));
    stack_.push_back(Insert(std::move(container)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    if (!path_.empty() && path_.size() >= stack_.size()) path_.pop_back();
    return true;
  }

  size_t max_depth_;
  const char* begin_;
  const char** cursor_;
  Json root_;
  std::vector<Json*> stack_;
  std::vector<std::string> path_;  // tokens of the open containers below the root
  std::string pending_key_;
  std::string error_;
};

Status CheckRawBytes(std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") {
    return Fail(ErrorCode::kInvalidArgument, "invalid JSON at byte 0: a byte order mark is not JSON");
  }
  auto nul = text.find('\0');
  if (nul != std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("invalid JSON at byte {}: raw NUL byte", nul));
  }
  return Ok();
}

Status CheckSize(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return Ok();
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("JSON input of {} bytes exceeds the {} byte limit", text.size(), max_bytes));
}

// The index just past the comment that starts at `i` ("//" or "/*"), or `i`
// when none starts there.
size_t SkipComment(std::string_view text, size_t i) {
  if (i + 1 >= text.size() || text[i] != '/') return i;
  if (text[i + 1] == '/') {
    size_t end = text.find('\n', i + 2);
    return end == std::string_view::npos ? text.size() : end;
  }
  if (text[i + 1] == '*') {
    size_t end = text.find("*/", i + 2);
    return end == std::string_view::npos ? text.size() : end + 2;
  }
  return i;
}

}  // namespace

Result<Json> ParseJsonStrict(std::string_view text, const ParseLimits& limits) {
  TELIC_RETURN_IF_ERROR(CheckSize(text, limits.max_bytes));
  TELIC_RETURN_IF_ERROR(CheckRawBytes(text));
  const char* cursor = text.data();
  StrictBuilder builder(limits.max_depth, text.data(), &cursor);
  CountingIterator first(text.data(), &cursor), last(text.data() + text.size(), &cursor);
  bool ok = Json::sax_parse(first, last, &builder, nlohmann::detail::input_format_t::json, true);
  if (!ok) {
    return Fail(ErrorCode::kInvalidArgument, builder.error().empty() ? std::string("invalid JSON") : builder.error());
  }
  return std::move(builder.root());
}

Result<Json> ParseStoredJson(std::string_view text) {
  auto parsed = ParseJsonStrict(text, ParseLimits{kMaxStoredJsonBytes, kMaxJsonDepth});
  if (!parsed) return Fail(ErrorCode::kDataLoss, "stored " + parsed.error().message());
  return parsed;
}

Json StoredJsonOrThrow(std::string_view text) {
  auto parsed = ParseStoredJson(text);
  if (!parsed) throw std::runtime_error(parsed.error().message());
  return std::move(*parsed);
}

Status CheckJsonDepth(std::string_view text, size_t max_depth, bool comments) {
  size_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("invalid JSON at byte {}: nesting exceeds depth {}", i, max_depth));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (comments && c == '/') {
      size_t end = SkipComment(text, i);
      if (end != i) i = end - 1;
    }
  }
  return Ok();
}

Result<OrderedJson> ParseOrderedJson(std::string_view text, const ParseLimits& limits, bool comments) {
  TELIC_RETURN_IF_ERROR(CheckSize(text, limits.max_bytes));
  TELIC_RETURN_IF_ERROR(CheckJsonDepth(text, limits.max_depth, comments));
  try {
    return OrderedJson::parse(text.begin(), text.end(), nullptr, true, comments);
  } catch (const nlohmann::json::parse_error& ex) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("invalid JSON at byte {}: {}", ex.byte > 0 ? ex.byte - 1 : 0,
                                                         ParseErrorReason(ex.what())));
  }
}

}  // namespace telic
