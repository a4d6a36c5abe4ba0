// The HTTP features of `telic-http` (see src/cli/http_features.h): the
// cpp-httplib transport, the web UI's mount and an HTTP client for POSTs.
#include <httplib.h>

#include "cli/http_features.h"
#include "mcp/http_transport.h"
#include "ui/ui_server.h"

namespace telic::cli {
namespace {

Result<HttpPostAnswer> PostJson(const std::string& scheme_host_port, const std::string& path, const std::string& body) {
  httplib::Client client(scheme_host_port);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(30, 0);
  client.set_write_timeout(30, 0);
  auto response = client.Post(path, body, "application/json");
  if (!response) {
    return Fail(ErrorCode::kUnavailable, httplib::to_string(response.error()));
  }
  return HttpPostAnswer{response->status, response->body};
}

constexpr HttpFeatures kLinked{
    .serve_http = &mcp::ServeHttp,
    .serve_mounts = &mcp::ServeHttpMounts,
    .ui_mount = &ui::MakeUiMount,
    .post_json = &PostJson,
};

}  // namespace

const HttpFeatures& LinkedHttpFeatures() { return kLinked; }

}  // namespace telic::cli
