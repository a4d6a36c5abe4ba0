// Glob scopes (policy/path_scope.h, class Glob): compiling a pattern into
// segments of tokens, matching a normalised path, and the subset reasoning
// GlobSubset answers with.
#include <algorithm>
#include <string>
#include <vector>

#include "policy/path_scope.h"
#include "policy/path_segments.h"
#include "policy/utf8_scan.h"

namespace telic::policy {
namespace {

using glob_detail::CharClass;
using glob_detail::Segment;
using glob_detail::Token;
using path_segments::JoinSegments;
using path_segments::SplitSlash;

constexpr size_t kMaxPatternBytes = 4096;

std::unexpected<Error> BadPattern(std::string_view pattern, std::string reason) {
  return Fail(ErrorCode::kInvalidArgument, "invalid glob '" + std::string(pattern) + "': " + reason);
}

char FoldAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

CharClass AnyCharacter() {
  CharClass set;
  set.ascii.set();
  set.ascii.reset('/');
  set.folded = set.ascii;
  set.non_ascii = true;
  return set;
}

Result<size_t> ParseClass(std::string_view pattern, std::string_view segment, size_t open, CharClass& set) {
  size_t j = open + 1;
  bool negate = false;
  if (j < segment.size() && (segment[j] == '!' || segment[j] == '^')) {
    negate = true;
    ++j;
  }
  bool first = true;
  while (true) {
    if (j >= segment.size()) return BadPattern(pattern, "unterminated '[' class");
    char c = segment[j];
    if (c == ']' && !first) break;
    if (c == '[' && j + 1 < segment.size() &&
        (segment[j + 1] == ':' || segment[j + 1] == '.' || segment[j + 1] == '=')) {
      return BadPattern(pattern, "POSIX character classes are not supported");
    }
    if (static_cast<unsigned char>(c) >= 0x80) return BadPattern(pattern, "non-ASCII character inside a class");
    unsigned char lo = static_cast<unsigned char>(c);
    ++j;
    if (j + 1 < segment.size() && segment[j] == '-' && segment[j + 1] != ']') {
      auto hi = static_cast<unsigned char>(segment[j + 1]);
      if (hi >= 0x80) return BadPattern(pattern, "non-ASCII character inside a class");
      if (hi < lo) return BadPattern(pattern, "reversed range in a class");
      for (unsigned v = lo; v <= hi; ++v) set.ascii.set(v);
      j += 2;
    } else {
      set.ascii.set(lo);
    }
    first = false;
  }
  // Folding like fnmatch's FNM_CASEFOLD: a character is in the class when
  // it or its other case is listed, then the negation applies.
  for (unsigned c = 0; c < 128; ++c) {
    char lower = FoldAscii(static_cast<char>(c));
    char upper = (lower >= 'a' && lower <= 'z') ? static_cast<char>(lower - 'a' + 'A') : lower;
    set.folded[c] = set.ascii.test(static_cast<unsigned char>(lower)) ||
                    set.ascii.test(static_cast<unsigned char>(upper));
  }
  if (negate) {
    set.ascii.flip();
    set.folded.flip();
    set.non_ascii = true;
  }
  set.ascii.reset('/');
  set.folded.reset('/');
  return j + 1;
}

Result<Segment> ParseSegment(std::string_view pattern, std::string_view text) {
  Segment segment;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '*') {
      if (segment.tokens.empty() || segment.tokens.back().kind != Token::Kind::kStar) {
        segment.tokens.push_back(Token{Token::Kind::kStar, {}, {}});
      }
      ++i;
    } else if (c == '?') {
      segment.tokens.push_back(Token{Token::Kind::kClass, {}, AnyCharacter()});
      ++i;
    } else if (c == '[') {
      Token token{Token::Kind::kClass, {}, {}};
      TELIC_ASSIGN_OR_RETURN(i, ParseClass(pattern, text, i, token.set));
      segment.tokens.push_back(std::move(token));
    } else {
      char32_t cp;
      size_t length;
      DecodeUtf8At(text, i, cp, length);  // validated before
      segment.tokens.push_back(Token{Token::Kind::kLiteral, std::string(text.substr(i, length)), {}});
      i += length;
    }
  }
  return segment;
}

