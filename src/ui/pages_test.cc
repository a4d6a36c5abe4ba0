// The UI's pages rendered from real stores: a SQLite ledger driven through
// RunService (examples/analyze_and_fix.json) and a SQLite task store.
#include "ui/pages.h"

#include <sqlite3.h>

#include <set>

#include <gtest/gtest.h>

#include "controller/scenario_run_for_test.h"
#include "graph/task_service.h"
#include "store/sqlite_task_store.h"
#include "ui/phase_diagram.h"

namespace telic::ui {
namespace {

using controller::testing_support::ScenarioRun;

constexpr const char* kPayload = "<script>window.__pwned=1</script><img src=x onerror=alert(1)> & \"quoted\"";
constexpr const char* kEscapedPayload =
    "&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;";

const Json kClarification = {
    {"schemaVersion", "1.0"}, {"id", "clarification-01"}, {"runId", "${run}"},
    {"question", "Should the fix also change the farewell <b>message</b>?"},
    {"reason", "permission_expanding"}, {"divergence", "A wider change needs authority this run does not have."},
    {"evidenceInspected", {"${request}"}}, {"blockedBoundary", "scope of the fix"},
    {"responseConstraints", "Pick one choice id."},
    {"responseChoices",
     {{{"id", "greeting-only"}, {"label", "Greeting only"}, {"consequence", "Fix only the greeting."},
       {"authorityEffect", "within_current_authority"}, {"runEffect", "resume"}},
      {{"id", "stop"}, {"label", "Stop"}, {"consequence", "Stop the run."},
       {"authorityEffect", "within_current_authority"}, {"runEffect", "cancel"}},
      {{"id", "bigger"}, {"label", "Bigger change"}, {"consequence", "Start a new, wider run."},
       {"authorityEffect", "requires_new_run"}, {"runEffect", "new_run"}}}},
    {"permissionExpansionRequired", true}, {"rationaleSummary", "Scope is a user decision."}};

// A scenario run with a task store beside it and the UI's sources over both.
class UiPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tasks_ = std::move(*store::SqliteTaskStore::Open(dir_.File("tasks.sqlite3")));
    graph_ = std::make_unique<graph::TaskService>(*tasks_, clock_, ids_, &run_.store());
    sources_ = std::make_unique<Sources>(Sources{run_.store(), tasks_.get(), run_.service()});
  }

  // The whole scenario with a clarification after grounding (answered
  // greeting-only) and one denied write before the honest fix result.
  void RunWithClarificationAndDenial() {
    ASSERT_TRUE(run_.Start([](controller::StartRunRequest& r) { r.original_request += std::string("\n") + kPayload; }));
    ASSERT_TRUE(run_.RunUntil("frames the problem"));
    auto asked = run_.Submit("ClarificationRequest", cli::SubstituteNames(kClarification, run_.names()));
    ASSERT_TRUE(asked) << asked.error().message();
    ASSERT_TRUE(run_.Answer("greeting-only"));
    std::string answer_id = run_.Artifacts().back().id;
    Json frame_step = run_.Step("frames the problem");
    ASSERT_TRUE(run_.Submit("ProblemFrame", run_.Body(frame_step), {run_.Uri("clarification-01"), run_.Uri(answer_id)}));
    bool after_frame = false, denied = false;
    for (const Json& step : run_.Steps()) {
      std::string say = step.value("say", "");
      if (!after_frame) {
        after_frame = say.find("frames the problem") != std::string::npos;
        continue;
      }
      if (!denied && say.find("reports the fix") != std::string::npos) {
        Json body = run_.Body(step);
        body["actions"][0]["target"] = "README.md";
        body["filesChanged"][0]["path"] = "README.md";
        auto refused = run_.Submit("WorkResult", body);
        ASSERT_FALSE(refused);
        denied = true;
      }
      ASSERT_TRUE(run_.Do(step)) << say;
    }
    ASSERT_TRUE(denied);
    ASSERT_EQ(domain::Name(run_.run().status), "completed");
    ASSERT_TRUE(graph_->SyncRun(run_.run().run_id));
  }

