// NextAction and its phase projections (REQUIREMENTS TEL.16, TEL-209), driven
// through RunService with the embedded analyze_and_fix scenario. The expected
// tables below are copied from PROTOCOL §9-PROTOCOL §10, not read from
// phases.cc, so a change to the phase table breaks these tests.
#include "controller/next_action.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "controller/scenario_run_for_test.h"
#include "controller/transitions.h"
#include "mcp/server.h"
#include "policy/engine.h"
#include "policy/permission_set.h"
#include "schema/host_schemas.h"

namespace telic::controller {
namespace {

using testing_support::ContractReviseReview;
using testing_support::RevisedContract;
using testing_support::ScenarioRun;
using Types = std::set<std::string>;

// PROTOCOL §10.1: internal → protocol phase name.
const std::map<std::string, std::string> kProtocolName = {
    {"context_grounding", "context_discovery"},
    {"agent_1_frame", "agent_1_frame"},
    {"agent_2_compile", "agent_2_compile"},
    {"agent_1_review", "agent_1_review"},
    {"agent_2_revise", "agent_2_revision"},
    {"agent_3_plan", "agent_3_plan"},
    {"agent_4_execute", "agent_4_execute"},
    {"agent_3_review", "agent_3_quality_review"},
    {"agent_3_evidence_reverify", "agent_3_evidence_reverify"},
    {"agent_5_audit", "agent_5_release_audit"},
    {"agent_5_report", "user_report"},
};

// PROTOCOL §10.1 roles and PROTOCOL §10.2 required output type, by protocol phase.
const std::map<std::string, std::pair<std::string, std::string>> kRoleAndOutput = {
    {"context_discovery", {"controller", "ContextManifest"}},
    {"agent_1_frame", {"scenario_author", "ProblemFrame"}},
    {"agent_2_compile", {"task_compiler", "TaskContract"}},
    {"agent_1_review", {"scenario_author", "PromptReview"}},
    {"agent_2_revision", {"task_compiler", "TaskContract"}},
    {"agent_3_plan", {"quality_controller", "WorkPlan"}},
    {"agent_4_execute", {"executor", "WorkResult"}},
    {"agent_3_quality_review", {"quality_controller", "QualityReview"}},
    {"agent_3_evidence_reverify", {"quality_controller", "QualityReview"}},
    {"agent_5_release_audit", {"release_auditor", "ReleaseAudit"}},
    {"user_report", {"release_auditor", "UserReport"}},
};

// PROTOCOL §9.5 step 1: the artifact types each phase may see, by protocol phase.
const std::map<std::string, Types> kEligible = {
    {"context_discovery", {"RunEnvelope", "UserMessage", "ClarificationRequest"}},
    {"agent_1_frame", {"RunEnvelope", "UserMessage", "ContextManifest", "ClarificationRequest"}},
    {"agent_2_compile", {"RunEnvelope", "UserMessage", "ContextManifest", "ProblemFrame", "ClarificationRequest"}},
    {"agent_1_review", {"UserMessage", "ProblemFrame", "TaskContract", "ClarificationRequest"}},
    {"agent_2_revision", {"UserMessage", "ProblemFrame", "TaskContract", "PromptReview", "ClarificationRequest"}},
    {"agent_3_plan",
     {"TaskContract", "PromptReview", "ContextManifest", "QualityReview", "ReleaseAudit", "UserMessage",
      "ClarificationRequest"}},
    {"agent_4_execute",
     {"TaskContract", "WorkPlan", "ContextManifest", "QualityReview", "ReleaseAudit", "UserMessage",
      "ClarificationRequest"}},
    {"agent_3_quality_review",
     {"TaskContract", "WorkPlan", "WorkResult", "Evidence", "QualityReview", "ReleaseAudit", "UserMessage",
      "ClarificationRequest"}},
    {"agent_3_evidence_reverify",
     {"TaskContract", "WorkPlan", "WorkResult", "Evidence", "QualityReview", "ReleaseAudit", "UserMessage",
      "ClarificationRequest"}},
    {"agent_5_release_audit",
     {"UserMessage", "TaskContract", "WorkPlan", "WorkResult", "Evidence", "QualityReview", "ClarificationRequest"}},
    {"user_report",
     {"UserMessage", "ProblemFrame", "TaskContract", "PromptReview", "WorkPlan", "WorkResult", "Evidence",
      "QualityReview", "ReleaseAudit", "ClarificationRequest"}},
};

const std::vector<std::string> kPermissionKeys = {"browser", "network", "repository", "runtime", "shell", "subagents"};

struct Observed {
  store::RunRecord run;
  Json action;
};

// Every action of the full scenario run, from the first to the terminal one.
std::vector<Observed> DriveAll(ScenarioRun& s) {
  std::vector<Observed> seen;
  if (!s.Start()) {
    ADD_FAILURE() << "start failed";
    return seen;
  }
  seen.push_back({s.run(), s.action()});
  for (const Json& step : s.Steps()) {
    auto done = s.Do(step);
    if (!done) {
      ADD_FAILURE() << step.value("say", "") << ": " << done.error().message();
      return seen;
    }
    if (!step.contains("write_file")) seen.push_back({s.run(), s.action()});
  }
  return seen;
}

// The types of an action's inputRefs, in order.
std::vector<std::string> InputTypes(const ScenarioRun& s, const Json& action) {
  std::vector<std::string> types;
  for (const std::string ref : action["inputRefs"]) types.push_back(s.TypeOf(ref));
  return types;
}

std::vector<std::string> Uris(const ScenarioRun& s, const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids) out.push_back(s.Uri(id));
  return out;
}

std::string UserMessageId(const ScenarioRun& s) {
  std::string request = s.names().at("request");
  return request.substr(request.rfind('/') + 1);
}

std::string ManifestId(const ScenarioRun& s) {
  for (const auto& meta : s.Artifacts()) {
    if (meta.type == domain::ArtifactType::kContextManifest) return meta.id;
  }
  return "";
}

Json RunAuthority(const ScenarioRun& s) {
  Json envelope = s.Artifact(s.run().run_id);
  return policy::EffectiveRunPermissions(domain::Name(s.run().requested_mode), envelope["authorization"]["granted"],
                                         envelope["authorization"]["denied"]);
}

int64_t ReservedCalls(const ScenarioRun& s) {
  int64_t total = 0;
  for (const auto& meta : s.Artifacts()) {
    if (meta.type != domain::ArtifactType::kWorkPlan) continue;
    Json plan = s.Artifact(meta.id);
    for (const Json& node : plan["nodes"]) total += node["budgets"]["maximumToolCalls"].get<int64_t>();
  }
  return total;
}

// A rejected submission changes neither the run nor its ledger.
void ExpectRejectedUnchanged(ScenarioRun& s, const std::string& type, const Json& body, const std::string& needle,
                             std::vector<std::string> refs = {}) {
  store::RunRecord before = s.run();
  size_t artifacts = s.Artifacts().size();
  auto result = s.Submit(type, body, std::move(refs));
  ASSERT_FALSE(result) << type << " was accepted";
  EXPECT_NE(result.error().message().find(needle), std::string::npos) << result.error().message();
  EXPECT_EQ(s.store().GetRun(before.run_id)->version, before.version);
  EXPECT_EQ(s.Artifacts().size(), artifacts);
}

// ------------------------------------------------------------------ TEL-190

// covers TEL-190: every action of a complete run names exactly one legal
// phase (the protocol name of the run's phase, with its role), the inputs it
// may see, the schema of the one required output type, a full permission
// set and the run's current budgets.
TEST(NextActionTest, EveryActionNamesOneLegalPhaseWithInputsSchemaPermissionsAndBudgets) {
  ScenarioRun s;
  std::vector<Observed> seen = DriveAll(s);
  ASSERT_EQ(seen.size(), 17u);
  std::set<std::string> phases;
  for (size_t i = 0; i + 1 < seen.size(); ++i) {
    const auto& [run, action] = seen[i];
    SCOPED_TRACE(domain::Name(run.phase));
    ASSERT_EQ(action["kind"], "phase");
    EXPECT_EQ(action["id"], fmt::format("action:{}:{}", run.run_id, run.version));
    EXPECT_EQ(action["runId"], run.run_id);
    ASSERT_TRUE(action["phase"].is_string());
    std::string phase = action["phase"];
    EXPECT_EQ(phase, kProtocolName.at(std::string(domain::Name(run.phase))));
    phases.insert(phase);
    auto [role, output] = kRoleAndOutput.at(phase);
    EXPECT_EQ(action["logicalRole"], role);
    EXPECT_EQ(action["requiredOutputType"], output);
    // The required type is one this state accepts: the action is legal now.
    std::vector<std::string> accepted;
    for (domain::ArtifactType type : AcceptedArtifactTypes(run)) accepted.emplace_back(domain::Name(type));
    EXPECT_TRUE(std::find(accepted.begin(), accepted.end(), output) != accepted.end());
    EXPECT_EQ(action["requiredOutputSchema"]["title"], output);
    EXPECT_EQ(action["requiredOutputSchema"]["type"], "object");
    Types additional;
    for (auto it = action["additionalOutputSchemas"].begin(); it != action["additionalOutputSchemas"].end(); ++it) {
      additional.insert(it.key());
      EXPECT_EQ((*it)["title"], it.key());
    }
    Types expected_additional;
    if (phase != "agent_5_release_audit" && phase != "user_report") expected_additional.insert("ClarificationRequest");
    if (phase == "agent_4_execute") expected_additional.insert("Evidence");
    EXPECT_EQ(additional, expected_additional);
    ASSERT_TRUE(action["inputRefs"].is_array());
    EXPECT_FALSE(action["inputRefs"].empty());
    EXPECT_LE(action["inputRefs"].size(), kMaxInputRefs);
    for (const std::string& key : kPermissionKeys) EXPECT_TRUE(action["effectivePermissions"].contains(key)) << key;
    const Json& budgets = action["remainingBudgets"];
    EXPECT_EQ(budgets["promptRevisions"], run.prompt_revisions_remaining);
    EXPECT_EQ(budgets["postExecutionRemediations"], run.remediations_remaining);
    EXPECT_TRUE(budgets.contains("remainingPlanToolCalls"));
    EXPECT_TRUE(budgets.contains("maximumParallelWorkers"));
    EXPECT_TRUE(budgets.contains("maximumSubagentDepth"));
    EXPECT_EQ(action["stopConditions"].size(), 3u);
  }
  EXPECT_EQ(phases.size(), 10u);  // every phase of the forensic analyze_and_fix flow but the revision
  const Json& terminal = seen.back().action;
  EXPECT_EQ(terminal["kind"], "terminal");
  EXPECT_EQ(terminal["phase"], "completed");
  EXPECT_FALSE(terminal.contains("requiredOutputType"));
  EXPECT_FALSE(terminal.contains("effectivePermissions"));
}

// covers TEL-190 (the output schema, in the form the MCP server serves it):
// with ActionSchemas::kReferences each phase action's required and
// additional output schemas are references to served schemas (no object to
// copy), and expanded, every action of a full run is the action with copies.
TEST(NextActionTest, ActionsWithSchemaReferencesExpandToTheActionsWithCopies) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  auto load = [&](const store::ArtifactMeta& meta) -> Result<std::shared_ptr<const Json>> {
    return std::make_shared<const Json>(s.Artifact(meta.id));
  };
  int compared = 0;
  auto compare = [&] {
    std::vector<store::ArtifactMeta> artifacts = s.Artifacts();
    auto copies = ComputeNextAction(s.run(), artifacts, load, ActionSchemas::kCopies);
    auto references = ComputeNextAction(s.run(), artifacts, load, ActionSchemas::kReferences);
    ASSERT_TRUE(copies && references);
    if (references->contains("requiredOutputSchema")) {
      EXPECT_NE(schema::ReferencedServedSchema((*references)["requiredOutputSchema"]), nullptr);
      for (const Json& additional : (*references)["additionalOutputSchemas"]) {
        EXPECT_NE(schema::ReferencedServedSchema(additional), nullptr);
      }
    }
    Json expanded = *references;
    schema::ExpandServedSchemaRefs(expanded);
    EXPECT_EQ(expanded, *copies) << domain::Name(s.run().phase);
    ++compared;
  };
  compare();
  for (const Json& step : s.Steps()) {
    ASSERT_TRUE(s.Do(step));
    compare();
  }
  EXPECT_GT(compared, 16);
}

