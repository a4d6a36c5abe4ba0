// RunService: the operations behind the MCP tools and the CLI. Each writing
// operation is one Store transaction guarded by the run's version.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"
#include "controller/artifact_index.h"
#include "controller/body_cache.h"
#include "controller/next_action.h"
#include "controller/observe_work.h"
#include "observation/file_claims.h"
#include "observation/observer.h"
#include "observation/undeclared_changes.h"
#include "store/store.h"

namespace telic::controller {

class RunSnapshot;
struct PermissionDenial;

struct StartRunRequest {
  std::string original_request;  // stored byte-for-byte
  std::string mode;
  std::string host_name = "mcp-host";
  std::string native_subagents = "unknown";  // available | unavailable | unknown
  std::vector<std::string> host_capabilities = {"repository.read"};
  std::optional<std::vector<std::string>> authorization_granted;  // nullopt: the mode default
  std::vector<std::string> authorization_denied;
  std::vector<std::string> shell_execute_allowlist;
  std::vector<std::string> network_read_domains;
  std::optional<std::string> topology_override;
  std::optional<std::string> prior_run_id;
  // "checked" | "require_observed" (observe_work.h); nullopt: the server's setting.
  std::optional<std::string> observation;
};

// A run with its current NextAction.
struct RunAndAction {
  store::RunRecord run;
  Json next_action;
};

// Optional control of a grounding (a task's, mcp/tasks.h).
struct GroundingControl {
  // Polled during the grounding and once more just before the commit; when it
  // returns true the call fails with "Grounding was cancelled" and stores
  // nothing. May be empty.
  std::function<bool()> cancelled;
  // Hears a short description of each grounding stage as it advances. May be empty.
  std::function<void(std::string_view)> progress;
};

// What a repository grounder receives and returns (see src/grounding/).
struct GroundingInput {
  std::string run_id;
  std::string repository_root;
  std::string request_text;
  std::vector<std::string> active_paths;
  Json budget = Json::object();  // max_files, max_file_bytes, max_total_bytes, max_inventory_files (optional)
  Json effective_permissions;    // the grounding action's effectivePermissions
  GroundingControl control;
};
struct GroundingOutput {
  Json manifest;                // canonical ContextManifest body
  std::vector<Json> documents;  // ContextDocument bodies, each with its "id"
};
using Grounder = std::function<Result<GroundingOutput>(const GroundingInput&)>;

struct GroundContextRequest {
  std::string run_id;
  std::string action_id;
  int64_t expected_version = 0;
  std::vector<std::string> active_paths;
  Json budget = Json::object();
};


struct GroundResult {
  store::RunRecord run;
  Json next_action;
  Json manifest;
};

// telic_submit_artifact: the artifact path (artifact_type with body xor
// body_json) or the clarification path (clarification_response).
struct SubmitRequest {
  std::string run_id;
  std::string action_id;
  int64_t expected_version = 0;
  std::optional<std::string> artifact_type;
  std::optional<Json> body;
  std::optional<std::string> body_json;
  std::vector<std::string> source_refs;
  std::optional<std::string> clarification_response;
};

struct SubmitResult {
  store::RunRecord run;
  Json next_action;
  // Set for supporting artifacts (Evidence, ScenarioSpec): the stored metadata.
  std::optional<store::ArtifactMeta> artifact;
  // What telic observed of the work behind this submission (a WorkResult
  // with filesChanged, a UserReport): {"observed": true, ...} with the
  // files checked and telic's diff Evidence refs, or the undeclared changes;
  // {"observed": false, "reason": "not observed: ..."} when telic could not
  // look. Unset for submissions that claim nothing about the work tree.
  std::optional<Json> observation;
};

// What observing one submission adds to its transaction.
struct ObservedSubmission {
  std::vector<store::StoredArtifact> artifacts;  // observed Evidence (ObservedEvidenceArtifact)
  std::vector<std::string> summaries;            // their events' summaries, in the same order
  Json note;                                     // SubmitResult::observation (null: nothing to say)
};

// Validates an artifact body against its embedded schema and refinements,
// materialising defaults. kInvalidArgument lists every violation.
Status ValidateArtifactBody(const std::string& type, Json& body);

struct RunDetail {
  store::RunRecord run;
  std::vector<store::ArtifactMeta> artifacts;
  Json next_action;
};

// What GetRun and GetNextAction answer from: the run's record and how many
// artifacts it holds. Two reads with equal stamps give the same RunDetail
// and NextAction (artifacts are append-only; the NextAction cache is keyed
// the same way), so a caller may keep what it wrote from one for the other.
struct RunStamp {
  store::RunRecord run;
  size_t artifacts = 0;
  bool operator==(const RunStamp&) const = default;
};

class RunService {
 public:
  RunService(store::Store& store, Clock& clock, IdSource& ids, std::string repository_root)
      : store_(store), clock_(clock), ids_(ids), repository_root_(std::move(repository_root)) {}