  testing::TempDir dir_;
  ScenarioRun run_;
  ManualClock clock_{1764662400000, 1};
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteTaskStore> tasks_;
  std::unique_ptr<graph::TaskService> graph_;
  std::unique_ptr<Sources> sources_;
};

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Issue 19 page 2: header, verify and replay, phase path, timeline with the
// denial and the clarification, artifact graph.
TEST_F(UiPagesTest, RunPageShowsRequestPathDecisionsClarificationAndChecks) {
  RunWithClarificationAndDenial();
  const std::string run_id = run_.run().run_id;
  auto page = RunPage(*sources_, run_id);
  ASSERT_TRUE(page) << page.error().message();
  const std::string& html = *page;
  // The request, exactly, escaped; the only <script> is the page's own file.
  EXPECT_NE(html.find(kEscapedPayload), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u);
  EXPECT_NE(html.find("<script src=\"/ui/assets/ui.js\""), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("id=\"run-status\">completed<"), std::string::npos);
  EXPECT_NE(html.find("id=\"run-mode\">analyze_and_fix<"), std::string::npos);
  EXPECT_NE(html.find("id=\"budget-clarification\">0 of 1<"), std::string::npos);
  // Verify and replay ran on this read and passed.
  EXPECT_NE(html.find("✔ verified"), std::string::npos);
  EXPECT_NE(html.find("✔ replay consistent"), std::string::npos);
  // The path: through the clarification and back, ending completed.
  std::vector<std::string> path = PathTaken(run_.run(), run_.Trace());
  ASSERT_GE(path.size(), 4u);
  EXPECT_EQ(path[0], "context_grounding");
  EXPECT_EQ(path[1], "agent_1_frame");
  EXPECT_EQ(path[2], "clarification");
  EXPECT_EQ(path[3], "agent_1_frame");
  EXPECT_EQ(path.back(), "completed");
  EXPECT_NE(html.find("class=\"node outcome outcome-completed taken current\" data-id=\"completed\""), std::string::npos);
  EXPECT_NE(html.find("class=\"node phase taken\" data-id=\"agent_3_evidence_reverify\""), std::string::npos);
  EXPECT_NE(html.find("class=\"node phase\" data-id=\"agent_2_revise\""), std::string::npos);  // not taken
  EXPECT_NE(html.find("class=\"edge taken extra-path\" data-from=\"agent_1_frame\" data-to=\"clarification\""), std::string::npos);
  // The denial stands out with its capability, target, decision and rule.
  size_t deny = html.find("class=\"event permission_checked deny\"");
  ASSERT_NE(deny, std::string::npos);
  std::string row = html.substr(deny, html.find("</tr>", deny) - deny);
  EXPECT_NE(row.find("class=\"capability\">repository.write<"), std::string::npos) << row;
  EXPECT_NE(row.find("class=\"target mono\">README.md<"), std::string::npos) << row;
  EXPECT_NE(row.find("data-decision=\"deny\""), std::string::npos) << row;
  EXPECT_NE(row.find("class=\"rule\">"), std::string::npos) << row;
  EXPECT_NE(row.find("/artifacts/plan-fix"), std::string::npos) << row;  // the deciding policy, linked
  // The clarification: question (escaped), choices, the chosen answer.
  EXPECT_NE(html.find("farewell &lt;b&gt;message&lt;/b&gt;?"), std::string::npos);
  EXPECT_NE(html.find("class=\"choice chosen\" data-choice=\"greeting-only\""), std::string::npos);
  EXPECT_NE(html.find("class=\"answer\">greeting-only<"), std::string::npos);
  // Artifact graph: nodes link to artifact pages; references are edges.
  EXPECT_NE(html.find("<a href=\"/ui/runs/" + run_id + "/artifacts/frame-01\" class=\"nodelink\">"), std::string::npos);
  EXPECT_NE(html.find("data-from=\"clarification-01\" data-to=\"frame-01\""), std::string::npos);
  EXPECT_NE(html.find("href=\"/ui/runs/" + run_id + "/tasks\""), std::string::npos);
  // Live: the page knows where to poll from and the last sequence it shows,
  // and that the run has ended (so it does not poll).
  auto trace = run_.Trace();
  EXPECT_NE(html.find("data-after=\"" + std::to_string(trace.back().sequence) + "\""), std::string::npos);
  EXPECT_NE(html.find("data-ended=\"true\""), std::string::npos);
}