// covers TEL-190: remainingPlanToolCalls is 4,000 less every stored plan's
// node reservations, before and after each plan.
TEST(NextActionTest, RemainingPlanToolCallsFollowTheReservations) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  for (const Json& step : s.Steps()) {
    ASSERT_TRUE(s.Do(step));
    if (s.action()["kind"] != "phase") break;
    EXPECT_EQ(s.action()["remainingBudgets"]["remainingPlanToolCalls"], 4000 - ReservedCalls(s)) << step["say"];
  }
  EXPECT_EQ(ReservedCalls(s), 10);  // 4 (diagnosis) + 6 (fix)
}

// ------------------------------------------------------------------ TEL-191

// covers TEL-191: no action of a complete run grants more than the
// envelope's effective run authorization; grounding gets only its read
// scopes and the executor exactly its node's permissions.
TEST(NextActionTest, EffectivePermissionsNeverExceedTheRunAuthorization) {
  ScenarioRun s;
  std::vector<Observed> seen = DriveAll(s);
  ASSERT_EQ(seen.size(), 17u);
  Json authority = RunAuthority(s);
  for (size_t i = 0; i + 1 < seen.size(); ++i) {
    const Json& granted = seen[i].action["effectivePermissions"];
    SCOPED_TRACE(domain::Name(seen[i].run.phase));
    EXPECT_TRUE(policy::PermissionSetIsSubset(granted, authority)) << granted.dump();
    if (seen[i].run.phase == domain::Phase::kContextGrounding) {
      Json expected = policy::EmptyPermissionSet();
      expected["repository"]["read"] = authority["repository"]["read"];
      EXPECT_EQ(granted, expected);
    } else if (seen[i].run.phase != domain::Phase::kAgent4Execute) {
      EXPECT_EQ(granted, policy::EmptyPermissionSet());
    }
  }
}

