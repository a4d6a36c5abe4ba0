#include "store/record_codec.h"

#include <gtest/gtest.h>

#include <variant>

namespace telic::store {
namespace {

// A row held in memory: what a RowWriter appends, read back by position.
class CodecMemoryRow final : public RowReader, public RowWriter {
 public:
  using Value = std::variant<std::monostate, std::string, int64_t>;
  void Text(std::string_view value) override { values.emplace_back(std::string(value)); }
  void Null() override { values.emplace_back(std::monostate()); }
  void Int(int64_t value) override { values.emplace_back(value); }
  bool IsNull(int column) const override { return std::holds_alternative<std::monostate>(values.at(column)); }
  std::string Text(int column) const override {
    const auto* text = std::get_if<std::string>(&values.at(column));
    return text ? *text : std::string();
  }
  std::optional<int64_t> Int(int column) const override {
    const auto* number = std::get_if<int64_t>(&values.at(column));
    return number ? std::optional<int64_t>(*number) : std::nullopt;
  }
  std::vector<Value> values;
};

RunRecord CodecSampleRun() {
  RunRecord run;
  run.run_id = "run-1";
  run.repository_root = "/repo";
  run.requested_mode = domain::Mode::kFixOnly;
  run.status = domain::RunStatus::kAwaitingClarification;
  run.phase = domain::Phase::kAgent3Plan;
  run.resume_phase = domain::Phase::kAgent4Execute;
  run.escalation_count = 2;
  run.version = 7;
  run.outcome_hint = std::nullopt;
  run.created_at = "2026-01-01T00:00:00Z";
  run.updated_at = "2026-01-02T00:00:00Z";
  run.extra = {{"observation", {{"policy", "require_observed"}}}};
  return run;
}

TEST(RecordCodecTest, ColumnListsNameEveryStoredColumnInOrder) {
  EXPECT_EQ(RunColumns(),
            "run_id, schema_version, repository_root, requested_mode, topology, escalation_count, prior_run_id, "
            "status, phase, resume_phase, version, prompt_revisions_remaining, remediations_remaining, "
            "outcome_hint, created_at, updated_at, extra_json");
  EXPECT_EQ(ArtifactColumns(),
            "run_id, artifact_id, type, schema_version, producer, sha256, source_refs_json, redaction, created_at");
  EXPECT_EQ(EventColumns(),
            "run_id, sequence, event_id, timestamp, actor, phase, event_type, input_refs_json, output_refs_json, "
            "permission_decision_json, summary, budget_snapshot_json, redactions_json, prev_hash, hash, traceparent, "
            "tracestate");
  EXPECT_EQ(TombstoneColumns(),
            "seq, run_id, final_trace_hash, trace_events, artifacts, status, created_at, deleted_at, deleted_by, reason");
}

TEST(RecordCodecTest, RunRoundTripsThroughARow) {
  CodecMemoryRow row;
  EncodeRun(CodecSampleRun(), row);
  ASSERT_EQ(row.values.size(), static_cast<size_t>(kRunColumnCount));
  EXPECT_TRUE(row.IsNull(6));                          // prior_run_id
  EXPECT_EQ(row.Text(16), CanonicalJson(CodecSampleRun().extra));  // extra_json, canonical
  auto decoded = DecodeRun(row);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(*decoded, CodecSampleRun());
}

TEST(RecordCodecTest, DecodeReadsFromTheFirstColumnGiven) {
  CodecMemoryRow row;
  row.Text("ignored");
  EncodeRun(CodecSampleRun(), row);
  auto decoded = DecodeRun(row, 1);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, CodecSampleRun());
}

TEST(RecordCodecTest, UnreadableColumnsAreDataLossNamingTableKeyAndColumn) {
  CodecMemoryRow json;
  EncodeRun(CodecSampleRun(), json);
  json.values[16] = std::string("{not json");
  auto bad_json = DecodeRun(json);
  ASSERT_FALSE(bad_json);
  EXPECT_EQ(bad_json.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(bad_json.error().message().find("runs row run-1: extra_json is not readable"), std::string::npos)
      << bad_json.error().message();

  CodecMemoryRow number;
  EncodeRun(CodecSampleRun(), number);
  number.values[5] = std::string("two");
  auto bad_number = DecodeRun(number);
  ASSERT_FALSE(bad_number);
  EXPECT_EQ(bad_number.error().code(), ErrorCode::kDataLoss);
  EXPECT_EQ(bad_number.error().message(), "runs row run-1: escalation_count is not an integer");
}

TEST(RecordCodecTest, EventRoundTripsWithItsOptionalColumns) {
  TraceEventRecord event;
  event.run_id = "run-1";
  event.sequence = 3;
  event.event_id = "ev-3";
  event.input_refs = {"artifact://run-1/a"};
  event.permission_decision = Json{{"decision", "ALLOW"}};
  event.redactions = Json::array({{{"field", "/summary"}, {"category", "secret"}}});
  event.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  CodecMemoryRow row;
  EncodeEvent(event, row);
  ASSERT_EQ(row.values.size(), static_cast<size_t>(kEventColumnCount));
  EXPECT_TRUE(row.IsNull(16));  // tracestate
  auto decoded = DecodeEvent(row);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->permission_decision, event.permission_decision);
  EXPECT_EQ(decoded->input_refs, event.input_refs);
  EXPECT_EQ(decoded->redactions, event.redactions);
  EXPECT_EQ(decoded->traceparent, event.traceparent);
  EXPECT_FALSE(decoded->tracestate);

  row.values[7] = std::string("[1]");  // input_refs_json of numbers
  auto bad = DecodeEvent(row);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "trace_events row run-1/3: input_refs_json is not a list of strings");
}

