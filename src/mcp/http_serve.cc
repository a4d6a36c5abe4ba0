// ServeHttp and ServeHttpMounts (mcp/http_transport.h): a transport run as a
// process, announced on stderr and stopped by SIGINT/SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <functional>
#include <iostream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "mcp/http_transport.h"

namespace telic::mcp {

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
