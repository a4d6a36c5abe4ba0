// Splitting and joining '/'-separated paths: shared by target-path
// resolution (policy/path_scope.cc) and glob scopes (policy/path_glob.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace telic::policy::path_segments {

// The parts of `text` between slashes, empty ones included ("a//b" has three).
inline std::vector<std::string_view> SplitSlash(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = text.find('/', start);
    parts.push_back(text.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

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
