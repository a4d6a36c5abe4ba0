// httplib's server on telic's connection layer (src/mcp/http_connections.h):
// httplib accepts, parses and routes; the reactor reads whole requests and a
// fixed pool of workers answers them, each from the bytes the reactor
// buffered, so a worker never waits for a client. Used by the HTTP transport
// (src/mcp/http_transport.h).
#pragma once

#include <httplib.h>

#include <cstddef>
#include <memory>

#include "base/status.h"
#include "mcp/http_connections.h"
#include "mcp/http_transport.h"

namespace telic::mcp {

// The request a worker thread is serving, for the handlers on that thread.
struct ConnectionState {
  bool reading_head = true;     // head bytes count against max_head_bytes
  size_t head_bytes = 0;
  bool close_after = false;     // the response ends the connection (unread body, limits)
};

// The request the calling worker thread is serving (null outside one), for
// the transport's handlers on that thread.
extern thread_local ConnectionState* t_connection;

class BoundedPool;

// httplib's server on telic's connection layer: httplib accepts, parses and
// routes; the reactor (src/mcp/http_connections.h) reads requests and a
// fixed pool of workers answers whole ones.
class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(const HttpOptions& options);
  ~GuardedServer() override;

  // Listens with a deep backlog, starts the workers and the reactor.
  [[nodiscard]] Status StartConnections();

  // Closes waiting connections, then lets the workers finish their requests.
  void StopConnections();

 private:
  bool process_and_close_socket(socket_t sock) override;

  // Answers the whole request at the head of `connection`, then returns the
  // connection to the reactor for its next one (or closes it).
  void Serve(std::unique_ptr<HttpConnection> connection);

  const HttpOptions& options_;
  std::unique_ptr<BoundedPool> pool_;
  ConnectionReactor reactor_;
};

}  // namespace telic::mcp
