#include "grounding/paths.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <vector>

#include "base/text.h"

namespace telic::grounding {
namespace {

std::vector<std::string_view> SplitSegments(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      segments.push_back(path.substr(start));
      return segments;
    }
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

std::string CurrentDirectory() {
  char buffer[PATH_MAX];
  if (getcwd(buffer, sizeof buffer) == nullptr) return "/";
  return buffer;
}

}  // namespace

std::string JsLowerCase(std::string_view text) {
  std::string out;
  AppendJsLowerCase(text, out);
  return out;
}

void AppendJsLowerCase(std::string_view text, std::string& out) {
  // Only lead bytes C4 (U+0130) and E2 (U+212A) need more than ASCII folding.
  if (text.find('\xC4') == std::string_view::npos && text.find('\xE2') == std::string_view::npos) {
    const size_t base = out.size();
    out.resize(base + text.size());
    char* dest = out.data() + base;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      dest[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return;
  }
  out.reserve(out.size() + text.size() + 8);
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 'A' && c <= 'Z') {
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else if (c == 0xC4 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xB0) {
      out += "i\xCC\x87";  // U+0130 → U+0069 U+0307
      ++i;
    } else if (c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x84 &&
               static_cast<unsigned char>(text[i + 2]) == 0xAA) {
      out.push_back('k');  // U+212A KELVIN SIGN → k
      i += 2;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
}

bool IsValidUtf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    // Fast path over ASCII, eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t word;
      __builtin_memcpy(&word, s + i, 8);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + length > n) return false;
    if (s[i + 1] < lo || s[i + 1] > hi) return false;
    for (size_t k = 2; k < length; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
    }
    i += length;
  }
  return true;
}

bool Utf16Before(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    // Eight bytes at a time: paths in one folder share long prefixes.
    while (i + 8 <= n) {
      uint64_t x;
      uint64_t y;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) {
        i += static_cast<size_t>(std::countr_zero(x ^ y)) / 8;
        break;
      }
      i += 8;
    }
  }
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size();
  const auto ca = static_cast<unsigned char>(a[i]);
  const auto cb = static_cast<unsigned char>(b[i]);
  // Both differ at a lead byte only when the common prefix ends on a code
  // point boundary (a continuation byte here means the same lead before it,
  // so the same UTF-16 length and byte order). A 4-byte sequence (lead
  // F0-F4) is a surrogate pair in UTF-16 and sorts before U+E000-U+FFFF
  // (leads EE, EF), although its bytes are larger.
  const bool a_continuation = (ca & 0xC0) == 0x80;
  const bool b_continuation = (cb & 0xC0) == 0x80;
  if (!a_continuation && !b_continuation) {
    const bool a_supplementary = ca >= 0xF0 && ca <= 0xF4;
    const bool b_supplementary = cb >= 0xF0 && cb <= 0xF4;
    const bool a_high_bmp = ca == 0xEE || ca == 0xEF;
    const bool b_high_bmp = cb == 0xEE || cb == 0xEF;
    if (a_supplementary && b_high_bmp) return true;
    if (b_supplementary && a_high_bmp) return false;
  }
  return ca < cb;
}

// Nearly every path an index holds, checked in one pass.
bool IsPlainRepositoryPath(std::string_view candidate) {
  if (candidate.empty() || candidate.size() > 1024) return false;
  size_t segment_start = 0;
  for (size_t i = 0; i <= candidate.size(); ++i) {
    if (i == candidate.size() || candidate[i] == '/') {
      std::string_view segment = candidate.substr(segment_start, i - segment_start);
      if (segment.empty() || segment == "." || segment == "..") return false;
      segment_start = i + 1;
      continue;
    }
    auto c = static_cast<unsigned char>(candidate[i]);
    if (c == 0 || c == '\\' || c >= 0x80) return false;
  }
  return true;
}

std::optional<std::string> NormalizeRepositoryPath(std::string_view candidate) {
  if (IsPlainRepositoryPath(candidate)) return std::string(candidate);
  if (candidate.empty() || candidate.find('\0') != std::string_view::npos ||
      candidate.find('\\') != std::string_view::npos || !IsValidUtf8(candidate) ||
      Utf16Length(candidate) > 1024) {
    return std::nullopt;
  }
  if (StartsWith(candidate, "./")) candidate.remove_prefix(2);
  std::string normalized;
  normalized.reserve(candidate.size());
  for (char c : candidate) {
    if (c == '/' && !normalized.empty() && normalized.back() == '/') continue;
    normalized.push_back(c);
  }
  if (normalized.empty() || normalized == "." || normalized.front() == '/') return std::nullopt;
  for (std::string_view segment : SplitSegments(normalized)) {
    if (segment.empty() || segment == "." || segment == "..") return std::nullopt;
  }
  return normalized;
}

