// The parts of the HTTP transport's interface that need no HTTP library
// (src/mcp/http_transport.h): they are linked into `telic` itself, which is
// built without cpp-httplib (see src/cli/http_features.h).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>

#include <fmt/format.h>

#include "base/sha256.h"
#include "mcp/http_transport.h"

namespace telic::mcp {

Result<std::pair<std::string, int>> ParseListenAddress(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("--http expects HOST:PORT, got \"{}\"", text));
  }
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string_view port_text = text.substr(colon + 1);
  int port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9' || port > 65535) return Fail(ErrorCode::kInvalidArgument, fmt::format("bad port in \"{}\"", text));
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return Fail(ErrorCode::kInvalidArgument, fmt::format("bad port in \"{}\"", text));
  return std::make_pair(host, port);
}

bool IsLoopbackHost(std::string_view host) {
  std::string h(host);
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (h == "localhost" || h == "::1") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

bool SecretsEqual(std::string_view a, std::string_view b) {
  return BytesEqualConstantTime(Sha256Hex(a), Sha256Hex(b));
}

}  // namespace telic::mcp