// Issue 42: the page opens with the outcome; the path is a row of steps and
// the whole machine waits behind a toggle, without edge labels to overlap;
// the timeline shows times since the start, gaps, and short references.
TEST_F(UiPagesTest, RunPageOpensWithTheOutcomeAndACompactPath) {
  RunWithClarificationAndDenial();
  const std::string run_id = run_.run().run_id;
  Json refusal = {{"code", "permission_denied"},
                  {"error", "fix_only cannot <b>accept</b> mutating work"},
                  {"issues", Json::array({Json{{"pointer", "/body/actions/0"}, {"code", "custom"}, {"message", "not authorised"}}})}};
  ASSERT_TRUE(run_.service().RecordRefusedCall(run_id, "telic_submit_artifact", refusal));
  auto page = RunPage(*sources_, run_id);
  ASSERT_TRUE(page) << page.error().message();
  const std::string& html = *page;
  size_t outcome = html.find("id=\"outcome\"");
  ASSERT_NE(outcome, std::string::npos);
  EXPECT_LT(outcome, html.find("id=\"timeline\""));
  EXPECT_LT(outcome, html.find("id=\"request\""));
  EXPECT_NE(html.find("id=\"outcome-status\">completed<"), std::string::npos);
  EXPECT_NE(html.find("id=\"outcome-denials\" class=\"bad\">1<"), std::string::npos);
  EXPECT_NE(html.find("id=\"outcome-clarifications\">1<"), std::string::npos);
  size_t summary = html.find("id=\"outcome-summary\"");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_NE(html.substr(summary, 300).find(">UserReport</a>"), std::string::npos);
  // The path as steps, protocol names, ending in the outcome.
  size_t path = html.find("<ol class=\"path-steps\" id=\"path\"");
  ASSERT_NE(path, std::string::npos);
  std::string steps = html.substr(path, html.find("</ol>", path) - path);
  EXPECT_NE(steps.find(">context_discovery<"), std::string::npos) << steps;
  EXPECT_NE(steps.find("class=\"step last completed\""), std::string::npos) << steps;
  // The machine behind a toggle, its edge conditions as tooltips only.
  size_t machine = html.find("<details class=\"card\" id=\"machine\">");
  ASSERT_NE(machine, std::string::npos);
  EXPECT_EQ(html.find("class=\"elabel\""), std::string::npos);
  // Times since the start, the gap to the previous event, short references.
  EXPECT_NE(html.find("class=\"mono when\" title=\""), std::string::npos);
  EXPECT_NE(html.find(">+"), std::string::npos);
  EXPECT_NE(html.find("class=\"mono gap\""), std::string::npos);
  EXPECT_NE(html.find("class=\"ref\" title=\"artifact://" + run_id + "/"), std::string::npos);
  EXPECT_EQ(html.find(">artifact://" + run_id + "/frame-01<"), std::string::npos);
  EXPECT_NE(html.find("id=\"only-problems\""), std::string::npos);
  // The refused call: in the timeline with its code, reason and pointer, and counted.
  size_t refused = html.find("<tr class=\"attempt rejected\" id=\"refused-1\"");
  ASSERT_NE(refused, std::string::npos);
  std::string row = html.substr(refused, html.find("</tr>", refused) - refused);
  EXPECT_NE(row.find(">permission_denied<"), std::string::npos) << row;
  EXPECT_NE(row.find("fix_only cannot &lt;b&gt;accept&lt;/b&gt; mutating work"), std::string::npos) << row;
  EXPECT_NE(row.find("class=\"pointer\">/body/actions/0<"), std::string::npos) << row;
  EXPECT_NE(row.find(">telic_submit_artifact<"), std::string::npos) << row;
  EXPECT_NE(html.find("id=\"outcome-refused\" class=\"bad\">1<"), std::string::npos);
  EXPECT_NE(html.find("data-refused=\"1\""), std::string::npos);
}

