// MCP over stdio: newline-delimited JSON-RPC on stdin/stdout.
#pragma once

#include <cstdio>

#include "mcp/server.h"

namespace telic::mcp {

// Serves until EOF on `in` (returns 0) or a termination signal (returns 0
// after the current request finishes). Each reply is written as one line and
// flushed. A line longer than Server::kMaxMessageBytes is discarded and
// answered with -32600; a malformed line never stops the loop.
int ServeStdio(Server& server, std::FILE* in, std::FILE* out);

}  // namespace telic::mcp