// Does one token match the code point of `s` at `p`? Sets its byte length.
bool TokenMatches(const Token& token, std::string_view s, size_t p, bool fold, size_t& length) {
  const auto byte = static_cast<unsigned char>(s[p]);
  if (byte < 0x80) {  // ASCII: no decoding needed
    length = 1;
    if (token.kind == Token::Kind::kLiteral) {
      if (token.literal.size() != 1) return false;
      return fold ? FoldAscii(token.literal[0]) == FoldAscii(s[p]) : token.literal[0] == s[p];
    }
    return fold ? token.set.folded.test(byte) : token.set.ascii.test(byte);
  }
  char32_t cp;
  if (!DecodeUtf8At(s, p, cp, length)) return false;
  if (token.kind == Token::Kind::kLiteral) {
    if (token.literal.size() != length) return false;
    if (length == 1 && fold) return FoldAscii(token.literal[0]) == FoldAscii(s[p]);
    return s.compare(p, length, token.literal) == 0;
  }
  if (cp >= 0x80) return token.set.non_ascii;
  return fold ? token.set.folded.test(cp) : token.set.ascii.test(cp);
}

size_t CodePointLength(std::string_view s, size_t p) {
  char32_t cp;
  size_t length;
  return DecodeUtf8At(s, p, cp, length) ? length : 1;
}

// Wildcard matching with last-star backtracking: every non-star token
// consumes exactly one code point, so this is exact and O(tokens * bytes).
bool SegmentMatches(const std::vector<Token>& tokens, std::string_view s, bool fold) {
  size_t t = 0, p = 0;
  size_t star_t = std::string_view::npos, star_p = 0;
  while (p < s.size()) {
    size_t length = 0;
    if (t < tokens.size() && tokens[t].kind != Token::Kind::kStar && TokenMatches(tokens[t], s, p, fold, length)) {
      ++t;
      p += length;
    } else if (t < tokens.size() && tokens[t].kind == Token::Kind::kStar) {
      star_t = t++;
      star_p = p;
    } else if (star_t != std::string_view::npos) {
      t = star_t + 1;
      star_p += CodePointLength(s, star_p);
      p = star_p;
    } else {
      return false;
    }
  }
  while (t < tokens.size() && tokens[t].kind == Token::Kind::kStar) ++t;
  return t == tokens.size();
}

// The same algorithm one level up: `**` segments are the stars, every other
// segment pattern consumes exactly one path segment.
bool SegmentsMatch(const std::vector<Segment>& pattern, const std::vector<std::string_view>& path, bool fold) {
  size_t t = 0, p = 0;
  size_t star_t = std::string_view::npos, star_p = 0;
  while (p < path.size()) {
    if (t < pattern.size() && !pattern[t].globstar && SegmentMatches(pattern[t].tokens, path[p], fold)) {
      ++t;
      ++p;
    } else if (t < pattern.size() && pattern[t].globstar) {
      star_t = t++;
      star_p = p;
    } else if (star_t != std::string_view::npos) {
      t = star_t + 1;
      p = ++star_p;
    } else {
      return false;
    }
  }
  while (t < pattern.size() && pattern[t].globstar) ++t;
  return t == pattern.size();
}

// --- subset reasoning ------------------------------------------------------

bool TokenSubset(const Token& a, const Token& b) {
  using K = Token::Kind;
  if (a.kind == K::kLiteral && b.kind == K::kLiteral) return a.literal == b.literal;
  if (a.kind == K::kLiteral) {  // b is a class
    if (a.literal.size() > 1) return b.set.non_ascii;
    return b.set.ascii.test(static_cast<unsigned char>(a.literal[0]));
  }
  if (b.kind == K::kLiteral) {  // a is a class: only a one-character class fits
    if (a.set.non_ascii || a.set.ascii.count() != 1 || b.literal.size() != 1) return false;
    return a.set.ascii.test(static_cast<unsigned char>(b.literal[0]));
  }
  if ((a.set.ascii & ~b.set.ascii).any()) return false;
  return !a.set.non_ascii || b.set.non_ascii;
}

// Every string matched by token list `a` is matched by `b`. A star of `b`
// may absorb any tokens of `a`; a star of `a` facing a non-star of `b` is
// answered conservatively (false).
bool TokensSubset(const std::vector<Token>& a, const std::vector<Token>& b) {
  const size_t width = b.size() + 1;
  std::vector<signed char> memo((a.size() + 1) * width, -1);
  auto solve = [&](auto&& self, size_t i, size_t j) -> bool {
    signed char& slot = memo[i * width + j];
    if (slot >= 0) return slot != 0;
    bool result;
    if (j == b.size()) {
      result = i == a.size();
    } else if (b[j].kind == Token::Kind::kStar) {
      result = self(self, i, j + 1) || (i < a.size() && self(self, i + 1, j));
    } else if (i == a.size() || a[i].kind == Token::Kind::kStar) {
      result = false;
    } else {
      result = TokenSubset(a[i], b[j]) && self(self, i + 1, j + 1);
    }
    slot = result ? 1 : 0;
    return result;
  };
  return solve(solve, 0, 0);
}

