#include "cli/http_features.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

namespace telic::cli {
namespace {

const HttpFeatures* linked_features = nullptr;
char** program_arguments = nullptr;

}  // namespace

void InitHttpFeatures(const HttpFeatures* linked, int /*argc*/, char** argv) {
  linked_features = linked;
  program_arguments = argv;
}

Result<const HttpFeatures*> RequireHttp() {
  if (linked_features != nullptr) return linked_features;
  // The real path of this program (symbolic links resolved), so that a link
  // in ~/.local/bin still finds telic-http beside the binary it points to.
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("this command needs {}, but the path of the running program is unknown: {}",
                            kHttpProgramName, error.message()));
  }
  std::filesystem::path program = self.parent_path() / kHttpProgramName;
  if (program_arguments == nullptr) {
    return Fail(ErrorCode::kFailedPrecondition, "this command needs HTTP, which this program was built without");
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execv(program.c_str(), program_arguments);
  return Fail(ErrorCode::kFailedPrecondition,
              fmt::format("this command serves or sends HTTP, which telic runs in {} (built beside telic by "
                          "scripts/build); cannot run {}: {}",
                          kHttpProgramName, program.string(), std::strerror(errno)));
}

}  // namespace telic::cli
