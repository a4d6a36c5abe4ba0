// Fuzzes strict JSON parsing, canonicalisation and schema validation:
// canonical JSON must re-parse to the same value and be a fixed point, and
// validating with defaults must never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/canonical_json.h"
#include "base/json_parse.h"
#include "schema/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
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
