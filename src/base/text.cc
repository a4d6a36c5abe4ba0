#include "base/text.h"

#include <algorithm>

namespace telic {
namespace {

// Byte length of the UTF-8 sequence starting with `lead`. Bytes that cannot
// start a sequence (continuations, 0xF8-0xFF) count as one byte, so every
// helper here is safe on arbitrary bytes, not only valid UTF-8.
size_t SequenceLength(unsigned char lead) {
  if (lead < 0xC0 || lead >= 0xF8) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  return 2;
}

// SequenceLength clamped to the bytes left from position `i`.
size_t LengthAt(std::string_view s, size_t i) {
  return std::min(SequenceLength(static_cast<unsigned char>(s[i])), s.size() - i);
}

// Decodes one code point at s[i] and its byte length (clamped to the input).
char32_t DecodeAt(std::string_view s, size_t i, size_t& length) {
  auto lead = static_cast<unsigned char>(s[i]);
  length = LengthAt(s, i);
  if (length == 1) return lead;
  char32_t cp = lead & (0x7F >> length);
  for (size_t k = 1; k < length && i + k < s.size(); ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  return cp;
}

bool IsJsWhitespace(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace

size_t Utf16Length(std::string_view utf8) {
  size_t units = 0;
  for (size_t i = 0; i < utf8.size();) {
    size_t length = LengthAt(utf8, i);
    units += length == 4 ? 2 : 1;
    i += length;
  }
  return units;
}

bool HasNonWhitespace(std::string_view utf8) { return !TrimJs(utf8).empty(); }

std::string CollapseLineBreaks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_run = false;
  for (char c : text) {
    if (c == '\r' || c == '\n' || c == '\t') {
      if (!in_run) out.push_back(' ');
      in_run = true;
    } else {
      out.push_back(c);
      in_run = false;
    }
  }
  return out;
}

std::string TruncateUtf16(std::string_view utf8, size_t max_units) {
  size_t units = 0;
  size_t i = 0;
  while (i < utf8.size()) {
    size_t length = LengthAt(utf8, i);
    size_t add = length == 4 ? 2 : 1;
    if (units + add > max_units) break;
    units += add;
    i += length;
  }
  return std::string(utf8.substr(0, std::min(i, utf8.size())));
}

std::string_view TrimJs(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t length;
    if (!IsJsWhitespace(DecodeAt(text, begin, length))) break;
    begin += length;
  }
  size_t end = text.size();
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    size_t length;
    if (!IsJsWhitespace(DecodeAt(text, start, length))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

std::string LowerHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * bytes.size(), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    hex[2 * i] = kDigits[byte >> 4];
    hex[2 * i + 1] = kDigits[byte & 0xF];
  }
  return hex;
}

std::string CleanMessage(std::string_view text, size_t max_units) {
  return TruncateUtf16(CollapseLineBreaks(text), max_units);
}

}  // namespace telic
