#include "cli/suggest.h"

#include <algorithm>
#include <limits>

namespace telic::cli {
namespace {

constexpr size_t kMaxSuggestions = 3;
constexpr size_t kMaxDistance = 3;
constexpr size_t kMinPrefix = 2;

// The largest distance still counted as a slip for words this long.
size_t Tolerance(std::string_view word, std::string_view name) {
  size_t longer = std::max(word.size(), name.size());
  return std::clamp<size_t>(longer / 3, 1, kMaxDistance);
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between a's first i and b's first j bytes.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> Suggestions(std::string_view word, std::span<const std::string> known) {
  std::vector<std::string> closest;
  size_t best = std::numeric_limits<size_t>::max();
  for (const std::string& name : known) {
    size_t distance = EditDistance(word, name);
    if (distance == 0 || distance > Tolerance(word, name)) continue;
    if (distance < best) {
      best = distance;
      closest.clear();
    }
    if (distance == best) closest.push_back(name);
  }
  if (closest.empty() && word.size() >= kMinPrefix) {
    for (const std::string& name : known) {
      if (name.size() > word.size() && name.starts_with(word)) closest.push_back(name);
    }
  }
  if (closest.size() > kMaxSuggestions) closest.resize(kMaxSuggestions);
  return closest;
}

std::string DidYouMean(const std::vector<std::string>& suggestions) {
  if (suggestions.empty()) return "";
  std::string out = "; did you mean ";
  for (size_t i = 0; i < suggestions.size(); ++i) {
    if (i > 0) out += i + 1 == suggestions.size() ? " or " : ", ";
    out += "'" + suggestions[i] + "'";
  }
  return out + "?";
}

}  // namespace telic::cli
