#include "cli/config_limits.h"

#include <fmt/format.h>

#include "cli/jsonc_edit.h"

namespace telic::cli {
namespace {

std::unexpected<Error> TooDeep(const std::string& shown, size_t offset, const std::string& what) {
  return Fail(ErrorCode::kFailedPrecondition,
              fmt::format("{}: {} at byte {}; telic will not read or rewrite it", shown, what, offset));
}

Status CheckSize(const std::string& text, const std::string& shown) {
  if (text.size() <= kMaxConfigBytes) return Ok();
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} is larger than {} bytes; telic will not read or rewrite it",
                                                          shown, kMaxConfigBytes));
}

// The offset just past the string that opens at `at` (`quote` repeated
// `width` times; `escapes` for JSON and TOML basic strings), or text.size().
size_t SkipString(const std::string& text, size_t at, char quote, size_t width, bool escapes) {
  size_t i = at + width;
  while (i < text.size()) {
    if (escapes && text[i] == '\\') {
      i += 2;
      continue;
    }
    if (text.compare(i, width, std::string(width, quote)) == 0) return i + width;
    if (width == 1 && text[i] == '\n') return i;  // a one-line string ends at the line (the parser reports it)
    ++i;
  }
  return text.size();
}

bool IsBareKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

bool IsBlank(const std::string& bytes) { return bytes.find_first_not_of(" \t\r\n") == std::string::npos; }

Status CheckJsonBounds(const std::string& text, const std::string& shown) {
  TELIC_RETURN_IF_ERROR(CheckSize(text, shown));
  size_t depth = 0;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = SkipString(text, i, '"', 1, true);
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      i = text.find("*/", i + 2);
      if (i == std::string::npos) break;
      i += 2;
    } else {
      if (c == '[' || c == '{') {
        if (++depth > kMaxConfigDepth) return TooDeep(shown, i, fmt::format("nested deeper than {} levels", kMaxConfigDepth));
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
      ++i;
    }
  }
  return Ok();
}

Status CheckTomlBounds(const std::string& text, const std::string& shown) {
  TELIC_RETURN_IF_ERROR(CheckSize(text, shown));
  // toml++ 3.3 reaches undefined behaviour (TOML_UNREACHABLE in its unicode
  // whitespace table) on some non-ASCII characters, found by
  // jsonc_config_fuzz: a TOML config telic parses must be ASCII.
  for (size_t i = 0; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("{}: a non-ASCII byte at byte {}; telic reads only ASCII TOML configs "
                              "(add the telic block by hand, docs/HOSTS.md)", shown, i));
    }
  }
  size_t depth = 0;
  size_t dots = 0;  // dots of the dotted key being read (reset by anything that is not part of a key)
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const size_t width = text.compare(i, 3, std::string(3, c)) == 0 ? 3 : 1;
      i = SkipString(text, i, c, width, c == '"');
      if (width == 3) dots = 0;  // a multi-line string is never a key
      continue;
    }
    if (c == '#') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (c == '.') {
      if (++dots > kMaxTomlKeyDots) {
        return TooDeep(shown, i, fmt::format("a dotted key of more than {} dots", kMaxTomlKeyDots));
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxConfigDepth) return TooDeep(shown, i, fmt::format("nested deeper than {} levels", kMaxConfigDepth));
      dots = 0;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
      dots = 0;
    } else if (!IsBareKeyChar(c) && c != ' ' && c != '\t') {
      dots = 0;
    }
    ++i;
  }
  return Ok();
}

Result<OrderedJson> ParseConfig(const std::string& bytes, const std::string& shown) {
  if (IsBlank(bytes)) return OrderedJson::object();
  TELIC_RETURN_IF_ERROR(CheckJsonBounds(bytes, shown));
  OrderedJson parsed = OrderedJson::parse(bytes, nullptr, false);
  if (parsed.is_discarded()) {
    auto lenient = jsonc::Parse(bytes);
    if (!lenient) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("{} is not valid JSON ({}); telic will not rewrite it", shown, lenient.error().message()));
    }
    parsed = std::move(*lenient);
  }
  if (!parsed.is_object()) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not a JSON object; telic will not rewrite it", shown));
  }
  return parsed;
}

}  // namespace telic::cli
