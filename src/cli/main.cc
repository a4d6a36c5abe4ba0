// `telic`: every command; those that need HTTP run `telic-http` (src/cli/http_features.h).
#include "base/malloc_arenas.h"
#include "cli/commands.h"
#include "cli/http_features.h"

int main(int argc, char** argv) {
  telic::LimitMallocArenas();  // before any thread starts (D-P17)
  telic::cli::InitHttpFeatures(nullptr, argc, argv);
  return telic::cli::RunCli(argc, argv);
}
