// The `telic` command line.
#pragma once

#include <span>
#include <string_view>

namespace telic::cli {

// The names of `telic`'s top-level subcommands. When argv[1] is one of them,
// RunCli registers only that subcommand with the parser (a start-up cost);
// otherwise all of them.
std::span<const std::string_view> SubcommandNames();

// Exit codes: 0 success, 1 the operation failed (message on stderr as
// "telic: <message>"), 2 usage error.
int RunCli(int argc, char** argv);

}  // namespace telic::cli