  // Creates a run: stores the exact request (UserMessage) and the RunEnvelope,
  // classifies the topology, appends run_started / topology_classified (and
  // lineage_linked), all in one transaction.
  Result<RunAndAction> StartRun(const StartRunRequest& request);

  // The run's next action, shared with the per-run cache (never copied
  // here; it is immutable, and a later change makes a new one).
  Result<std::shared_ptr<const Json>> GetNextAction(const std::string& run_id);
  Result<RunDetail> GetRun(const std::string& run_id);
  // The run's current RunStamp: one read of the record (the artifact count
  // comes from the index cache, which fetches only what was appended).
  Result<RunStamp> ReadStamp(const std::string& run_id);
  // Keeps a refused tool call about `run_id` in the run's refused-call log
  // (store::RefusedCall): `refusal` is the ToolError payload the caller got
  // ({code, error, issues?}, already redacted). The run itself is unchanged.
  // kNotFound when there is no such run; the caller's answer never depends
  // on whether this succeeds.
  [[nodiscard]] Status RecordRefusedCall(const std::string& run_id, std::string_view tool, const Json& refusal);
  Result<std::vector<store::RunRecord>> ListRuns(int limit);
  // One page of runs, newest created first (store::RunQuery); `telic runs`.
  Result<store::RunPage> QueryRuns(const store::RunQuery& query);
  Result<store::StoredArtifact> GetArtifact(const std::string& run_id, const std::string& artifact_id);
  Result<store::TracePage> GetTrace(const std::string& run_id, int64_t after_sequence, int limit);

  // Checks the optimistic-concurrency tokens, in the reference's order: run
  // exists, version equal (kStaleVersion "Stale run version ..."), action id
  // equal (kStaleVersion "Stale or foreign action_id; reload the next action").
  Result<store::RunRecord> CheckTokens(const std::string& run_id, const std::string& action_id,
                                       int64_t expected_version);

  // telic_ground_context: checks tokens, requires the run to be running in
  // context_grounding, builds the manifest (report_only: the fixed empty
  // manifest; otherwise the grounder), validates it against its schema, and
  // stores the ContextDocuments, the manifest and their events while moving
  // the run to agent_1_frame, in one transaction.
  Result<GroundResult> GroundContext(const GroundContextRequest& request, const GroundingControl& control = {});

  // How the NextActions this service returns carry their output schemas
  // (next_action.h; kCopies unless set). kReferences is for the MCP server,
  // which writes every result with its result writer or expands them.
  // Clears the NextAction cache, so every later action has the new form.
  // Safe while serving: an action computed concurrently may be cached in
  // the old form, which every writer of results handles alike (D-P8).
  void set_action_schemas(ActionSchemas form);

  // Installs the repository grounder (without one, grounding a run that is
  // not report_only fails with kFailedPrecondition).
  void set_grounder(Grounder grounder) { grounder_ = std::move(grounder); }

  // Installs the observer of the host's work tree (issue 38). With one, runs
  // started afterwards have their FileChanges checked, diffed and their
  // undeclared changes found (RunObservation::shared). nullptr: telic does
  // not see the host's work tree, and every observation of later runs says
  // `unobserved_reason` instead (observation::kNotShared unless the
  // observer could not be opened, e.g. the root is not a Git work tree).
  void set_work_tree(std::shared_ptr<observation::WorkTreeObserver> observer,
                     std::string unobserved_reason = std::string(observation::kNotShared));
  // The policy of runs whose start request does not name one (server setting).
  void set_default_observation_policy(ObservationPolicy policy) { default_observation_policy_ = policy; }