bool SegmentIsUniversal(const Segment& segment) {
  if (segment.globstar) return true;
  if (segment.tokens.empty()) return false;
  return std::all_of(segment.tokens.begin(), segment.tokens.end(),
                     [](const Token& t) { return t.kind == Token::Kind::kStar; });
}

bool SegmentsSubset(const std::vector<Segment>& a, const std::vector<Segment>& b) {
  const size_t width = b.size() + 1;
  std::vector<signed char> memo((a.size() + 1) * width, -1);
  auto solve = [&](auto&& self, size_t i, size_t j) -> bool {
    signed char& slot = memo[i * width + j];
    if (slot >= 0) return slot != 0;
    bool result;
    if (j == b.size()) {
      result = i == a.size();
    } else if (b[j].globstar) {
      result = self(self, i, j + 1) || (i < a.size() && self(self, i + 1, j));
    } else if (i == a.size()) {
      result = false;
    } else if (a[i].globstar) {
      // a's `**` yields either nothing, or any one segment followed by what
      // a[i..] yields again.
      result = self(self, i + 1, j) && SegmentIsUniversal(b[j]) && self(self, i, j + 1);
    } else {
      result = TokensSubset(a[i].tokens, b[j].tokens) && self(self, i + 1, j + 1);
    }
    slot = result ? 1 : 0;
    return result;
  };
  return solve(solve, 0, 0);
}

}  // namespace

Result<Glob> Glob::Compile(std::string_view pattern) {
  if (pattern.empty()) return BadPattern(pattern, "empty pattern");
  if (pattern.size() > kMaxPatternBytes) return BadPattern(pattern, "longer than 4096 bytes");
  for (char c : pattern) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return BadPattern(pattern, "NUL or control character");
  }
  if (pattern.find('\\') != std::string_view::npos) return BadPattern(pattern, "backslash");
  if (!IsValidUtf8(pattern)) return BadPattern(pattern, "invalid UTF-8");
  if (pattern.front() == '/') return BadPattern(pattern, "leading '/' (patterns are relative to the root)");
  if (pattern.front() == '!') return BadPattern(pattern, "leading '!' (there is no negation; use a deny entry)");
  if (pattern.front() == '#') return BadPattern(pattern, "leading '#'");

  Glob glob;
  std::vector<std::string> texts;
  auto add_globstar = [&]() {
    if (!glob.segments_.empty() && glob.segments_.back().globstar) return;
    glob.segments_.push_back(Segment{true, {}});
    texts.emplace_back("**");
  };
  for (auto part : SplitSlash(pattern)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return BadPattern(pattern, "'..' segment");
    if (part == "**") {
      add_globstar();
      continue;
    }
    TELIC_ASSIGN_OR_RETURN(Segment segment, ParseSegment(pattern, part));
    glob.segments_.push_back(std::move(segment));
    texts.emplace_back(part);
  }
  if (pattern.back() == '/') add_globstar();
  glob.text_ = texts.empty() ? "." : JoinSegments(texts);
  // "./!x" would normalise to "!x", which is not a valid pattern: the normal
  // form must compile to itself, so the leading-character rules apply to it.
  if (glob.text_.front() == '!') return BadPattern(pattern, "first segment starts with '!' (there is no negation)");
  if (glob.text_.front() == '#') return BadPattern(pattern, "first segment starts with '#'");
  return glob;
}

bool Glob::Matches(std::string_view normalized_path, MatchOptions options) const {
  // Reused between calls: matching a large inventory allocates nothing per path.
  thread_local std::vector<std::string_view> path;
  path.clear();
  if (normalized_path != ".") {
    size_t start = 0;
    while (true) {
      size_t slash = normalized_path.find('/', start);
      std::string_view part =
          normalized_path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
      if (part.empty() || part == "." || part == "..") return false;
      path.push_back(part);
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
    if (!IsValidUtf8(normalized_path)) return false;
  }
  return SegmentsMatch(segments_, path, options.case_insensitive);
}

bool GlobMatches(std::string_view pattern, std::string_view normalized_path, MatchOptions options) {
  auto glob = Glob::Compile(pattern);
  return glob && glob->Matches(normalized_path, options);
}

bool GlobSubset(std::string_view a, std::string_view b) {
  auto left = Glob::Compile(a);
  auto right = Glob::Compile(b);
  if (!left || !right) return false;
  return SegmentsSubset(left->segments(), right->segments());
}

}  // namespace telic::policy
