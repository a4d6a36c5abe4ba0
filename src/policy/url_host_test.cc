// network.read URLs and host scopes (docs/PERMISSIONS.md "Network").
#include "policy/url_host.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/permission_set.h"

namespace telic::policy {
namespace {

struct UrlCase {
  std::string url;
  bool allowed;
  std::string expected;  // normalised host when allowed, reason substring when denied
};

TEST(ParseNetworkUrlTest, AdversarialTable) {
  const std::string long_label(64, 'a');
  std::string long_host;
  for (int i = 0; i < 5; ++i) long_host += std::string(60, 'b') + ".";
  long_host += "com";
  const std::vector<UrlCase> cases = {
      // accepted, with the host they are compared by
      {"https://api.example.com/v1/items", true, "api.example.com"},
      {"http://example.com", true, "example.com"},
      {"example.com/path", true, "example.com"},
      {"api.example.com", true, "api.example.com"},
      {"HTTPS://API.Example.COM/", true, "api.example.com"},
      {"https://example.com./", true, "example.com"},
      {"https://example.com:8443/x?y=1#z", true, "example.com"},
      {"http://127.0.0.1:8080/status", true, "127.0.0.1"},
      {"http://0.0.0.0/", true, "0.0.0.0"},
      {"http://255.255.255.255/", true, "255.255.255.255"},
      {"http://[::1]/status", true, "::1"},
      {"http://[0:0:0:0:0:0:0:1]/", true, "::1"},
      {"http://[2001:DB8:0::1]:8080/", true, "2001:db8::1"},
      {"https://xn--bcher-kva.example/", true, "xn--bcher-kva.example"},
      {"http://localhost:3000/", true, "localhost"},
      {"http://local/status", true, "local"},
      {"https://123.example.com/", true, "123.example.com"},
      {"https://example.com/path%20with%20space", true, "example.com"},
      {"https://example.com/@user", true, "example.com"},
      {"https://example.com?q=a@b", true, "example.com"},
      {"https://example.com#@evil.com", true, "example.com"},
      {"https://a-b.c-d.example/", true, "a-b.c-d.example"},
      // credentials are never trusted
      {"https://user:password@api.example.com/v1/items", false, "credentials"},
      {"http://allowed.com@evil.com/", false, "credentials"},
      {"http://@example.com/", false, "credentials"},
      {"http://user@example.com", false, "credentials"},
      {"http://example.com:80@evil.com/", false, "credentials"},
      // schemes
      {"ftp://example.com/", false, "scheme 'ftp' is not http or https"},
      {"file:///etc/passwd", false, "scheme 'file'"},
      {"gopher://example.com", false, "scheme 'gopher'"},
      {"ws://example.com", false, "scheme 'ws'"},
      {"://example.com", false, "invalid URL scheme"},
      {"1http://example.com", false, "invalid URL scheme"},
      {"javascript:alert(1)", false, "invalid port"},
      {"https:example.com", false, "invalid port"},
      {"http:/example.com", false, "empty port"},
      // authority shape
      {"http:///example.com", false, "empty host"},
      {"//example.com", false, "empty host"},
      {"http://:80/", false, "empty host"},
      {"https://example.com:99999/", false, "port out of range"},
      {"https://example.com:123456/", false, "invalid port"},
      {"https://example.com:/", false, "empty port"},
      {"https://example.com:80:80/", false, "invalid port"},
      {"https://example.com:8o/", false, "invalid port"},
      {"https://example.com:+80/", false, "invalid port"},
      // IPv4 in every non-canonical form
      {"http://2130706433/", false, "non-canonical IPv4"},
      {"http://0x7f.1/", false, "non-canonical IPv4"},
      {"http://017700000001/", false, "non-canonical IPv4"},
      {"http://127.1/", false, "non-canonical IPv4"},
      {"http://0177.0.0.1/", false, "non-canonical IPv4"},
      {"http://127.0.0.01/", false, "non-canonical IPv4"},
      {"http://0x7f000001/", false, "non-canonical IPv4"},
      {"http://0x7F.0.0.1/", false, "non-canonical IPv4"},
      {"http://1.2.3.4.5/", false, "non-canonical IPv4"},
      {"http://example.123/", false, "non-canonical IPv4"},
      {"http://example.0x1/", false, "non-canonical IPv4"},
      {"http://256.0.0.1/", false, "IPv4 octet out of range"},
      {"http://127.0.0.1../", false, "empty label"},
      // IPv6
      {"http://[::ffff:127.0.0.1]/", false, "IPv4-mapped"},
      {"http://[::ffff:7f00:1]/", false, "IPv4-mapped"},
      {"http://[::127.0.0.1]/", false, "IPv4-compatible"},
      {"http://[64:ff9b::7f00:1]/", false, "NAT64"},
      {"http://[fe80::1%25eth0]/", false, "zone identifier"},
      {"http://[v1.fe]/", false, "IPvFuture"},
      {"http://[::1/", false, "unterminated '['"},
      {"http://[::1]x/", false, "unexpected text after the IPv6 address"},
      {"http://[gggg::1]/", false, "invalid IPv6"},
      {"http://[1:2:3:4:5:6:7:8:9]/", false, "invalid IPv6"},
      {"http://[]/", false, "empty IPv6"},
      {"http://::1/", false, "empty host"},
      // Unicode: IDNA is not decoded; non-ASCII is refused
      {"https://b\xC3\xBC" "cher.example/", false, "non-ASCII hostname (character U+00FC"},
      {"https://ex\xEF\xBD\x81mple.com/", false, "U+FF41"},        // fullwidth 'a'
      {"https://example\xE3\x80\x82" "com/", false, "U+3002"},     // ideographic full stop
      {"https://exam\xE2\x80\x8Bple.com/", false, "U+200B"},       // zero-width space
      {"https://\xD0\xB0pple.com/", false, "U+0430"},              // Cyrillic a
      {"https://example.com\xE2\x80\xAE/", false, "U+202E"},       // bidi override
      {"https://exa\xFFmple.com/", false, "invalid UTF-8"},
      // host characters
      {"https://exa%6dple.com/", false, "percent-encoding in host"},
      {"https://*.example.com/", false, "wildcard"},
      {"https://ex_ample.com/", false, "character '_'"},
      {"https://ex!ample.com/", false, "character '!'"},
      {"https://-example.com/", false, "starts or ends with '-'"},
      {"https://example-.com/", false, "starts or ends with '-'"},
      {"https://example..com/", false, "empty label"},
      {"https://example.com../", false, "empty label"},
      {"https://.example.com/", false, "empty label"},
      {"https://" + long_label + ".com/", false, "longer than 63"},
      {"https://" + long_host + "/", false, "longer than 253"},
      // parser differentials: whitespace, controls, backslashes
      {"https://example.com\\@evil.com/", false, "backslash"},
      {"https://evil.com\\.example.com", false, "backslash"},
      {" https://example.com", false, "whitespace or control"},
      {"https://example.com/\n", false, "whitespace or control"},
      {"https://exa\tmple.com", false, "whitespace or control"},
      {"https://example.com/a b", false, "whitespace or control"},
      {std::string("https://example.com\0.evil.com/", 30), false, "whitespace or control"},
      // path, query, fragment
      {"https://example.com/<script>", false, "character '<' not allowed in URL path"},
      {"https://example.com/a|b", false, "character '|'"},
      {"https://example.com/%zz", false, "malformed percent-encoding"},
      {"https://example.com/%4", false, "malformed percent-encoding"},
      {"https://example.com/\xC3\xA9", false, "non-ASCII character in URL path"},
      {"https://example.com/?q=\"x\"", false, "character '\"' not allowed in URL query"},
      {"https://example.com#a#b", false, "'#' not allowed in URL fragment"},
      {"", false, "empty URL"},
      {"https://example.com/" + std::string(9000, 'a'), false, "longer than 8192"},
  };
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    auto result = ParseNetworkUrl(c.url);
    if (c.allowed) {
      ASSERT_TRUE(result.has_value()) << c.url << ": " << result.error().message();
      EXPECT_EQ(result->host, c.expected) << c.url;
    } else {
      ASSERT_FALSE(result.has_value()) << c.url << " -> " << result->host;
      EXPECT_EQ(result.error().code(), ErrorCode::kPermissionDenied);
      EXPECT_NE(result.error().message().find(c.expected), std::string::npos)
          << c.url << ": " << result.error().message();
    }
  }
}

TEST(ParseNetworkUrlTest, Components) {
  auto url = ParseNetworkUrl("HTTPS://Example.com:8443/a/b?x=1&y=2#frag");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "example.com");
  EXPECT_EQ(url->host_kind, HostKind::kDomain);
  EXPECT_EQ(url->port, 8443);
  EXPECT_EQ(url->path, "/a/b");
  EXPECT_EQ(url->query, "x=1&y=2");
  EXPECT_EQ(url->fragment, "frag");

