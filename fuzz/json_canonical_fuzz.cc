// Fuzzes strict JSON parsing, canonicalisation and schema validation:
// canonical JSON must re-parse to the same value and be a fixed point, and
// validating with defaults must never crash. The response writer must write
// any input bytes as a JSON string exactly as nlohmann's dump() does.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/canonical_json.h"
#include "base/json_parse.h"
#include "base/json_writer.h"
#include "schema/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string written;
  telic::WriteJsonString(text, written);
  if (written != telic::Json(text).dump(-1, ' ', false, telic::Json::error_handler_t::replace)) std::abort();
  auto parsed = telic::ParseJsonStrict(text);
  if (!parsed) return 0;
  std::string canonical = telic::CanonicalJson(*parsed);
  auto reparsed = telic::ParseJsonStrict(canonical);
  if (!reparsed || telic::CanonicalJson(*reparsed) != canonical) std::abort();
  static const auto& registry = telic::schema::Registry::Default();
  for (const char* path : {"tools/telic_start_run.json", "artifacts/ContextManifest.json",
                           "artifacts/ClarificationRequest.json"}) {
    telic::Json copy = *parsed;
    (void)(*registry.Find(path))->Validate(copy);
  }
  return 0;
}
