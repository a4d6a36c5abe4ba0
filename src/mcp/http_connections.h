// The connection layer under the HTTP transport (src/mcp/http_transport.h):
// one thread reads every connection's requests, and a worker thread sees a
// connection only once a whole request has arrived.
//
// A client that sends slowly (or not at all) therefore costs a file
// descriptor and a buffer, never a worker: a request's head must arrive
// within a total deadline, its body within another (neither is reset by
// progress), an idle keep-alive connection is closed after its timeout, and
// at the connection cap the connection that has waited longest is closed to
// make room for a new one. Bodies being received share one byte budget.
//
// The layer frames requests only as far as it must (the end of the head, a
// Content-Length); parsing and routing stay the HTTP library's. A head it
// cannot frame (too large, Transfer-Encoding, a bad or repeated
// Content-Length, a body over the limit) is handed over at once so that the
// transport refuses it without reading a body.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

namespace telic::mcp {

struct ConnectionLimits {
  size_t max_head_bytes = 16 * 1024;
  size_t max_body_bytes = 8 * 1024 * 1024;
  // A request head, from its first byte (the first request's: from the
  // accept), must arrive whole within this; 408 and close beyond.
  int head_timeout_ms = 10000;
  // Its body, from the end of the head, within this; 408 and close beyond.
  int body_timeout_ms = 10000;
  // Between two requests of a keep-alive connection; closed beyond.
  int keep_alive_timeout_ms = 5000;
  // Connections waiting for a request at once; at the cap the one that has
  // waited longest (idle ones first) is closed for each new one.
  size_t max_connections = 1024;
  // Bytes of bodies being received, across connections; beyond, bodies wait
  // (their deadlines still run).
  size_t max_buffered_body_bytes = 64 * 1024 * 1024;
  // After a refusal whose body was not read, the rest is discarded this long
  // so that the client reads the refusal instead of a reset.
  int linger_ms = 2000;
};

// How the body of a request whose head ends at `head_end` is delimited.
struct Framing {
  enum Kind {
    kLength,     // `body_bytes` follow the head (0: no body)
    kHandOver,   // not framable here: hand the head over for the transport to refuse
  } kind = kLength;
  size_t body_bytes = 0;
};
// `head` is the request head including its final CRLF CRLF.
Framing FrameRequest(std::string_view head, size_t max_body_bytes);

// One accepted connection. `input` holds the bytes received and not yet
// consumed; when handed to a worker, it starts with a whole request (or a
// head the transport must refuse).
struct HttpConnection {
  int fd = -1;
  std::string input;
  size_t served = 0;  // requests answered on this connection

  // The reactor's bookkeeping.
  enum class Phase { kFirst, kIdle, kHead, kBody, kLinger } phase = Phase::kFirst;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::time_point waiting_since;
  size_t head_end = 0;      // kBody: where the body starts
  size_t body_bytes = 0;    // kBody: its length
  size_t scanned = 0;       // kHead: bytes searched for the end of the head
};

class ConnectionReactor {
 public:
  // Takes a connection with a whole request; false when no worker can take
  // it (the reactor then answers 503 and closes it). Moves from its argument
  // only when it returns true. Called on the reactor's thread.
  using Dispatch = std::function<bool(std::unique_ptr<HttpConnection>&)>;

  ConnectionReactor(ConnectionLimits limits, Dispatch dispatch);
  ~ConnectionReactor();
  ConnectionReactor(const ConnectionReactor&) = delete;
  ConnectionReactor& operator=(const ConnectionReactor&) = delete;

  [[nodiscard]] Status Start();
  // A newly accepted connection (the reactor owns `fd` from now on).
  void Adopt(int fd);
  // A connection whose response was sent: wait for its next request.
  void Resume(std::unique_ptr<HttpConnection> connection);
  // A connection whose refusal was sent with its body unread: discard what
  // the client still sends for linger_ms, then close.
  void Linger(std::unique_ptr<HttpConnection> connection);
  // Closes every waiting connection; later Adopt/Resume close at once.
  void Stop();

  // Connections waiting for a request (for tests).
  size_t waiting() const;

 private:
  void Loop();
  void TakeIncoming();
  bool Receive(HttpConnection& connection, size_t budget_left);
  bool Advance(std::unique_ptr<HttpConnection>& connection);
  // Ends a connection past its deadline (408 when mid-request, lingering
  // with `linger`); true when it stays, lingering.
  bool Expire(HttpConnection& connection, bool linger);
  void MakeRoom();
  void Wake();

  ConnectionLimits limits_;
  Dispatch dispatch_;
  std::thread thread_;
  int wake_fd_ = -1;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<HttpConnection>> incoming_;  // guarded by mutex_
  bool stopping_ = false;                                   // guarded by mutex_
  std::vector<std::unique_ptr<HttpConnection>> waiting_;    // the reactor thread's
  size_t waiting_count_ = 0;                                // guarded by mutex_
};

// Closes a connection at once (shutdown, then close).
void CloseConnection(int fd);

}  // namespace telic::mcp
