// The protocol's closed vocabularies as types: run phases, run statuses,
// modes, topologies, task states and artifact types.
//
// Contract: a value enters as text only at an edge (a stored row, a tool
// argument, a bundle, an artifact body) and is parsed there once by the
// Parse* function of its vocabulary, which names the JSON pointer and the
// allowed values when the text is not one of them. Inside telic the value is
// the enum; it leaves as text only through the Name function of its
// vocabulary. Each table below is the one place a vocabulary's words are
// written (scripts/count-vocabulary-compares counts the rest of src/).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::domain {

// The run's state-machine phase. The stored (internal) name and the name the
// wire shows (protocol name) differ for five phases: context_grounding is
// context_discovery, agent_2_revise is agent_2_revision, agent_3_review is
// agent_3_quality_review, agent_5_audit is agent_5_release_audit and
// agent_5_report is user_report. Order is the order of a standard run.
enum class Phase : uint8_t {
  kContextGrounding,
  kAgent1Frame,
  kAgent2Compile,
  kAgent1Review,
  kAgent2Revise,
  kAgent3Plan,
  kAgent4Execute,
  kAgent3Review,
  kAgent3EvidenceReverify,
  kAgent5Audit,
  kAgent5Report,
};

// A run's status (PROTOCOL §8.1). Every status but kRunning and
// kAwaitingClarification ends the run.
enum class RunStatus : uint8_t { kRunning, kAwaitingClarification, kCompleted, kPartial, kBlocked, kCancelled };

// The mode a run was requested in (PROTOCOL §8.1, docs/PERMISSIONS.md).
enum class Mode : uint8_t { kAnalyzeOnly, kAnalyzeAndFix, kFixOnly, kPlanOnly, kReportOnly };

// The agent topology chosen at run start (PROTOCOL §11.1).
enum class Topology : uint8_t { kMicro, kStandard, kForensic };

// A task of the task graph (DAG-006..DAG-010).
enum class TaskState : uint8_t { kPending, kReady, kRunning, kCompleted, kFailed, kCancelled };

// The type of a stored artifact (schemas/artifacts).
enum class ArtifactType : uint8_t {
  kRunEnvelope,
  kUserMessage,
  kContextManifest,
  kContextDocument,
  kProblemFrame,
  kScenarioSpec,
  kTaskContract,
  kPromptReview,
  kWorkPlan,
  kWorkResult,
  kEvidence,
  kQualityReview,
  kReleaseAudit,
  kReceiptAudit,
  kUserReport,
  kClarificationRequest,
};

// The decision of a review artifact (PromptReview, QualityReview,
// ReleaseAudit): its body's `decision` field, whose words partly coincide
// with run statuses (partial).
enum class ReviewDecision : uint8_t { kPass, kRevise, kBlock, kPartial, kRemediate, kProceedToFix, kRelease };

// The status of a WorkResult, of one of its actions and of one of its test
// results (schemas/artifacts/WorkResult.json); their words coincide with run
// and task words (completed, partial, blocked, failed).
enum class WorkStatus : uint8_t { kCompleted, kPartial, kBlocked, kFailed };
enum class ActionStatus : uint8_t { kCompleted, kFailed, kDenied, kSkipped };
enum class TestStatus : uint8_t { kPassed, kFailed, kSkipped, kUnavailable };

// Names: the one way each value is printed.
std::string_view Name(Phase phase);          // the internal (stored) name
std::string_view ProtocolName(Phase phase);  // the wire name
std::string_view Name(RunStatus status);
std::string_view Name(Mode mode);
std::string_view Name(Topology topology);
std::string_view Name(TaskState state);
std::string_view Name(ArtifactType type);
std::string_view Name(ReviewDecision decision);
std::string_view Name(WorkStatus status);
std::string_view Name(ActionStatus status);
std::string_view Name(TestStatus status);