  // Called with the run id after each committed change that can concern the
  // task graph: an accepted WorkPlan or WorkResult, a submission that ended
  // the run, a cancellation. The run's artifacts stay the source of truth: a
  // listener must be idempotent and may be re-run later to repair what a
  // crash interrupted.
  void set_change_listener(std::function<void(const std::string&)> listener) { change_listener_ = std::move(listener); }

  // Cancels a non-terminal run (status cancelled, version + 1, run_cancelled
  // event). A terminal run is returned unchanged with no new event.
  Result<RunAndAction> CancelRun(const std::string& run_id, const std::string& action_id, int64_t expected_version);

  // telic_submit_artifact (PROTOCOL §6.4, PROTOCOL §10, PROTOCOL §14, PROTOCOL §15): accepted only
  // if it answers the current action, has an accepted type and passes the
  // schema, reference and cross-artifact rules; then stored with its trace
  // events and the state advance in one transaction. A rejection stores
  // nothing, except a DENY permission_checked event for a permission
  // violation and the escalation-by-rejection transition (PROTOCOL §11.3).
  Result<SubmitResult> SubmitArtifact(const SubmitRequest& request);

  // Stores one Evidence artifact that telic captured itself (a diff it
  // computed, the output of a check it ran in its sandbox): provenance
  // observed (store::ProvenanceOf), producer store::kObservedEvidenceProducer,
  // appended with one kEvidenceObservedEvent (actor "controller") whose
  // output ref names it, so the trace's hash chain covers the fact. Only
  // telic's own code may call this; nothing a host sends reaches it.
  //   - `body` is a complete Evidence body (schemas/artifacts/Evidence.json)
  //     with its own `id` and `runId` == run_id; it is validated like a
  //     host's (kInvalidArgument with the violations) and stored as given.
  //   - The caller redacts first (base/redact.h RedactSecrets, listing what
  //     it replaced in `redactions`); a body still holding a likely
  //     credential is refused (kInvalidArgument) and nothing is stored.
  //   - Accepted in any phase of a run that has not ended (kFailedPrecondition
  //     once it has); it does not bump the run's version, does not count
  //     against the host's Evidence quota per WorkPlan, and is guarded by the
  //     run's artifact count (retried on a concurrent append).
  //   - `sourceRefs` artifact refs must name artifacts of this run.
  //   - Replaying an identical body with the same id returns the stored
  //     metadata; a different body under a taken id is kAlreadyExists.
  // Returns the stored metadata (its sha256 is the body's digest).
  [[nodiscard]] Result<store::ArtifactMeta> RecordObservedEvidence(const std::string& run_id, Json body);

  // telic_replay_run (PROTOCOL §17.3) plus telic's own state check: the run's
  // transitions re-derived from its stored artifacts and events through the
  // same state machine, compared with the stored run record.
  Result<Json> ReplayRun(const std::string& run_id);

  // Drops the parsed artifact bodies kept for reads and submissions (called
  // after runs are deleted; see BodyCache::Clear).
  void ForgetCachedBodies() { bodies_.Clear(); }
  // Artifact bodies read from the store through the body cache so far (tests).
  size_t body_loads_from_store() const { return bodies_.loads_from_store(); }

  const std::string& repository_root() const { return repository_root_; }
  store::Store& store() { return store_; }
  Clock& clock() { return clock_; }
  IdSource& ids() { return ids_; }