  auto v6 = ParseNetworkUrl("http://[::1]:80");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host_kind, HostKind::kIpv6);
  EXPECT_EQ(v6->path, "");
  auto v4 = ParseNetworkUrl("10.0.0.1");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host_kind, HostKind::kIpv4);
  EXPECT_EQ(v4->scheme, "http");
  EXPECT_FALSE(v4->port.has_value());
}

TEST(NormalizeHostScopeTest, Table) {
  const std::vector<std::pair<std::string, std::string>> ok = {
      {"api.example.com", "api.example.com"},
      {"API.Example.COM", "api.example.com"},
      {"example.com.", "example.com"},
      {"[::1]", "::1"},
      {"::1", "::1"},
      {"[2001:db8:0:0::1]", "2001:db8::1"},
      {"127.0.0.1", "127.0.0.1"},
      {"localhost", "localhost"},
      {"local", "local"},
      {"xn--bcher-kva.example", "xn--bcher-kva.example"},
  };
  for (const auto& [entry, normal] : ok) {
    auto result = NormalizeHostScope(entry);
    ASSERT_TRUE(result) << entry << ": " << result.error().message();
    EXPECT_EQ(*result, normal);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"*.example.com", "wildcard"},
      {"*", "wildcard"},
      {"**", "wildcard"},  // the engine reads "**" as "every host" before asking
      {"https://example.com", "no scheme"},
      {"example.com/path", "'/'"},
      {"user@example.com", "'@'"},
      {"example.com:8080", "invalid IPv6"},
      {" example.com", "whitespace"},
      {"example.com ", "whitespace"},
      {"b\xC3\xBC" "cher.example", "non-ASCII"},
      {"127.1", "non-canonical IPv4"},
      {"2130706433", "non-canonical IPv4"},
      {"::ffff:1.2.3.4", "IPv4-mapped"},
      {"", "empty host"},
      {"example.com..", "empty label"},
      {"ex_ample.com", "'_'"},
  };
  for (const auto& [entry, reason] : bad) {
    auto result = NormalizeHostScope(entry);
    ASSERT_FALSE(result) << entry << " -> " << *result;
    EXPECT_NE(result.error().message().find(reason), std::string::npos) << entry << ": " << result.error().message();
  }
}