bool IsExcludedDirectoryPath(std::string_view repository_path) {
  thread_local std::string lower;  // reused: this runs once per candidate
  lower.clear();
  AppendJsLowerCase(repository_path, lower);
  return IsExcludedDirectoryLowerPath(lower);
}

bool IsExcludedDirectoryLowerPath(std::string_view lower_path) {
  std::string_view rest(lower_path);
  while (true) {
    size_t slash = rest.find('/');
    std::string_view segment = rest.substr(0, slash);
    if (std::find(kExcludedDirectoryNames.begin(), kExcludedDirectoryNames.end(), segment) !=
        kExcludedDirectoryNames.end()) {
      return true;
    }
    if (slash == std::string_view::npos) return false;
    rest.remove_prefix(slash + 1);
  }
}

bool IsInstructionPath(std::string_view repository_path) {
  std::string_view base = Basename(repository_path);
  static constexpr std::array<std::string_view, 7> kNames = {
      ".cursorrules", ".windsurfrules", "AGENTS.md", "CLAUDE.md", "CODEX.md", "GEMINI.md", "copilot-instructions.md"};
  if (std::find(kNames.begin(), kNames.end(), base) != kNames.end()) return true;
  if (repository_path.empty() || repository_path.front() != '.') return false;
  // The longest prefix is 21 characters; a KELVIN SIGN or U+0130 in it
  // lower-cases to one or two bytes, so 3 × 21 bytes cover it.
  std::string lower = JsLowerCase(repository_path.substr(0, std::min<size_t>(repository_path.size(), 63)));
  return StartsWith(lower, ".roo/rules/") || StartsWith(lower, ".cursor/rules/") ||
         StartsWith(lower, ".agents/rules/") || StartsWith(lower, ".github/instructions/");
}

std::string InstructionScope(std::string_view repository_path) {
  size_t slash = repository_path.rfind('/');
  return slash == std::string_view::npos ? std::string(".") : std::string(repository_path.substr(0, slash));
}

std::string LexicalAbsolute(std::string_view path) {
  std::string joined;
  if (path.empty() || path.front() != '/') {
    joined = CurrentDirectory();
    joined.push_back('/');
  }
  joined.append(path);
  std::vector<std::string_view> kept;
  for (std::string_view segment : SplitSegments(joined)) {
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") {
      if (!kept.empty()) kept.pop_back();
      continue;
    }
    kept.push_back(segment);
  }
  std::string out;
  for (std::string_view segment : kept) {
    out.push_back('/');
    out.append(segment);
  }
  return out.empty() ? std::string("/") : out;
}

bool IsPathContained(std::string_view root, std::string_view target) {
  if (root == "/") return !target.empty() && target.front() == '/';
  if (target == root) return true;
  return target.size() > root.size() && StartsWith(target, root) && target[root.size()] == '/';
}

std::string RelativeTo(std::string_view root, std::string_view target) {
  if (target == root) return "";
  if (root == "/") return std::string(target.substr(1));
  return std::string(target.substr(root.size() + 1));
}

std::string EncodeUriComponent(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.' || c == '!' || c == '~' || c == '*' || c == '\'' || c == '(' || c == ')';
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::string MakeRepoRef(std::string_view repository_path) {
  std::string ref = "repo://";
  bool first = true;
  for (std::string_view segment : SplitSegments(repository_path)) {
    if (!first) ref.push_back('/');
    first = false;
    ref += EncodeUriComponent(segment);
  }
  return ref;
}

bool IsProbablyBinary(std::string_view prefix) {
  if (prefix.empty()) return false;
  size_t suspicious = 0;
  for (char ch : prefix) {
    auto c = static_cast<unsigned char>(ch);
    if (c == 0) return true;
    if (c < 9 || (c > 13 && c < 32)) ++suspicious;
  }
  // suspicious / length > 0.1, in integers.
  return suspicious * 10 > prefix.size();
}

std::optional<std::string> RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  free(resolved);
  return out;
}

}  // namespace telic::grounding
