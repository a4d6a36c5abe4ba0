// MCP over stdio: newline-delimited JSON-RPC on stdin/stdout.
#pragma once

#include <cstdio>
#include <string>

#include "mcp/server.h"

namespace telic::mcp {

// Serves until EOF on `in` (returns 0) or a termination signal (returns 0
// after the current request finishes). Each reply is written as one line and
// flushed. A line longer than Server::kMaxMessageBytes is discarded and
// answered with -32600; a malformed line never stops the loop.
int ServeStdio(Server& server, std::FILE* in, std::FILE* out);

// Writes `line` and '\n' to `out` under its lock (flockfile): with one
// writev(2) on `out`'s descriptor where the pipe takes it all, continuing
// after partial writes and interrupted calls. Errors (a closed pipe) are
// ignored: the read loop ends at EOF.
void WriteLine(std::FILE* out, const std::string& line);

}  // namespace telic::mcp
