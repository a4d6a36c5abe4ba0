#include "mcp/http_connections.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace telic::mcp {
namespace {

using SteadyClock = std::chrono::steady_clock;
using Phase = HttpConnection::Phase;

constexpr size_t kHeadReadBytes = 16 * 1024;
constexpr size_t kBodyReadBytes = 64 * 1024;
constexpr int kMaxPollWaitMs = 1000;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Sends a fixed response without waiting (the socket may be full: then the
// client gets the close alone).
void SendNow(int fd, std::string_view response) {
  (void)::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

constexpr std::string_view kTimeout =
    "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
constexpr std::string_view kBusy =
    "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

}  // namespace

Framing FrameRequest(std::string_view head, size_t max_body_bytes) {
  Framing framing;
  int lengths = 0;
  size_t start = head.find("\r\n");
  while (start != std::string_view::npos && start + 2 < head.size()) {
    start += 2;
    size_t end = head.find("\r\n", start);
    std::string_view line = head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view raw_name = line.substr(0, colon);
    std::string_view name = Trim(raw_name);
    bool length = EqualsIgnoringCase(name, "content-length");
    if (!length && !EqualsIgnoringCase(name, "transfer-encoding")) continue;
    // A framing header spelled with whitespace, or Transfer-Encoding: the
    // transport refuses it; never guess a length the HTTP library may read differently.
    if (!length || name.size() != raw_name.size()) return {Framing::kHandOver, 0};
    std::string_view value = Trim(line.substr(colon + 1));
    if (++lengths > 1 || value.empty() || value.size() > 12 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return {Framing::kHandOver, 0};
    }
    framing.body_bytes = std::stoull(std::string(value));
    if (framing.body_bytes > max_body_bytes) return {Framing::kHandOver, 0};
  }
  return framing;
}

void CloseConnection(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

ConnectionReactor::ConnectionReactor(ConnectionLimits limits, Dispatch dispatch)
    : limits_(limits), dispatch_(std::move(dispatch)) {}

ConnectionReactor::~ConnectionReactor() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status ConnectionReactor::Start() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Fail(ErrorCode::kUnavailable, std::string("eventfd: ") + std::strerror(errno));
  thread_ = std::thread([this] { Loop(); });
  return Ok();
}

void ConnectionReactor::Adopt(int fd) {
  auto connection = std::make_unique<HttpConnection>();
  connection->fd = fd;
  connection->phase = Phase::kFirst;
  connection->waiting_since = SteadyClock::now();
  connection->deadline = connection->waiting_since + std::chrono::milliseconds(limits_.head_timeout_ms);
  Resume(std::move(connection));
}

void ConnectionReactor::Resume(std::unique_ptr<HttpConnection> connection) {
  if (connection->phase != Phase::kFirst && connection->phase != Phase::kLinger) {
    connection->phase = Phase::kIdle;
    connection->waiting_since = SteadyClock::now();
    connection->deadline = connection->waiting_since + std::chrono::milliseconds(limits_.keep_alive_timeout_ms);
    connection->head_end = connection->body_bytes = connection->scanned = 0;
  }
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      incoming_.push_back(std::move(connection));
      Wake();
      return;
    }
  }
  CloseConnection(connection->fd);
}

void ConnectionReactor::Linger(std::unique_ptr<HttpConnection> connection) {
  ::shutdown(connection->fd, SHUT_WR);
  connection->phase = Phase::kLinger;
  connection->input.clear();
  connection->waiting_since = SteadyClock::now();
  connection->deadline = connection->waiting_since + std::chrono::milliseconds(limits_.linger_ms);
  Resume(std::move(connection));
}

void ConnectionReactor::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    if (wake_fd_ >= 0) Wake();
  }
  if (thread_.joinable()) thread_.join();
}

size_t ConnectionReactor::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_count_;
}

void ConnectionReactor::Wake() {
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void ConnectionReactor::TakeIncoming() {
  std::vector<std::unique_ptr<HttpConnection>> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(incoming_);
  }
  for (auto& connection : taken) {
    MakeRoom();
    waiting_.push_back(std::move(connection));
    // A resumed connection may hold the next request already (pipelining).
    Advance(waiting_.back());
  }
  std::erase(waiting_, nullptr);
}

// At the cap, closes the connection that has waited longest: an idle or
// lingering one first, else the slowest request.
void ConnectionReactor::MakeRoom() {
  std::erase(waiting_, nullptr);
  if (waiting_.size() < limits_.max_connections) return;
  auto quiet = [](const auto& c) { return c->phase == Phase::kIdle || c->phase == Phase::kLinger; };
  auto older = [](const auto& a, const auto& b) { return a->waiting_since < b->waiting_since; };
  auto victim = waiting_.end();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (quiet(*it) && (victim == waiting_.end() || older(*it, *victim))) victim = it;
  }
  if (victim == waiting_.end()) victim = std::min_element(waiting_.begin(), waiting_.end(), older);
  (void)Expire(**victim, /*linger=*/false);
  waiting_.erase(victim);
}

