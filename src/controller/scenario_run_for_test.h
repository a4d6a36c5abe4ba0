// Tests only: drives an embedded example scenario (examples/<name>.json)
// through a RunService over a real SQLite store, the repository grounder and
// an injected clock and id source, the way a host would drive it over MCP.
// Used by next_action_test.cc and budget_rules_test.cc.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "cli/demo.h"
#include "controller/grounder.h"
#include "controller/next_action.h"
#include "controller/run_service.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::controller::testing_support {

class ScenarioRun {
 public:
  static constexpr int64_t kStartMillis = 1764662400000;

  explicit ScenarioRun(const std::string& name = "analyze_and_fix") : clock_(kStartMillis, 1) {
    scenario_ = *cli::LoadScenario(name);
    repo_ = dir_.path() / "repo";
    for (auto it = scenario_["repository"].begin(); it != scenario_["repository"].end(); ++it) {
      WriteRepoFile(it.key(), it->get<std::string>());
    }
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<RunService>(*store_, clock_, ids_, repo_.string());
    service_->set_grounder(MakeRepositoryGrounder({}));
  }

  // The scenario's start request; `adjust` may change it before the run starts.
  Status Start(const std::function<void(StartRunRequest&)>& adjust = nullptr) {
    const Json& start = scenario_["start"];
    StartRunRequest request;
    request.original_request = start["original_request"];
    request.mode = start["mode"];
    if (start.contains("host_capabilities")) request.host_capabilities = start["host_capabilities"];
    if (adjust) adjust(request);
    TELIC_ASSIGN_OR_RETURN(RunAndAction started, service_->StartRun(request));
    run_ = started.run;
    action_ = started.next_action;
    TELIC_ASSIGN_OR_RETURN(store::StoredArtifact envelope, store_->GetArtifact(run_.run_id, run_.run_id));
    names_ = {{"run", run_.run_id},
              {"request", Json::parse(envelope.canonical_body)["originalRequestRef"].get<std::string>()},
              {"now", FormatIsoMillis(kStartMillis)},
              {"manifest", ""}};
    return Ok();
  }

  // The first step whose `say` contains `text` (a copy), or null.
  Json Step(const std::string& text) const {
    for (const Json& step : scenario_["steps"]) {
      if (step.value("say", "").find(text) != std::string::npos) return step;
    }
    return nullptr;
  }
  const Json& Steps() const { return scenario_["steps"]; }

  // A step's body with ${run}, ${request}, ${now}, ${manifest} filled in.
  Json Body(const Json& step) const { return cli::SubstituteNames(step["body"], names_); }
  std::string Uri(const std::string& id) const { return store::ArtifactUri(run_.run_id, id); }

  // Performs one scenario step (ground, submit, answer, write_file).
  Status Do(const Json& step) {
    if (step.contains("write_file")) {
      WriteRepoFile(step["write_file"]["path"], step["write_file"]["content"]);
      return Ok();
    }
    if (step.contains("ground")) return Ground();
    if (step.contains("answer")) return Done(Answer(step["answer"]));
    std::vector<std::string> refs;
    if (step.contains("source_refs")) refs = cli::SubstituteNames(step["source_refs"], names_);
    return Done(Submit(step["submit"], Body(step), refs));
  }

  // Performs every step before the first one whose `say` contains `text`.
  Status RunUntil(const std::string& text) {
    for (const Json& step : Steps()) {
      if (step.value("say", "").find(text) != std::string::npos) return Ok();
      TELIC_RETURN_IF_ERROR(Do(step));
    }
    return Fail(ErrorCode::kNotFound, fmt::format("no step says {}", text));
  }
  Status RunAll() {
    for (const Json& step : Steps()) TELIC_RETURN_IF_ERROR(Do(step));
    return Ok();
  }

  Status Ground(const Json& budget = Json::object()) {
    GroundContextRequest request{run_.run_id, ActionId(run_), run_.version, {}, budget};
    TELIC_ASSIGN_OR_RETURN(GroundResult result, service_->GroundContext(request));
    run_ = result.run;
    action_ = result.next_action;
    names_["manifest"] = action_.value("contextManifestRef", "");
    return Ok();
  }

