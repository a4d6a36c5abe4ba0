#include "base/json_writer.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace telic {
namespace {

// 1 for the bytes a JSON string cannot hold raw (controls, '"', '\\') and
// for every non-ASCII byte (checked as UTF-8 by the slow path).
constexpr bool NeedsCare(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629: no
// overlongs, no surrogates, at most U+10FFFF), or 0 if it is invalid.
size_t Utf8Sequence(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned char c = at(i);
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return at(k) >= lo && at(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

// Writes the escape of `c` (an ASCII byte NeedsCare selects) at `w`, as
// nlohmann writes it; returns the end of what it wrote (at most 6 bytes).
char* WriteEscape(unsigned char c, char* w) {
  static constexpr char kHex[] = "0123456789abcdef";
  *w++ = '\\';
  switch (c) {
    case '"': *w++ = '"'; break;
    case '\\': *w++ = '\\'; break;
    case '\b': *w++ = 'b'; break;
    case '\f': *w++ = 'f'; break;
    case '\n': *w++ = 'n'; break;
    case '\r': *w++ = 'r'; break;
    case '\t': *w++ = 't'; break;
    default:
      *w++ = 'u';
      *w++ = '0';
      *w++ = '0';
      *w++ = kHex[c >> 4];
      *w++ = kHex[c & 0xF];
  }
  return w;
}

#if defined(__SSE2__)
// Copies the 16 bytes at `p` to `w` and returns how many of them, from the
// first, NeedsCare does not select (16 when none). As signed bytes, every
// byte >= 0x80 is negative, so one "less than 0x20" covers controls and
// non-ASCII alike.
size_t PlainPrefix16(const unsigned char* p, char* w) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(w), bytes);
  const __m128i care = _mm_or_si128(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)),
                                    _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                                 _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))));
  const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(care));
  return mask == 0 ? 16 : static_cast<size_t>(__builtin_ctz(mask));
}
#endif

// Resizes `out` to `size` without zero-filling the new bytes (the caller
// writes them before reading, then trims).
void GrowUninitialized(std::string& out, size_t size) {
  out.resize_and_overwrite(size, [](char*, size_t n) { return n; });
}

void Newline(int indent, int depth, std::string& out) {
  out.push_back('\n');
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(depth), ' ');
}

class Writer {
 public:
  Writer(int indent, std::string& out, const WriteOrder* order) : indent_(indent), out_(out), order_(order) {}

  void Value(const Json& value, int context, int depth) {
    switch (value.type()) {
      case Json::value_t::null: out_ += "null"; break;
      case Json::value_t::boolean: out_ += value.get<bool>() ? "true" : "false"; break;
      case Json::value_t::number_integer: Integer(value.get<int64_t>()); break;
      case Json::value_t::number_unsigned: Integer(value.get<uint64_t>()); break;
      case Json::value_t::string: WriteJsonString(value.get_ref<const std::string&>(), out_); break;
      case Json::value_t::array: Array(value, depth); break;
      case Json::value_t::object: Object(value, context, depth); break;
      default:  // floats, binary, discarded: exactly as nlohmann writes them
        out_ += value.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
  }

 private:
  template <typename T>
  void Integer(T number) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, number);
    out_.append(buffer, end);
  }

  void Array(const Json& array, int depth) {
    if (array.empty()) {
      out_ += "[]";
      return;
    }
    out_.push_back('[');
    bool first = true;
    for (const Json& item : array) {
      if (!first) out_.push_back(',');
      first = false;
      if (indent_ >= 0) Newline(indent_, depth + 1, out_);
      Value(item, 0, depth + 1);
    }
    if (indent_ >= 0) Newline(indent_, depth, out_);
    out_.push_back(']');
  }

  void Member(std::string_view key, const Json& value, int context, int depth, bool& first) {
    if (!first) out_.push_back(',');
    first = false;
    if (indent_ >= 0) Newline(indent_, depth + 1, out_);
    WriteJsonString(key, out_);
    out_ += indent_ >= 0 ? ": " : ":";
    if (order_) {
      if (auto text = order_->Precomputed(context, key, value, depth + 1)) {
        const size_t offset = out_.size();
        out_ += *text;
        order_->Placed(offset);
        return;
      }
      Value(value, order_->ChildContext(context, key), depth + 1);
    } else {
      Value(value, 0, depth + 1);
    }
  }

  void Object(const Json& object, int context, int depth) {
    if (object.empty()) {
      out_ += "{}";
      return;
    }
    out_.push_back('{');
    bool first = true;
    std::span<const std::string_view> keys = order_ ? order_->FirstKeys(context) : std::span<const std::string_view>();
    for (std::string_view key : keys) {
      auto it = object.find(std::string(key));
      if (it != object.end()) Member(key, *it, context, depth, first);
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (!keys.empty() && std::find(keys.begin(), keys.end(), std::string_view(it.key())) != keys.end()) continue;
      Member(it.key(), *it, context, depth, first);
    }
    if (indent_ >= 0) Newline(indent_, depth, out_);
    out_.push_back('}');
  }

  int indent_;
  std::string& out_;
  const WriteOrder* order_;
};

}  // namespace

void WriteJsonString(std::string_view text, std::string& out) {
  // Written through a raw pointer, a slice of the input at a time, into room
  // for the slice's worst case (every byte as \u00XX: six bytes), neither
  // zero-filled nor checked per byte, then trimmed. A long string never
  // needs six times its size at once.
  constexpr size_t kSlice = 4096;
  const size_t start = out.size();
  size_t written = start;
  out.resize(written + 1);
  out[written++] = '"';
  const auto* const first = reinterpret_cast<const unsigned char*>(text.data());
  const auto* p = first;
  const auto* const end = p + text.size();
  while (p < end) {
    // A slice ends at kSlice bytes or later, at the end of a UTF-8 sequence.
    const unsigned char* slice_end = end - p > static_cast<std::ptrdiff_t>(kSlice) ? p + kSlice : end;
    GrowUninitialized(out, written + static_cast<size_t>(slice_end - p) * 6 + 4);
    char* w = out.data() + written;
    while (p < slice_end) {
#if defined(__SSE2__)
      if (slice_end - p >= 16) {
        // 16 bytes at a time: all 16 are stored (there is room for 6 bytes
        // per remaining input byte), and the write pointer advances past the
        // ones before the first byte that needs care.
        size_t plain = PlainPrefix16(p, w);
        p += plain;
        w += plain;
        if (plain == 16) continue;
      }
#endif
      unsigned char c = *p;
      if (!NeedsCare(c)) {
        *w++ = static_cast<char>(c);
        ++p;
        continue;
      }
      if (c < 0x80) {
        w = WriteEscape(c, w);
        ++p;
        continue;
      }
      size_t length = Utf8Sequence(text, static_cast<size_t>(p - first));
      if (length == 0) {  // invalid UTF-8: nlohmann's replacement rules decide
        out.resize(start);
        out += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
        return;
      }
      std::memcpy(w, p, length);  // at most 3 bytes past slice_end: the +4 above
      w += length;
      p += length;
    }
    written = static_cast<size_t>(w - out.data());
  }
  out.resize(written + 1);
  out[written] = '"';
}

void WriteJson(const Json& value, int indent, std::string& out, const WriteOrder* order, int context, int depth) {
  Writer(indent, out, order).Value(value, context, depth);
}

}  // namespace telic
