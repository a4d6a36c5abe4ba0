// RunService over a real SQLite store with injected clock and ids.
#include "controller/run_service.h"

#include <optional>

#include <gtest/gtest.h>

#include "controller/next_action.h"
#include "policy/permission_set.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::controller {
namespace {

class RunServiceTest : public ::testing::Test {
 protected:
  RunServiceTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<RunService>(*store_, clock_, ids_, "/repo");
  }
  StartRunRequest Request(std::string text = "Explain what src/app.ts does", std::string mode = "report_only") {
    StartRunRequest r;
    r.original_request = std::move(text);
    r.mode = std::move(mode);
    return r;
  }
  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<RunService> service_;
};

// covers TEL-004
TEST_F(RunServiceTest, SameInputsAndSameInjectedSourcesGiveIdenticalRecords) {
  testing::TempDir other_dir;
  auto other_store = std::move(*store::SqliteStore::Open(other_dir.File("telic.sqlite3")));
  ManualClock other_clock(1764662400000, 1);
  SequentialIdSource other_ids;
  RunService other(*other_store, other_clock, other_ids, "/repo");
  auto a = service_->StartRun(Request());
  auto b = other.StartRun(Request());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->next_action, b->next_action);
  auto artifacts_a = store_->ListArtifacts(a->run.run_id);
  auto artifacts_b = other_store->ListArtifacts(b->run.run_id);
  ASSERT_EQ(artifacts_a->size(), artifacts_b->size());
  for (size_t i = 0; i < artifacts_a->size(); ++i) EXPECT_EQ((*artifacts_a)[i].sha256, (*artifacts_b)[i].sha256);
  EXPECT_EQ(store_->GetTrace(a->run.run_id, 0, 10)->events.back().hash,
            other_store->GetTrace(b->run.run_id, 0, 10)->events.back().hash);
}

// covers TEL-001, TEL-021
TEST_F(RunServiceTest, StartRunStoresRequestThenEnvelopeAndTwoEvents) {
  auto started = service_->StartRun(Request("  keep   these\nbytes  ", "plan_only"));
  ASSERT_TRUE(started) << started.error().message();
  auto artifacts = *store_->ListArtifacts(started->run.run_id);
  ASSERT_EQ(artifacts.size(), 2u);
  EXPECT_EQ(domain::Name(artifacts[0].type), "UserMessage");
  EXPECT_EQ(artifacts[0].producer, "user");
  EXPECT_EQ(domain::Name(artifacts[1].type), "RunEnvelope");
  EXPECT_EQ(artifacts[1].id, started->run.run_id);
  auto request = store_->GetArtifact(started->run.run_id, artifacts[0].id);
  EXPECT_EQ(Json::parse(request->canonical_body)["content"], "  keep   these\nbytes  ");
  auto envelope = Json::parse(store_->GetArtifact(started->run.run_id, artifacts[1].id)->canonical_body);
  EXPECT_EQ(envelope["originalRequestRef"], store::ArtifactUri(started->run.run_id, artifacts[0].id));
  EXPECT_EQ(envelope["authorization"]["granted"]["repository"]["read"], Json::array({"**"}));
  EXPECT_EQ(envelope["status"], "active");
  auto events = store_->GetTrace(started->run.run_id, 0, 10)->events;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event_type, "run_started");
  EXPECT_EQ(events[1].event_type, "topology_classified");
  EXPECT_EQ(events[1].summary, "PLAN_ONLY");
}

// covers TEL-004: StartRun answers with an action built from the bodies it
// holds in memory; a second service over the same stored state reads them
// back and must compute the very same action (phase, permissions, budgets),
// for every mode and odd request text.
TEST_F(RunServiceTest, StartRunActionEqualsTheActionComputedFromTheLedger) {
  for (const char* mode : {"report_only", "plan_only", "analyze_and_fix"}) {
    for (const char* text : {"Explain what src/app.ts does", "\u00e9\u2028 \"quoted\" \\ tab\t", "  x  "}) {
      auto started = service_->StartRun(Request(text, mode));
      ASSERT_TRUE(started) << started.error().message();
      RunService reader(*store_, clock_, ids_, "/repo");
      auto computed = reader.GetNextAction(started->run.run_id);
      ASSERT_TRUE(computed) << computed.error().message();
      EXPECT_EQ(started->next_action, **computed) << mode << " / " << text;
    }
  }
}

