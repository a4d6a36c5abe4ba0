// `telic-http`: the same commands as `telic`, with HTTP linked in (src/cli/http_features.h).
#include "base/malloc_arenas.h"
#include "cli/commands.h"
#include "cli/http_features.h"

int main(int argc, char** argv) {
  telic::LimitMallocArenas();  // before any thread starts (D-P17)
  telic::cli::InitHttpFeatures(&telic::cli::LinkedHttpFeatures(), argc, argv);
  return telic::cli::RunCli(argc, argv);
}