TEST(RecordCodecTest, ArtifactMetaRoundTripsAndNamesItsKey) {
  ArtifactMeta meta;
  meta.run_id = "run-1";
  meta.id = "a1";
  meta.type = domain::ArtifactType::kEvidence;
  meta.source_refs = {"x", "y"};
  CodecMemoryRow row;
  EncodeArtifactMeta(meta, row);
  auto decoded = DecodeArtifactMeta(row);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, meta);
  row.values[6] = std::string("nope");
  auto bad = DecodeArtifactMeta(row);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("artifacts row run-1/a1: source_refs_json"), std::string::npos);
}

TEST(RecordCodecTest, RecordJsonUsesTheFieldNamesAndOmitsWhatIsAsked) {
  Json all = RunRecordJson(CodecSampleRun());
  EXPECT_EQ(all.size(), static_cast<size_t>(kRunColumnCount));
  EXPECT_EQ(all["runId"], "run-1");
  EXPECT_TRUE(all["priorRunId"].is_null());
  EXPECT_EQ(all["escalationCount"], 2);
  EXPECT_EQ(all["extra"], CodecSampleRun().extra);
  static constexpr std::string_view kOmit[] = {"extra", "runId"};
  Json some = RunRecordJson(CodecSampleRun(), kOmit);
  EXPECT_FALSE(some.contains("extra"));
  EXPECT_FALSE(some.contains("runId"));
  EXPECT_EQ(some.size(), static_cast<size_t>(kRunColumnCount - 2));
}

TEST(RecordCodecTest, RefusedCallDecodesItsIssuesOrNamesTheRow) {
  CodecMemoryRow row;
  RowWriter& out = row;
  out.Int(3);
  out.Text("2026-01-01T00:00:00Z");
  out.Text("telic_submit_artifact");
  out.Text("invalid_argument");
  out.Text("refused");
  out.Text(R"([{"pointer":"/a","code":"x","message":"m"}])");
  out.Int(2);
  auto call = DecodeRefusedCall("run-1", row);
  ASSERT_TRUE(call) << call.error().message();
  EXPECT_EQ(call->seq, 3);
  EXPECT_EQ(call->run_id, "run-1");
  EXPECT_EQ(call->issues.size(), 1u);
  EXPECT_EQ(call->run_version, 2);
  row.values[5] = std::string("{}");
  auto bad = DecodeRefusedCall("run-1", row);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kDataLoss);
  EXPECT_EQ(bad.error().message(), "refused_calls row (run-1, 3): issues_json is not a JSON array");
}

}  // namespace
}  // namespace telic::store
