#include "policy/url_host.h"

#include "policy/path_segments.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "policy/utf8_scan.h"

namespace telic::policy {
namespace {

constexpr size_t kMaxUrlBytes = 8192;
constexpr size_t kMaxHostBytes = 253;

std::unexpected<Error> Deny(std::string reason) { return Fail(ErrorCode::kPermissionDenied, std::move(reason)); }

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::vector<std::string_view> SplitDots(std::string_view text) { return path_segments::SplitOn(text, '.'); }

// WHATWG's "ends in a number": the last label is all digits or 0x-hex, so a
// browser would read the host as an IPv4 address in some form.
bool LooksNumeric(std::string_view label) {
  if (label.empty()) return false;
  if (std::all_of(label.begin(), label.end(), IsDigit)) return true;
  if (label.size() >= 2 && label[0] == '0' && label[1] == 'x') {
    return std::all_of(label.begin() + 2, label.end(), IsHexDigit);
  }
  return false;
}

// Only a canonical dotted-quad: four decimal octets 0-255 without leading zeros.
Result<std::string> CanonicalIpv4(std::string_view host, const std::vector<std::string_view>& labels) {
  const std::string form = "non-canonical IPv4 form '" + std::string(host) +
                           "' (only dotted-quad decimal like 127.0.0.1 is accepted)";
  if (labels.size() != 4) return Deny(form);
  for (auto label : labels) {
    if (label.empty() || label.size() > 3 || !std::all_of(label.begin(), label.end(), IsDigit)) return Deny(form);
    if (label.size() > 1 && label[0] == '0') return Deny(form);
    int value = 0;
    for (char c : label) value = value * 10 + (c - '0');
    if (value > 255) return Deny("IPv4 octet out of range in '" + std::string(host) + "'");
  }
  return std::string(host);
}

Result<std::string> CanonicalIpv6(std::string_view text) {
  if (text.empty()) return Deny("empty IPv6 address");
  if (text.find('%') != std::string_view::npos) return Deny("IPv6 zone identifier in host");
  if (text[0] == 'v' || text[0] == 'V') return Deny("IPvFuture address in host");
  for (char c : text) {
    if (!IsHexDigit(c) && c != ':' && c != '.') return Deny("invalid IPv6 address '" + std::string(text) + "'");
  }
  std::string copy(text);
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, copy.c_str(), bytes) != 1) return Deny("invalid IPv6 address '" + copy + "'");
  const bool first80_zero = std::all_of(bytes, bytes + 10, [](unsigned char b) { return b == 0; });
  if (first80_zero && bytes[10] == 0xFF && bytes[11] == 0xFF) {
    return Deny("IPv4-mapped IPv6 address '" + copy + "' (write the IPv4 form)");
  }
  const bool first96_zero = first80_zero && bytes[10] == 0 && bytes[11] == 0;
  const bool last32_small = bytes[12] == 0 && bytes[13] == 0 && bytes[14] == 0 && bytes[15] <= 1;
  if (first96_zero && !last32_small) return Deny("IPv4-compatible IPv6 address '" + copy + "'");
  static const std::array<unsigned char, 12> kNat64 = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::equal(kNat64.begin(), kNat64.end(), bytes)) return Deny("NAT64 IPv6 address '" + copy + "'");
  char out[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, bytes, out, sizeof out) == nullptr) return Deny("invalid IPv6 address '" + copy + "'");
  return std::string(out);
}