// covers TEL-191: a repository.read the user denied is not granted to
// context discovery, even though the mode would allow it.
TEST(NextActionTest, ContextDiscoveryDropsADeniedRead) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start([](StartRunRequest& r) { r.authorization_denied = {"repository.read"}; }));
  Json authority = RunAuthority(s);
  EXPECT_EQ(authority["repository"]["read"], Json::array());
  EXPECT_EQ(s.action()["phase"], "context_discovery");
  EXPECT_EQ(s.action()["effectivePermissions"], policy::EmptyPermissionSet());
}

// covers TEL-191: a stored plan node broader than the run authorization
// (written past the submit checks) makes the executor action fail instead of
// handing the broader permissions out.
TEST(NextActionTest, ExecutorActionFailsForANodeBeyondTheRunAuthorization) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("the executor captures the source"));
  ASSERT_EQ(domain::Name(s.run().phase), "agent_4_execute");
  Json plan = s.Artifact("plan-diagnosis");
  plan["id"] = "plan-wide";
  plan["nodes"][0]["id"] = "wide";
  plan["nodes"][0]["permissions"]["network"]["externalWrite"] = true;
  ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {},
                        {store::MakeArtifact({"plan-wide", s.run().run_id, domain::ArtifactType::kWorkPlan, "1.0", "quality_controller", "",
                                              {}, "none", "t"},
                                             plan)}));
  auto action = s.service().GetNextAction(s.run().run_id);
  ASSERT_FALSE(action);
  EXPECT_EQ(action.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(action.error().message(), "Work node wide exceeds the immutable run authorization");
}


// ------------------------------------------------------------------ TEL-189

mcp::Server* NewServer(ScenarioRun& s, std::unique_ptr<mcp::Server>& holder) {
  holder = std::make_unique<mcp::Server>(s.service());
  return holder.get();
}

