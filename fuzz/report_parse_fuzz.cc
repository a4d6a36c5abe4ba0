// Fuzzes the sub-agent report parsers: raw text (upward-report block and the
// Execution/Review envelopes) and the structured JSON form. Invariants: no
// crash; an accepted report round-trips through its JSON form unchanged and
// passes validation again; no list of an accepted report holds an
// empty-list marker ("none", "n/a", ...: they mean an empty list, D54); the
// dispatcher decides every accepted report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/canonical_json.h"
#include "base/json_parse.h"
#include "reports/dispatcher.h"
#include "reports/report.h"

namespace {

void CheckNoMarkers(const telic::Json& json) {
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!it->is_array()) continue;
    for (const telic::Json& item : *it) {
      if (item.is_string() && telic::reports::IsEmptyListMarker(it.key(), item.get<std::string>())) std::abort();
    }
  }
}

void Check(const telic::reports::Report& report) {
  telic::Json json = telic::reports::ReportToJson(report);
  CheckNoMarkers(json);
  auto again = telic::reports::ReportFromJson(json);
  if (!again) std::abort();
  if (telic::CanonicalJson(telic::reports::ReportToJson(*again)) != telic::CanonicalJson(json)) std::abort();
  for (int used = 0; used <= 2; ++used) {
    auto decision = telic::reports::Decide(report, {1, used, std::nullopt});
    if (decision.rule.empty() || decision.steps.empty()) std::abort();
    (void)telic::reports::DecisionToJson(decision);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto report = telic::reports::ParseReportText(text)) Check(*report);
  if (auto parsed = telic::ParseJsonStrict(text)) {
    if (auto report = telic::reports::ReportFromJson(*parsed)) Check(*report);
  }
  return 0;
}
