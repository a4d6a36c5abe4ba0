#include "mcp/http_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "base/ids.h"
#include "base/json_parse.h"
#include "base/sha256.h"
#include "base/text.h"
#include "mcp/http_connections.h"
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

// The request a worker thread is serving, for the handlers on that thread.
struct ConnectionState {
  bool reading_head = true;     // head bytes count against max_head_bytes
  size_t head_bytes = 0;
  bool close_after = false;     // the response ends the connection (unread body, limits)
};
thread_local ConnectionState* t_connection = nullptr;

ConnectionLimits LimitsOf(const HttpOptions& options) {
  ConnectionLimits limits;
  limits.max_head_bytes = options.max_head_bytes;
  limits.max_body_bytes = options.max_body_bytes;
  limits.head_timeout_ms = options.head_timeout_ms;
  limits.body_timeout_ms = options.body_timeout_ms;
  limits.keep_alive_timeout_ms = options.keep_alive_timeout_s * 1000;
  limits.max_connections = std::max<size_t>(1, options.max_connections);
  limits.max_buffered_body_bytes = options.max_buffered_body_bytes;
  return limits;
}

// The stream httplib parses one request from: the bytes the reactor
// buffered (a whole request), never the socket, so a worker never waits for
// a client to send. Past them it reads end of file. Writes go to the socket,
// each wait bounded by io_timeout_ms.
class BufferedStream final : public httplib::Stream {
 public:
  BufferedStream(HttpConnection& connection, const HttpOptions& options, ConnectionState& state)
      : connection_(connection), options_(options), state_(state) {}

  size_t consumed() const { return pos_; }

