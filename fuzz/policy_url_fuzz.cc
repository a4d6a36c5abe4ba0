// Fuzzes the network.read URL parser and host normalisation
// (src/policy/url_host.h). Input: "<url>\n<scope entry>".
// Invariants:
//   - an accepted URL has an http/https scheme, no '@' in its authority, and
//     only printable ASCII without backslashes (reference check);
//   - the host is lowercase [a-z0-9.-] without a trailing dot, or an IPv6
//     address inet_pton accepts; an all-numeric host is a canonical
//     dotted-quad;
//   - normalisation is a fixed point: the host is its own scope form, and
//     parsing http://<host>/ gives the same host;
//   - the engine allows the URL under a scope entry exactly when the entry
//     normalises to the same host (no subdomain inference), and a deny entry
//     for the host always wins.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/engine.h"
#include "policy/url_host.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

bool IsDottedQuad(std::string_view host) {
  int parts = 0;
  size_t start = 0;
  while (true) {
    size_t dot = host.find('.', start);
    std::string_view part = host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
    int value = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 4;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace telic::policy;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t newline = text.find('\n');
  const std::string url(text.substr(0, newline));
  const std::string scope(newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1));

  auto parsed = ParseNetworkUrl(url);
  if (parsed) {
    for (char c : url) {
      auto u = static_cast<unsigned char>(c);
      Check(u > 0x20 && u < 0x7F && c != '\\');
    }
    size_t scheme_end = url.find("://");
    std::string authority = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    Check(authority.find('@') == std::string::npos);
    Check(parsed->scheme == "http" || parsed->scheme == "https");
    const std::string& host = parsed->host;
    Check(!host.empty() && host.back() != '.');
    if (parsed->host_kind == HostKind::kIpv6) {
      in6_addr address;
      Check(inet_pton(AF_INET6, host.c_str(), &address) == 1);
    } else {
      for (char c : host) Check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-');
      bool numeric = host.find_first_not_of("0123456789.") == std::string::npos;
      Check(!numeric || IsDottedQuad(host));
      Check(parsed->host_kind == (numeric ? HostKind::kIpv4 : HostKind::kDomain));
    }
    auto scope_form = NormalizeHostScope(host);
    Check(scope_form && *scope_form == host);
    std::string bracketed = parsed->host_kind == HostKind::kIpv6 ? "[" + host + "]" : host;
    auto again = ParseNetworkUrl("http://" + bracketed + "/");
    Check(again && again->host == host);
  }

  RepoRoot root;
  Layer allow{"fuzz", {{"network", {{"readDomains", {scope}}}}}, nullptr};
  Decision decision = Authorize({"network.read", url, {}, {}}, {allow}, root);
  auto entry = NormalizeHostScope(scope);
  const bool expected = parsed && (scope == "**" || (entry && *entry == parsed->host));
  Check(decision.allowed == expected);
  if (parsed) {
    Layer denying{"fuzz", {{"network", {{"readDomains", {"**"}}}}}, {{"network", {{"readDomains", {parsed->host}}}}}};
    Check(!Authorize({"network.read", url, {}, {}}, {denying}, root).allowed);
  }
  return 0;
}
