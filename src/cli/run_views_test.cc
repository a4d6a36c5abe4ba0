// The pure parts of the run views: hints, short ids, times and replay labels.
#include "cli/run_views.h"

#include <gtest/gtest.h>

namespace telic::cli {
namespace {

TEST(NextRunsCommandTest, KeepsTheFiltersAndTheLocationTheUserGave) {
  RunsArgs args;
  args.limit = 5;
  args.status = "running";
  LedgerFlags flags;
  flags.db = "/tmp/my ledger.sqlite3";
  flags.repo = "../repo";
  EXPECT_EQ(NextRunsCommand(args, flags, "abc"),
            "telic runs --limit 5 --status running --repo ../repo --db '/tmp/my ledger.sqlite3' --before abc");
  EXPECT_EQ(NextRunsCommand(RunsArgs{}, LedgerFlags{}, "abc"), "telic runs --before abc");
}

TEST(NextRunsCommandTest, APostgresPasswordStaysOutOfTheHint) {
  LedgerFlags flags;
  flags.db = "postgresql://telic:secret@db.example/telic";
  std::string hint = NextRunsCommand(RunsArgs{}, flags, "abc");
  EXPECT_EQ(hint.find("secret"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--db postgresql://"), std::string::npos) << hint;
}

TEST(ShortIdsTest, EightCharactersOrAsManyAsTellTheIdsApart) {
  EXPECT_EQ(ShortIds({"0437b2b7-6257", "9f00aa11-0000"}), (std::vector<std::string>{"0437b2b7", "9f00aa11"}));
  EXPECT_EQ(ShortIds({"0437b2b7-6257", "0437b2b7-6299"}), (std::vector<std::string>{"0437b2b7-625", "0437b2b7-629"}));
  EXPECT_EQ(ShortIds({"0437b2b7-6257", "0437b2b7-6299", "11"}),
            (std::vector<std::string>{"0437b2b7-625", "0437b2b7-629", "11"}));
  EXPECT_EQ(ShortIds({"short"}), std::vector<std::string>{"short"});
}

TEST(EventTimeTest, RelativeClockAndFull) {
  const std::string at = "2026-12-02T08:15:53.310Z";
  const int64_t start = 1796199353310 - 12'400;  // 12.4 s before `at`
  EXPECT_EQ(EventTime(at, start, TimeStyle::kRelative), "+12.4 s");
  EXPECT_EQ(EventTime(at, start + 12'400, TimeStyle::kRelative), "+0 ms");
  EXPECT_EQ(EventTime(at, start, TimeStyle::kClock), "08:15:53.310");
  EXPECT_EQ(EventTime(at, start, TimeStyle::kFull), at);
  EXPECT_EQ(EventTime("not a time", start, TimeStyle::kRelative), "not a time");
  EXPECT_EQ(ParseTimeStyle("clock"), TimeStyle::kClock);
  EXPECT_EQ(ParseTimeStyle("later"), std::nullopt);
}

store::TraceEventRecord ReplayEvent(int64_t sequence, std::string timestamp, std::string phase,
                              std::vector<std::string> outputs = {}) {
  store::TraceEventRecord event;
  event.sequence = sequence;
  event.timestamp = std::move(timestamp);
  event.phase = std::move(phase);
  event.output_refs = std::move(outputs);
  return event;
}

store::ArtifactMeta ReplayArtifact(std::string id, std::string created_at) {
  store::ArtifactMeta meta;
  meta.run_id = "r";
  meta.id = std::move(id);
  meta.created_at = std::move(created_at);
  return meta;
}

// The report labels artifacts no event lists (the request, the envelope)
// with the run's current phase; each step gets the phase it was stored in.
TEST(ReplayStepPhasesTest, EachStepIsLabelledWithItsOwnPhase) {
  Json steps = Json::array({
      {{"artifactRef", "artifact://r/request"}, {"phase", "agent_5_report"}},
      {{"artifactRef", "artifact://r/r"}, {"phase", "agent_5_report"}},
      {{"artifactRef", "artifact://r/frame"}, {"phase", "agent_1_frame"}},
      {{"artifactRef", "artifact://r/note"}, {"phase", "agent_5_report"}},
      {{"artifactRef", "artifact://r/unknown"}, {"phase", "agent_5_report"}},
  });
  std::vector<store::TraceEventRecord> trace = {
      ReplayEvent(1, "2026-12-02T08:00:00.000Z", "context_grounding"),
      ReplayEvent(2, "2026-12-02T08:00:01.000Z", "agent_1_frame", {"artifact://r/frame"}),
      ReplayEvent(3, "2026-12-02T08:00:02.000Z", "agent_2_compile"),
      ReplayEvent(4, "2026-12-02T08:00:09.000Z", "agent_5_report"),
  };
  std::vector<store::ArtifactMeta> artifacts = {
      ReplayArtifact("request", "2026-12-02T08:00:00.000Z"), ReplayArtifact("r", "2026-12-02T08:00:00.000Z"),
      ReplayArtifact("frame", "2026-12-02T08:00:01.000Z"), ReplayArtifact("note", "2026-12-02T08:00:02.500Z")};
  EXPECT_EQ(ReplayStepPhases(steps, trace, artifacts),
            (std::vector<std::string>{"context_grounding", "context_grounding", "agent_1_frame", "agent_2_compile",
                                      "agent_5_report"}));
}

}  // namespace
}  // namespace telic::cli
