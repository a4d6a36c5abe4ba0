#include "base/canonical_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

namespace telic {
namespace {

// Decodes the next UTF-8 code point; input is valid UTF-8 (nlohmann validates it).
char32_t NextCodePoint(std::string_view s, size_t& i) {
  auto byte = static_cast<unsigned char>(s[i]);
  if (byte < 0x80) {
    ++i;
    return byte;
  }
  int extra = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : 1;
  char32_t cp = byte & (0x3F >> extra);
  ++i;
  for (int k = 0; k < extra && i < s.size(); ++k, ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  }
  return cp;
}

void AppendUtf16Units(char32_t cp, std::vector<char16_t>& out) {
  if (cp >= 0x10000) {
    cp -= 0x10000;
    out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
    out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
  } else {
    out.push_back(static_cast<char16_t>(cp));
  }
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace

bool Utf16Less(std::string_view a, std::string_view b) {
  if (IsAscii(a) && IsAscii(b)) return a < b;
  std::vector<char16_t> ua, ub;
  for (size_t i = 0; i < a.size();) AppendUtf16Units(NextCodePoint(a, i), ua);
  for (size_t i = 0; i < b.size();) AppendUtf16Units(NextCodePoint(b, i), ub);
  return std::lexicographical_compare(ua.begin(), ua.end(), ub.begin(), ub.end());
}

void AppendJsonString(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t plain = 0;  // start of the run of bytes not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0x20 && u != '"' && u != '\\') continue;  // raw, appended with its run
    out.append(text, plain, i - plain);
    plain = i + 1;
    switch (u) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[u >> 4]);
        out.push_back(kHex[u & 0xF]);
    }
  }
  out.append(text, plain, text.size() - plain);
  out.push_back('"');
}

std::string FormatJsNumber(double value) {
  if (value == 0) return "0";  // also -0
  if (!std::isfinite(value)) return "null";  // as JSON.stringify writes NaN and Infinity
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  std::string result;
  if (sci.front() == '-') {
    result.push_back('-');
    sci.remove_prefix(1);
  }
  size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  int k = static_cast<int>(digits.size());
  int n = exponent + 1;
  if (k <= n && n <= 21) {
    result += digits;
    result.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    result += digits.substr(0, static_cast<size_t>(n));
    result.push_back('.');
    result += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    result += "0.";
    result.append(static_cast<size_t>(-n), '0');
    result += digits;
  } else {
    result.push_back(digits[0]);
    if (k > 1) {
      result.push_back('.');
      result += digits.substr(1);
    }
    result.push_back('e');
    result.push_back(n - 1 >= 0 ? '+' : '-');
    result += std::to_string(std::abs(n - 1));
  }
  return result;
}

void AppendCanonicalJson(const Json& value, std::string& out) {
  switch (value.type()) {
    case Json::value_t::null: out += "null"; break;
    case Json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; break;
    case Json::value_t::number_integer: out += std::to_string(value.get<int64_t>()); break;
    case Json::value_t::number_unsigned: out += std::to_string(value.get<uint64_t>()); break;
    case Json::value_t::number_float: out += FormatJsNumber(value.get<double>()); break;
    case Json::value_t::string: AppendJsonString(value.get_ref<const std::string&>(), out); break;
    case Json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : value) {
        if (!first) out.push_back(',');
        first = false;
        AppendCanonicalJson(item, out);
      }
      out.push_back(']');
      break;
    }
    case Json::value_t::object: {
      using Member = std::pair<const std::string*, const Json*>;
      std::vector<Member> members;
      members.reserve(value.size());
      for (auto it = value.begin(); it != value.end(); ++it) members.emplace_back(&it.key(), &it.value());
      // nlohmann keeps keys in byte order, which equals UTF-16 order unless
      // keys mix astral and U+E000..U+FFFF characters; sort to be exact
      // (keys are unique, so the order is total).
      auto less = [](const Member& a, const Member& b) { return Utf16Less(*a.first, *b.first); };
      if (!std::is_sorted(members.begin(), members.end(), less)) std::sort(members.begin(), members.end(), less);
      out.push_back('{');
      bool first = true;
      for (const auto& [key, member] : members) {
        if (!first) out.push_back(',');
        first = false;
        AppendJsonString(*key, out);
        out.push_back(':');
        AppendCanonicalJson(*member, out);
      }
      out.push_back('}');
      break;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded: out += "null"; break;
  }
}

std::string CanonicalJson(const Json& value) {
  std::string out;
  AppendCanonicalJson(value, out);
  return out;
}

}  // namespace telic