// Shared host rules; `bare_ipv6` lets a scope entry name an IPv6 address
// without brackets.
Result<std::string> NormalizeHostText(std::string_view text, bool bare_ipv6, HostKind* kind) {
  HostKind ignored;
  if (kind == nullptr) kind = &ignored;
  if (text.empty()) return Deny("empty host");
  for (size_t i = 0; i < text.size(); ++i) {
    auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0x80) {
      char32_t cp;
      size_t length;
      if (!DecodeUtf8At(text, i, cp, length)) return Deny("invalid UTF-8 in host");
      return Deny("non-ASCII hostname (character " + CodePointName(cp) +
                  "; IDNA names must be written in punycode, xn--)");
    }
    if (u <= 0x20 || u == 0x7F) return Deny("whitespace or control character in host");
  }
  if (text.front() == '[') {
    if (text.size() < 2 || text.back() != ']') return Deny("unterminated '[' in host");
    *kind = HostKind::kIpv6;
    return CanonicalIpv6(text.substr(1, text.size() - 2));
  }
  if (text.find(':') != std::string_view::npos) {
    if (!bare_ipv6) return Deny("':' in host (an IPv6 address must be in brackets)");
    *kind = HostKind::kIpv6;
    return CanonicalIpv6(text);
  }
  if (text.find('%') != std::string_view::npos) return Deny("percent-encoding in host");
  if (text.find('*') != std::string_view::npos) return Deny("wildcard in host (wildcards never match)");
  std::string host;
  host.reserve(text.size());
  for (char c : text) host += Lower(c);
  if (host.back() == '.') host.pop_back();  // exactly one trailing dot
  if (host.empty()) return Deny("empty host");
  if (host.size() > kMaxHostBytes) return Deny("hostname longer than 253 characters");
  auto labels = SplitDots(host);
  if (LooksNumeric(labels.back())) {
    *kind = HostKind::kIpv4;
    return CanonicalIpv4(host, labels);
  }
  for (auto label : labels) {
    if (label.empty()) return Deny("empty label in hostname '" + host + "'");
    if (label.size() > 63) return Deny("hostname label longer than 63 characters");
    for (char c : label) {
      if (!(IsAlpha(c) || IsDigit(c) || c == '-')) {
        return Deny(std::string("character '") + c + "' not allowed in a hostname");
      }
    }
    if (label.front() == '-' || label.back() == '-') return Deny("hostname label starts or ends with '-'");
  }
  *kind = HostKind::kDomain;
  return host;
}

bool IsUnreserved(char c) { return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'; }
bool IsSubDelim(char c) { return std::strchr("!$&'()*+,;=", c) != nullptr && c != '\0'; }

// path-abempty / query / fragment characters of RFC 3986.
Status CheckComponent(std::string_view text, const char* what, bool allow_question) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size() || !IsHexDigit(text[i + 1]) || !IsHexDigit(text[i + 2])) {
        return Deny(std::string("malformed percent-encoding in URL ") + what);
      }
      i += 2;
      continue;
    }
    if (IsUnreserved(c) || IsSubDelim(c) || c == ':' || c == '@' || c == '/') continue;
    if (c == '?' && allow_question) continue;
    if (static_cast<unsigned char>(c) >= 0x80) {
      return Deny(std::string("non-ASCII character in URL ") + what + " (percent-encode it)");
    }
    return Deny(std::string("character '") + c + "' not allowed in URL " + what);
  }
  return Ok();
}

}  // namespace

namespace {

Status CheckUrlCharacters(std::string_view url) {
  if (url.empty()) return Deny("empty URL");
  if (url.size() > kMaxUrlBytes) return Deny("URL longer than 8192 bytes");
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) return Deny("whitespace or control character in URL");
    if (c == '\\') return Deny("backslash in URL");
  }
  return Ok();
}

// The lower-cased http or https scheme of `text`; `rest` is then what
// follows "scheme://".
Result<std::string> ParseScheme(std::string_view text, std::string_view& rest) {
  const size_t colon = text.find(':');
  const std::string_view scheme = text.substr(0, colon);
  if (scheme.empty() || !IsAlpha(scheme.front()) ||
      !std::all_of(scheme.begin(), scheme.end(),
                   [](char c) { return IsAlpha(c) || IsDigit(c) || c == '+' || c == '-' || c == '.'; })) {
    return Deny("invalid URL scheme");
  }
  std::string lower;
  for (char c : scheme) lower += Lower(c);
  if (lower != "http" && lower != "https") return Deny("scheme '" + lower + "' is not http or https");
  if (text.substr(colon + 1, 2) != "//") return Deny("URL has no '//' authority");
  rest = text.substr(colon + 3);
  return lower;
}