  // Submits with the current tokens; on success the run and action advance.
  Result<SubmitResult> Submit(const std::string& type, const Json& body, std::vector<std::string> refs = {}) {
    SubmitRequest request;
    request.run_id = run_.run_id;
    request.action_id = ActionId(run_);
    request.expected_version = run_.version;
    request.artifact_type = type;
    request.body = body;
    request.source_refs = std::move(refs);
    return Send(request);
  }
  Result<SubmitResult> Answer(const std::string& choice) {
    SubmitRequest request;
    request.run_id = run_.run_id;
    request.action_id = ActionId(run_);
    request.expected_version = run_.version;
    request.clarification_response = choice;
    return Send(request);
  }
  Result<SubmitResult> Send(const SubmitRequest& request) {
    TELIC_ASSIGN_OR_RETURN(SubmitResult result, service_->SubmitArtifact(request));
    run_ = result.run;
    action_ = result.next_action;
    return result;
  }

  // The stored artifacts of the run, in insertion order.
  std::vector<store::ArtifactMeta> Artifacts() const { return *store_->ListArtifacts(run_.run_id); }
  const store::ArtifactMeta* Find(const std::string& id) const {
    artifacts_cache_ = Artifacts();
    for (const auto& meta : artifacts_cache_) {
      if (meta.id == id) return &meta;
    }
    return nullptr;
  }
  std::vector<store::TraceEventRecord> Trace() const { return store_->GetTrace(run_.run_id, 0, 1000)->events; }
  Json Artifact(const std::string& id) const {
    return Json::parse(store_->GetArtifact(run_.run_id, id)->canonical_body);
  }
  // The type of the artifact a URI of this run names ("" when none).
  std::string TypeOf(const std::string& uri) const {
    std::string prefix = "artifact://" + run_.run_id + "/";
    if (uri.rfind(prefix, 0) != 0) return "";
    for (const auto& meta : Artifacts()) {
      if (meta.id == uri.substr(prefix.size())) return std::string(domain::Name(meta.type));
    }
    return "";
  }

  // Writes the run record as stored, bumping the version, with `artifacts`
  // appended past every submit check (to set up a state the steps cannot
  // reach cheaply, e.g. exhausted counters). action() is null afterwards when
  // no NextAction can be computed.
  Status Rewrite(const std::function<void(store::RunRecord&)>& adjust, std::vector<store::StoredArtifact> artifacts = {}) {
    store::Change change;
    change.run = run_;
    adjust(change.run);
    change.run.version = run_.version + 1;
    change.artifacts = std::move(artifacts);
    TELIC_RETURN_IF_ERROR(store_->ApplyChange(run_.run_id, run_.version, change));
    run_ = *store_->GetRun(run_.run_id);
    auto action = service_->GetNextAction(run_.run_id);  // may fail: the state may be one no action fits
    action_ = action ? **action : Json(nullptr);
    return Ok();
  }

  void WriteRepoFile(const std::string& rel, const std::string& text) {
    std::filesystem::path path = repo_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }

  static Status Done(const Result<SubmitResult>& result) {
    if (!result) return std::unexpected(result.error());
    return Ok();
  }

  const store::RunRecord& run() const { return run_; }
  const Json& action() const { return action_; }
  const std::map<std::string, std::string>& names() const { return names_; }
  RunService& service() { return *service_; }
  store::SqliteStore& store() { return *store_; }
  const std::filesystem::path& repo() const { return repo_; }

 private:
  testing::TempDir dir_;
  std::filesystem::path repo_;
  Json scenario_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<RunService> service_;
  store::RunRecord run_;
  Json action_;
  std::map<std::string, std::string> names_;
  mutable std::vector<store::ArtifactMeta> artifacts_cache_;
};

// The scenario's contract review turned into a `revise` of requiredOutputs
// that preserves `scope` (examples/analyze_and_fix, at "reviews the contract").
inline Json ContractReviseReview(const ScenarioRun& s) {
  Json review = s.Body(s.Step("reviews the contract"));
  review["decision"] = "revise";
  review["dimensionScores"]["testableAcceptance"] = 50;
  review["overallScore"] = 90;
  review["findings"] = Json::parse(R"([{"id":"PR-1","severity":"blocking","claim":"Required outputs are vague.",
    "sourceRefs":[],"rubricDimension":"testableAcceptance","requiredCorrection":"Name the diff and the re-read.",
    "preserveFields":["scope"],"correctionFields":["requiredOutputs"],"rationaleSummary":"Outputs must be checkable."}])");
  review["findings"][0]["sourceRefs"] = Json::array({review["targetRef"]});
  return review;
}

// The revised (version 2) contract that ContractReviseReview asks for.
inline Json RevisedContract(const ScenarioRun& s) {
  Json contract = s.Body(s.Step("compiles the task contract"));
  contract["id"] = "contract-02";
  contract["version"] = 2;
  contract["requiredOutputs"] = Json::array({"A diff and a re-read of src/greet.py"});
  return contract;
}

}  // namespace telic::controller::testing_support
