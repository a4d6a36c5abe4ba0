// The `telic` command line.
#pragma once

#include <span>
#include <string_view>

namespace telic::cli {

// The names of `telic`'s top-level commands (the command table's, in its
// order). When argv[1] is one of them, RunCli defines only that command in
// the parser (a start-up cost); otherwise all of them.
std::span<const std::string_view> SubcommandNames();

// Exit codes: 0 success, 1 the operation failed (message on stderr as
// "telic: <message>") or an unknown command (with the closest names), 2 usage
// error (an unknown option with the closest names, a bad value, ...).
int RunCli(int argc, char** argv);

}  // namespace telic::cli