TEST_F(UiPagesTest, RunsPageSearchesByIdPrefixCountsPagesBackAndShowsIdleRuns) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(run_.Start());
    ids.push_back(run_.run().run_id);
  }
  // An id prefix finds that run (case does not matter), and only it.
  RunsFilter by_id;
  by_id.text = ids[2];  // the test's ids share long prefixes; the whole id is a prefix too
  for (auto& c : *by_id.text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto found = RunsPage(*sources_, by_id);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(Count(*found, "<tr class=\"run row-link\""), 1u);
  EXPECT_NE(found->find("data-run-id=\"" + ids[2] + "\""), std::string::npos);
  EXPECT_NE(found->find("runs 1\xE2\x80\x93" "1 of 1"), std::string::npos);
  // Pages of two: totals, next, then previous back to the first page.
  RunsFilter paged;
  paged.limit = 2;
  auto first = RunsPage(*sources_, paged);
  ASSERT_TRUE(first);
  EXPECT_NE(first->find("runs 1\xE2\x80\x93" "2 of 5"), std::string::npos);
  EXPECT_EQ(first->find("id=\"previous-page\""), std::string::npos);
  paged.before = ids[3];  // the second page's cursor: the last run of the first
  paged.back = {""};
  auto second = RunsPage(*sources_, paged);
  ASSERT_TRUE(second);
  EXPECT_NE(second->find("runs 3\xE2\x80\x93" "4 of 5"), std::string::npos);
  EXPECT_NE(second->find("<a href=\"/ui/?limit=2\" id=\"previous-page\" rel=\"prev\">"), std::string::npos);
  EXPECT_NE(second->find("back=-%2C" + ids[3]), std::string::npos);  // next keeps the trail
  // A running run without a change for longer than the threshold is idle.
  sources_->now_ms = [] { return int64_t{1764662400000} + 3 * 3600 * 1000 + 60 * 1000; };
  sources_->idle_after_ms = 60 * 60 * 1000;
  auto idle = RunsPage(*sources_, RunsFilter{});
  ASSERT_TRUE(idle);
  EXPECT_NE(idle->find("class=\"badge idle\""), std::string::npos);
  EXPECT_NE(idle->find("idle since 3 h ago"), std::string::npos);
  sources_->idle_after_ms = 4 * 60 * 60 * 1000;
  auto fresh = RunsPage(*sources_, RunsFilter{});
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->find("class=\"badge idle\""), std::string::npos);
}

TEST_F(UiPagesTest, AnEmptyLedgerSaysNoRunsYet) {
  auto page = RunsPage(*sources_, RunsFilter{});
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_NE(page->find("No runs yet."), std::string::npos);
  RunsFilter filtered;
  filtered.status = "completed";
  auto none = RunsPage(*sources_, filtered);
  ASSERT_TRUE(none);
  EXPECT_NE(none->find("No run matches these filters."), std::string::npos);
}

TEST_F(UiPagesTest, LiveUpdateReturnsOnlyTheEventsAfterTheGivenSequence) {
  ASSERT_TRUE(run_.Start());
  int64_t before = run_.Trace().back().sequence;
  auto idle = LiveUpdate(*sources_, run_.run().run_id, before);
  ASSERT_TRUE(idle);
  EXPECT_EQ((*idle)["rows"], "");
  EXPECT_EQ((*idle)["after"], before);
  ASSERT_TRUE(run_.Ground());
  auto update = LiveUpdate(*sources_, run_.run().run_id, before);
  ASSERT_TRUE(update);
  std::string rows = (*update)["rows"];
  EXPECT_EQ(rows.find("id=\"event-" + std::to_string(before) + "\""), std::string::npos);
  EXPECT_NE(rows.find("id=\"event-" + std::to_string(before + 1) + "\""), std::string::npos);
  EXPECT_EQ((*update)["after"], run_.Trace().back().sequence);
  EXPECT_EQ((*update)["phase"], "agent_1_frame");
  EXPECT_EQ((*update)["ended"], false);
  EXPECT_NE(rows.find("class=\"mono gap\">"), std::string::npos);
  EXPECT_FALSE(LiveUpdate(*sources_, "no-such-run", 0));
}