// covers TEL-189: telic_submit_artifact refuses a NextAction or a
// ContextManifest as a model's output (the manifest only comes from
// telic_ground_context), changing nothing; after a complete run no
// NextAction is stored and the one manifest was produced by the controller.
TEST(NextActionTest, NextActionAndContextManifestAreNeverAcceptedAsModelOutput) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  std::unique_ptr<mcp::Server> holder;
  mcp::Server* server = NewServer(s, holder);
  Json manifest = Json::parse(R"({"schemaVersion":"1.0","id":"model-manifest","runId":"","repositoryFingerprint":
    {"headCommit":null,"dirtyWorktreeHash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    "pinnedRefs":[],"candidates":[],"derivedRefs":[],"excludedCandidateSummaries":[],"inventorySource":"filesystem",
    "warnings":[],"budget":{"maximumFiles":1,"maximumFileBytes":1,"maximumTotalBytes":1,"maximumInventoryFiles":1,
    "candidateFiles":0,"selectedFiles":0,"estimatedTokens":0,"selectedBytes":0}})");
  manifest["runId"] = s.run().run_id;
  Json action = s.action();
  action["id"] = "model-action";
  for (const auto& [type, body] : std::vector<std::pair<std::string, Json>>{{"ContextManifest", manifest},
                                                                           {"NextAction", action}}) {
    SCOPED_TRACE(type);
    Json args = {{"run_id", s.run().run_id}, {"action_id", ActionId(s.run())}, {"expected_run_version", s.run().version},
                 {"artifact_type", type}, {"body", body}};
    std::optional<Json> reply = server->CallTool("telic_submit_artifact", &args);
    ASSERT_TRUE(reply);
    EXPECT_EQ((*reply)["isError"], true) << reply->dump();
    std::string error = (*reply)["structuredContent"].value("error", "");
    EXPECT_NE(error.find("/artifact_type: expected one of"), std::string::npos) << error;
    EXPECT_EQ(s.store().GetRun(s.run().run_id)->version, 1);
    EXPECT_EQ(s.Artifacts().size(), 2u);
  }
  for (const Json& step : s.Steps()) ASSERT_TRUE(s.Do(step)) << step["say"];
  ASSERT_EQ(domain::Name(s.run().status), "completed");
  int manifests = 0;
  for (const auto& meta : s.Artifacts()) {
    EXPECT_NE(domain::Name(meta.type), "NextAction");
    if (meta.type == domain::ArtifactType::kContextManifest) {
      ++manifests;
      EXPECT_EQ(meta.producer, "controller");
    }
  }
  EXPECT_EQ(manifests, 1);
}

// ------------------------------------------------------------ TEL-192/193/194

// A chain of `count` ClarificationRequests, each citing the one before it in
// evidenceInspected (the first cites the RunEnvelope).
std::vector<store::StoredArtifact> ClarificationChain(const std::string& run_id, int count, const std::string& prefix = "cr-") {
  std::vector<store::StoredArtifact> chain;
  std::string previous = store::ArtifactUri(run_id, run_id);
  for (int i = 0; i < count; ++i) {
    std::string id = prefix + std::to_string(i);
    chain.push_back(store::MakeArtifact({id, run_id, domain::ArtifactType::kClarificationRequest, "1.0", "controller", "", {}, "none", "t"},
                                        Json{{"evidenceInspected", Json::array({previous})}}));
    previous = store::ArtifactUri(run_id, id);
  }
  return chain;
}

// covers TEL-192 TEL-193: the projection keeps the whole transitive closure
// of eligible references (four hops back from the latest request), and
// leaves out an eligible artifact nothing cites.
TEST(NextActionTest, ProjectionKeepsTheTransitiveClosureOfTheLatestInputs) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  std::string id = s.run().run_id;
  std::vector<store::StoredArtifact> artifacts = ClarificationChain(id, 1, "lonely-");
  for (auto& link : ClarificationChain(id, 5)) artifacts.push_back(std::move(link));
  ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {}, std::move(artifacts)));
  std::vector<std::string> refs = s.action()["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), id, "cr-0", "cr-1", "cr-2", "cr-3", "cr-4"}));
}

// covers TEL-192 TEL-193: a revised contract's stored sourceRefs pull the
// first contract into the re-review's inputs (it is not the latest contract);
// the PromptReview it also cites is not eligible there and stays out.
TEST(NextActionTest, ReReviewSeesThePriorContractThroughTheRevisionsSourceRefs) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("reviews the contract"));
  Json review = ContractReviseReview(s);
  ASSERT_TRUE(s.Submit("PromptReview", review)) << "revise";
  ASSERT_EQ(s.action()["phase"], "agent_2_revision");
  Json contract = RevisedContract(s);
  auto revised = s.Submit("TaskContract", contract, Uris(s, {"contract-01", "prompt-review-01"}));
  ASSERT_TRUE(revised) << revised.error().message();
  ASSERT_EQ(s.action()["phase"], "agent_1_review");
  std::vector<std::string> refs = s.action()["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), "frame-01", "contract-01", "contract-02"}));
}

// covers TEL-192 TEL-194: a closure of exactly 256 references is served
// whole; one more makes every way of reading the action fail explicitly
// with no partial list.
TEST(NextActionTest, ClosureOverTwoHundredFiftySixFailsExplicitly) {
  for (int chain : {254, 255}) {
    SCOPED_TRACE(chain);
    ScenarioRun s;
    ASSERT_TRUE(s.Start());
    ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {}, ClarificationChain(s.run().run_id, chain)));
    auto action = s.service().GetNextAction(s.run().run_id);
    auto detail = s.service().GetRun(s.run().run_id);
    if (chain == 254) {  // request + envelope + 254 = 256
      ASSERT_TRUE(action) << action.error().message();
      EXPECT_EQ((**action)["inputRefs"].size(), 256u);
      EXPECT_TRUE(detail);
      continue;
    }
    ASSERT_FALSE(action) << (**action)["inputRefs"].size();
    EXPECT_EQ(action.error().code(), ErrorCode::kResourceExhausted);
    EXPECT_EQ(action.error().message(),
              "NextAction input reference closure exceeds 256; use a smaller plan/evidence manifest");
    ASSERT_FALSE(detail);
    EXPECT_EQ(detail.error().code(), ErrorCode::kResourceExhausted);
  }
}

