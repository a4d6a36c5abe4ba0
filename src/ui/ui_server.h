// The web UI as a mount of the MCP HTTP transport (src/mcp/http_transport.h):
// the same Host, Origin and bearer-token guard and limits as `telic serve
// --http`, GET only (nothing here writes), every response with a
// Content-Security-Policy that allows only this server's own script and
// stylesheet (no inline script or style) and X-Content-Type-Options nosniff.
//
// Routes (all under /ui):
//   /ui/                                   runs (?status=&mode=&topology=&q=&before=&limit=)
//   /ui/runs/RUN                           one run
//   /ui/runs/RUN/artifacts/ID              one artifact
//   /ui/runs/RUN/tasks                     the run's task graph
//   /ui/tasks                              the standalone task graph
//   /ui/api/runs/RUN/live?after=N          the run page's live update (JSON)
//   /ui/assets/ui.css, /ui/assets/ui.js    the embedded assets
#pragma once

#include <memory>
#include <string>

#include "mcp/http_transport.h"
#include "ui/pages.h"

namespace telic::ui {

inline constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// The mount serving `sources` (which must outlive the transport) under /ui.
mcp::HttpMount MakeUiMount(Sources& sources);

// The embedded asset `name` ("ui.css", "ui.js") with its content type, or
// nullopt when there is no such asset.
struct Asset {
  std::string_view content;
  std::string content_type;
};
std::optional<Asset> FindAsset(std::string_view name);

}  // namespace telic::ui
