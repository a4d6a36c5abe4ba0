// The C++ floor of bench/issue18_table.py's start-up row (issue 18 target 3):
// a process that answers every newline-delimited JSON-RPC request on stdin
// with a small fixed result and does nothing else — no validation, no
// storage, no schemas. bench/echo_floor.py is the same in Python (it also
// replays same-size responses for the read rows); its ~30 ms interpreter
// start-up made the start-up ratio meaningless.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

int main() {
  std::ios::sync_with_stdio(false);
  std::fputs("Telic MCP ready for floor\n", stderr);
  std::fflush(stderr);
  const std::string initialize =
      R"({"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"floor","version":"0"}})";
  const std::string other =
      R"({"content":[{"type":"text","text":"{}"}],"structuredContent":{"ok":true,"run":{"runId":"floor"}}})";
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
    if (!message.is_object() || !message.contains("id")) continue;
    const bool init = message.value("method", "") == "initialize";
    std::cout << R"({"jsonrpc":"2.0","id":)" << message["id"].dump() << R"(,"result":)"
              << (init ? initialize : other) << "}\n"
              << std::flush;
  }
  return 0;
}
