#include "grounding/secrets.h"

#include <array>
#include <string>
#include <vector>

#include "grounding/paths.h"

namespace telic::grounding {
namespace {

constexpr size_t kNpos = std::string_view::npos;

bool StartsAt(std::string_view text, size_t i, std::string_view what) {
  return i <= text.size() && text.size() - i >= what.size() && text.compare(i, what.size(), what) == 0;
}

bool IsAsciiAlnum(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAsciiWord(unsigned char c) { return IsAsciiAlnum(c) || c == '_'; }

unsigned char At(std::string_view text, size_t i) { return static_cast<unsigned char>(text[i]); }

// \w / \b without the i flag: ASCII word characters only.
bool AsciiWordAt(std::string_view text, size_t i) { return i < text.size() && IsAsciiWord(At(text, i)); }
bool AsciiWordBefore(std::string_view text, size_t i) { return i > 0 && IsAsciiWord(At(text, i - 1)); }

// The two non-ASCII characters that simple case folding maps into ASCII
// letters: U+017F LATIN SMALL LETTER LONG S (→ s) and U+212A KELVIN SIGN (→ k).
constexpr std::string_view kLongS = "\xC5\xBF";
constexpr std::string_view kKelvin = "\xE2\x84\xAA";

// \w under /iu: [A-Za-z0-9_], U+017F and U+212A. Returns the byte length of
// such a character at `i`, or 0.
size_t FoldedWordAt(std::string_view text, size_t i) {
  if (i >= text.size()) return 0;
  if (IsAsciiWord(At(text, i))) return 1;
  if (StartsAt(text, i, kLongS)) return 2;
  if (StartsAt(text, i, kKelvin)) return 3;
  return 0;
}

bool FoldedWordBefore(std::string_view text, size_t i) {
  if (i == 0) return false;
  if (IsAsciiWord(At(text, i - 1))) return true;
  if (i >= 2 && StartsAt(text, i - 2, kLongS)) return true;
  if (i >= 3 && StartsAt(text, i - 3, kKelvin)) return true;
  return false;
}

// One pattern character `lower` (an ASCII lowercase letter, digit or
// punctuation) matched case-insensitively under /iu at `i`: byte length or 0.
size_t FoldedCharAt(std::string_view text, size_t i, char lower) {
  if (i >= text.size()) return 0;
  unsigned char c = At(text, i);
  unsigned char folded = (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c - 'A' + 'a') : c;
  if (folded == static_cast<unsigned char>(lower)) return 1;
  if (lower == 's' && StartsAt(text, i, kLongS)) return 2;
  if (lower == 'k' && StartsAt(text, i, kKelvin)) return 3;
  return 0;
}

// `word` (lowercase ASCII) matched case-insensitively at `i`: end or kNpos.
size_t FoldedWordMatch(std::string_view text, size_t i, std::string_view word) {
  for (char c : word) {
    size_t length = FoldedCharAt(text, i, c);
    if (length == 0) return kNpos;
    i += length;
  }
  return i;
}

// JavaScript \s: byte length of a whitespace character at `i`, or 0.
size_t JsSpaceAt(std::string_view text, size_t i) {
  if (i >= text.size()) return 0;
  unsigned char c = At(text, i);
  if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return 1;
  if (c < 0x80) return 0;
  if (StartsAt(text, i, "\xC2\xA0") ) return 2;                 // U+00A0
  if (StartsAt(text, i, "\xE1\x9A\x80")) return 3;              // U+1680
  if (StartsAt(text, i, "\xE3\x80\x80")) return 3;              // U+3000
  if (StartsAt(text, i, "\xEF\xBB\xBF")) return 3;              // U+FEFF
  if (i + 2 < text.size() && c == 0xE2) {
    unsigned char b1 = At(text, i + 1), b2 = At(text, i + 2);
    if (b1 == 0x80 && ((b2 >= 0x80 && b2 <= 0x8A) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF)) return 3;  // U+2000-200A, 2028, 2029, 202F
    if (b1 == 0x81 && b2 == 0x9F) return 3;                                                          // U+205F
  }
  return 0;
}

// [A-Za-z0-9_+./:@=-] under /iu (so U+017F and U+212A too): byte length or 0.
size_t ValueCharAt(std::string_view text, size_t i) {
  if (i >= text.size()) return 0;
  unsigned char c = At(text, i);
  if (IsAsciiWord(c) || c == '+' || c == '.' || c == '/' || c == ':' || c == '@' || c == '=' || c == '-') return 1;
  if (StartsAt(text, i, kLongS)) return 2;
  if (StartsAt(text, i, kKelvin)) return 3;
  return 0;
}

// -----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY-----
bool HasPrivateKeyHeader(std::string_view text) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kTail = "PRIVATE KEY-----";
  auto in_class = [](unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' '; };
  for (size_t pos = text.find(kBegin); pos != kNpos; pos = text.find(kBegin, pos + 1)) {
    size_t a = pos + kBegin.size();
    if (StartsAt(text, a, kTail)) return true;
    // [A-Z0-9 ]+ covering text[a, q), then ' ' at q, then the tail.
    for (size_t q = a + 1; q <= text.size() && in_class(At(text, q - 1)); ++q) {
      if (q < text.size() && text[q] == ' ' && StartsAt(text, q + 1, kTail)) return true;
    }
  }
  return false;
}

// \bAKIA[0-9A-Z]{16}\b
bool HasAwsAccessKey(std::string_view text) {
  for (size_t i = text.find("AKIA"); i != kNpos; i = text.find("AKIA", i + 1)) {
    if (AsciiWordBefore(text, i) || i + 20 > text.size()) continue;
    bool ok = true;
    for (size_t k = i + 4; k < i + 20 && ok; ++k) {
      unsigned char c = At(text, k);
      ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    }
    if (ok && !AsciiWordAt(text, i + 20)) return true;
  }
  return false;
}

// \bgh[pousr]_[A-Za-z0-9]{20,}\b
bool HasGithubToken(std::string_view text) {
  for (size_t i = text.find("gh"); i != kNpos; i = text.find("gh", i + 1)) {
    if (AsciiWordBefore(text, i) || i + 4 > text.size()) continue;
    char kind = text[i + 2];
    if (kind != 'p' && kind != 'o' && kind != 'u' && kind != 's' && kind != 'r') continue;
    if (text[i + 3] != '_') continue;
    size_t end = i + 4;
    while (end < text.size() && IsAsciiAlnum(At(text, end))) ++end;
    // A shorter run would end before another alphanumeric: no boundary there.
    if (end - (i + 4) >= 20 && !AsciiWordAt(text, end)) return true;
  }
  return false;
}

bool IsBase64Url(unsigned char c) { return IsAsciiWord(c) || c == '-'; }

size_t Base64UrlRunEnd(std::string_view text, size_t i) {
  while (i < text.size() && IsBase64Url(At(text, i))) ++i;
  return i;
}

// \beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b
bool HasJwt(std::string_view text) {
  for (size_t i = text.find("eyJ"); i != kNpos; i = text.find("eyJ", i + 1)) {
    if (AsciiWordBefore(text, i)) continue;
    // The first two runs must be followed by '.', which they cannot contain,
    // so only their maximal lengths can match.
    size_t s1 = i + 3, e1 = Base64UrlRunEnd(text, s1);
    if (e1 - s1 < 8 || e1 >= text.size() || text[e1] != '.') continue;
    size_t s2 = e1 + 1, e2 = Base64UrlRunEnd(text, s2);
    if (e2 - s2 < 8 || e2 >= text.size() || text[e2] != '.') continue;
    size_t s3 = e2 + 1, e3 = Base64UrlRunEnd(text, s3);
    for (size_t e = s3 + 8; e <= e3; ++e) {
      if (AsciiWordBefore(text, e) != AsciiWordAt(text, e)) return true;
    }
  }
  return false;
}

struct Keyword {
  std::string_view head;
  bool optional_separator;  // [_-]? between head and tail
  std::string_view tail;
};

constexpr std::array<Keyword, 6> kKeywords = {{
    {"api", true, "key"},
    {"authorization", false, ""},
    {"client", true, "secret"},
    {"password", false, ""},
    {"secret", false, ""},
    {"token", false, ""},
}};

// The keyword at `i`: its end, or kNpos.
size_t MatchKeyword(std::string_view text, size_t i, const Keyword& keyword) {
  size_t j = FoldedWordMatch(text, i, keyword.head);
  if (j == kNpos || !keyword.optional_separator) return j;
  // Greedy [_-]?: taking the separator is the only way the tail can follow
  // when the next character is one (the tail starts with a letter).
  if (j < text.size() && (text[j] == '_' || text[j] == '-')) ++j;
  return FoldedWordMatch(text, j, keyword.tail);
}

// (?!\$\{|<|example\b|placeholder\b|redacted\b|changeme\b) at `k`.
bool IsPlaceholderValue(std::string_view text, size_t k) {
  if (StartsAt(text, k, "${") || StartsAt(text, k, "<")) return true;
  for (std::string_view word : {"example", "placeholder", "redacted", "changeme"}) {
    size_t end = FoldedWordMatch(text, k, word);
    if (end != kNpos && FoldedWordAt(text, end) == 0) return true;
  }
  return false;
}

// The assignment after a keyword ending at `j`: \s*[:=]\s*["']?(?!…)V{8,}.
bool HasCredentialValue(std::string_view text, size_t j) {
  // \b after the keyword (its last character is a word character).
  if (FoldedWordAt(text, j) != 0) return false;
  size_t k = j;
  while (size_t n = JsSpaceAt(text, k)) k += n;
  if (k >= text.size() || (text[k] != ':' && text[k] != '=')) return false;
  ++k;
  while (size_t n = JsSpaceAt(text, k)) k += n;
  // Without the quote the value would have to start at the quote, which is
  // not a value character: taking it is the only way to match.
  if (k < text.size() && (text[k] == '"' || text[k] == '\'')) ++k;
  if (IsPlaceholderValue(text, k)) return false;
  int count = 0;
  while (count < 8) {
    size_t n = ValueCharAt(text, k);
    if (n == 0) break;
    k += n;
    ++count;
  }
  return count >= 8;
}

bool HasCredentialAssignment(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = At(text, i);
    unsigned char folded = (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c - 'A' + 'a') : c;
    bool candidate = folded == 'a' || folded == 'c' || folded == 'p' || folded == 's' || folded == 't' ||
                     StartsAt(text, i, kLongS);
    if (!candidate || FoldedWordBefore(text, i)) continue;
    for (const Keyword& keyword : kKeywords) {
      size_t end = MatchKeyword(text, i, keyword);
      if (end != kNpos && HasCredentialValue(text, end)) return true;
    }
  }
  return false;
}

bool IsHeaderTokenChar(unsigned char c) {
  return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
}

// The scheme and token after "authorization" ending at `j`:
// \s*:\s*(?:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/=-]{8,}
bool HasSchemeCredential(std::string_view text, size_t j) {
  if (AsciiWordAt(text, j)) return false;
  while (size_t n = JsSpaceAt(text, j)) j += n;
  if (j >= text.size() || text[j] != ':') return false;
  ++j;
  while (size_t n = JsSpaceAt(text, j)) j += n;
  size_t scheme_end = kNpos;
  for (std::string_view scheme : {"bearer", "basic", "token", "digest"}) {
    size_t end = FoldedWordMatch(text, j, scheme);
    if (end != kNpos && JsSpaceAt(text, end) != 0) scheme_end = end;
  }
  if (scheme_end == kNpos) return false;
  size_t k = scheme_end;
  while (size_t n = JsSpaceAt(text, k)) k += n;
  size_t start = k;
  while (k < text.size() && IsHeaderTokenChar(At(text, k))) ++k;
  return k - start >= 8;
}

// (?i)\b(?:proxy-)?authorization followed by a scheme credential.
bool HasAuthorizationHeader(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if ((At(text, i) | 0x20) != 'a' || AsciiWordBefore(text, i)) continue;
    size_t end = FoldedWordMatch(text, i, "authorization");
    if (end != kNpos && HasSchemeCredential(text, end)) return true;
  }
  return false;
}

