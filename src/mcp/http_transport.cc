#include "mcp/http_transport.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <httplib.h>

#include "base/ids.h"
#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/text.h"
#include "mcp/http_guarded_server.h"
#include "mcp/http_sessions.h"
#include "mcp/jsonrpc.h"
#include "mcp/revision.h"

namespace telic::mcp {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string BracketedHost(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// Whether binding host:port fails because another socket holds it (asked
// after a failed bind, to tell that case from the others).
bool PortInUse(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool in_use = false;
  for (addrinfo* at = found; at != nullptr && !in_use; at = at->ai_next) {
    int fd = ::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC, at->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    in_use = ::bind(fd, at->ai_addr, at->ai_addrlen) != 0 && errno == EADDRINUSE;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return in_use;
}

struct Session {
  std::string protocol_version;
  std::optional<Profile> profile;  // what its initialize asked for (mcp/lean_profile.h)
};

constexpr const char* kJson = "application/json";

// A JSON-RPC error body for transport-level failures (id null), as SDKs expect.
std::string TransportError(std::string_view message, int code = -32000) {
  return ErrorResponse(nullptr, code, message);
}

bool MediaTypeIs(const std::string& header, std::string_view type) {
  std::string value = Lower(header.substr(0, header.find(';')));
  value.erase(std::remove(value.begin(), value.end(), ' '), value.end());
  return value == type;
}

bool AcceptsJson(const std::string& accept) {
  if (accept.empty()) return true;
  std::string value = Lower(accept);
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    std::string item = value.substr(start, end == std::string::npos ? std::string::npos : end - start);
    item = item.substr(0, item.find(';'));
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item == "application/json" || item == "application/*" || item == "*/*") return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

}  // namespace

class HttpTransport::Impl {
 public:
  // `server` null: no /mcp endpoint, only the mounts.
  Impl(Server* server, HttpOptions options)
      : server_(server),
        options_(std::move(options)),
        http_(options_),
        sessions_(SessionTable::Limits{options_.max_sessions, std::chrono::seconds(options_.session_init_timeout_s),
                                       std::chrono::seconds(options_.session_idle_timeout_s)}) {}

  Status Bind(int& port_out) {
    if (!IsLoopbackHost(options_.host) && options_.auth_token.empty()) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("refusing to listen on non-loopback address {} without --auth-token-file", options_.host));
    }
    Configure();
    TELIC_ASSIGN_OR_RETURN(int port, BindPort());
    TELIC_RETURN_IF_ERROR(http_.StartConnections());
    port_ = port;
    port_out = port;
    AllowHost(options_.host, port);
    if (IsLoopbackHost(options_.host)) {
      for (const char* name : {"127.0.0.1", "localhost", "::1"}) AllowHost(name, port);
    }
    for (const auto& extra : options_.allowed_hosts) allowed_hosts_.push_back(Lower(extra));
    for (const auto& origin : options_.allowed_origins) allowed_origins_.push_back(Lower(origin));
    return Ok();
  }

  bool Run() { return http_.listen_after_bind(); }

