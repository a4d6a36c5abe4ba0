// `telic ui` and `telic serve --http --ui`: the read-only web trace viewer
// (src/ui/) served from this binary.
#pragma once

#include <memory>

#include "cli/http_features.h"
#include "controller/run_service.h"
#include "mcp/http_transport.h"
#include "store/store.h"
#include "store/task_store.h"
#include "ui/pages.h"

namespace telic::cli {

// What the UI reads, kept alive as long as the transport serving it.
struct UiBinding {
  std::unique_ptr<ui::Sources> sources;
};

// Adds the /ui mount over `runs` (and `tasks`, may be null) to `http`;
// the returned binding must outlive the transport.
// `idle_after_ms`: a running run without a change for this long shows as idle.
UiBinding MountUi(const HttpFeatures& features, mcp::HttpOptions& http, store::Store& runs, store::TaskStore* tasks,
                  controller::RunService& service, int64_t idle_after_ms);

// `telic ui`: serves only the UI (no /mcp) until SIGINT/SIGTERM, printing
// "Telic UI at http://HOST:PORT/ui/" on stderr. Returns the exit code.
int ServeUi(const HttpFeatures& features, mcp::HttpOptions http, store::Store& runs, store::TaskStore* tasks,
            controller::RunService& service, int64_t idle_after_ms);

}  // namespace telic::cli