// covers TEL-193 TEL-194: every stored WorkPlan is a mandatory input (not only
// the latest), so 300 of them overflow the review's projection.
TEST(NextActionTest, EveryWorkPlanIsMandatorySoTooManyPlansFail) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("opens the mutation gate"));
  ASSERT_EQ(domain::Name(s.run().phase), "agent_3_review");
  std::vector<store::StoredArtifact> plans;
  for (int i = 0; i < 300; ++i) {
    std::string id = "old-plan-" + std::to_string(i);
    plans.push_back(store::MakeArtifact({id, s.run().run_id, domain::ArtifactType::kWorkPlan, "1.0", "quality_controller", "", {}, "none", "t"},
                                        Json{{"id", id}, {"nodes", Json::array()}}));
  }
  ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {}, std::move(plans)));
  auto action = s.service().GetNextAction(s.run().run_id);
  ASSERT_FALSE(action);
  EXPECT_EQ(action.error().code(), ErrorCode::kResourceExhausted);
}

// covers TEL-193 TEL-206: the fix review sees the latest contract, every
// plan and result, the gate review and all evidence, in ledger order, and
// nothing else (no envelope, manifest, frame, prompt review, documents or
// receipts).
TEST(NextActionTest, QualityReviewSeesContractPlansResultsAndEvidence) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("Agent 3 reviews the fix"));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_3_quality_review");
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), "contract-01", "plan-diagnosis", "evidence-diagnosis", "result-diagnosis",
                           "quality-diagnosis", "plan-fix", "evidence-diff", "evidence-after", "result-fix"}));
  EXPECT_EQ(action["requiredOutputType"], "QualityReview");
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
  // TEL-206: no editing of the implementation from the review.
  ExpectRejectedUnchanged(s, "Evidence", s.Body(s.Step("stores the re-read")), "only during the bounded executor phase");
  ExpectRejectedUnchanged(s, "WorkResult", s.Body(s.Step("reports the fix")), "No dependency-ready work node remains");
}

// ------------------------------------------------------------------ TEL-195

// covers TEL-195: past the mandatory inputs, Evidence fills the projection
// newest first up to exactly 256 entries; the mandatory inputs all stay.
TEST(NextActionTest, RecentEvidenceFillsTheRemainingRoomUpTo256) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("opens the mutation gate"));
  std::vector<std::string> mandatory = Uris(s, {UserMessageId(s), "contract-01", "plan-diagnosis", "result-diagnosis"});
  std::vector<store::StoredArtifact> evidence;
  for (int i = 0; i < 300; ++i) {
    std::string id = fmt::format("evidence-{:03}", i);
    evidence.push_back(store::MakeArtifact({id, s.run().run_id, domain::ArtifactType::kEvidence, "1.0", "executor", "", {}, "none", "t"},
                                           Json{{"id", id}, {"kind", "repository"}}));
  }
  ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {}, std::move(evidence)));
  std::vector<std::string> refs = s.action()["inputRefs"];
  ASSERT_EQ(refs.size(), 256u);
  for (const auto& ref : mandatory) EXPECT_TRUE(std::count(refs.begin(), refs.end(), ref) == 1) << ref;
  // 256 - 4 mandatory = the 252 newest Evidence: evidence-048 .. evidence-299.
  EXPECT_EQ(std::count(refs.begin(), refs.end(), s.Uri("evidence-diagnosis")), 0);
  EXPECT_EQ(std::count(refs.begin(), refs.end(), s.Uri("evidence-047")), 0);
  EXPECT_EQ(std::count(refs.begin(), refs.end(), s.Uri("evidence-048")), 1);
  // Ledger order: request, contract, plan, result, then the new evidence.
  EXPECT_EQ(std::vector<std::string>(refs.begin(), refs.begin() + 4), mandatory);
  EXPECT_EQ(refs[4], s.Uri("evidence-048"));
  EXPECT_EQ(refs.back(), s.Uri("evidence-299"));
}

// ------------------------------------------------------------------ TEL-196

// covers TEL-196: telic_get_artifact returns artifacts of the run that no
// projection lists (ContextDocuments, the prompt review at execution time),
// but not another run's artifact under this run's id (the safer reading of
// the open cross-run question).
TEST(NextActionTest, GetArtifactReadsAnyArtifactOfTheRunButNotOfAnother) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("the executor captures the source"));
  std::vector<std::string> listed = s.action()["inputRefs"];
  std::vector<std::string> unlisted;
  for (const auto& meta : s.Artifacts()) {
    if (std::find(listed.begin(), listed.end(), s.Uri(meta.id)) == listed.end()) unlisted.push_back(meta.id);
  }
  ASSERT_GE(unlisted.size(), 4u);  // envelope, documents, frame, prompt review
  std::unique_ptr<mcp::Server> holder;
  mcp::Server* server = NewServer(s, holder);
  for (const auto& id : unlisted) {
    Json args = {{"run_id", s.run().run_id}, {"artifact_id", id}};
    std::optional<Json> reply = server->CallTool("telic_get_artifact", &args);
    ASSERT_TRUE(reply);
    EXPECT_FALSE(reply->value("isError", false)) << id << ": " << reply->dump();
    EXPECT_EQ((*reply)["structuredContent"]["artifact"]["id"], id);
    EXPECT_EQ((*reply)["structuredContent"]["artifact"]["body"], s.Artifact(id));
  }
  store::RunRecord first = s.run();
  ASSERT_TRUE(s.Start());  // a second run on the same store
  auto foreign = s.service().GetArtifact(s.run().run_id, "prompt-review-01");
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(s.service().GetArtifact(first.run_id, "prompt-review-01"));
}

// ------------------------------------------------------------------ TEL-199