// covers issue 41 item 2: a mode or topology override outside its vocabulary
// is refused where the request enters, naming its pointer; nothing is stored.
TEST_F(RunServiceTest, AnUnknownModeOrTopologyIsRefusedWithItsPointer) {
  auto unknown_mode = service_->StartRun(Request("Explain src/app.ts", "implement"));
  ASSERT_FALSE(unknown_mode);
  EXPECT_EQ(unknown_mode.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_EQ(unknown_mode.error().issues().size(), 1u);
  EXPECT_EQ(unknown_mode.error().issues()[0].pointer, "/mode");
  auto r = Request("Explain src/app.ts", "report_only");
  r.topology_override = "huge";
  auto unknown_topology = service_->StartRun(r);
  ASSERT_FALSE(unknown_topology);
  EXPECT_EQ(unknown_topology.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_EQ(unknown_topology.error().issues().size(), 1u);
  EXPECT_EQ(unknown_topology.error().issues()[0].pointer, "/topology_override");
  auto runs = store_->ListRuns(10);
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs->empty());
}

TEST_F(RunServiceTest, RejectedStartStoresNothing) {
  auto r = Request("x", "fix_only");
  r.shell_execute_allowlist = {"npm test"};
  ASSERT_FALSE(service_->StartRun(r));
  auto blank = Request(" \t\n ");
  auto failed = service_->StartRun(blank);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message(), "Original request is required");
  EXPECT_TRUE(store_->ListRuns(10)->empty());
}

TEST_F(RunServiceTest, PriorRunMustExistAndBeTerminal) {
  auto r = Request();
  r.prior_run_id = "00000000-0000-4000-8000-0000000000ff";
  auto missing = service_->StartRun(r);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "Prior run 00000000-0000-4000-8000-0000000000ff does not exist");
  auto prior = service_->StartRun(Request());
  r.prior_run_id = prior->run.run_id;
  auto active = service_->StartRun(r);
  ASSERT_FALSE(active);
  EXPECT_EQ(active.error().message(), "Prior run must be terminal before lineage link");
  ASSERT_TRUE(service_->CancelRun(prior->run.run_id, ActionId(prior->run), 1));
  auto linked = service_->StartRun(r);
  ASSERT_TRUE(linked) << linked.error().message();
  EXPECT_EQ(linked->run.prior_run_id, prior->run.run_id);
  auto events = store_->GetTrace(linked->run.run_id, 0, 10)->events;
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].event_type, "lineage_linked");
  EXPECT_EQ(events[2].input_refs, std::vector<std::string>{"trace://" + prior->run.run_id});
}

// covers TEL-251
TEST_F(RunServiceTest, CancelChecksTokensInOrderAndIsIdempotentWhenTerminal) {
  auto started = *service_->StartRun(Request());
  const auto& id = started.run.run_id;
  EXPECT_EQ(service_->CancelRun("nope", "a", 1).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(service_->CancelRun(id, "wrong", 3).error().message(), "Stale run version 3; current version is 1");
  EXPECT_EQ(service_->CancelRun(id, "wrong", 1).error().message(), "Stale or foreign action_id; reload the next action");
  auto cancelled = service_->CancelRun(id, ActionId(started.run), 1);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(domain::Name(cancelled->run.status), "cancelled");
  EXPECT_EQ(cancelled->run.version, 2);
  EXPECT_EQ(cancelled->next_action["kind"], "terminal");
  auto again = service_->CancelRun(id, ActionId(cancelled->run), 2);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->run.version, 2);
  EXPECT_EQ(store_->GetTrace(id, 0, 10)->events.size(), 3u);
}