// Lookups for text that may be of another vocabulary: nullopt when `text` is
// not one of the vocabulary's words.
std::optional<Phase> PhaseNamed(std::string_view internal_name);
std::optional<Phase> PhaseWithProtocolName(std::string_view protocol_name);
std::optional<RunStatus> RunStatusNamed(std::string_view text);
std::optional<Mode> ModeNamed(std::string_view text);
std::optional<Topology> TopologyNamed(std::string_view text);
std::optional<TaskState> TaskStateNamed(std::string_view text);
std::optional<ArtifactType> ArtifactTypeNamed(std::string_view text);
std::optional<ReviewDecision> ReviewDecisionNamed(std::string_view text);
std::optional<WorkStatus> WorkStatusNamed(std::string_view text);
std::optional<ActionStatus> ActionStatusNamed(std::string_view text);
std::optional<TestStatus> TestStatusNamed(std::string_view text);

// Parsing at an edge: kInvalidArgument with one issue at `pointer` ("must be
// one of: a, b, c") when `text` is not one of the vocabulary's words. A
// store reading its own rows maps this to kDataLoss with the table and key.
[[nodiscard]] Result<Phase> ParsePhase(std::string_view text, std::string_view pointer);
[[nodiscard]] Result<Phase> ParseProtocolPhase(std::string_view text, std::string_view pointer);
[[nodiscard]] Result<RunStatus> ParseRunStatus(std::string_view text, std::string_view pointer);
[[nodiscard]] Result<Mode> ParseMode(std::string_view text, std::string_view pointer);
[[nodiscard]] Result<Topology> ParseTopology(std::string_view text, std::string_view pointer);
[[nodiscard]] Result<TaskState> ParseTaskState(std::string_view text, std::string_view pointer);
[[nodiscard]] Result<ArtifactType> ParseArtifactType(std::string_view text, std::string_view pointer);

// Every value of a vocabulary, in declaration order (for listings, help and
// exhaustive tests).
std::span<const Phase> AllPhases();
std::span<const RunStatus> AllRunStatuses();
std::span<const Mode> AllModes();
std::span<const Topology> AllTopologies();
std::span<const TaskState> AllTaskStates();
std::span<const ArtifactType> AllArtifactTypes();
std::span<const ReviewDecision> AllReviewDecisions();

// JSON: every vocabulary but Phase converts to JSON as its Name (nlohmann
// would otherwise write an enum as its number). Phase has two names, so it
// has no implicit conversion: a caller writes Name or ProtocolName. No
// vocabulary converts from JSON implicitly: text is parsed by its Parse*.
void to_json(Json& json, RunStatus status);
void to_json(Json& json, Mode mode);
void to_json(Json& json, Topology topology);
void to_json(Json& json, TaskState state);
void to_json(Json& json, ArtifactType type);
void to_json(Json& json, Phase phase) = delete;
void from_json(const Json& json, Phase& phase) = delete;
void from_json(const Json& json, RunStatus& status) = delete;
void from_json(const Json& json, Mode& mode) = delete;
void from_json(const Json& json, Topology& topology) = delete;
void from_json(const Json& json, TaskState& state) = delete;
void from_json(const Json& json, ArtifactType& type) = delete;

// True for every status that ends a run.
bool IsTerminal(RunStatus status);
// True for every task state no transition leaves (completed, failed, cancelled).
bool IsTerminal(TaskState state);

}  // namespace telic::domain

// fmt prints every vocabulary but Phase as its Name (Phase: see to_json).
template <typename E>
struct TelicVocabularyFormatter : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(E value, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(telic::domain::Name(value), ctx);
  }
};
template <>
struct fmt::formatter<telic::domain::RunStatus> : TelicVocabularyFormatter<telic::domain::RunStatus> {};
template <>
struct fmt::formatter<telic::domain::Mode> : TelicVocabularyFormatter<telic::domain::Mode> {};
template <>
struct fmt::formatter<telic::domain::Topology> : TelicVocabularyFormatter<telic::domain::Topology> {};
template <>
struct fmt::formatter<telic::domain::TaskState> : TelicVocabularyFormatter<telic::domain::TaskState> {};
template <>
struct fmt::formatter<telic::domain::ArtifactType> : TelicVocabularyFormatter<telic::domain::ArtifactType> {};