TEST_F(UiPagesTest, RunsPageListsFiltersAndPagesWithEscapedRequests) {
  ASSERT_TRUE(run_.Start([](controller::StartRunRequest& r) { r.original_request = kPayload; }));
  std::string first = run_.run().run_id;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run_.Start());
  RunsFilter all;
  auto page = RunsPage(*sources_, all);
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_EQ(Count(*page, "<tr class=\"run row-link\""), 4u);
  EXPECT_NE(page->find(kEscapedPayload), std::string::npos);
  EXPECT_EQ(page->find("<img"), std::string::npos);
  EXPECT_NE(page->find("<a href=\"/ui/runs/" + first + "\" class=\"run-link\">"), std::string::npos);

  RunsFilter text;
  text.text = "WINDOW.__pwned";
  auto found = RunsPage(*sources_, text);
  ASSERT_TRUE(found);
  EXPECT_EQ(Count(*found, "<tr class=\"run row-link\""), 1u);
  EXPECT_NE(found->find("data-run-id=\"" + first + "\""), std::string::npos);
  EXPECT_NE(found->find("name=\"q\" id=\"search\" value=\"WINDOW.__pwned\""), std::string::npos);

  RunsFilter paged;
  paged.limit = 3;
  paged.mode = "analyze_and_fix";
  auto one = RunsPage(*sources_, paged);
  ASSERT_TRUE(one);
  EXPECT_EQ(Count(*one, "<tr class=\"run row-link\""), 3u);
  size_t next = one->find("id=\"next-page\"");
  ASSERT_NE(next, std::string::npos);
  EXPECT_NE(one->find("mode=analyze_and_fix&amp;limit=3&amp;back=-&amp;before="), std::string::npos);
  paged.before = first;  // the oldest: nothing after it
  auto last = RunsPage(*sources_, paged);
  ASSERT_TRUE(last);
  EXPECT_EQ(Count(*last, "<tr class=\"run row-link\""), 0u);
  EXPECT_NE(last->find("id=\"no-runs\""), std::string::npos);

  RunsFilter bad;
  bad.before = "no-such-run";
  auto refused = RunsPage(*sources_, bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
}

// Issue 19 page 3: the canonical body with linked references, its sha256,
// verified on this read; a body changed under the store is shown as failed.
TEST_F(UiPagesTest, ArtifactPageShowsTheBodyItsDigestAndWhetherItVerified) {
  ASSERT_TRUE(run_.Start([](controller::StartRunRequest& r) { r.original_request = kPayload; }));
  ASSERT_TRUE(run_.Ground());
  const std::string run_id = run_.run().run_id;
  auto envelope = ArtifactPage(*sources_, run_id, run_id);
  ASSERT_TRUE(envelope) << envelope.error().message();
  auto meta = run_.Find(run_id);
  ASSERT_TRUE(meta);
  EXPECT_NE(envelope->find("id=\"artifact-sha256\">" + meta->sha256 + "<"), std::string::npos);
  EXPECT_NE(envelope->find("✔ verified on this read"), std::string::npos);
  std::string request_ref = run_.names().at("request");
  std::string request_id = request_ref.substr(request_ref.rfind('/') + 1);
  EXPECT_NE(envelope->find("<a href=\"/ui/runs/" + run_id + "/artifacts/" + request_id + "\" class=\"ref\">"),
            std::string::npos);

  auto request = ArtifactPage(*sources_, run_id, request_id);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->find("<img"), std::string::npos);
  EXPECT_NE(request->find("&lt;script&gt;window.__pwned=1&lt;/script&gt;"), std::string::npos);

  auto missing = ArtifactPage(*sources_, run_id, "no-such-artifact");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

