// MCP Streamable HTTP (2025-11-25) on cpp-httplib: one endpoint, /mcp.
//
// The transport only frames messages; every JSON-RPC message goes to the same
// Server::HandleLine the stdio transport uses. POST carries exactly one
// message (batches are rejected) and a request is answered on the same HTTP
// exchange as application/json, so a response can only ever reach the
// connection and session that asked for it. GET /mcp is 405 (telic sends no
// server-initiated messages); DELETE ends a session.
//
// Security: Host and Origin are checked on every request (403; a page on a
// rebinding DNS name carries a foreign Host even without Origin), a bearer
// token when configured (401, constant-time compare), and limits bound the
// request head, body, time to read a request, connections, queued requests,
// requests in flight and sessions. Requests are read by one thread and only
// whole ones reach a worker (src/mcp/http_connections.h), so slow clients
// cannot hold workers. No header value is ever logged.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "mcp/server.h"

namespace httplib {
class Server;
struct Response;
}  // namespace httplib

namespace telic::mcp {

// Routes served beside /mcp, behind the same guard (Host, Origin, bearer
// token, limits): e.g. the read-only web UI under /ui (src/ui/ui_server.h).
struct HttpMount {
  // The mount owns this path and every path under "<prefix>/" ("/ui").
  std::string prefix;
  // Printed with the mount's URL when serving starts ("Telic UI").
  std::string name;
  // Registers the mount's handlers.
  std::function<void(httplib::Server&)> install;
  // Applied to every response to a path the mount owns, the guard's
  // refusals included (e.g. security headers). When the transport serves no
  // MCP endpoint, to every response.
  std::function<void(httplib::Response&)> decorate;
};

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (see HttpTransport::port())
  // Bearer token required on every request when non-empty. A non-loopback
  // bind is refused without one.
  std::string auth_token;
  // Origins allowed besides the server's own (exact, e.g. "https://app.example").
  std::vector<std::string> allowed_origins;
  // Host header values accepted besides the bound address and loopback names
  // (e.g. the load balancer's name, "telic.internal:8080").
  std::vector<std::string> allowed_hosts;

  size_t max_body_bytes = 8 * 1024 * 1024;   // 413 beyond
  size_t max_head_bytes = 16 * 1024;         // request line + headers; 400 beyond
  // Total deadlines, not reset by progress (408 and close beyond): a head
  // from its first byte (a connection's first head: from the accept), a
  // body from the end of its head.
  int head_timeout_ms = 10000;
  int body_timeout_ms = 10000;
  int io_timeout_ms = 5000;                  // per write wait of a response
  int keep_alive_timeout_s = 5;              // idle time between requests
  size_t keep_alive_max_requests = 1000;     // requests per connection
  // Connections waiting for a request (they hold no worker); at the cap the
  // one that has waited longest is closed for each new one.
  size_t max_connections = 1024;
  size_t max_buffered_body_bytes = 64 * 1024 * 1024;  // bodies being received, all connections
  int worker_threads = 32;                   // whole requests handled at once (D-P9)
  size_t max_queued_connections = 64;        // whole requests waiting for a worker; beyond: 503 and close
  int max_in_flight = 64;                    // MCP requests being handled; beyond: 503
  // Sessions: at the cap, initialize evicts the least recently used idle
  // session (one that never completed initialization first); its client
  // gets 404 and initializes again.
  size_t max_sessions = 4096;
  // A session whose client sent neither notifications/initialized nor a
  // request within this is forgotten.
  int session_init_timeout_s = 10;
  int session_idle_timeout_s = 1800;         // an idle session is forgotten (404)

  // GET /readyz: Ok when the store answers.
  std::function<Status()> readiness;

  // Extra routes (see HttpMount), in registration order.
  std::vector<HttpMount> mounts;
};

// Splits "HOST:PORT" ("127.0.0.1:8080", "[::1]:8080", "localhost:0").
Result<std::pair<std::string, int>> ParseListenAddress(std::string_view text);
// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);
// Constant-time equality of two secrets (compares their SHA-256 digests).
bool SecretsEqual(std::string_view a, std::string_view b);

class HttpTransport {
 public:
  HttpTransport(Server& server, HttpOptions options);
  // Serves only options.mounts (and /healthz, /readyz): no /mcp endpoint.
  explicit HttpTransport(HttpOptions options);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Validates the options and binds. kFailedPrecondition for a non-loopback
  // host without a token; kAlreadyExists when another socket listens on the
  // port ("HOST:PORT is in use"; no port sharing); kUnavailable when the
  // address cannot be bound otherwise.
  Status Bind();
  // Serves until Stop(); returns false if serving failed.
  bool Run();
  // Thread-safe; Run() returns soon after.
  void Stop();

  int port() const { return port_; }
  size_t session_count() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// `telic serve --http`: binds, prints "Telic MCP ready for <root> at <url>" on
// stderr, serves until SIGINT/SIGTERM. Returns the process exit code.
// Each mount's URL is printed after it: "<name> at <url><prefix>/".
int ServeHttp(Server& server, HttpOptions options, const std::string& repository_root);

// The same for a transport without /mcp (`telic ui`): prints only the mounts' URLs.
int ServeHttpMounts(HttpOptions options);

}  // namespace telic::mcp
