#include "domain/vocabulary.h"

#include <array>
#include <string>

namespace telic::domain {
namespace {

// One row per value, in the enum's declaration order (checked by the tests).
template <typename E>
struct Word {
  E value;
  std::string_view name;
};

constexpr std::array<Word<Phase>, 11> kPhaseNames = {{
    {Phase::kContextGrounding, "context_grounding"},
    {Phase::kAgent1Frame, "agent_1_frame"},
    {Phase::kAgent2Compile, "agent_2_compile"},
    {Phase::kAgent1Review, "agent_1_review"},
    {Phase::kAgent2Revise, "agent_2_revise"},
    {Phase::kAgent3Plan, "agent_3_plan"},
    {Phase::kAgent4Execute, "agent_4_execute"},
    {Phase::kAgent3Review, "agent_3_review"},
    {Phase::kAgent3EvidenceReverify, "agent_3_evidence_reverify"},
    {Phase::kAgent5Audit, "agent_5_audit"},
    {Phase::kAgent5Report, "agent_5_report"},
}};

constexpr std::array<Word<Phase>, 11> kPhaseProtocolNames = {{
    {Phase::kContextGrounding, "context_discovery"},
    {Phase::kAgent1Frame, "agent_1_frame"},
    {Phase::kAgent2Compile, "agent_2_compile"},
    {Phase::kAgent1Review, "agent_1_review"},
    {Phase::kAgent2Revise, "agent_2_revision"},
    {Phase::kAgent3Plan, "agent_3_plan"},
    {Phase::kAgent4Execute, "agent_4_execute"},
    {Phase::kAgent3Review, "agent_3_quality_review"},
    {Phase::kAgent3EvidenceReverify, "agent_3_evidence_reverify"},
    {Phase::kAgent5Audit, "agent_5_release_audit"},
    {Phase::kAgent5Report, "user_report"},
}};

constexpr std::array<Word<RunStatus>, 6> kRunStatusNames = {{
    {RunStatus::kRunning, "running"},
    {RunStatus::kAwaitingClarification, "awaiting_clarification"},
    {RunStatus::kCompleted, "completed"},
    {RunStatus::kPartial, "partial"},
    {RunStatus::kBlocked, "blocked"},
    {RunStatus::kCancelled, "cancelled"},
}};

constexpr std::array<Word<Mode>, 5> kModeNames = {{
    {Mode::kAnalyzeOnly, "analyze_only"},
    {Mode::kAnalyzeAndFix, "analyze_and_fix"},
    {Mode::kFixOnly, "fix_only"},
    {Mode::kPlanOnly, "plan_only"},
    {Mode::kReportOnly, "report_only"},
}};

constexpr std::array<Word<Topology>, 3> kTopologyNames = {{
    {Topology::kMicro, "micro"},
    {Topology::kStandard, "standard"},
    {Topology::kForensic, "forensic"},
}};

constexpr std::array<Word<TaskState>, 6> kTaskStateNames = {{
    {TaskState::kPending, "pending"},
    {TaskState::kReady, "ready"},
    {TaskState::kRunning, "running"},
    {TaskState::kCompleted, "completed"},
    {TaskState::kFailed, "failed"},
    {TaskState::kCancelled, "cancelled"},
}};

constexpr std::array<Word<ArtifactType>, 16> kArtifactTypeNames = {{
    {ArtifactType::kRunEnvelope, "RunEnvelope"},
    {ArtifactType::kUserMessage, "UserMessage"},
    {ArtifactType::kContextManifest, "ContextManifest"},
    {ArtifactType::kContextDocument, "ContextDocument"},
    {ArtifactType::kProblemFrame, "ProblemFrame"},
    {ArtifactType::kScenarioSpec, "ScenarioSpec"},
    {ArtifactType::kTaskContract, "TaskContract"},
    {ArtifactType::kPromptReview, "PromptReview"},
    {ArtifactType::kWorkPlan, "WorkPlan"},
    {ArtifactType::kWorkResult, "WorkResult"},
    {ArtifactType::kEvidence, "Evidence"},
    {ArtifactType::kQualityReview, "QualityReview"},
    {ArtifactType::kReleaseAudit, "ReleaseAudit"},
    {ArtifactType::kReceiptAudit, "ReceiptAudit"},
    {ArtifactType::kUserReport, "UserReport"},
    {ArtifactType::kClarificationRequest, "ClarificationRequest"},
}};

constexpr std::array<Word<ReviewDecision>, 7> kReviewDecisionNames = {{
    {ReviewDecision::kPass, "pass"},
    {ReviewDecision::kRevise, "revise"},
    {ReviewDecision::kBlock, "block"},
    {ReviewDecision::kPartial, "partial"},
    {ReviewDecision::kRemediate, "remediate"},
    {ReviewDecision::kProceedToFix, "proceed_to_fix"},
    {ReviewDecision::kRelease, "release"},
}};

constexpr std::array<Word<WorkStatus>, 4> kWorkStatusNames = {{
    {WorkStatus::kCompleted, "completed"},
    {WorkStatus::kPartial, "partial"},
    {WorkStatus::kBlocked, "blocked"},
    {WorkStatus::kFailed, "failed"},
}};

constexpr std::array<Word<ActionStatus>, 4> kActionStatusNames = {{
    {ActionStatus::kCompleted, "completed"},
    {ActionStatus::kFailed, "failed"},
    {ActionStatus::kDenied, "denied"},
    {ActionStatus::kSkipped, "skipped"},
}};

constexpr std::array<Word<TestStatus>, 4> kTestStatusNames = {{
    {TestStatus::kPassed, "passed"},
    {TestStatus::kFailed, "failed"},
    {TestStatus::kSkipped, "skipped"},
    {TestStatus::kUnavailable, "unavailable"},
}};

// The enum's value indexes its row: tables are in declaration order.
template <typename E, size_t N>
std::string_view NameIn(const std::array<Word<E>, N>& table, E value) {
  return table[static_cast<size_t>(value)].name;
}

template <typename E, size_t N>
std::optional<E> Lookup(const std::array<Word<E>, N>& table, std::string_view text) {
  for (const Word<E>& word : table) {
    if (word.name == text) return word.value;
  }
  return std::nullopt;
}

template <typename E, size_t N>
Result<E> Parse(const std::array<Word<E>, N>& table, std::string_view text, std::string_view pointer) {
  if (std::optional<E> value = Lookup(table, text)) return *value;
  std::string allowed;
  for (const Word<E>& word : table) {
    if (!allowed.empty()) allowed += ", ";
    allowed += word.name;
  }
  std::string message = "must be one of: " + allowed;
  std::string shown;  // the word as read, cut to 64 bytes, C0 controls and DEL as \xNN
  for (unsigned char c : text.substr(0, 64)) {
    if (c < 0x20 || c == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      shown += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    } else {
      shown += static_cast<char>(c);
    }
  }
  return Fail(ErrorCode::kInvalidArgument, std::string(pointer) + ": '" + shown + "' " + message,
              {Issue{std::string(pointer), "invalid_enum_value", message}});
}

template <typename E, size_t N>
std::array<E, N> ValuesOf(const std::array<Word<E>, N>& table) {
  std::array<E, N> values{};
  for (size_t i = 0; i < N; ++i) values[i] = table[i].value;
  return values;
}

}  // namespace

std::string_view Name(Phase phase) { return NameIn(kPhaseNames, phase); }
std::string_view ProtocolName(Phase phase) { return NameIn(kPhaseProtocolNames, phase); }
std::string_view Name(RunStatus status) { return NameIn(kRunStatusNames, status); }
std::string_view Name(Mode mode) { return NameIn(kModeNames, mode); }
std::string_view Name(Topology topology) { return NameIn(kTopologyNames, topology); }
std::string_view Name(TaskState state) { return NameIn(kTaskStateNames, state); }
std::string_view Name(ArtifactType type) { return NameIn(kArtifactTypeNames, type); }
std::string_view Name(ReviewDecision decision) { return NameIn(kReviewDecisionNames, decision); }
std::string_view Name(WorkStatus status) { return NameIn(kWorkStatusNames, status); }
std::string_view Name(ActionStatus status) { return NameIn(kActionStatusNames, status); }
std::string_view Name(TestStatus status) { return NameIn(kTestStatusNames, status); }

std::optional<Phase> PhaseNamed(std::string_view text) { return Lookup(kPhaseNames, text); }
std::optional<Phase> PhaseWithProtocolName(std::string_view text) { return Lookup(kPhaseProtocolNames, text); }
std::optional<RunStatus> RunStatusNamed(std::string_view text) { return Lookup(kRunStatusNames, text); }
std::optional<Mode> ModeNamed(std::string_view text) { return Lookup(kModeNames, text); }
std::optional<Topology> TopologyNamed(std::string_view text) { return Lookup(kTopologyNames, text); }
std::optional<TaskState> TaskStateNamed(std::string_view text) { return Lookup(kTaskStateNames, text); }
std::optional<ArtifactType> ArtifactTypeNamed(std::string_view text) { return Lookup(kArtifactTypeNames, text); }
std::optional<ReviewDecision> ReviewDecisionNamed(std::string_view text) { return Lookup(kReviewDecisionNames, text); }
std::optional<WorkStatus> WorkStatusNamed(std::string_view text) { return Lookup(kWorkStatusNames, text); }
std::optional<ActionStatus> ActionStatusNamed(std::string_view text) { return Lookup(kActionStatusNames, text); }
std::optional<TestStatus> TestStatusNamed(std::string_view text) { return Lookup(kTestStatusNames, text); }

Result<Phase> ParsePhase(std::string_view text, std::string_view pointer) {
  return Parse(kPhaseNames, text, pointer);
}
Result<Phase> ParseProtocolPhase(std::string_view text, std::string_view pointer) {
  return Parse(kPhaseProtocolNames, text, pointer);
}
Result<RunStatus> ParseRunStatus(std::string_view text, std::string_view pointer) {
  return Parse(kRunStatusNames, text, pointer);
}
Result<Mode> ParseMode(std::string_view text, std::string_view pointer) { return Parse(kModeNames, text, pointer); }
Result<Topology> ParseTopology(std::string_view text, std::string_view pointer) {
  return Parse(kTopologyNames, text, pointer);
}
Result<TaskState> ParseTaskState(std::string_view text, std::string_view pointer) {
  return Parse(kTaskStateNames, text, pointer);
}
Result<ArtifactType> ParseArtifactType(std::string_view text, std::string_view pointer) {
  return Parse(kArtifactTypeNames, text, pointer);
}

std::span<const Phase> AllPhases() {
  static const auto kValues = ValuesOf(kPhaseNames);
  return kValues;
}
std::span<const RunStatus> AllRunStatuses() {
  static const auto kValues = ValuesOf(kRunStatusNames);
  return kValues;
}
std::span<const Mode> AllModes() {
  static const auto kValues = ValuesOf(kModeNames);
  return kValues;
}
std::span<const Topology> AllTopologies() {
  static const auto kValues = ValuesOf(kTopologyNames);
  return kValues;
}
std::span<const TaskState> AllTaskStates() {
  static const auto kValues = ValuesOf(kTaskStateNames);
  return kValues;
}
std::span<const ArtifactType> AllArtifactTypes() {
  static const auto kValues = ValuesOf(kArtifactTypeNames);
  return kValues;
}
std::span<const ReviewDecision> AllReviewDecisions() {
  static const auto kValues = ValuesOf(kReviewDecisionNames);
  return kValues;
}

void to_json(Json& json, RunStatus status) { json = std::string(Name(status)); }
void to_json(Json& json, Mode mode) { json = std::string(Name(mode)); }
void to_json(Json& json, Topology topology) { json = std::string(Name(topology)); }
void to_json(Json& json, TaskState state) { json = std::string(Name(state)); }
void to_json(Json& json, ArtifactType type) { json = std::string(Name(type)); }

bool IsTerminal(RunStatus status) {
  return status != RunStatus::kRunning && status != RunStatus::kAwaitingClarification;
}

bool IsTerminal(TaskState state) {
  return state == TaskState::kCompleted || state == TaskState::kFailed || state == TaskState::kCancelled;
}

}  // namespace telic::domain
