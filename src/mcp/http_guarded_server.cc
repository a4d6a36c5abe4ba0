#include "mcp/http_guarded_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace telic::mcp {

thread_local ConnectionState* t_connection = nullptr;

namespace {

using SteadyClock = std::chrono::steady_clock;

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

}  // namespace

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

GuardedServer::GuardedServer(const HttpOptions& options)
    : options_(options),
      reactor_(LimitsOf(options), [this](std::unique_ptr<HttpConnection>& c) { return pool_->TryEnqueue(c); }) {
  new_task_queue = [this] { return new AdoptingQueue([this] { StopConnections(); }); };
}

GuardedServer::~GuardedServer() { StopConnections(); }

Status GuardedServer::StartConnections() {
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

void GuardedServer::StopConnections() {
  reactor_.Stop();
  if (pool_) pool_->Shutdown();
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  // Responses go out as headers + body writes: without TCP_NODELAY the body
  // would wait for the client's delayed ACK (~40 ms per request).
  int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  reactor_.Adopt(sock);
  return true;
}

void GuardedServer::Serve(std::unique_ptr<HttpConnection> connection) {
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

}  // namespace telic::mcp
