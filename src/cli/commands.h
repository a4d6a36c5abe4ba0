// The `telic` command line.
#pragma once

namespace telic::cli {

// Exit codes: 0 success, 1 the operation failed (message on stderr as
// "telic: <message>"), 2 usage error.
int RunCli(int argc, char** argv);

}  // namespace telic::cli
