// What needs an HTTP library: serving MCP over HTTP (`serve --http`), the web
// UI (`ui`, `serve --ui`) and the OTLP export's POST (`export --otlp URL`).
//
// cpp-httplib links OpenSSL's libssl and libcrypto, brotli and zlib; loading
// them costs every telic process ~7 ms of its start-up on the 2-core bench
// machine, most of it the dynamic linker binding their symbols (issue 18
// target 3). So two programs are built from the same code (D-START1):
//   telic        everything but HTTP; started by MCP hosts (stdio) and by
//                every hook call (`broker-gate`), so its start-up counts;
//   telic-http   the same commands with HTTP linked in.
// A command that needs HTTP in `telic` replaces the process with
// `telic-http` from the same folder, with the same arguments (RequireHttp).
#pragma once

#include <string>

#include "base/status.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "ui/pages.h"

namespace telic::cli {

// The program RequireHttp runs, in the folder of the running one.
inline constexpr const char* kHttpProgramName = "telic-http";

struct HttpPostAnswer {
  int status = 0;
  std::string body;
};

struct HttpFeatures {
  // mcp::ServeHttp: `telic serve --http`.
  int (*serve_http)(mcp::Server& server, mcp::HttpOptions options, const std::string& repository_root);
  // mcp::ServeHttpMounts: `telic ui`.
  int (*serve_mounts)(mcp::HttpOptions options);
  // ui::MakeUiMount: the /ui mount over `sources` (which must outlive the transport).
  mcp::HttpMount (*ui_mount)(ui::Sources& sources);
  // POSTs `body` as application/json to scheme_host_port + path (10 s to
  // connect, 30 s to send or read); kUnavailable with the HTTP client's
  // reason (e.g. "Could not establish connection") when no answer came back.
  Result<HttpPostAnswer> (*post_json)(const std::string& scheme_host_port, const std::string& path,
                                      const std::string& body);
};

// The features linked into `telic-http` (src/cli/http_features_linked.cc);
// not linked into `telic`.
const HttpFeatures& LinkedHttpFeatures();

// Called first by main(): the features linked into this program (nullptr
// in `telic`) and its arguments, which RequireHttp passes on unchanged.
void InitHttpFeatures(const HttpFeatures* linked, int argc, char** argv);

// The linked features. In `telic`, replaces this process with `telic-http`
// beside it (same arguments, environment and descriptors), so it returns
// only when that cannot be done: kFailedPrecondition naming the program
// looked for and why. Call it before the command reads or writes anything.
Result<const HttpFeatures*> RequireHttp();

}  // namespace telic::cli
