#include "cli/otlp_export.h"

#include <gtest/gtest.h>

namespace telic::cli {
namespace {

// covers issue 22 §4 (http(s) only, loopback unless allowed)
TEST(OtlpUrlTest, AcceptsLoopbackHttpAndRefusesTheRest) {
  auto plain = ParseOtlpUrl("http://127.0.0.1:4318", false);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ(plain->scheme_host_port, "http://127.0.0.1:4318");
  EXPECT_EQ(plain->path, "/v1/traces");
  auto path = ParseOtlpUrl("https://[::1]:4318/custom/traces", false);
  ASSERT_TRUE(path) << path.error().message();
  EXPECT_EQ(path->scheme_host_port, "https://[::1]:4318");
  EXPECT_EQ(path->path, "/custom/traces");
  EXPECT_TRUE(ParseOtlpUrl("http://localhost/", false));
  EXPECT_TRUE(ParseOtlpUrl("http://127.8.9.10:1", false));
  for (const char* bad : {"ftp://127.0.0.1/", "127.0.0.1:4318", "http://", "http://10.0.0.1:4318", "http://collector:4318",
                          "http://u:p@127.0.0.1/", "http://127.0.0.1:4318/v1/traces?x=1", "http://127.0.0.1:abc",
                          "http://127.0.0.1:4318/a b", "http://[::1", "http://127.0.0.1.evil.example/"}) {
    auto parsed = ParseOtlpUrl(bad, false);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_TRUE(ParseOtlpUrl("http://collector:4318", true));
  EXPECT_FALSE(ParseOtlpUrl("file:///etc/passwd", true));
}

store::TraceEventRecord Event(int64_t sequence, std::string phase, std::string type, std::string at) {
  store::TraceEventRecord e;
  e.run_id = "run-1";
  e.sequence = sequence;
  e.phase = std::move(phase);
  e.event_type = std::move(type);
  e.timestamp = std::move(at);
  e.actor = "controller";
  e.hash = "sha256:" + std::to_string(sequence);
  return e;
}

// covers issue 22 §4 (span tree, deterministic ids, semconv attributes)
TEST(OtlpTraceTest, OneTraceWithARootPhasesAndDecisionSpans) {
  store::RunRecord run;
  run.run_id = "run-1";
  run.requested_mode = domain::Mode::kFixOnly;
  run.status = domain::RunStatus::kBlocked;
  run.created_at = "2026-12-02T00:00:00.000Z";
  run.updated_at = "2026-12-02T00:00:03.000Z";
  std::vector<store::TraceEventRecord> trace = {
      Event(1, "context_grounding", "run_started", "2026-12-02T00:00:00.000Z"),
      Event(2, "context_grounding", "broker_decision", "2026-12-02T00:00:01.000Z"),
      Event(3, "agent_1_frame", "phase_submitted", "2026-12-02T00:00:02.500Z"),
  };
  trace[1].permission_decision = Json{{"decision", "deny"}, {"capability", "shell.execute"}};
  auto built = BuildOtlpTrace(run, trace);
  ASSERT_TRUE(built) << built.error().message();
  const Json& spans = (*built)["resourceSpans"][0]["scopeSpans"][0]["spans"];
  ASSERT_EQ(spans.size(), 4u);  // root, two phases, one decision
  const Json& root = spans[0];
  EXPECT_FALSE(root.contains("parentSpanId"));
  EXPECT_EQ(root["startTimeUnixNano"], "1796169600000000000");
  EXPECT_EQ(root["endTimeUnixNano"], "1796169602500000000");
  EXPECT_EQ(root["status"]["code"], 2);
  EXPECT_EQ(spans[1]["name"], "phase context_grounding");
  EXPECT_EQ(spans[1]["parentSpanId"], root["spanId"]);
  EXPECT_EQ(spans[1]["endTimeUnixNano"], "1796169602500000000") << "a phase ends where the next begins";
  EXPECT_EQ(spans[1]["events"].size(), 1u);
  EXPECT_EQ(spans[2]["name"], "execute_tool shell.execute");  // each phase is followed by its decisions
  EXPECT_EQ(spans[2]["parentSpanId"], spans[1]["spanId"]);
  EXPECT_EQ(spans[3]["name"], "phase agent_1_frame");
  std::vector<std::string> expected_attrs;
  for (const auto& a : spans[2]["attributes"]) expected_attrs.push_back(a["key"]);
  for (const char* key : {"gen_ai.operation.name", "gen_ai.tool.name", "mcp.method.name", "error.type"}) {
    EXPECT_NE(std::find(expected_attrs.begin(), expected_attrs.end(), std::string(key)), expected_attrs.end()) << key;
  }
  for (const auto& span : spans) {
    EXPECT_EQ(span["traceId"], root["traceId"]);
    EXPECT_EQ(span["traceId"].get<std::string>().size(), 32u);
    EXPECT_EQ(span["spanId"].get<std::string>().size(), 16u);
  }
  EXPECT_EQ(*BuildOtlpTrace(run, trace), *built) << "ids are derived from the run";
  run.run_id = "run-2";
  EXPECT_NE((*BuildOtlpTrace(run, trace))["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"], root["traceId"]);
  trace[0].timestamp = "yesterday";
  EXPECT_EQ(BuildOtlpTrace(run, trace).error().code(), ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace telic::cli
