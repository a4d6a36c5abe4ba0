// "Did you mean ...?" for words the CLI does not know: the known names
// closest to a misspelt one by edit distance.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace telic::cli {

// The optimal string alignment distance between `a` and `b` (insertions,
// deletions, substitutions and swaps of two neighbouring bytes, each 1).
size_t EditDistance(std::string_view a, std::string_view b);

// The names of `known` a user typing `word` most likely meant: those at the
// smallest edit distance when it is at most a third of the longer word
// (at least 1, at most 3), else those `word` is a prefix of (2 bytes at
// least); in `known`'s order, at most 3. Empty when nothing is close.
std::vector<std::string> Suggestions(std::string_view word, std::span<const std::string> known);

// "; did you mean 'show'?" / "; did you mean 'a' or 'b'?" / "" for none.
std::string DidYouMean(const std::vector<std::string>& suggestions);

}  // namespace telic::cli
