// Fuzzes the host config entry points of `telic install`: a JSON/JSONC
// config (size and depth bounds, then the parse) and a TOML config (bounds,
// then toml++). Neither may crash or exhaust the stack on any input; a JSONC
// config that parses must take telic's MCP entry (a text edit keeping the
// user's bytes) and read it back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <toml++/toml.h>

#include "cli/config_limits.h"
#include "cli/jsonc_edit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (telic::cli::CheckTomlBounds(text, "fuzz.toml")) {
    try {
      (void)toml::parse(text, std::string("fuzz.toml"));
    } catch (const toml::parse_error&) {
    }
  }
  auto config = telic::cli::ParseConfig(text, "fuzz.json");
  if (!config) return 0;
  const std::vector<std::string> keys = {"mcpServers", "telic"};
  const telic::cli::OrderedJson entry = {{"command", "/opt/telic"}, {"args", {"serve"}}};
  auto edited = telic::cli::jsonc::SetValue(text, keys, entry);
  if (!edited) return 0;  // e.g. mcpServers is not an object: install refuses
  auto reread = telic::cli::ParseConfig(*edited, "fuzz.json");
  if (!reread || !reread->contains("mcpServers") || (*reread)["mcpServers"]["telic"] != entry) std::abort();
  return 0;
}
