#include "cli/ui_command.h"


namespace telic::cli {

UiBinding MountUi(const HttpFeatures& features, mcp::HttpOptions& http, store::Store& runs, store::TaskStore* tasks,
                  controller::RunService& service, int64_t idle_after_ms) {
  UiBinding binding;
  binding.sources = std::make_unique<ui::Sources>(ui::Sources{runs, tasks, service});
  binding.sources->idle_after_ms = idle_after_ms;
  http.mounts.push_back(features.ui_mount(*binding.sources));
  return binding;
}

int ServeUi(const HttpFeatures& features, mcp::HttpOptions http, store::Store& runs, store::TaskStore* tasks,
            controller::RunService& service, int64_t idle_after_ms) {
  UiBinding binding = MountUi(features, http, runs, tasks, service, idle_after_ms);
  return features.serve_mounts(std::move(http));
}

}  // namespace telic::cli