 private:
  // The action for `run` as it is stored: the cached one while the record
  // and the artifact count are unchanged, else computed and cached.
  Result<std::shared_ptr<const Json>> SharedNextAction(const store::RunRecord& run);
  // The same with the run's index already read (not read again).
  Result<std::shared_ptr<const Json>> SharedNextAction(const store::RunRecord& run, const ArtifactIndex& index);
  // A copy of SharedNextAction's, for results that own their action.
  Result<Json> NextActionFor(const store::RunRecord& run);
  Result<SubmitResult> SubmitArtifactUnnotified(const SubmitRequest& request);
  Result<SubmitResult> AnswerClarification(const store::RunRecord& run, const std::string& response);
  Result<SubmitResult> SubmitPhaseArtifact(const store::RunRecord& run, const std::string& type, Json body,
                                           const std::vector<std::string>& supplied_refs);
  // Evidence / ScenarioSpec: retried (bounded) when a concurrent append to the
  // same run invalidated the attempt's snapshot, so an identical resubmission
  // racing its twin replays instead of failing.
  Result<SubmitResult> SubmitSupporting(const store::RunRecord& run, domain::ArtifactType type, Json body,
                                        const std::vector<std::string>& supplied_refs);
  Result<SubmitResult> SubmitSupportingAttempt(const store::RunRecord& run, domain::ArtifactType type, const Json& body,
                                               const std::vector<std::string>& supplied_refs);
  RunObservation NewRunObservation(ObservationPolicy policy) const;
  // The observation state of a run about to leave context_grounding: with
  // the work tree's baseline when it is shared and readable; marked not
  // shared, with the reason, when it cannot be read (e.g. not a Git work tree).
  Result<RunObservation> TakeBaseline(const store::RunRecord& run);
  // The digest `path` held at grounding (its bytes too when `bytes` is set
  // and the content is known: committed, or absent).
  Result<std::string> GroundedDigest(const observation::Baseline& baseline, const std::string& path,
                                     std::optional<std::string>* bytes);
  // Item 1 and 3: every FileChange of `body` checked against the work tree
  // (a mismatch is a rule violation at its JSON pointer) and telic's diff of each.
  Result<ObservedSubmission> ObserveWorkResult(RunSnapshot& snapshot, const std::string& work_result_id,
                                               const Json& body, const std::string& now);
  // Item 2 and 6: undeclared changes refuse a completion claim and are named
  // (as observed Evidence) by an honest outcome; require_observed's rules.
  Result<ObservedSubmission> ObserveUserReport(RunSnapshot& snapshot, const std::string& report_id, const Json& body,
                                               const std::string& now);
  Result<std::vector<observation::UndeclaredChange>> FindUndeclared(RunSnapshot& snapshot,
                                                                    const observation::Baseline& baseline);
  Status CheckRequireObserved(RunSnapshot& snapshot, const Json& body);
  Result<store::ArtifactMeta> RecordObservedEvidenceAttempt(const std::string& run_id, const Json& body);
  Status RecordDenial(const store::RunRecord& run, RunSnapshot& snapshot, const PermissionDenial& denial,
                      const std::string& message, const std::string& now);
  Result<SubmitResult> EscalateByRejection(const store::RunRecord& run, const std::string& artifact_uri,
                                           domain::Topology topology, domain::Phase phase,
                                           const std::string& reason);
  store::TraceEventRecord NewEvent(const store::RunRecord& run, std::string actor, std::string type,
                                   std::string summary, const std::string& timestamp);

  store::Store& store_;
  Clock& clock_;
  IdSource& ids_;
  std::string repository_root_;
  Grounder grounder_;
  std::shared_ptr<observation::WorkTreeObserver> work_tree_;
  std::string unobserved_reason_ = std::string(observation::kNotShared);
  ObservationPolicy default_observation_policy_ = ObservationPolicy::kChecked;
  std::atomic<ActionSchemas> action_schemas_ = ActionSchemas::kCopies;
  ArtifactIndexCache artifact_index_{store_};
  BodyCache bodies_;  // parsed artifact bodies, shared by reads and submissions
  // NextAction is a pure function of the run record and its artifact list
  // (append-only, so its length names it): the last one computed per run is
  // kept while both are unchanged (issue 18: reads recomputed it each time).
  struct CachedAction {
    store::RunRecord run;
    size_t artifacts = 0;
    std::shared_ptr<const Json> action;
  };
  static constexpr size_t kMaxCachedActions = 16;
  std::mutex actions_mutex_;
  std::unordered_map<std::string, CachedAction> actions_;
  std::function<void(const std::string&)> change_listener_;
  void NotifyChanged(const std::string& run_id) {
    if (change_listener_) change_listener_(run_id);
  }
};

}  // namespace telic::controller
