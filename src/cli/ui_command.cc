#include "cli/ui_command.h"

#include "ui/ui_server.h"

namespace telic::cli {

UiBinding MountUi(mcp::HttpOptions& http, store::Store& runs, store::TaskStore* tasks, controller::RunService& service) {
  UiBinding binding;
  binding.sources = std::make_unique<ui::Sources>(ui::Sources{runs, tasks, service});
  http.mounts.push_back(ui::MakeUiMount(*binding.sources));
  return binding;
}

int ServeUi(mcp::HttpOptions http, store::Store& runs, store::TaskStore* tasks, controller::RunService& service) {
  UiBinding binding = MountUi(http, runs, tasks, service);
  return mcp::ServeHttpMounts(std::move(http));
}

}  // namespace telic::cli
