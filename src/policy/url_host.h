// URLs of network.read targets and the host scopes they are compared with
// (docs/PERMISSIONS.md, "Network").
//
// ParseNetworkUrl is a strict RFC 3986 parser for http/https URLs: a target
// without "://" is read as "http://" + target (like the reference); the
// scheme must be http or https; any userinfo ('@' in the authority) is
// refused, never trusted; the port must be 0-65535 digits; path, query and
// fragment may hold only RFC 3986 characters (pct-encoding allowed there).
// Whitespace, control characters, backslashes and non-ASCII are refused
// anywhere, so no two parsers can disagree about where the host is.
//
// Hosts are compared exactly after one normalisation:
//   - ASCII letters lowercased; exactly one trailing dot removed;
//   - non-ASCII is refused (no IDNA library: write the punycode "xn--" form,
//     which is compared as plain ASCII);
//   - '%', '*', '_' and every other non [a-z0-9.-] character are refused;
//     labels 1-63 characters, not starting or ending with '-', <= 253 total;
//   - IPv4 only as canonical dotted-quad ("127.0.0.1"): decimal, octal, hex
//     and short forms ("2130706433", "0177.0.0.1", "0x7f.1", "127.1") and
//     any host whose last label is numeric but is not a dotted-quad are refused;
//   - IPv6 only in brackets in a URL, validated with inet_pton and written
//     in inet_ntop form without brackets; zone identifiers, IPvFuture and
//     IPv4-embedding forms (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::/96) refused.
// No subdomain inference, no wildcards: a scope names one host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::policy {

enum class HostKind { kDomain, kIpv4, kIpv6 };

struct NetworkTarget {
  std::string scheme;  // "http" or "https"
  std::string host;    // normalised (see above)
  HostKind host_kind = HostKind::kDomain;
  std::optional<uint16_t> port;
  std::string path;      // "" or starting with '/', as written
  std::string query;     // without '?'
  std::string fragment;  // without '#'
};

// Fails with kPermissionDenied and the reason.
Result<NetworkTarget> ParseNetworkUrl(std::string_view url);

// Normalises a host as written in a URL authority (IPv6 in brackets).
Result<std::string> NormalizeUrlHost(std::string_view host, HostKind* kind = nullptr);

// Normalises a network.readDomains entry with the same rules; an IPv6
// address may be given with or without brackets. "**" is not a host: the
// engine treats it as "every host" before calling this. Stricter than
// NormalizeNetworkReadDomain (permission_set.h): no trimming, non-canonical
// IPv4 and IPv4-embedding IPv6 refused, one trailing dot accepted and removed.
Result<std::string> NormalizeHostScope(std::string_view entry);

// True when a normalised host equals a normalised entry of `scopes`, or an
// entry is "**". Invalid entries never match.
bool HostInScopes(std::string_view normalized_host, const std::vector<std::string>& scopes);

}  // namespace telic::policy