// Issue 40 row 8: the request is stored exactly, but the runs list, the run
// page and the artifact page mask the credentials in it, and the runs filter
// matches the masked text, so a secret cannot be found by probing for it.
TEST_F(UiPagesTest, PagesMaskCredentialsInTheStoredRequest) {
  const std::string kCanaries[] = {
      "AKIAZ7Q4VXW2M9K3L8PD", "ghp_Zq8Xw3Vn5Lm2Kp7Rt9Yb4Hc6Jd1Fg0Sa2Ee3", "MIIEowIBAAKCAQEAz9Lq0vYt3",
      "z9Lq0vYt3Wc8Nf2Hb7Rk4Mx", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ6OUxxMHZZdDMifQ.Qm9vZ2llV29vZ2llQ2FuYXJ5"};
  const std::string request = std::string("Fix the greeting. Keys: ") + kCanaries[0] + " " + kCanaries[1] +
                              "\n-----BEGIN RSA PRIVATE KEY-----\n" + kCanaries[2] +
                              "\n-----END RSA PRIVATE KEY-----\nAuthorization: Bearer " + kCanaries[3] + "\n" +
                              kCanaries[4];
  ASSERT_TRUE(run_.Start([&](controller::StartRunRequest& r) { r.original_request = request; }));
  const std::string run_id = run_.run().run_id;
  std::string request_ref = run_.names().at("request");
  std::string request_id = request_ref.substr(request_ref.rfind('/') + 1);
  auto stored = run_.store().GetArtifact(run_id, request_id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(Json::parse(stored->canonical_body)["content"], request);

  auto runs = RunsPage(*sources_, RunsFilter{});
  auto run_page = RunPage(*sources_, run_id);
  auto artifact = ArtifactPage(*sources_, run_id, request_id);
  ASSERT_TRUE(runs && run_page && artifact);
  for (const std::string* page : {&*runs, &*run_page, &*artifact}) {
    for (const std::string& canary : kCanaries) EXPECT_EQ(page->find(canary), std::string::npos) << canary;
    EXPECT_NE(page->find("[REDACTED:credential]"), std::string::npos);
  }
  EXPECT_NE(artifact->find("[REDACTED:secret]"), std::string::npos);
  EXPECT_NE(artifact->find("id=\"masked\""), std::string::npos);
  EXPECT_NE(run_page->find("Fix the greeting. Keys: "), std::string::npos);

  RunsFilter probe;
  probe.text = "akiaz7q4";
  auto probed = RunsPage(*sources_, probe);
  ASSERT_TRUE(probed);
  EXPECT_EQ(Count(*probed, "<tr class=\"run row-link\""), 0u);
  EXPECT_NE(probed->find("id=\"no-runs\""), std::string::npos);
  RunsFilter words;
  words.text = "fix the GREETING";
  auto matched = RunsPage(*sources_, words);
  ASSERT_TRUE(matched);
  EXPECT_EQ(Count(*matched, "<tr class=\"run row-link\""), 1u);
}

TEST(UiArtifactIntegrityTest, ATamperedBodyIsShownAsFailingItsCheck) {
  testing::TempDir dir;
  std::string path = dir.File("telic.sqlite3");
  auto store = std::move(*store::SqliteStore::Open(path));
  ManualClock clock(1764662400000, 1);
  SequentialIdSource ids;
  controller::RunService service(*store, clock, ids, dir.path().string());
  controller::StartRunRequest start;
  start.original_request = "report the greeting";
  start.mode = "report_only";
  auto run = service.StartRun(start);
  ASSERT_TRUE(run);
  auto artifacts = store->ListArtifacts(run->run.run_id);
  ASSERT_TRUE(artifacts);
  const store::ArtifactMeta request = artifacts->front();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string sql = "DROP TRIGGER artifacts_immutable; UPDATE artifacts SET body = '{\"content\":\"changed\"}' WHERE sha256 = '" +
                    request.sha256 + "';";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Sources sources{*store, nullptr, service};
  auto page = ArtifactPage(sources, run->run.run_id, request.id);
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_NE(page->find("✘ integrity check failed"), std::string::npos);
  EXPECT_EQ(page->find("✔ verified"), std::string::npos);
  EXPECT_EQ(page->find("changed"), std::string::npos);  // the tampered body is not shown as the artifact
  auto run_page = RunPage(sources, run->run.run_id);
  ASSERT_TRUE(run_page) << run_page.error().message();
  EXPECT_NE(run_page->find("✘ verify found problems"), std::string::npos);
}

// Issue 19 page 4: the run's tasks (mirrored from its WorkPlans) as a DAG
// with states and dependencies; the standalone graph with a verdict.
TEST_F(UiPagesTest, TasksPageShowsStatesDependenciesAndVerdicts) {
  RunWithClarificationAndDenial();
  const std::string run_id = run_.run().run_id;
  auto page = TasksPage(*sources_, run_id);
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_NE(page->find("plan-diagnosis/diagnose"), std::string::npos);
  EXPECT_NE(page->find("plan-fix/fix"), std::string::npos);
  EXPECT_EQ(Count(*page, "data-state=\"completed\""), 2u);
  EXPECT_NE(page->find("<svg"), std::string::npos);
  EXPECT_NE(page->find("class=\"node task task-completed\""), std::string::npos);

  graph::CreateTaskRequest first;
  first.name = "<b>build</b>";
  first.instructions = "compile";
  auto a = graph_->CreateTask(first);
  ASSERT_TRUE(a) << a.error().message();
  graph::CreateTaskRequest second;
  second.name = "test";
  second.instructions = "run the tests";
  second.depends_on = {a->task_id};
  auto b = graph_->CreateTask(second);
  ASSERT_TRUE(b) << b.error().message();
  ASSERT_TRUE(graph_->Dispatch(std::nullopt, 1));  // a verdict comes from a dispatched task
  auto verdict = graph_->ReportVerdict(a->task_id, false, "missing <i>evidence</i>");
  ASSERT_TRUE(verdict) << verdict.error().message();
  auto standalone = TasksPage(*sources_, std::nullopt);
  ASSERT_TRUE(standalone);
  EXPECT_EQ(standalone->find("<b>build"), std::string::npos);
  EXPECT_NE(standalone->find("&lt;b&gt;build&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(standalone->find("data-from=\"" + a->task_id + "\" data-to=\"" + b->task_id + "\""), std::string::npos);
  EXPECT_NE(standalone->find("<a href=\"#task-" + a->task_id + "\">&lt;b&gt;build&lt;/b&gt;</a>"), std::string::npos);
  EXPECT_NE(standalone->find("missing &lt;i&gt;evidence&lt;/i&gt;"), std::string::npos);
  EXPECT_NE(standalone->find(">rejected<"), std::string::npos);
  EXPECT_EQ(standalone->find("plan-fix/fix"), std::string::npos);  // the run's tasks are not standalone

  auto unknown = TasksPage(*sources_, std::string("no-such-run"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kNotFound);
}

TEST(UiPhaseDiagramTest, EveryEdgeJoinsKnownStatesAndTheCurrentPhaseIsMarked) {
  store::RunRecord run;
  run.run_id = "r";
  run.status = domain::RunStatus::kRunning;
  run.phase = domain::Phase::kAgent1Review;
  std::vector<store::TraceEventRecord> trace(3);
  trace[0].event_type = "run_started";
  trace[0].phase = "context_grounding";
  trace[1].event_type = "phase_submitted";
  trace[1].phase = "context_grounding";
  trace[2].event_type = "permission_checked";  // not a move
  trace[2].phase = "agent_4_execute";
  EXPECT_EQ(PathTaken(run, trace), (std::vector<std::string>{"context_grounding", "agent_1_review"}));
  DagGraph graph = PhaseDiagram(run, trace);
  std::set<std::string> ids;
  for (const auto& node : graph.nodes) ids.insert(node.id);
  for (const auto& edge : PhaseEdges()) {
    EXPECT_TRUE(ids.contains(edge.from)) << edge.from;
    EXPECT_TRUE(ids.contains(edge.to)) << edge.to;
  }
  auto current = std::find_if(graph.nodes.begin(), graph.nodes.end(), [](const DagNode& n) { return n.id == "agent_1_review"; });
  ASSERT_NE(current, graph.nodes.end());
  EXPECT_EQ(current->css_class, "phase taken current");
  EXPECT_EQ(current->title, "agent_1_review");
}

}  // namespace
}  // namespace telic::ui
