// Fuzzes artifact parsing and validation (issue 3): the first byte picks an
// artifact type, the rest is the body. Invariants: validation never crashes;
// a body that validates still validates after its defaults were materialised
// and after a canonical JSON round trip (validation is a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/json_parse.h"
#include "controller/run_service.h"

namespace {
const std::vector<std::string> kTypes = {
    "ClarificationRequest", "ContextManifest", "Evidence",     "NextAction",   "ProblemFrame",  "PromptReview",
    "QualityReview",        "ReceiptAudit",    "ReleaseAudit", "RunEnvelope",  "ScenarioSpec",  "TaskContract",
    "TraceEvent",           "UserMessage",     "UserReport",   "WorkPlan",     "WorkResult",    "ContextDocument"};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string& type = kTypes[data[0] % kTypes.size()];
  auto parsed = telic::ParseJsonStrict(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  if (!parsed) return 0;
  telic::Json body = *parsed;
  if (!telic::controller::ValidateArtifactBody(type, body)) return 0;
  telic::Json again = telic::Json::parse(telic::CanonicalJson(body));
  if (!telic::controller::ValidateArtifactBody(type, again)) std::abort();
  if (telic::CanonicalJson(again) != telic::CanonicalJson(body)) std::abort();
  return 0;
}