// The NextAction cached per run follows a change made by another service
// on the same ledger (another instance or process): the run record moved.
TEST_F(RunServiceTest, CachedNextActionFollowsChangesMadeElsewhere) {
  auto started = *service_->StartRun(Request());
  const auto& id = started.run.run_id;
  auto first = service_->GetNextAction(id);
  ASSERT_TRUE(first);
  EXPECT_EQ(**first, started.next_action);
  EXPECT_EQ(*service_->GetNextAction(id), *first);  // the cached action itself, not a copy
  RunService other(*store_, clock_, ids_, "/repo");
  auto cancelled = other.CancelRun(id, ActionId(started.run), 1);
  ASSERT_TRUE(cancelled);
  auto after = service_->GetNextAction(id);
  ASSERT_TRUE(after);
  EXPECT_EQ((**after)["kind"], "terminal");
  EXPECT_EQ(**after, cancelled->next_action);
  EXPECT_EQ(service_->GetRun(id)->next_action, cancelled->next_action);
}

// StartRun computes its action from what it wrote, in memory; a later read
// computes it from the ledger. Both must agree, in every mode, with both
// schema forms, and for a run linked to a prior one.
TEST_F(RunServiceTest, StartRunsActionIsTheOneReadFromTheLedgerInEveryMode) {
  for (ActionSchemas form : {ActionSchemas::kCopies, ActionSchemas::kReferences}) {
    service_->set_action_schemas(form);
    std::optional<std::string> prior;
    for (const std::string& mode : policy::Modes()) {
      StartRunRequest request = Request("Fix the flaky login test in src/login.ts", mode);
      request.prior_run_id = prior;
      auto started = service_->StartRun(request);
      ASSERT_TRUE(started) << mode << ": " << started.error().message();
      RunService fresh(*store_, clock_, ids_, "/repo");  // nothing cached
      fresh.set_action_schemas(form);
      auto read = fresh.GetNextAction(started->run.run_id);
      ASSERT_TRUE(read) << mode;
      EXPECT_EQ(**read, started->next_action) << mode;
      ASSERT_TRUE(service_->CancelRun(started->run.run_id, ActionId(started->run), 1));  // a prior run is terminal
      prior = started->run.run_id;
    }
  }
}

// The bodies a new run starts with are kept from memory: computing its action
// on a later read reads no body back from the store.
TEST_F(RunServiceTest, ReadsAfterStartRunTakeItsBodiesFromMemory) {
  auto started = service_->StartRun(Request());
  ASSERT_TRUE(started);
  auto read = service_->GetNextAction(started->run.run_id);
  ASSERT_TRUE(read);
  EXPECT_EQ(**read, started->next_action);
  EXPECT_EQ(service_->body_loads_from_store(), 0u);
  RunService fresh(*store_, clock_, ids_, "/repo");  // another process: reads them
  ASSERT_TRUE(fresh.GetNextAction(started->run.run_id));
  EXPECT_GT(fresh.body_loads_from_store(), 0u);
}

// A grounding cancelled before its commit stores nothing: same version, no
// artifact, no event; the same tokens ground the run afterwards.
TEST_F(RunServiceTest, CancelledGroundingStoresNothing) {
  auto started = *service_->StartRun(Request());
  const auto& id = started.run.run_id;
  auto artifacts_before = store_->ListArtifacts(id)->size();
  auto events_before = store_->GetTrace(id, 0, 100)->events.size();
  GroundContextRequest request{id, ActionId(started.run), 1, {}, Json::object()};
  GroundingControl cancelled{[] { return true; }, nullptr};
  auto refused = service_->GroundContext(request, cancelled);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(), "Grounding was cancelled");
  EXPECT_EQ(service_->GetRun(id)->run.version, 1);
  EXPECT_EQ(store_->ListArtifacts(id)->size(), artifacts_before);
  EXPECT_EQ(store_->GetTrace(id, 0, 100)->events.size(), events_before);
  auto grounded = service_->GroundContext(request);
  ASSERT_TRUE(grounded) << grounded.error().message();
  EXPECT_EQ(grounded->run.version, 2);
}

