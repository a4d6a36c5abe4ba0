// Splitting and joining '/'-separated paths: shared by target-path
// resolution (policy/path_scope.cc) and glob scopes (policy/path_glob.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace telic::policy::path_segments {

// The parts of `text` between `separator`s, empty ones included ("a//b"
// split on '/' has three).
inline std::vector<std::string_view> SplitOn(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

// The parts of `text` between slashes, empty ones included.
inline std::vector<std::string_view> SplitSlash(std::string_view text) { return SplitOn(text, '/'); }

// `segments` from index `from` on, joined with '/'.
inline std::string JoinSegments(const std::vector<std::string>& segments, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < segments.size(); ++i) {
    if (!out.empty()) out += '/';
    out += segments[i];
  }
  return out;
}

}  // namespace telic::policy::path_segments