// covers TEL-199: along a complete run every phase's projection holds only
// artifact types that phase needs (PROTOCOL §9.5) and never a
// ScenarioSpec or ContextDocument, though the run stores them.
TEST(NextActionTest, EachPhaseProjectionHoldsOnlyThatPhasesInputs) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  std::set<std::string> stored_types;
  auto check = [&] {
    if (s.action()["kind"] != "phase") return;
    std::string phase = s.action()["phase"];
    for (const std::string& type : InputTypes(s, s.action())) {
      EXPECT_TRUE(kEligible.at(phase).count(type)) << phase << " sees " << type;
    }
  };
  check();
  for (const Json& step : s.Steps()) {
    ASSERT_TRUE(s.Do(step)) << step["say"];
    if (s.action()["phase"] == "agent_2_compile" && !s.Find("scenario-01")) {
      Json spec = Json::parse(R"({"schemaVersion":"1.0","id":"scenario-01","title":"Misspelled greeting",
        "narrative":"The greeting says Helo.","actor":"A user of greet","observableSymptoms":["Helo is printed."],
        "desiredOutcome":"The greeting says Hello.","sourceMap":[],
        "promptReadinessRubricRef":"artifact://system/rubrics/contract-readiness-v1","rationaleSummary":"Presentation only."})");
      spec["runId"] = s.run().run_id;
      spec["problemFrameRef"] = s.Uri("frame-01");
      auto stored = s.Submit("ScenarioSpec", spec);
      ASSERT_TRUE(stored) << stored.error().message();
    }
    check();
  }
  for (const auto& meta : s.Artifacts()) stored_types.insert(std::string(domain::Name(meta.type)));
  EXPECT_TRUE(stored_types.count("ScenarioSpec"));
  EXPECT_TRUE(stored_types.count("ContextDocument"));
  EXPECT_EQ(domain::Name(s.run().status), "completed");
}

// ------------------------------------------------------------------ TEL-200

// covers TEL-200: the next action is a function of the stored artifacts
// alone: a service with no memory of the conversation (a new RunService over
// the same ledger) computes the same action at every step, every input is a
// stored artifact, and a claim resting on something that is not a stored
// artifact ("what I saw earlier") is refused.
TEST(NextActionTest, OnlyStoredArtifactsCountNeverPriorConversation) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ManualClock clock(0);
  SequentialIdSource ids;
  RunService fresh(s.store(), clock, ids, s.repo().string());
  for (const Json& step : s.Steps()) {
    if (step.value("say", "").find("reports the diagnosis") != std::string::npos) {
      Json body = s.Body(step);
      body["observations"][0]["evidenceRefs"] = Json::array({s.Uri("what-i-saw-earlier")});
      ExpectRejectedUnchanged(s, "WorkResult", body, "Artifact reference does not exist");
    }
    ASSERT_TRUE(s.Do(step)) << step["say"];
    auto recomputed = fresh.GetNextAction(s.run().run_id);
    ASSERT_TRUE(recomputed);
    EXPECT_EQ(**recomputed, s.action()) << step["say"];
    if (s.action()["kind"] != "phase") continue;
    for (const std::string ref : s.action()["inputRefs"]) EXPECT_NE(s.TypeOf(ref), "") << ref;
  }
}

// ------------------------------------------------------------- TEL-201..208

// covers TEL-084: a known fact without an admissible source (unselected repository
// context, a user fact citing the repository) is refused.
// covers TEL-201: framing sees the request, the envelope and the grounded
// manifest only, may not execute or edit, and a fact citing repository
// context that was not grounded (an invented fact) is refused.
TEST(NextActionTest, FrameActionInputsPermissionsAndInventedFacts) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("Agent 1 frames"));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_1_frame");
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), s.run().run_id, ManifestId(s)}));
  EXPECT_EQ(action["contextManifestRef"], s.Uri(ManifestId(s)));
  EXPECT_EQ(action["requiredOutputType"], "ProblemFrame");
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
  Json invented = s.Body(s.Step("Agent 1 frames"));
  invented["knownFacts"][1]["sourceRef"] = "repo://src/other.py";
  ExpectRejectedUnchanged(s, "ProblemFrame", invented, "Repository reference was not selected by the current ContextManifest");
  Json unsourced = s.Body(s.Step("Agent 1 frames"));
  unsourced["knownFacts"][0]["sourceRef"] = "repo://src/greet.py";
  ExpectRejectedUnchanged(s, "ProblemFrame", unsourced, "User-provenance facts must cite a same-run user message");
  ExpectRejectedUnchanged(s, "Evidence", s.Body(s.Step("captures the source")), "only during the bounded executor phase");
}

// covers TEL-094: a stored ScenarioSpec is not in the compile projection.
// covers TEL-036: a contract granting a shell command beyond the run authorization is refused.
// covers TEL-202: compilation sees the request, envelope, manifest and the
// authoritative frame, never a stored ScenarioSpec; it grants nothing; a
// contract resting on anything but the frame, or widening its scope, is refused.
TEST(NextActionTest, CompileActionInputsAndRefusedContracts) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("Agent 2 compiles"));
  Json spec = Json::parse(R"({"schemaVersion":"1.0","id":"scenario-01","title":"Misspelled greeting",
    "narrative":"The greeting says Helo.","actor":"A user of greet","observableSymptoms":["Helo is printed."],
    "desiredOutcome":"The greeting says Hello.","sourceMap":[],
    "promptReadinessRubricRef":"artifact://system/rubrics/contract-readiness-v1","rationaleSummary":"Presentation only."})");
  spec["runId"] = s.run().run_id;
  spec["problemFrameRef"] = s.Uri("frame-01");
  ASSERT_TRUE(s.Submit("ScenarioSpec", spec));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_2_compile");
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), s.run().run_id, ManifestId(s), "frame-01"}));
  EXPECT_EQ(action["requiredOutputType"], "TaskContract");
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
  Json contract = s.Body(s.Step("Agent 2 compiles"));
  Json on_spec = contract;
  on_spec["problemFrameRef"] = s.Uri("scenario-01");
  ExpectRejectedUnchanged(s, "TaskContract", on_spec, "must target ProblemFrame");
  Json wider = contract;
  wider["scope"]["include"] = Json::array({"src", "tests"});
  ExpectRejectedUnchanged(s, "TaskContract", wider, "TaskContract must preserve ProblemFrame scope exactly");
  Json more_power = contract;
  more_power["permissions"]["shell"]["executeAllowlist"] = Json::array({"make"});
  ExpectRejectedUnchanged(s, "TaskContract", more_power, "TaskContract permissions exceed immutable authorization");
  ASSERT_TRUE(s.Submit("TaskContract", contract));
}

