// Fuzzes repository path normalisation and globs (src/policy/path_scope.h).
// Input: "<pattern>\n<other pattern>\n<path>" (missing parts are empty).
// Invariants, each checked against a small independent reference:
//   - a path the engine accepts contains no NUL, control character,
//     backslash, '%', '*', '?', "..", or leading '~', and is valid UTF-8
//     (the reference check would deny it otherwise);
//   - the normal form is relative, has no "." or empty segment, and is a
//     fixed point (normalising it again gives the same text);
//   - a relative input normalises to its segments minus "." and "";
//   - a compiled glob's normal form compiles to the same normal form and
//     matches the same paths;
//   - GlobSubset(a, b) is sound: whatever a matches, b matches;
//   - an allow decision of the engine for a write under the glob agrees
//     with the glob's own match.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "policy/engine.h"
#include "policy/path_scope.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    parts.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

// The reference: what no accepted target may contain.
bool ReferenceDenies(std::string_view input) {
  if (input.empty() || input.front() == '~') return true;
  for (char c : input) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == '\\' || c == '%' || c == '*' || c == '?') return true;
  }
  for (const auto& segment : Split(input, '/')) {
    if (segment == "..") return true;
  }
  return !ValidUtf8(input);
}

std::string LexicalNormal(std::string_view input) {
  std::string out;
  for (const auto& segment : Split(input, '/')) {
    if (segment.empty() || segment == ".") continue;
    if (!out.empty()) out += '/';
    out += segment;
  }
  return out.empty() ? "." : out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace telic::policy;
  std::vector<std::string> parts = Split(std::string_view(reinterpret_cast<const char*>(data), size), '\n');
  parts.resize(3);
  const std::string& pattern = parts[0];
  const std::string& other = parts[1];
  const std::string& input = parts[2];

  RepoRoot root{"/repo", nullptr, {}};
  auto normal = NormalizeRepoPath(input, root);
  if (normal) {
    Check(!ReferenceDenies(input));
    Check(!normal->empty() && normal->front() != '/');
    Check(*normal == "." || (normal->find("//") == std::string::npos && normal->back() != '/'));
    for (const auto& segment : Split(*normal, '/')) Check(*normal == "." || (segment != "." && segment != ".." && !segment.empty()));
    auto again = NormalizeRepoPath(*normal, root);
    Check(again && *again == *normal);
    if (input.front() != '/') Check(*normal == LexicalNormal(input));
    // Case-insensitive matching never accepts what case-sensitive refuses.
    RepoRoot folded{"/repo", nullptr, {true}};
    if (auto ci = NormalizeRepoPath(input, folded)) Check(*ci == *normal);
  }

  auto glob = Glob::Compile(pattern);
  if (glob) {
    auto recompiled = Glob::Compile(glob->text());
    Check(recompiled && recompiled->text() == glob->text());
    if (normal) {
      const bool matches = glob->Matches(*normal);
      Check(recompiled->Matches(*normal) == matches);
      Check(GlobMatches(pattern, *normal) == matches);
      // Folding alone may narrow a negated class ("[!a-j]" refuses 's' once
      // 'S' counts), so on a case-insensitive root a deny entry matches
      // exactly or folded: what it denies case-sensitively stays denied.
      if (matches) {
        Layer denying{"fuzz", {{"repository", {{"write", {"**"}}}}}, {{"repository", {{"write", {pattern}}}}}};
        RepoRoot folded_root{"/repo", nullptr, {true}};
        Check(!Authorize({"repository.write", input, {}, {}}, {denying}, folded_root).allowed);
      }
      // The engine agrees with the glob for an allow entry...
      Layer layer{"fuzz", {{"repository", {{"write", {pattern}}}}}, nullptr};
      Decision decision = Authorize({"repository.write", input, {}, {}}, {layer}, root);
      Check(decision.allowed == (matches || pattern == "**"));
      // ...and a deny entry with the same glob always wins.
      Layer denying{"fuzz", {{"repository", {{"write", {"**"}}}}}, {{"repository", {{"write", {pattern}}}}}};
      Decision denied = Authorize({"repository.write", input, {}, {}}, {denying}, root);
      Check(!(matches && denied.allowed));
    }
    if (auto second = Glob::Compile(other); second && normal && GlobSubset(pattern, other)) {
      if (glob->Matches(*normal)) Check(second->Matches(*normal));
    }
  } else if (normal) {
    // An invalid deny entry denies every target.
    Layer denying{"fuzz", {{"repository", {{"write", {"**"}}}}}, {{"repository", {{"write", {pattern}}}}}};
    Check(!Authorize({"repository.write", input, {}, {}}, {denying}, root).allowed);
  }
  return 0;
}