bool StartsWith(std::string_view text, std::string_view prefix) { return StartsAt(text, 0, prefix); }
bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// `name` starts with `prefix` followed by the end or one of `followers`.
bool PrefixThen(std::string_view name, std::string_view prefix, std::string_view followers, bool end_ok) {
  if (!StartsWith(name, prefix)) return false;
  if (name.size() == prefix.size()) return end_ok;
  return followers.find(name[prefix.size()]) != kNpos;
}

}  // namespace

bool IsSecretLikePath(std::string_view repository_path) {
  thread_local std::string lower;  // reused: this runs once per candidate
  lower.clear();
  AppendJsLowerCase(repository_path, lower);
  return IsSecretLikeLowerPath(lower);
}

bool IsSecretLikeLowerPath(std::string_view path) {
  const size_t last_slash = path.rfind('/');
  const std::string_view base = last_slash == kNpos ? path : path.substr(last_slash + 1);
  if (StartsWith(base, ".env")) return true;
  if (base == ".git-credentials" || base == ".netrc" || base == ".npmrc" || base == ".pypirc") return true;
  for (std::string_view rest = path;;) {
    size_t slash = rest.find('/');
    std::string_view segment = rest.substr(0, slash);
    if (segment == "credential" || segment == "credentials" || segment == "secret" || segment == "secrets") return true;
    if (slash == kNpos) break;
    rest.remove_prefix(slash + 1);
  }
  for (std::string_view prefix : {"credentials", "credential", "secrets", "secret"}) {
    if (PrefixThen(base, prefix, ".", true)) return true;
  }
  if (PrefixThen(base, "service-account", ".-_", false)) return true;
  for (std::string_view key : {"id_dsa", "id_ecdsa", "id_ed25519", "id_rsa"}) {
    if (PrefixThen(base, key, ".", true)) return true;
  }
  for (std::string_view suffix : {".key", ".p12", ".pfx", ".pem"}) {
    if (EndsWith(base, suffix)) return true;
  }
  return false;
}

bool ContainsLikelySecret(std::string_view text) {
  return HasPrivateKeyHeader(text) || HasAwsAccessKey(text) || HasGithubToken(text) || HasJwt(text) ||
         HasCredentialAssignment(text);
}

std::optional<std::string_view> LikelySecretKind(std::string_view text) {
  if (HasPrivateKeyHeader(text)) return "private key block";
  if (HasAwsAccessKey(text)) return "AWS access key id";
  if (HasGithubToken(text)) return "GitHub token";
  if (HasJwt(text)) return "JSON Web Token";
  if (HasAuthorizationHeader(text)) return "authorization header";
  if (HasCredentialAssignment(text)) return "credential assignment";
  return std::nullopt;
}

}  // namespace telic::grounding
