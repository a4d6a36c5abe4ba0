// Fuzzes the run bundle entry point (`telic verify --bundle`, `telic
// import`): ParseBundle must refuse any bytes it does not accept with an
// error, never a crash (nesting far deeper than kMaxJsonDepth, huge or
// hostile ids, broken digests), every id of a bundle it accepts must be an
// identifier, and CheckBundle must report on it without crashing (its scratch
// ledger under a private state directory).
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/ids.h"
#include "controller/run_bundle.h"

namespace {

const std::string& StateDir() {
  static const std::string dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "telic-bundle-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return pattern;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = telic::controller::ParseBundle(bytes);
  if (!parsed) {
    if (parsed.error().message().empty()) std::abort();
    return 0;
  }
  if (!telic::IsIdentifier(parsed->run.run_id)) std::abort();
  for (const auto& a : parsed->artifacts) {
    if (!telic::IsIdentifier(a.meta.id)) std::abort();
  }
  for (const auto& e : parsed->trace) {
    if (!telic::IsIdentifier(e.event_id)) std::abort();
  }
  telic::Json report = telic::controller::CheckBundle(*parsed, StateDir());
  if (!report.contains("ok") || !report["problems"].is_array()) std::abort();
  return 0;
}