// covers TEL-120: the frame is frozen during review (a new ProblemFrame is refused) and the
// rubric is the frozen contract-readiness-v1.
// covers TEL-203: the contract review sees the frozen frame, the contract and
// the request only; it grants nothing; it must use the frozen rubric and can
// neither reframe the request nor implement.
TEST(NextActionTest, PromptReviewActionInputsAndLimits) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("reviews the contract"));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_1_review");
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), "frame-01", "contract-01"}));
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
  Json review = s.Body(s.Step("reviews the contract"));
  Json other_rubric = review;
  other_rubric["rubricId"] = "my-own-rubric";
  ExpectRejectedUnchanged(s, "PromptReview", other_rubric, "expected \"contract-readiness-v1\"");
  Json reframe = s.Body(s.Step("Agent 1 frames"));
  reframe["id"] = "frame-02";
  ExpectRejectedUnchanged(s, "ProblemFrame", reframe, "requires PromptReview or ClarificationRequest");
  ExpectRejectedUnchanged(s, "WorkPlan", s.Body(s.Step("plans the read-only diagnosis")),
                          "requires PromptReview or ClarificationRequest");
  std::string request_sha = s.Find(UserMessageId(s))->sha256;
  ASSERT_TRUE(s.Submit("PromptReview", review));
  EXPECT_EQ(s.Find(UserMessageId(s))->sha256, request_sha);
}

// covers TEL-204: planning sees the approved contract with its review and the
// manifest; it grants nothing and cannot do the work; a plan wider than the
// contract or the host's concurrency budget is refused.
TEST(NextActionTest, PlanActionInputsAndRefusedPlans) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("plans the read-only diagnosis"));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_3_plan");
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), ManifestId(s), "contract-01", "prompt-review-01"}));
  EXPECT_EQ(action["contextManifestRef"], s.Uri(ManifestId(s)));
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
  ExpectRejectedUnchanged(s, "Evidence", s.Body(s.Step("captures the source")), "only during the bounded executor phase");
  Json plan = s.Body(s.Step("plans the read-only diagnosis"));
  Json shell = plan;
  shell["nodes"][0]["permissions"]["shell"]["inspect"] = true;
  ExpectRejectedUnchanged(s, "WorkPlan", shell, "Work node diagnose permissions exceed the TaskContract");
  Json deeper = plan;  // the host has no native subagents (depth 0)
  deeper["globalBudgets"]["maximumSubagentDepth"] = 1;
  ExpectRejectedUnchanged(s, "WorkPlan", deeper, "WorkPlan concurrency exceeds immutable host budgets");
  ASSERT_TRUE(s.Submit("WorkPlan", plan));
}

// covers TEL-205: execution is handed one dependency-ready node at a time
// (workNodeId) with exactly that node's permissions (the safer reading of the
// open one-or-several question); the next node follows only after a result.
TEST(NextActionTest, ExecuteActionNamesOneNodeWithItsPermissions) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("captures the source"));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_4_execute");
  EXPECT_EQ(action["workNodeId"], "diagnose");
  Json plan = s.Artifact("plan-diagnosis");
  EXPECT_EQ(action["effectivePermissions"], plan["nodes"][0]["permissions"]);
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), ManifestId(s), "contract-01", "plan-diagnosis"}));
  // Two nodes, the second depending on the first, stored past the checks.
  Json two = plan;
  two["id"] = "plan-two";
  Json second = plan["nodes"][0];
  second["id"] = "second";
  second["dependsOn"] = Json::array({"diagnose"});
  second["permissions"]["repository"]["read"] = Json::array({"src/**"});
  two["nodes"].push_back(second);
  ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {},
                        {store::MakeArtifact({"plan-two", s.run().run_id, domain::ArtifactType::kWorkPlan, "1.0", "quality_controller", "", {},
                                              "none", "t"}, two)}));
  EXPECT_EQ(s.action()["workNodeId"], "diagnose");
  EXPECT_EQ(s.action()["effectivePermissions"], plan["nodes"][0]["permissions"]);
  Json result = {{"id", "result-a"}, {"workPlanRef", s.Uri("plan-two")}, {"nodeId", "diagnose"}, {"status", "completed"}};
  ASSERT_TRUE(s.Rewrite([](store::RunRecord&) {},
                        {store::MakeArtifact({"result-a", s.run().run_id, domain::ArtifactType::kWorkResult, "1.0", "executor", "", {}, "none",
                                              "t"}, result)}));
  EXPECT_EQ(s.action()["workNodeId"], "second");
  EXPECT_EQ(s.action()["effectivePermissions"], second["permissions"]);
}