  bool is_readable() const override { return pos_ < connection_.input.size(); }
  bool is_writable() const override { return WaitWritable(); }

  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, connection_.input.size() - pos_);
    if (state_.reading_head) {
      state_.head_bytes += n;
      if (state_.head_bytes > options_.max_head_bytes) {
        state_.close_after = true;
        return -1;
      }
    }
    std::memcpy(ptr, connection_.input.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    size_t done = 0;
    while (done < size) {
      if (!WaitWritable()) return done > 0 ? static_cast<ssize_t>(done) : -1;
      ssize_t n = ::send(connection_.fd, ptr + done, size - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return done > 0 ? static_cast<ssize_t>(done) : -1;
      done += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(done);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(false, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(true, ip, port); }
  socket_t socket() const override { return connection_.fd; }

 private:
  bool WaitWritable() const {
    auto limit = SteadyClock::now() + std::chrono::milliseconds(options_.io_timeout_ms);
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(limit - SteadyClock::now()).count();
      if (left <= 0) return false;
      pollfd p{connection_.fd, POLLOUT, 0};
      int rc = ::poll(&p, 1, static_cast<int>(left));
      if (rc < 0 && errno == EINTR) continue;
      return rc > 0;
    }
  }

  void Address(bool local, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int rc = local ? ::getsockname(connection_.fd, reinterpret_cast<sockaddr*>(&addr), &len)
                   : ::getpeername(connection_.fd, reinterpret_cast<sockaddr*>(&addr), &len);
    if (rc != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
      port = ntohs(a->sin6_port);
    }
    ip = text;
  }

  HttpConnection& connection_;
  const HttpOptions& options_;
  ConnectionState& state_;
  size_t pos_ = 0;
};

// A fixed pool of workers with a bounded queue of whole requests. When the
// queue is full a request is not queued (the reactor answers 503 and
// closes), so a flood cannot grow memory or latency without bound.
class BoundedPool {
 public:
  using Serve = std::function<void(std::unique_ptr<HttpConnection>)>;
  BoundedPool(int threads, size_t max_queue, Serve serve) : max_queue_(max_queue), serve_(std::move(serve)) {
    for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { Work(); });
  }
  ~BoundedPool() { Shutdown(); }

  // Moves from `connection` only when it was queued.
  bool TryEnqueue(std::unique_ptr<HttpConnection>& connection) {
    std::lock_guard lock(mutex_);
    if (stopping_ || jobs_.size() >= max_queue_) return false;
    jobs_.push_back(std::move(connection));
    cond_.notify_one();
    return true;
  }

  // Serves every queued request, then joins the workers.
  void Shutdown() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cond_.notify_all();
    for (auto& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
  }

 private:
  void Work() {
    while (true) {
      std::unique_ptr<HttpConnection> job;
      {
        std::unique_lock lock(mutex_);
        cond_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and every queued request was served
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      serve_(std::move(job));
    }
  }

  size_t max_queue_;
  Serve serve_;
  std::vector<std::thread> workers_;
  std::deque<std::unique_ptr<HttpConnection>> jobs_;
  bool stopping_ = false;
  std::mutex mutex_;
  std::condition_variable cond_;
};

// Runs httplib's per-socket task on its accepting thread: the task only
// hands the socket to the reactor. Its shutdown stops the connection layer.
class AdoptingQueue final : public httplib::TaskQueue {
 public:
  explicit AdoptingQueue(std::function<void()> on_shutdown) : on_shutdown_(std::move(on_shutdown)) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { on_shutdown_(); }

 private:
  std::function<void()> on_shutdown_;
};

constexpr int kListenBacklog = 1024;  // the kernel caps it at net.core.somaxconn

// httplib's server on telic's connection layer: httplib accepts, parses and
// routes; the reactor (src/mcp/http_connections.h) reads requests and a
// fixed pool of workers answers whole ones.
class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(const HttpOptions& options)
      : options_(options),
        reactor_(LimitsOf(options), [this](std::unique_ptr<HttpConnection>& c) { return pool_->TryEnqueue(c); }) {
    new_task_queue = [this] { return new AdoptingQueue([this] { StopConnections(); }); };
  }
  ~GuardedServer() override { StopConnections(); }

  [[nodiscard]] Status StartConnections() {
    // httplib 0.11 listens with a backlog of 5 (compiled into its library):
    // a burst of connections would wait for SYN retransmits (1 s, 3 s, ...).
    // Listening again on a listening socket only changes its backlog.
    if (::listen(svr_sock_, kListenBacklog) != 0) {
      return Fail(ErrorCode::kUnavailable, fmt::format("listen: {}", std::strerror(errno)));
    }
    pool_ = std::make_unique<BoundedPool>(options_.worker_threads, options_.max_queued_connections,
                                          [this](std::unique_ptr<HttpConnection> c) { Serve(std::move(c)); });
    return reactor_.Start();
  }

  // Closes waiting connections, then lets the workers finish their requests.
  void StopConnections() {
    reactor_.Stop();
    if (pool_) pool_->Shutdown();
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    // Responses go out as headers + body writes: without TCP_NODELAY the body
    // would wait for the client's delayed ACK (~40 ms per request).
    int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    reactor_.Adopt(sock);
    return true;
  }

  // Answers the whole request at the head of `connection`, then returns the
  // connection to the reactor for its next one (or closes it).
  void Serve(std::unique_ptr<HttpConnection> connection) {
    ConnectionState state;
    t_connection = &state;
    BufferedStream stream(*connection, options_, state);
    bool last = connection->served + 1 >= options_.keep_alive_max_requests || svr_sock_ == INVALID_SOCKET;
    bool closed_by_client = false;
    bool ok = process_request(stream, last, closed_by_client, nullptr);
    t_connection = nullptr;
    connection->input.erase(0, stream.consumed());
    if (connection->input.capacity() > 64 * 1024) connection->input.shrink_to_fit();
    ++connection->served;
    if (state.close_after) return reactor_.Linger(std::move(connection));
    if (!ok || closed_by_client || last) return CloseConnection(connection->fd);
    reactor_.Resume(std::move(connection));
  }

  const HttpOptions& options_;
  std::unique_ptr<BoundedPool> pool_;
  ConnectionReactor reactor_;
};

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
    int port = options_.port;
    if (port == 0) {
      port = http_.bind_to_any_port(options_.host);
      if (port <= 0) return Fail(ErrorCode::kUnavailable, fmt::format("cannot listen on {}:0", options_.host));
    } else if (!http_.bind_to_port(options_.host, port)) {
      std::string address = fmt::format("{}:{}", BracketedHost(options_.host), port);
      if (PortInUse(options_.host, port)) return Fail(ErrorCode::kAlreadyExists, address + " is in use");
      return Fail(ErrorCode::kUnavailable, "cannot listen on " + address);
    }
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
  bool Guard(const httplib::Request& req, httplib::Response& res) {
    if (t_connection) t_connection->reading_head = false;
    std::string host = Lower(req.get_header_value("Host"));
    if (req.get_header_value_count("Host") != 1 ||
        std::find(allowed_hosts_.begin(), allowed_hosts_.end(), host) == allowed_hosts_.end()) {
      CloseAfter(res);
      Reject(res, 403, "Forbidden: Host header is not allowed");
      return false;
    }
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

namespace {

// Binds `transport` (on failure: "<what> failed: <why>" on stderr, exit 1),
// announces it (`announce(base_url)`, then each mount's URL), then serves
// until SIGINT/SIGTERM. Returns the process exit code.
int ServeUntilSignal(HttpTransport& transport, const HttpOptions& options, std::string_view what,
                     const std::function<void(const std::string&)>& announce) {
  if (auto bound = transport.Bind(); !bound) {
    // Another server on the port: said as every CLI failure is said.
    if (bound.error().code() == ErrorCode::kAlreadyExists) std::cerr << "telic: " << bound.error().message() << "\n";
    else std::cerr << what << " failed: " << bound.error().message() << "\n";
    return 1;
  }
  std::string host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  std::string base = fmt::format("http://{}:{}", host, transport.port());
  announce(base);
  for (const auto& mount : options.mounts) {
    std::cerr << fmt::format("{} at {}{}/", mount.name, base, mount.prefix) << std::endl;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  std::thread stopper([&transport, signals] {
    int signal = 0;
    sigwait(&signals, &signal);
    transport.Stop();
  });
  bool ok = transport.Run();
  // Wake the signal thread if the server stopped on its own.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return ok ? 0 : 1;
}

// Termination signals are taken by one thread (sigwait), which stops the
// server: they are blocked before any thread starts.
void BlockTerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

}  // namespace

int ServeHttp(Server& server, HttpOptions options, const std::string& repository_root) {
  BlockTerminationSignals();
  HttpTransport transport(server, options);
  return ServeUntilSignal(transport, options, "Telic MCP", [&](const std::string& base) {
    std::cerr << fmt::format("Telic MCP ready for {} at {}/mcp", repository_root, base) << std::endl;
  });
}

int ServeHttpMounts(HttpOptions options) {
  BlockTerminationSignals();
  HttpTransport transport(options);
  std::string what = options.mounts.empty() ? "Telic" : options.mounts.front().name;
  return ServeUntilSignal(transport, options, what, [](const std::string&) {});
}

}  // namespace telic::mcp