TEST(NormalizeHostScopeTest, DifferencesFromNormalizeNetworkReadDomain) {
  // The PROTOCOL §12.5 normaliser trims and rejects a trailing dot; the engine's
  // refuses whitespace and removes one trailing dot.
  EXPECT_EQ(NormalizeNetworkReadDomain(" example.com "), "example.com");
  EXPECT_FALSE(NormalizeHostScope(" example.com "));
  EXPECT_FALSE(NormalizeNetworkReadDomain("example.com.").has_value());
  EXPECT_EQ(*NormalizeHostScope("example.com."), "example.com");
  // The PROTOCOL §12.5 normaliser takes a short IPv4 form for a DNS name; the engine
  // refuses every host whose last label is numeric unless it is a dotted-quad.
  EXPECT_EQ(NormalizeNetworkReadDomain("127.1"), "127.1");
  EXPECT_FALSE(NormalizeHostScope("127.1"));
  EXPECT_EQ(NormalizeNetworkReadDomain("0x7f.1"), "0x7f.1");
  EXPECT_FALSE(NormalizeHostScope("0x7f.1"));
  // Only the engine refuses IPv4-mapped IPv6.
  EXPECT_TRUE(NormalizeNetworkReadDomain("::ffff:127.0.0.1").has_value());
  EXPECT_FALSE(NormalizeHostScope("::ffff:127.0.0.1"));
  // Whatever the engine accepts, the PROTOCOL §12.5 normaliser accepts too (modulo the dot).
  for (const std::string entry : {"api.example.com", "API.Example.COM", "[::1]", "127.0.0.1", "localhost"}) {
    ASSERT_TRUE(NormalizeHostScope(entry));
    EXPECT_EQ(NormalizeNetworkReadDomain(entry), *NormalizeHostScope(entry)) << entry;
  }
}