bool ConnectionReactor::Expire(HttpConnection& connection, bool linger) {
  bool mid_request = connection.phase == Phase::kHead || connection.phase == Phase::kBody;
  if (!mid_request) {
    CloseConnection(connection.fd);
    return false;
  }
  SendNow(connection.fd, kTimeout);
  if (!linger) {
    CloseConnection(connection.fd);
    return false;
  }
  // The client may still be sending: discard it for a while, so that it
  // reads the 408 and the end of the stream rather than a reset.
  ::shutdown(connection.fd, SHUT_WR);
  connection.phase = Phase::kLinger;
  connection.input.clear();
  connection.input.shrink_to_fit();
  connection.deadline = SteadyClock::now() + std::chrono::milliseconds(limits_.linger_ms);
  return true;
}

// Reads what is there; false when the connection ended.
bool ConnectionReactor::Receive(HttpConnection& connection, size_t budget_left) {
  char sink[kHeadReadBytes];
  size_t want = kHeadReadBytes;
  if (connection.phase == Phase::kBody) {
    size_t missing = connection.head_end + connection.body_bytes - connection.input.size();
    want = std::min({kBodyReadBytes, missing, budget_left});
    if (want == 0) return true;
  }
  bool discard = connection.phase == Phase::kLinger;
  size_t old_size = connection.input.size();
  if (!discard) connection.input.resize(old_size + want);
  ssize_t n = ::recv(connection.fd, discard ? sink : connection.input.data() + old_size, want, MSG_DONTWAIT);
  if (!discard) connection.input.resize(old_size + static_cast<size_t>(std::max<ssize_t>(n, 0)));
  if (n > 0) return true;
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

// Moves a connection on after it received bytes (or was resumed); hands it
// to a worker once a request is whole. `connection` is null afterwards when
// it left the reactor.
bool ConnectionReactor::Advance(std::unique_ptr<HttpConnection>& connection) {
  HttpConnection& c = *connection;
  auto now = SteadyClock::now();
  if (c.phase == Phase::kLinger || c.input.empty()) return true;
  if (c.phase == Phase::kIdle) {
    c.phase = Phase::kHead;
    c.waiting_since = now;
    c.deadline = now + std::chrono::milliseconds(limits_.head_timeout_ms);
  }
  if (c.phase == Phase::kFirst) c.phase = Phase::kHead;  // its deadline runs from the accept
  bool whole = false;
  if (c.phase == Phase::kHead) {
    size_t from = c.scanned >= 3 ? c.scanned - 3 : 0;
    size_t end = c.input.find("\r\n\r\n", from);
    c.scanned = c.input.size();
    if (end == std::string::npos) {
      whole = c.input.size() > limits_.max_head_bytes;  // the transport refuses it
    } else {
      c.head_end = end + 4;
      Framing framing = FrameRequest(std::string_view(c.input).substr(0, c.head_end), limits_.max_body_bytes);
      if (c.head_end > limits_.max_head_bytes || framing.kind == Framing::kHandOver) {
        whole = true;
      } else {
        c.body_bytes = framing.body_bytes;
        c.phase = Phase::kBody;
        c.deadline = now + std::chrono::milliseconds(limits_.body_timeout_ms);
      }
    }
  }
  if (c.phase == Phase::kBody) whole = c.input.size() >= c.head_end + c.body_bytes;
  if (!whole) return true;
  if (!dispatch_(connection)) {
    SendNow(connection->fd, kBusy);
    CloseConnection(connection->fd);
  }
  connection.reset();
  return false;
}

void ConnectionReactor::Loop() {
  std::vector<pollfd> polled;
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
    }
    TakeIncoming();
    auto now = SteadyClock::now();
    size_t buffered = 0;
    for (auto& connection : waiting_) {
      if (connection->deadline <= now) {
        if (!Expire(*connection, /*linger=*/true)) connection.reset();
      } else if (connection->phase == Phase::kBody) {
        buffered += connection->input.size() - connection->head_end;
      }
    }
    std::erase(waiting_, nullptr);
    size_t budget_left = limits_.max_buffered_body_bytes > buffered ? limits_.max_buffered_body_bytes - buffered : 0;
    auto next = now + std::chrono::milliseconds(kMaxPollWaitMs);
    polled.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (auto& connection : waiting_) {
      bool starved = connection->phase == Phase::kBody && budget_left == 0;
      polled.push_back(pollfd{connection->fd, static_cast<short>(starved ? 0 : POLLIN), 0});
      next = std::min(next, connection->deadline);
    }
    {
      std::lock_guard lock(mutex_);
      waiting_count_ = waiting_.size();
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    int ready = ::poll(polled.data(), polled.size(), static_cast<int>(std::clamp<int64_t>(wait, 0, kMaxPollWaitMs)));
    if (ready <= 0) continue;
    if (polled[0].revents != 0) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof count);
    }
    for (size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      auto& connection = waiting_[i - 1];
      size_t before = connection->input.size();
      bool hung_up = (polled[i].revents & POLLIN) == 0;  // POLLHUP/POLLERR while not polled for input
      if (hung_up || !Receive(*connection, budget_left)) {
        CloseConnection(connection->fd);
        connection.reset();
        continue;
      }
      if (connection->phase == Phase::kBody) budget_left -= std::min(budget_left, connection->input.size() - before);
      Advance(connection);
    }
    std::erase(waiting_, nullptr);
  }
  for (auto& connection : waiting_) CloseConnection(connection->fd);
  waiting_.clear();
  std::lock_guard lock(mutex_);
  for (auto& connection : incoming_) CloseConnection(connection->fd);
  incoming_.clear();
  waiting_count_ = 0;
}

}  // namespace telic::mcp
