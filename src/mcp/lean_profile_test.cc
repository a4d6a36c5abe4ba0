// The lean profile (issue 39, docs/API.md "Profiles"): schemas by reference,
// a type's shape once, the same driving paths; and the context cost counted.
#include "mcp/lean_profile.h"

#include <gtest/gtest.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/sha256.h"
#include "controller/views.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "schema/compact_shape.h"
#include "schema/host_schemas.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

class LeanProfileTest : public ::testing::Test {
 protected:
  LeanProfileTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    server_ = std::make_unique<Server>(*service_);
  }

  Json Reply(const Json& request) {
    auto reply = server_->HandleLine(request.dump());
    EXPECT_TRUE(reply.has_value());
    return reply ? Json::parse(*reply) : Json();
  }
  // tools/call over the wire; returns structuredContent (and checks the text is its compact JSON).
  Json Call(const std::string& tool, const Json& arguments) {
    Json result = Reply({{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", "tools/call"},
                         {"params", {{"name", tool}, {"arguments", arguments}}}})["result"];
    const std::string& text = result["content"][0]["text"].get_ref<const std::string&>();
    EXPECT_EQ(Json::parse(text), result["structuredContent"]);
    EXPECT_EQ(text.find('\n'), std::string::npos);
    return result["structuredContent"];
  }
  Json Initialize(const Json& capabilities) {
    return Reply({{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", "initialize"},
                  {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", capabilities},
                              {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}})["result"];
  }
  Json Start() { return Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"}}); }

  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<Server> server_;
  int id_ = 0;
};

Json Reference(const std::string& type) {
  std::string digest = Sha256Ref((*schema::ArtifactHostSchema(type))->compact()).substr(0, 7 + kSchemaDigestHexDigits);
  return {{"uri", "schema://" + type}, {"digest", digest}};
}

// covers issue 39 item 1: the first action names its schemas by reference and
// carries the shape of the type the model may write; reads carry references.
TEST_F(LeanProfileTest, AStateChangeCarriesNewShapesAndReadsCarryReferences) {
  server_->set_profile(Profile::kLean);
  Json started = Start();
  ASSERT_EQ(started["ok"], true) << started.dump();
  const Json& action = started["nextAction"];
  EXPECT_EQ(action["phase"], "context_discovery");
  EXPECT_EQ(action["requiredOutputSchema"], Reference("ContextManifest"));  // written by telic_ground_context
  Json clarification = action["additionalOutputSchemas"]["ClarificationRequest"];
  EXPECT_EQ(clarification["uri"], "schema://ClarificationRequest");
  EXPECT_EQ(clarification["shape"],
            **schema::ArtifactCompactShape("ClarificationRequest", schema::ShapeDefinitions::kBeyondGlossary));
  EXPECT_EQ(action["shapeGlossary"], schema::ArtifactShapeGlossary().text);  // once, with the run's start
  std::string run = started["run"]["runId"];
  EXPECT_EQ(started["run"]["topology"], controller::RunToJson(*store_->GetRun(run))["topology"]);  // the whole record
  Json next = Call("telic_get_next_action", {{"run_id", run}})["nextAction"];
  EXPECT_EQ(next["id"], action["id"]);
  EXPECT_EQ(next["additionalOutputSchemas"]["ClarificationRequest"], Reference("ClarificationRequest"));
  EXPECT_EQ(Call("telic_get_next_action", {{"run_id", run}}), Call("telic_get_next_action", {{"run_id", run}}));
  Json detail = Call("telic_get_run", {{"run_id", run}});
  EXPECT_EQ(detail["artifacts"].size(), 2u);
  EXPECT_EQ(detail["artifacts"][1], Json({{"id", run}, {"type", "RunEnvelope"}}));
  EXPECT_EQ(detail["artifactsPage"], Json({{"offset", 0}, {"limit", 50}, {"total", 2}, {"nextOffset", nullptr}}));
  Json page = Call("telic_get_run", {{"run_id", run}, {"artifacts_limit", 1}, {"include_bodies", true}});
  EXPECT_EQ(page["artifactsPage"]["nextOffset"], 1);
  EXPECT_EQ(page["artifacts"][0]["body"]["content"], "Explain src/app.ts");
  Json cancelled = Call("telic_cancel_run", {{"run_id", run}, {"action_id", action["id"]}, {"expected_run_version", 1}});
  EXPECT_EQ(cancelled["run"]["status"], "cancelled");
  EXPECT_EQ(cancelled["run"]["version"], 2);
  EXPECT_FALSE(cancelled["run"].contains("repositoryRoot"));  // unchanged members are left out
  EXPECT_EQ(cancelled["nextAction"]["kind"], "terminal");
  // the action's createdAt is the run's updatedAt, said once
  EXPECT_FALSE(cancelled["nextAction"].contains("createdAt"));
  EXPECT_EQ(cancelled["run"]["updatedAt"], Call("telic_get_next_action", {{"run_id", run}})["nextAction"]["createdAt"]);
}

// The run's own artifacts are named by ID: the inputs of an action, the
// steps of a replay (as rows).
TEST_F(LeanProfileTest, TheRunsOwnArtifactsAreNamedById) {
  server_->set_profile(Profile::kLean);
  Json started = Start();
  std::string run = started["run"]["runId"];
  Json full = controller::RunToJson(*store_->GetRun(run));
  Json inputs = Json::array();
  for (const Json& id : started["nextAction"]["inputIds"]) inputs.push_back("artifact://" + run + "/" + id.get<std::string>());
  server_->set_profile(Profile::kDefault);
  EXPECT_EQ(inputs, Call("telic_get_next_action", {{"run_id", run}})["nextAction"]["inputRefs"]);
  Json steps = Call("telic_replay_run", {{"run_id", run}})["report"]["steps"];
  server_->set_profile(Profile::kLean);
  EXPECT_FALSE(started["nextAction"].contains("inputRefs"));
  Json report = Call("telic_replay_run", {{"run_id", run}})["report"];
  EXPECT_EQ(report["stepColumns"], Json({"sequence", "artifactId", "artifactType", "phase", "digestStatus"}));
  ASSERT_EQ(report["steps"].size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Json& step = steps[i];
    EXPECT_EQ(report["steps"][i], Json({step["sequence"], step["artifactRef"].get<std::string>().substr(std::string("artifact://").size() + run.size() + 1),
                                        step["artifactType"], step["phase"], step["digestStatus"]}));
  }
}

// A reference list becomes IDs only when every reference is the run's own
// (no order between two lists is lost); a state change says runId once.
TEST(LeanPayloadTest, ReferencesBecomeIdsOnlyWhenAllAreTheRuns) {
  const std::string own = "artifact://r1/a", other = "artifact://r2/b";
  Json mixed = {{"artifact", {{"id", "e"}, {"type", "Evidence"}, {"runId", "r1"}, {"sourceRefs", {own, other}}}}};
  Json kept = *LeanPayload("telic_get_artifact", mixed, std::nullopt);
  EXPECT_EQ(kept, mixed);
  Json own_only = {{"artifact", {{"id", "e"}, {"type", "Evidence"}, {"runId", "r1"}, {"sourceRefs", {own, "trace://r1"}}}}};
  EXPECT_EQ(*LeanPayload("telic_get_artifact", own_only, std::nullopt), own_only);  // a trace:// ref stays a ref
  Json ids = *LeanPayload("telic_get_artifact", {{"artifact", {{"id", "e"}, {"runId", "r1"}, {"sourceRefs", {own}}}}},
                          std::nullopt);
  EXPECT_EQ(ids["artifact"], Json({{"id", "e"}, {"runId", "r1"}, {"sourceIds", {"a"}}}));
  LeanBefore before;
  before.run = {{"runId", "r1"}, {"version", 3}, {"status", "running"}, {"phase", "agent_4_execute"}};
  Json submitted = {{"run", {{"runId", "r1"}, {"version", 4}, {"status", "running"}, {"phase", "agent_4_execute"}}},
                    {"artifact", {{"id", "e"}, {"type", "Evidence"}, {"runId", "r1"}, {"sourceRefs", Json::array()}}}};
  Json lean = *LeanPayload("telic_submit_artifact", submitted, before);
  EXPECT_EQ(lean["artifact"], Json({{"id", "e"}, {"type", "Evidence"}, {"sourceIds", Json::array()}}));
  EXPECT_EQ(lean["run"]["runId"], "r1");
  // a check stores Evidence too: its run is the changes, its evidence said once
  Json checked = {{"run", {{"runId", "r1"}, {"version", 3}, {"status", "running"}, {"phase", "agent_4_execute"},
                           {"topology", "forensic"}}},
                  {"check", {{"passed", true}, {"evidenceRef", "artifact://r1/check-1"}}},
                  {"evidence", {{"id", "check-1"}, {"type", "Evidence"}, {"runId", "r1"}, {"sourceRefs", {own}}}}};
  before.run["topology"] = "forensic";
  Json lean_check = *LeanPayload("telic_run_check", checked, before);
  EXPECT_EQ(lean_check["run"], Json({{"runId", "r1"}, {"version", 3}, {"status", "running"}, {"phase", "agent_4_execute"}}));
  EXPECT_EQ(lean_check["evidence"], Json({{"id", "check-1"}, {"type", "Evidence"}, {"sourceIds", {"a"}}}));
  EXPECT_EQ(lean_check["check"], checked["check"]);
}

// The full schema is one call away: the tool and the resource of the reference.
TEST_F(LeanProfileTest, TheReferenceResolvesToTheFullSchema) {
  Json full = Call("telic_get_schema", {{"type", "WorkPlan"}});
  EXPECT_EQ(full["schema"], (*schema::ArtifactHostSchema("WorkPlan"))->json());
  EXPECT_EQ(full["digest"], Reference("WorkPlan")["digest"]);
  EXPECT_EQ(Call("telic_get_schema", {{"type", "WorkPlan"}, {"form", "compact"}})["shape"],
            **schema::ArtifactCompactShape("WorkPlan"));
  Json read = Reply({{"jsonrpc", "2.0"}, {"id", 99}, {"method", "resources/read"}, {"params", {{"uri", "schema://WorkPlan"}}}});
  std::string text = read["result"]["contents"][0]["text"];
  EXPECT_EQ(Sha256Ref(text).substr(0, 7 + kSchemaDigestHexDigits), full["digest"]);
  EXPECT_EQ(Reply({{"jsonrpc", "2.0"}, {"id", 100}, {"method", "resources/read"}, {"params", {{"uri", "schema://Nope"}}}})
                ["error"]["code"],
            -32002);
  Json refused = Call("telic_get_schema", {{"type", "Nope"}});
  EXPECT_EQ(refused["code"], "invalid_argument");
  EXPECT_EQ(refused["issues"][0]["pointer"], "/type");
}

// covers issue 39 item 1: a client chooses the profile at initialize; the
// default profile is unchanged for one that does not.
TEST_F(LeanProfileTest, AClientChoosesTheProfileAtInitialize) {
  Json plain = Initialize(Json::object());
  EXPECT_FALSE(plain["capabilities"].contains("experimental"));
  Json action = Start()["nextAction"];
  EXPECT_EQ(action["requiredOutputSchema"], (*schema::ArtifactHostSchema("ContextManifest"))->json());
  Json chosen = Initialize({{"experimental", {{"telic/profile", {{"name", "lean"}}}}}});
  EXPECT_EQ(chosen["capabilities"]["experimental"]["telic/profile"]["name"], "lean");
  EXPECT_EQ(Start()["nextAction"]["requiredOutputSchema"], Reference("ContextManifest"));
}

// covers issue 39 item 5: every call's result bytes are counted for its run
// and written by the next state change (and when the server stops).
TEST_F(LeanProfileTest, TheContextCostOfEveryCallIsKeptForItsRun) {
  Json started = Start();
  std::string run = started["run"]["runId"];
  size_t start_bytes = Compact(started).size();
  auto after_start = store_->GetContextCost(run);
  ASSERT_TRUE(after_start);
  EXPECT_EQ(*after_start, (std::vector<store::ContextCost>{{"telic_start_run", 1, static_cast<int64_t>(start_bytes)}}));
  Json next = Call("telic_get_next_action", {{"run_id", run}});
  Call("telic_get_next_action", {{"run_id", run}});  // the kept result is counted too
  EXPECT_EQ(store_->GetContextCost(run)->size(), 1u);  // reads wait for the next write
  server_.reset();
  auto costs = store_->GetContextCost(run);
  ASSERT_EQ(costs->size(), 2u);
  EXPECT_EQ((*costs)[0], (store::ContextCost{"telic_get_next_action", 2, 2 * static_cast<int64_t>(Compact(next).size())}));
}

}  // namespace
}  // namespace telic::mcp