TEST(HostInScopesTest, ExactHostsOnly) {
  // covers TEL-052, TEL-053
  EXPECT_TRUE(HostInScopes("api.example.com", {"api.example.com"}));
  EXPECT_TRUE(HostInScopes("api.example.com", {"API.EXAMPLE.COM."}));
  EXPECT_FALSE(HostInScopes("api.example.com", {"example.com"}));    // no subdomain inference
  EXPECT_FALSE(HostInScopes("example.com", {"api.example.com"}));    // nor the reverse
  EXPECT_FALSE(HostInScopes("api.example.com", {"*.example.com"}));  // wildcards never match
  EXPECT_FALSE(HostInScopes("api.example.com", {"*"}));
  EXPECT_FALSE(HostInScopes("api.example.com", {}));
  EXPECT_TRUE(HostInScopes("api.example.com", {"**"}));
  EXPECT_TRUE(HostInScopes("::1", {"[::1]"}));
  EXPECT_FALSE(HostInScopes("127.0.0.1", {"localhost"}));  // names are not resolved
  EXPECT_FALSE(HostInScopes("localhost", {"local"}));
}

TEST(ParseNetworkUrlTest, CredentialsNeverGrantTheUserinfoHost) {
  // covers TEL-054
  for (const std::string url : {"http://allowed.com@evil.com/", "http://allowed.com:x@evil.com/",
                                "https://evil.com@allowed.com/"}) {
    auto result = ParseNetworkUrl(url);
    ASSERT_FALSE(result) << url;
    EXPECT_NE(result.error().message().find("credentials"), std::string::npos);
  }
}

TEST(ParseNetworkUrlPropertyTest, AcceptedHostsAreCanonicalFixedPoints) {
  // An accepted URL's host is lowercase ASCII, has no trailing dot, and
  // normalises to itself as a scope (so it matches exactly its own entry).
  std::mt19937 rng(2718);
  const std::vector<std::string> pieces = {"http://", "https://", "ftp://", "a", "B", "xn--", "-", ".", "..", ":",
                                           "80", "@", "[", "]", "::1", "0x7f", "127", "1", "/", "?", "#", "%2e",
                                           "*", "_", " ", "\\", "\xc3\xa9", "0", "255", "256", "ffff:"};
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string url;
    int length = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < length; ++i) url += pieces[rng() % pieces.size()];
    auto result = ParseNetworkUrl(url);
    if (!result) continue;
    ++accepted;
    const std::string& host = result->host;
    ASSERT_FALSE(host.empty()) << url;
    ASSERT_NE(host.back(), '.') << url;
    for (char c : host) {
      ASSERT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':') << url;
    }
    auto scope = NormalizeHostScope(host);
    ASSERT_TRUE(scope) << url << " host " << host << ": " << scope.error().message();
    ASSERT_EQ(*scope, host) << url;
    ASSERT_TRUE(HostInScopes(host, {host}));
    ASSERT_TRUE(result->scheme == "http" || result->scheme == "https");
  }
  EXPECT_GT(accepted, 500);
}

}  // namespace
}  // namespace telic::policy