// covers TEL-205: a result claiming acceptance outside its node (the
// completion criterion during diagnosis) or changing the workspace beyond its
// node is refused.
TEST(NextActionTest, ExecutorResultsCannotClaimAcceptanceOrScopeBeyondTheirNode) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("reports the diagnosis"));
  Json result = s.Body(s.Step("reports the diagnosis"));
  Json accepts = result;
  accepts["acceptanceCoverage"].push_back({{"criterionId", "AC-2"}, {"status", "pass"},
                                           {"evidenceRefs", Json::array({s.Uri("evidence-diagnosis")})},
                                           {"rationaleSummary", "Done."}});
  ExpectRejectedUnchanged(s, "WorkResult", accepts, "WorkResult acceptance coverage is outside its WorkPlan node");
  Json writes = result;
  writes["actions"].push_back({{"id", "sneaky"}, {"capability", "repository.write"}, {"target", "src/greet.py"},
                               {"mutating", true}, {"status", "completed"},
                               {"evidenceRefs", Json::array({s.Uri("evidence-diagnosis")})},
                               {"rationaleSummary", "Fix it early."}});
  ExpectRejectedUnchanged(s, "WorkResult", writes, "analyze_and_fix cannot accept mutating work");
  ASSERT_TRUE(s.Submit("WorkResult", result));
}

// covers TEL-207: the release audit sees the request, contract, every plan,
// result and piece of evidence and the controlling review; it grants nothing
// and offers no clarification; rework past the spent shared budget is not
// granted (the audit's remediate routes to a blocked report, not to planning).
TEST(NextActionTest, ReleaseAuditActionInputsAndBoundedRework) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("Agent 5 audits"));
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "agent_5_release_audit");
  std::vector<std::string> refs = action["inputRefs"];
  for (const std::string id : {"contract-01", "plan-diagnosis", "plan-fix", "result-diagnosis", "result-fix",
                               "evidence-diagnosis", "evidence-diff", "evidence-after", "quality-reverify"}) {
    EXPECT_EQ(std::count(refs.begin(), refs.end(), s.Uri(id)), 1) << id;
  }
  EXPECT_EQ(refs.front(), s.names().at("request"));
  for (const std::string& type : InputTypes(s, action)) EXPECT_TRUE(kEligible.at("agent_5_release_audit").count(type)) << type;
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
  EXPECT_EQ(action["additionalOutputSchemas"], Json::object());
  store::RunRecord spent = s.run();
  spent.remediations_remaining = 0;
  auto t = AdvanceRun(spent, "ReleaseAudit", {{"decision", "remediate"}});
  ASSERT_TRUE(t);
  EXPECT_EQ(domain::Name(t->run.phase), "agent_5_report");
  EXPECT_EQ(store::OptionalName(t->run.outcome_hint), "blocked");
  EXPECT_EQ(t->run.remediations_remaining, 0);
  EXPECT_EQ(t->budget_consumed, "");
}

// covers TEL-208: the report sees the release audit and the accepted
// results; after an early contract block it sees the blocking PromptReview;
// it grants nothing and offers no clarification.
TEST(NextActionTest, ReportActionInputsAfterReleaseAndAfterAnEarlyBlock) {
  {
    ScenarioRun s;
    ASSERT_TRUE(s.Start());
    ASSERT_TRUE(s.RunUntil("writes the user report"));
    const Json& action = s.action();
    ASSERT_EQ(action["phase"], "user_report");
    std::vector<std::string> refs = action["inputRefs"];
    for (const std::string id : {"release-audit-01", "result-diagnosis", "result-fix", "evidence-diff", "evidence-after"}) {
      EXPECT_EQ(std::count(refs.begin(), refs.end(), s.Uri(id)), 1) << id;
    }
    EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
    EXPECT_EQ(action["additionalOutputSchemas"], Json::object());
  }
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  ASSERT_TRUE(s.RunUntil("reviews the contract"));
  Json block = s.Body(s.Step("reviews the contract"));
  block["decision"] = "block";
  block["hardGates"][0]["passed"] = false;
  auto blocked = s.Submit("PromptReview", block);
  ASSERT_TRUE(blocked) << blocked.error().message();
  const Json& action = s.action();
  ASSERT_EQ(action["phase"], "user_report");
  std::vector<std::string> refs = action["inputRefs"];
  EXPECT_EQ(refs, Uris(s, {UserMessageId(s), "frame-01", "contract-01", "prompt-review-01"}));
  EXPECT_EQ(action["effectivePermissions"], policy::EmptyPermissionSet());
}

// ------------------------------------------------------------------ TEL-209

// covers TEL-209: a new run begins received: version 1, no phase artifact,
// budgets untouched, and its first trace event (sequence 1) is the
// controller's run_started receipt; discovery is the first action.
TEST(NextActionTest, ANewRunBeginsReceived) {
  ScenarioRun s;
  ASSERT_TRUE(s.Start());
  store::RunRecord run = *s.store().GetRun(s.run().run_id);
  EXPECT_EQ(run.version, 1);
  EXPECT_EQ(domain::Name(run.status), "running");
  EXPECT_EQ(domain::Name(run.phase), "context_grounding");
  EXPECT_EQ(run.prompt_revisions_remaining, 1);
  EXPECT_EQ(run.remediations_remaining, 1);
  EXPECT_FALSE(run.outcome_hint);
  std::vector<std::string> types;
  for (const auto& meta : s.Artifacts()) types.emplace_back(domain::Name(meta.type));
  EXPECT_EQ(types, (std::vector<std::string>{"UserMessage", "RunEnvelope"}));
  auto trace = s.Trace();
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.front().sequence, 1);
  EXPECT_EQ(trace.front().event_type, "run_started");
  EXPECT_EQ(trace.front().actor, "controller");
  EXPECT_EQ(trace.front().summary, "Run received with immutable request and authorization envelope.");
  EXPECT_EQ(s.action()["phase"], "context_discovery");
}

}  // namespace
}  // namespace telic::controller