TEST_F(RunServiceTest, ContextDiscoveryActionCarriesOnlyRepositoryRead) {
  auto r = Request("Investigate the flaky login test", "analyze_only");
  auto started = service_->StartRun(r);
  ASSERT_TRUE(started);
  const Json& action = started->next_action;
  EXPECT_EQ(action["phase"], "context_discovery");
  EXPECT_EQ(action["effectivePermissions"]["repository"]["read"], Json::array({"**"}));
  EXPECT_EQ(action["effectivePermissions"]["shell"]["inspect"], false);
  EXPECT_EQ(action["requiredOutputSchema"]["title"], "ContextManifest");
  EXPECT_TRUE(action["additionalOutputSchemas"].contains("ClarificationRequest"));
  EXPECT_EQ(action["inputRefs"].size(), 2u);
}

// A chain of ClarificationRequests, each citing the previous one, makes the
// input closure of context discovery exceed 256: the action must fail, never
// be silently truncated.
TEST_F(RunServiceTest, InputClosureOver256FailsInsteadOfTruncating) {
  auto started = *service_->StartRun(Request());
  const auto& id = started.run.run_id;
  store::Change change;
  change.run = started.run;
  change.run.version = 2;
  std::string previous = store::ArtifactUri(id, id);
  for (int i = 0; i < 300; ++i) {
    std::string cid = "cr-" + std::to_string(i);
    change.artifacts.push_back(store::MakeArtifact({cid, id, domain::ArtifactType::kClarificationRequest, "1.0", "controller", "", {}, "none", "t"},
                                                   Json{{"evidenceInspected", Json::array({previous})}}));
    previous = store::ArtifactUri(id, cid);
  }
  ASSERT_TRUE(store_->ApplyChange(id, 1, change));
  auto action = service_->GetNextAction(id);
  ASSERT_FALSE(action);
  EXPECT_EQ(action.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(action.error().message().find("NextAction input reference closure exceeds 256"), std::string::npos);
}

TEST_F(RunServiceTest, ProjectionFollowsReferencesInInsertionOrder) {
  auto started = *service_->StartRun(Request());
  const auto& id = started.run.run_id;
  store::Change change;
  change.run = started.run;
  change.run.version = 2;
  // cr-0 is not the latest request, but cr-1 cites it, so it is projected.
  change.artifacts.push_back(store::MakeArtifact({"cr-0", id, domain::ArtifactType::kClarificationRequest, "1.0", "controller", "", {}, "none", "t"},
                                                 Json{{"evidenceInspected", Json::array()}}));
  change.artifacts.push_back(store::MakeArtifact({"cr-x", id, domain::ArtifactType::kClarificationRequest, "1.0", "controller", "", {}, "none", "t"},
                                                 Json{{"evidenceInspected", Json::array()}}));
  change.artifacts.push_back(
      store::MakeArtifact({"cr-1", id, domain::ArtifactType::kClarificationRequest, "1.0", "controller", "", {}, "none", "t"},
                          Json{{"evidenceInspected", Json::array({store::ArtifactUri(id, "cr-0")})}}));
  ASSERT_TRUE(store_->ApplyChange(id, 1, change));
  auto action = service_->GetNextAction(id);
  ASSERT_TRUE(action) << action.error().message();
  std::vector<std::string> refs = (**action)["inputRefs"];
  auto artifacts = *store_->ListArtifacts(id);
  std::vector<std::string> expected = {store::ArtifactUri(id, artifacts[0].id), store::ArtifactUri(id, id),
                                       store::ArtifactUri(id, "cr-0"), store::ArtifactUri(id, "cr-1")};
  EXPECT_EQ(refs, expected);
}

TEST(CollectReferencesTest, FindsReferenceFieldsAtAnyDepthOnly) {
  Json body = {{"sourceRefs", Json::array({"artifact://r/a", "not-a-ref"})},
               {"nested", {{"evidenceRefs", Json::array({"repo://src/x.cc", "trace://r/event-0001"})}}},
               {"claim", "artifact://r/ignored-because-not-a-ref-field"},
               {"ref", "artifact://r/b"}};
  std::vector<std::string> refs = CollectReferences(body);
  std::sort(refs.begin(), refs.end());
  EXPECT_EQ(refs, (std::vector<std::string>{"artifact://r/a", "artifact://r/b", "repo://src/x.cc", "trace://r/event-0001"}));
}

}  // namespace
}  // namespace telic::controller
