// Fuzzes the MCP server with arbitrary input lines: the server must never
// crash, and every reply must be one JSON-RPC 2.0 object.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/ids.h"
#include "controller/run_service.h"
#include "mcp/server.h"
#include "store/sqlite_store.h"

namespace {

struct Harness {
  std::unique_ptr<telic::store::SqliteStore> store;
  telic::ManualClock clock{1764662400000, 1};
  telic::SequentialIdSource ids;
  std::unique_ptr<telic::controller::RunService> service;
  std::unique_ptr<telic::mcp::Server> server;

  Harness() {
    auto dir = std::filesystem::temp_directory_path() / ("telic-fuzz-" + telic::RandomHex(6));
    std::filesystem::create_directories(dir);
    store = std::move(*telic::store::SqliteStore::Open((dir / "telic.sqlite3").string()));
    service = std::make_unique<telic::controller::RunService>(*store, clock, ids, dir.string());
    server = std::make_unique<telic::mcp::Server>(*service);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness* harness = new Harness();
  std::string line(reinterpret_cast<const char*>(data), size);
  auto reply = harness->server->HandleLine(line);
  if (reply) {
    telic::Json parsed = telic::Json::parse(*reply, nullptr, false);
    if (!parsed.is_object() || parsed.value("jsonrpc", "") != "2.0" || reply->find('\n') != std::string::npos) {
      std::abort();
    }
  }
  return 0;
}
