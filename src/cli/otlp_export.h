// `telic export RUN --otlp [URL]` (issue 22 §4): a run as OpenTelemetry
// spans in the OTLP/HTTP JSON encoding, one trace per run:
//
//   invoke_agent telic            the run (root)
//   ├── phase <name>              each maximal stretch of trace events in one phase
//   │   ├── execute_tool <cap>    each permission / broker decision in it
//   │   └── (span events)         every other trace event, in order
//
// Ids are derived from the run, so exporting a run twice gives the same
// trace: traceId = first 16 bytes of sha256("telic/otlp/trace/" + runId),
// spanId = first 8 bytes of sha256("telic/otlp/span/" + runId + "/" + key)
// with key "run", "phase/<first sequence>" or "event/<sequence>".
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"
#include "store/records.h"

namespace telic::cli {

// The ExportTraceServiceRequest JSON for a run and its trace (pure).
Result<Json> BuildOtlpTrace(const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace);

// Adds the run's context cost (issue 39) to the root span of BuildOtlpTrace's
// request: telic.context.calls, telic.context.bytes and
// telic.context.estimated_tokens (bytes / 4).
void AddContextCostAttributes(Json& otlp, const std::vector<store::ContextCost>& costs);

// Where --otlp may send: http or https, a host, an optional port, an optional
// path ("" or "/" becomes /v1/traces). Only loopback hosts (localhost,
// 127.0.0.0/8, [::1]) unless `allow_remote`. kInvalidArgument otherwise.
struct OtlpEndpoint {
  std::string scheme_host_port;  // e.g. "http://127.0.0.1:4318"
  std::string path;              // e.g. "/v1/traces"
};
Result<OtlpEndpoint> ParseOtlpUrl(std::string_view url, bool allow_remote);

// Reads the run, builds its spans, and POSTs them to `url` (prints them to
// `out` when `url` is empty). Exit 0 on success, 1 with a message otherwise.
int RunOtlpExport(controller::RunService& service, const std::string& run_id, const std::string& url,
                  bool allow_remote, std::ostream& out, std::ostream& err);

}  // namespace telic::cli