  void InstallMcp() {
    http_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) { Post(req, res); });
    http_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) { Delete(req, res); });
    http_.Get("/mcp", [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST, DELETE");
      res.set_content(TransportError("Method Not Allowed: this server sends no server-initiated messages"), kJson);
    });
    http_.Options("/mcp", [](const httplib::Request&, httplib::Response& res) {
      res.status = 204;
      res.set_header("Allow", "POST, DELETE, OPTIONS");
    });
  }

  // Every response passes here (the guard's refusals too): a mount decorates
  // the responses of its paths, or every response without /mcp.
  void Decorate(const httplib::Request& req, httplib::Response& res) {
    for (const auto& mount : options_.mounts) {
      if (!mount.decorate) continue;
      bool owned = req.path == mount.prefix || req.path.starts_with(mount.prefix + "/");
      if (!server_ || owned) mount.decorate(res);
    }
  }
  void Stop() {
    stopping_ = true;  // open listen streams send their closing result and end
    http_.stop();
  }

  size_t SessionCount() { return sessions_.Count(SteadyClock::now()); }

 private:
  // The limits, the guard, the routes (/mcp, the mounts, /healthz, /readyz)
  // and the socket options, all set before the socket is bound.
  void Configure() {
    http_.set_keep_alive_max_count(options_.keep_alive_max_requests);
    http_.set_keep_alive_timeout(options_.keep_alive_timeout_s);
    http_.set_read_timeout(options_.io_timeout_ms / 1000, (options_.io_timeout_ms % 1000) * 1000);
    http_.set_write_timeout(options_.io_timeout_ms / 1000, (options_.io_timeout_ms % 1000) * 1000);
    http_.set_payload_max_length(options_.max_body_bytes);
    http_.set_tcp_nodelay(true);
    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      return Guard(req, res) ? httplib::Server::HandlerResponse::Unhandled : httplib::Server::HandlerResponse::Handled;
    });
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      res.status = 500;
      res.set_content(TransportError("Internal error", kInternalError), kJson);
    });
    if (server_) InstallMcp();
    for (const auto& mount : options_.mounts) {
      if (mount.install) mount.install(http_);
    }
    http_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) { Decorate(req, res); });
    http_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"ok"})", kJson);
    });
    http_.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      Status ready = options_.readiness ? options_.readiness() : Ok();
      if (ready) {
        res.set_content(R"({"status":"ready"})", kJson);
      } else {
        res.status = 503;
        res.set_content(Compact(Json{{"status", "unavailable"}, {"error", CleanMessage(ready.error().message(), 300)}}),
                        kJson);
      }
    });
    // SO_REUSEADDR only (httplib's default adds SO_REUSEPORT): a second
    // server on a port in use must fail, not share its connections.
    http_.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
  }

  // Binds options_.port (0: a free port the kernel picks); the port bound.
  Result<int> BindPort() {
    int port = options_.port;
    if (port == 0) {
      port = http_.bind_to_any_port(options_.host);
      if (port <= 0) return Fail(ErrorCode::kUnavailable, fmt::format("cannot listen on {}:0", options_.host));
    } else if (!http_.bind_to_port(options_.host, port)) {
      std::string address = fmt::format("{}:{}", BracketedHost(options_.host), port);
      if (PortInUse(options_.host, port)) return Fail(ErrorCode::kAlreadyExists, address + " is in use");
      return Fail(ErrorCode::kUnavailable, "cannot listen on " + address);
    }
    return port;
  }

  void AllowHost(const std::string& host, int port) {
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    allowed_hosts_.push_back(Lower(fmt::format("{}:{}", h, port)));
    allowed_origins_.push_back(Lower(fmt::format("http://{}:{}", h, port)));
  }

  // Ends the connection after this response (its body may be unread).
  static void CloseAfter(httplib::Response& res) {
    if (t_connection) t_connection->close_after = true;
    res.set_header("Connection", "close");
  }

  static void Reject(httplib::Response& res, int status, std::string_view message) {
    res.status = status;
    res.set_content(TransportError(message), kJson);
  }

  // Checks every request before its body is read: Host, Origin, token, limits.
  // Each check answers the refusal itself and returns false.
  bool Guard(const httplib::Request& req, httplib::Response& res) {
    if (t_connection) t_connection->reading_head = false;
    return GuardHost(req, res) && GuardOrigin(req, res) && GuardToken(req, res) && GuardLength(req, res);
  }

  // Exactly one Host header, one of the allowed hosts (403).
  bool GuardHost(const httplib::Request& req, httplib::Response& res) {
    std::string host = Lower(req.get_header_value("Host"));
    if (req.get_header_value_count("Host") != 1 ||
        std::find(allowed_hosts_.begin(), allowed_hosts_.end(), host) == allowed_hosts_.end()) {
      CloseAfter(res);
      Reject(res, 403, "Forbidden: Host header is not allowed");
      return false;
    }
    return true;
  }

  // An Origin, when sent, is an allowed one (403); the CORS headers for it.
  bool GuardOrigin(const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Origin")) {
      std::string origin = Lower(req.get_header_value("Origin"));
      if (req.get_header_value_count("Origin") != 1 ||
          std::find(allowed_origins_.begin(), allowed_origins_.end(), origin) == allowed_origins_.end()) {
        CloseAfter(res);
        Reject(res, 403, "Forbidden: Origin is not allowed");
        return false;
      }
      // Exactly the caller's (allowed) origin, never a wildcard.
      res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
      res.set_header("Vary", "Origin");
      res.set_header("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version");
      if (req.method == "OPTIONS") {
        res.set_header("Access-Control-Allow-Methods", "POST, DELETE, OPTIONS");
        res.set_header("Access-Control-Allow-Headers",
                       "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, "
                       "Mcp-Method, Mcp-Name, traceparent, tracestate");
        res.set_header("Access-Control-Max-Age", "600");
      }
    }
    return true;
  }

  // The bearer token when one is configured (401); preflights carry none.
  bool GuardToken(const httplib::Request& req, httplib::Response& res) {
    if (!options_.auth_token.empty() && req.method != "OPTIONS") {
      std::string authorization = req.get_header_value("Authorization");
      constexpr std::string_view kBearer = "bearer ";
      bool ok = req.get_header_value_count("Authorization") == 1 && authorization.size() > kBearer.size() &&
                Lower(authorization.substr(0, kBearer.size())) == kBearer &&
                SecretsEqual(std::string_view(authorization).substr(kBearer.size()), options_.auth_token);
      if (!ok) {
        CloseAfter(res);
        res.set_header("WWW-Authenticate", "Bearer realm=\"telic\"");
        Reject(res, 401, "Unauthorized: a valid bearer token is required");
        return false;
      }
    }
    return true;
  }

  // A body only with a valid Content-Length within the limit (411, 400, 413).
  bool GuardLength(const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Transfer-Encoding")) {
      CloseAfter(res);
      Reject(res, 411, "Length Required: send the body with Content-Length");
      return false;
    }
    if (req.has_header("Content-Length")) {
      const std::string length = req.get_header_value("Content-Length");
      bool digits = !length.empty() && length.size() <= 12 &&
                    std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoull(length) > options_.max_body_bytes) {
        CloseAfter(res);
        Reject(res, digits ? 413 : 400,
               digits ? fmt::format("Payload Too Large: the limit is {} bytes", options_.max_body_bytes)
                      : std::string("Bad Request: invalid Content-Length"));
        return false;
      }
    }
    return true;
  }

  // Finds the session named by Mcp-Session-Id and marks it used (with
  // `begin`: a request is being handled in it until sessions_.End(id));
  // answers 400/404 when absent.
  bool LookupSession(const httplib::Request& req, httplib::Response& res, std::string& id, Session& session,
                     bool begin = false) {
    if (!req.has_header("Mcp-Session-Id")) {
      Reject(res, 400, "Bad Request: Mcp-Session-Id header is required");
      return false;
    }
    id = req.get_header_value("Mcp-Session-Id");
    auto version = sessions_.Use(id, SteadyClock::now(), begin);
    if (!version) {
      Reject(res, 404, "Not Found: unknown, terminated or expired session; initialize a new one");
      return false;
    }
    session.protocol_version = *version;
    session.profile = sessions_.ProfileOf(id);
    return true;
  }

  // MCP-Protocol-Version, when sent, must be supported and (in a session) the negotiated one.
  bool CheckProtocolVersion(const httplib::Request& req, httplib::Response& res, const Session* session) {
    if (!req.has_header("MCP-Protocol-Version")) return true;  // the spec's fallback: 2025-03-26
    std::string version = req.get_header_value("MCP-Protocol-Version");
    const auto& supported = SupportedProtocolVersions();
    if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
      Reject(res, 400, fmt::format("Bad Request: unsupported MCP-Protocol-Version \"{}\"", CleanMessage(version, 64)));
      return false;
    }
    if (session && version != session->protocol_version) {
      Reject(res, 400, fmt::format("Bad Request: MCP-Protocol-Version {} differs from the negotiated {}", version,
                                   session->protocol_version));
      return false;
    }
    return true;
  }

  // Counts requests being handled; false (503) when at the limit.
  class InFlight {
   public:
    InFlight(std::atomic<int>& counter, int limit) : counter_(counter) { ok_ = ++counter_ <= limit; }
    ~InFlight() { --counter_; }
    bool ok() const { return ok_; }

   private:
    std::atomic<int>& counter_;
    bool ok_;
  };

  void Post(const httplib::Request& req, httplib::Response& res) {
    if (!MediaTypeIs(req.get_header_value("Content-Type"), "application/json")) {
      return Reject(res, 415, "Unsupported Media Type: Content-Type must be application/json");
    }
    if (!AcceptsJson(req.get_header_value("Accept"))) {
      return Reject(res, 406, "Not Acceptable: the client must accept application/json");
    }
    Classified classified = ClassifyLine(req.body, options_.max_body_bytes);
    if (classified.error_response) {
      res.status = 400;
      res.set_content(*classified.error_response, kJson);
      return;
    }
    if (IsModernHttpRequest(req, classified)) return PostModern(req, res, classified);
    bool is_initialize = classified.message && classified.message->id && classified.message->method == "initialize";
    if (is_initialize) return Initialize(req, res);
    std::string id;
    Session session;
    bool request = classified.message && classified.message->id;
    if (!LookupSession(req, res, id, session, /*begin=*/request)) return;
    struct EndRequest {
      SessionTable* table;
      const std::string& id;
      ~EndRequest() {
        if (table) table->End(id);
      }
    } end_request{request ? &sessions_ : nullptr, id};
    if (!CheckProtocolVersion(req, res, &session)) return;
    if (!request) {
      res.status = 202;  // a notification or a client response: accepted, nothing to answer
      return;
    }
    InFlight in_flight(in_flight_, options_.max_in_flight);
    if (!in_flight.ok()) {
      res.set_header("Retry-After", "1");
      return Reject(res, 503, "Service Unavailable: too many requests in flight; retry");
    }
    SessionProfileScope profile(session.profile);
    std::optional<std::string> reply = server_->HandleLine(req.body);
    res.set_header("Mcp-Session-Id", id);
    if (reply) res.set_content(*reply, kJson);
    else res.status = 202;
  }

  // 2026-07-28: a modern MCP-Protocol-Version header or `_meta` version.
  static bool IsModernHttpRequest(const httplib::Request& req, const Classified& classified) {
    if (IsModernVersion(req.get_header_value("MCP-Protocol-Version"))) return true;
    return classified.message && IsModernMessage(classified.message->params);
  }

  // A stateless request: no session; the mirrored headers must match the body.
  void PostModern(const httplib::Request& req, httplib::Response& res, const Classified& classified) {
    if (!classified.message || !classified.message->id) {
      res.status = 202;  // a notification (no header rules in 2026-07-28) or a client response
      return;
    }
    const Message& message = *classified.message;
    if (auto refusal = CheckMirroredHeaders(MirroredHeadersOf(req), *message.id, message.method, message.params)) {
      res.status = 400;
      res.set_content(*refusal, kJson);
      return;
    }
    InFlight in_flight(in_flight_, options_.max_in_flight);
    if (!in_flight.ok()) {
      res.set_header("Retry-After", "1");
      return Reject(res, 503, "Service Unavailable: too many requests in flight; retry");
    }
    if (message.method == "subscriptions/listen") return Listen(res, message);
    SessionProfileScope profile(std::nullopt);  // stateless: the server's profile
    std::optional<std::string> reply = server_->HandleLine(req.body);
    if (!reply) return Reject(res, 500, "Internal error: the request produced no reply");
    res.status = ModernHttpStatus(*reply);
    res.set_content(*reply, kJson);
  }

  // subscriptions/listen: an SSE response that stays open (one worker
  // thread each; at most half the workers) and carries the acknowledgement,
  // then the opted-in notifications, a comment line as keep-alive every 15 s,
  // and the closing result when the server stops.
  void Listen(httplib::Response& res, const Message& message) {
    if (listeners_.fetch_add(1) >= std::max(1, options_.worker_threads / 2)) {
      --listeners_;
      res.set_header("Retry-After", "5");
      return Reject(res, 503, "Service Unavailable: too many subscriptions/listen streams");
    }
    auto queue = std::make_shared<ListenQueue>();
    auto opened = server_->OpenListen(*message.id, message.params, [queue](const std::string& line) { queue->Push(line); });
    if (const auto* refusal = std::get_if<std::string>(&opened)) {
      --listeners_;
      res.set_content(*refusal, kJson);
      return;
    }
    int64_t handle = std::get<int64_t>(opened);
    CloseAfter(res);
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    Json id = *message.id;
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, queue, id, quiet = SteadyClock::now()](size_t, httplib::DataSink& sink) mutable {
          auto send = [&](const std::string& text) { return sink.write(text.data(), text.size()); };
          std::string line;
          if (stopping_ || queue->Overflowed()) {
            if (stopping_) send("event: message\ndata: " + SubscriptionClosedReply(id) + "\n\n");
            sink.done();
            return true;
          }
          if (queue->Pop(line, std::chrono::milliseconds(500))) {
            quiet = SteadyClock::now();
            return send("event: message\ndata: " + line + "\n\n");
          }
          if (SteadyClock::now() - quiet < std::chrono::seconds(15)) return sink.is_writable();
          quiet = SteadyClock::now();
          return send(":\n\n");
        },
        [this, handle](bool) {
          server_->hub().Unlisten(handle);
          --listeners_;
        });
  }

  static MirroredHeaders MirroredHeadersOf(const httplib::Request& req) {
    MirroredHeaders headers;
    auto read = [&](const char* name, std::optional<std::string>& out) {
      size_t count = req.get_header_value_count(name);
      if (count > 1) headers.duplicated = true;
      if (count >= 1) out = req.get_header_value(name);
    };
    read("MCP-Protocol-Version", headers.protocol_version);
    read("Mcp-Method", headers.method);
    read("Mcp-Name", headers.name);
    return headers;
  }

  void Initialize(const httplib::Request& req, httplib::Response& res) {
    if (!CheckProtocolVersion(req, res, nullptr)) return;
    Json request = ParseJsonStrict(req.body, ParseLimits{req.body.size(), kMaxJsonDepth}).value_or(Json(Json::value_t::discarded));
    std::optional<Profile> requested =
        request.is_object() && request.contains("params") ? ProfileRequestedAt(request["params"]) : std::nullopt;
    std::optional<std::string> reply;
    {
      SessionProfileScope profile(requested);
      reply = server_->HandleLine(req.body);
    }
    if (!reply) return Reject(res, 500, "Internal error: initialize produced no reply");
    Json parsed = ParseJsonStrict(*reply, ParseLimits{reply->size(), kMaxJsonDepth}).value_or(Json(Json::value_t::discarded));
    if (!parsed.is_object() || !parsed.contains("result")) {  // invalid params: no session
      res.status = 200;
      res.set_content(*reply, kJson);
      return;
    }
    std::string negotiated = parsed["result"].value("protocolVersion", "");
    std::string id = RandomHex(32);
    if (!sessions_.Open(id, negotiated, SteadyClock::now(), requested)) {
      res.set_header("Retry-After", "5");
      return Reject(res, 503, "Service Unavailable: every session has a request in progress");
    }
    res.set_header("Mcp-Session-Id", id);
    res.set_content(*reply, kJson);
  }

  void Delete(const httplib::Request& req, httplib::Response& res) {
    std::string id;
    Session session;
    if (!LookupSession(req, res, id, session)) return;
    if (!CheckProtocolVersion(req, res, &session)) return;
    sessions_.Close(id);
    res.status = 204;
  }

  Server* server_;
  HttpOptions options_;
  GuardedServer http_;
  int port_ = 0;
  std::vector<std::string> allowed_hosts_;
  std::vector<std::string> allowed_origins_;
  SessionTable sessions_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> listeners_{0};
  std::atomic<bool> stopping_{false};
};

HttpTransport::HttpTransport(Server& server, HttpOptions options)
    : impl_(std::make_unique<Impl>(&server, std::move(options))) {}
HttpTransport::HttpTransport(HttpOptions options) : impl_(std::make_unique<Impl>(nullptr, std::move(options))) {}
HttpTransport::~HttpTransport() = default;

Status HttpTransport::Bind() { return impl_->Bind(port_); }
bool HttpTransport::Run() { return impl_->Run(); }
void HttpTransport::Stop() { impl_->Stop(); }
size_t HttpTransport::session_count() const { return impl_->SessionCount(); }

}  // namespace telic::mcp
