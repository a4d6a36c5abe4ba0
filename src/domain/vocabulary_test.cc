// The vocabularies: every value has one name, names parse back to the value,
// and an unknown word is a precise error naming the pointer and the words.
#include "domain/vocabulary.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace telic::domain {
namespace {

template <typename E, typename NameFn, typename LookupFn>
void ExpectRoundTrip(std::span<const E> values, NameFn name, LookupFn lookup, size_t count) {
  ASSERT_EQ(values.size(), count);
  std::set<std::string_view> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(values[i]), i) << "tables are in declaration order";
    std::string_view text = name(values[i]);
    EXPECT_TRUE(seen.insert(text).second) << text << " is printed for two values";
    EXPECT_EQ(lookup(text), values[i]) << text;
  }
}

TEST(VocabularyTest, EveryValuePrintsAndParsesBack) {
  ExpectRoundTrip(AllPhases(), [](Phase v) { return Name(v); }, PhaseNamed, 11);
  ExpectRoundTrip(AllPhases(), ProtocolName, PhaseWithProtocolName, 11);
  ExpectRoundTrip(AllRunStatuses(), [](RunStatus v) { return Name(v); }, RunStatusNamed, 6);
  ExpectRoundTrip(AllModes(), [](Mode v) { return Name(v); }, ModeNamed, 5);
  ExpectRoundTrip(AllTopologies(), [](Topology v) { return Name(v); }, TopologyNamed, 3);
  ExpectRoundTrip(AllTaskStates(), [](TaskState v) { return Name(v); }, TaskStateNamed, 6);
  ExpectRoundTrip(AllArtifactTypes(), [](ArtifactType v) { return Name(v); }, ArtifactTypeNamed, 16);
  ExpectRoundTrip(AllReviewDecisions(), [](ReviewDecision v) { return Name(v); }, ReviewDecisionNamed, 7);
}

TEST(VocabularyTest, InternalAndProtocolPhaseNamesDifferWhereTheWireSaysSo) {
  EXPECT_EQ(Name(Phase::kContextGrounding), "context_grounding");
  EXPECT_EQ(ProtocolName(Phase::kContextGrounding), "context_discovery");
  EXPECT_EQ(ProtocolName(Phase::kAgent2Revise), "agent_2_revision");
  EXPECT_EQ(ProtocolName(Phase::kAgent3Review), "agent_3_quality_review");
  EXPECT_EQ(ProtocolName(Phase::kAgent5Audit), "agent_5_release_audit");
  EXPECT_EQ(ProtocolName(Phase::kAgent5Report), "user_report");
  EXPECT_EQ(PhaseNamed("user_report"), std::nullopt) << "a wire name is not a stored name";
  EXPECT_EQ(PhaseWithProtocolName("agent_5_report"), std::nullopt);
}

TEST(VocabularyTest, AnUnknownWordIsAnErrorWithItsPointerAndTheAllowedWords) {
  Result<Mode> mode = ParseMode("fix_everything", "/mode");
  ASSERT_FALSE(mode);
  EXPECT_EQ(mode.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_EQ(mode.error().issues().size(), 1u);
  EXPECT_EQ(mode.error().issues()[0].pointer, "/mode");
  EXPECT_EQ(mode.error().issues()[0].code, "invalid_enum_value");
  EXPECT_EQ(mode.error().issues()[0].message,
            "must be one of: analyze_only, analyze_and_fix, fix_only, plan_only, report_only");
  EXPECT_NE(mode.error().message().find("'fix_everything'"), std::string::npos);

  EXPECT_FALSE(ParseRunStatus("Completed", "/status")) << "words are case-sensitive";
  EXPECT_FALSE(ParseTaskState("", "/state"));
  EXPECT_FALSE(ParseArtifactType("TraceEvent", "/type")) << "a trace event is not a stored artifact";
  EXPECT_FALSE(ParseTopology("micro ", "/topology"));
  EXPECT_FALSE(ParsePhase(std::string_view("agent_1_frame\0", 14), "/phase")) << "no NUL smuggling";
}

TEST(VocabularyTest, AnOverlongUnknownWordIsShownShortened) {
  std::string word(100000, 'x');
  Result<Phase> phase = ParseProtocolPhase(word, "/phase");
  ASSERT_FALSE(phase);
  EXPECT_LT(phase.error().message().size(), 512u);
}

TEST(VocabularyTest, TerminalValues) {
  std::set<RunStatus> terminal;
  for (RunStatus s : AllRunStatuses()) {
    if (IsTerminal(s)) terminal.insert(s);
  }
  EXPECT_EQ(terminal, (std::set<RunStatus>{RunStatus::kCompleted, RunStatus::kPartial, RunStatus::kBlocked,
                                           RunStatus::kCancelled}));
  std::set<TaskState> done;
  for (TaskState s : AllTaskStates()) {
    if (IsTerminal(s)) done.insert(s);
  }
  EXPECT_EQ(done, (std::set<TaskState>{TaskState::kCompleted, TaskState::kFailed, TaskState::kCancelled}));
}

}  // namespace
}  // namespace telic::domain