// The authority's host and port into `target` (no userinfo, a decimal port
// up to 65535, an IPv6 address in brackets).
Status ParseAuthority(std::string_view authority, NetworkTarget& target) {
  if (authority.find('@') != std::string_view::npos) {
    return Deny("credentials (userinfo) in the URL are never trusted");
  }
  std::string_view host_text = authority;
  std::optional<std::string_view> port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Deny("unterminated '[' in host");
    host_text = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Deny("unexpected text after the IPv6 address");
      port_text = after.substr(1);
    }
  } else if (size_t port_colon = authority.find(':'); port_colon != std::string_view::npos) {
    host_text = authority.substr(0, port_colon);
    port_text = authority.substr(port_colon + 1);
  }
  if (host_text.empty()) return Deny("empty host");
  if (port_text) {
    if (port_text->empty()) return Deny("empty port");
    if (port_text->size() > 5 || !std::all_of(port_text->begin(), port_text->end(), IsDigit)) {
      return Deny("invalid port '" + std::string(*port_text) + "'");
    }
    unsigned value = 0;
    for (char c : *port_text) value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > 65535) return Deny("port out of range");
    target.port = static_cast<uint16_t>(value);
  }
  TELIC_ASSIGN_OR_RETURN(target.host, NormalizeHostText(host_text, false, &target.host_kind));
  return Ok();
}

// Path, query and fragment of what follows the authority into `target`.
Status ParsePathQueryFragment(std::string_view tail, NetworkTarget& target) {
  size_t fragment_at = tail.find('#');
  if (fragment_at != std::string_view::npos) {
    target.fragment = std::string(tail.substr(fragment_at + 1));
    tail = tail.substr(0, fragment_at);
    TELIC_RETURN_IF_ERROR(CheckComponent(target.fragment, "fragment", true));
    if (target.fragment.find('#') != std::string::npos) return Deny("character '#' not allowed in URL fragment");
  }
  size_t query_at = tail.find('?');
  if (query_at != std::string_view::npos) {
    target.query = std::string(tail.substr(query_at + 1));
    tail = tail.substr(0, query_at);
    TELIC_RETURN_IF_ERROR(CheckComponent(target.query, "query", true));
  }
  target.path = std::string(tail);
  return CheckComponent(target.path, "path", false);
}

}  // namespace

Result<NetworkTarget> ParseNetworkUrl(std::string_view url) {
  TELIC_RETURN_IF_ERROR(CheckUrlCharacters(url));
  std::string prefixed;
  std::string_view text = url;
  if (url.find("://") == std::string_view::npos) {
    prefixed = "http://" + std::string(url);
    text = prefixed;
  }
  NetworkTarget target;
  std::string_view rest;
  TELIC_ASSIGN_OR_RETURN(target.scheme, ParseScheme(text, rest));
  const size_t authority_end = rest.find_first_of("/?#");
  TELIC_RETURN_IF_ERROR(ParseAuthority(rest.substr(0, authority_end), target));
  const std::string_view tail = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  TELIC_RETURN_IF_ERROR(ParsePathQueryFragment(tail, target));
  return target;
}

Result<std::string> NormalizeUrlHost(std::string_view host, HostKind* kind) {
  return NormalizeHostText(host, false, kind);
}

Result<std::string> NormalizeHostScope(std::string_view entry) {
  if (entry.find("://") != std::string_view::npos) return Deny("a host scope has no scheme");
  for (char c : entry) {
    if (c == '/' || c == '?' || c == '#' || c == '@') {
      return Deny(std::string("'") + c + "' in a host scope (give only the host name)");
    }
  }
  return NormalizeHostText(entry, true, nullptr);
}

bool HostInScopes(std::string_view normalized_host, const std::vector<std::string>& scopes) {
  for (const auto& scope : scopes) {
    if (scope == "**") return true;
    auto normalized = NormalizeHostScope(scope);
    if (normalized && *normalized == normalized_host) return true;
  }
  return false;
}

}  // namespace telic::policy
