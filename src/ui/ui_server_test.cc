// The UI mount over a real HTTP transport: routes, security headers and the
// guard of `telic serve --http` (Host, Origin, bearer token), read-only.
#include "ui/ui_server.h"

#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "base/clock.h"
#include "base/ids.h"
#include "mcp/server.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::ui {
namespace {

constexpr const char* kToken = "correct-horse-battery-staple-42";

class UiServerTest : public ::testing::Test {
 protected:
  // Serves the UI (with /mcp when `with_mcp`) over one stored run.
  void Start(mcp::HttpOptions options = {}, bool with_mcp = false) {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    controller::StartRunRequest start;
    start.original_request = "report <b>the</b> greeting";
    start.mode = "report_only";
    auto run = service_->StartRun(start);
    ASSERT_TRUE(run);
    run_id_ = run->run.run_id;
    sources_ = std::make_unique<Sources>(Sources{*store_, nullptr, *service_});
    options.mounts.push_back(MakeUiMount(*sources_));
    if (with_mcp) {
      server_ = std::make_unique<mcp::Server>(*service_);
      transport_ = std::make_unique<mcp::HttpTransport>(*server_, options);
    } else {
      transport_ = std::make_unique<mcp::HttpTransport>(options);
    }
    auto bound = transport_->Bind();
    ASSERT_TRUE(bound) << bound.error().message();
    thread_ = std::thread([this] { transport_->Run(); });
  }
  void TearDown() override {
    if (transport_) transport_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Client Client() {
    httplib::Client client("127.0.0.1", transport_->port());
    client.set_read_timeout(10, 0);
    return client;
  }
  static void ExpectSecurityHeaders(const httplib::Result& res) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->get_header_value("Content-Security-Policy"), kContentSecurityPolicy);
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(res->get_header_value("X-Frame-Options"), "DENY");
  }

  testing::TempDir dir_;
  ManualClock clock_{1764662400000, 1};
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<Sources> sources_;
  std::unique_ptr<mcp::Server> server_;
  std::unique_ptr<mcp::HttpTransport> transport_;
  std::thread thread_;
  std::string run_id_;
};

TEST_F(UiServerTest, ServesPagesAssetsAndLiveUpdatesWithSecurityHeaders) {
  Start();
  auto client = Client();
  auto runs = client.Get("/ui/");
  ExpectSecurityHeaders(runs);
  EXPECT_EQ(runs->status, 200);
  EXPECT_EQ(runs->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(runs->body.find("report &lt;b&gt;the&lt;/b&gt; greeting"), std::string::npos);
  auto redirect = client.Get("/ui");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(redirect->status, 302);
  EXPECT_EQ(redirect->get_header_value("Location"), "/ui/");

  auto run = client.Get(("/ui/runs/" + run_id_).c_str());
  ExpectSecurityHeaders(run);
  EXPECT_EQ(run->status, 200);
  EXPECT_NE(run->body.find("id=\"timeline-body\""), std::string::npos);
  auto artifact = client.Get(("/ui/runs/" + run_id_ + "/artifacts/" + run_id_).c_str());
  ASSERT_TRUE(artifact);
  EXPECT_EQ(artifact->status, 200);
  auto live = client.Get(("/ui/api/runs/" + run_id_ + "/live?after=1").c_str());
  ExpectSecurityHeaders(live);
  EXPECT_EQ(live->status, 200);
  Json update = Json::parse(live->body);
  EXPECT_EQ(update["after"], 2);
  EXPECT_NE(update["rows"].get<std::string>().find("id=\"event-2\""), std::string::npos);
  auto bad_after = client.Get(("/ui/api/runs/" + run_id_ + "/live?after=x").c_str());
  ASSERT_TRUE(bad_after);
  EXPECT_EQ(bad_after->status, 400);

  auto js = client.Get("/ui/assets/ui.js");
  ExpectSecurityHeaders(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(js->body.find("data-live-url"), std::string::npos);
  auto css = client.Get("/ui/assets/ui.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->get_header_value("Content-Type"), "text/css; charset=utf-8");
}

TEST_F(UiServerTest, UnknownThingsAre404AndBadQueriesAre400) {
  Start();
  auto client = Client();
  for (std::string path : std::vector<std::string>{"/ui/runs/no-such-run", "/ui/runs/" + run_id_ + "/artifacts/nope", "/ui/assets/x.js",
                           "/ui/nothing/here", "/ui/tasks"}) {
    auto res = client.Get(path.c_str());
    ExpectSecurityHeaders(res);
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_NE(res->body.find("id=\"error\""), std::string::npos) << path;
  }
  auto limit = client.Get("/ui/?limit=0");
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->status, 400);
  auto cursor = client.Get("/ui/?before=%3Cscript%3E");
  ASSERT_TRUE(cursor);
  EXPECT_EQ(cursor->status, 400);
  EXPECT_EQ(cursor->body.find("<script>"), std::string::npos);
  EXPECT_NE(cursor->body.find("&lt;script&gt;"), std::string::npos);
  // A filter word none of its vocabulary has is a 400 naming the allowed
  // words, the word shown escaped, never an empty listing.
  for (const std::string& query : std::vector<std::string>{"status=%3Cscript%3Ebogus", "mode=fix%1B%5B2J",
                                                         "topology=" + std::string(3000, 'x')}) {
    auto bad = client.Get(("/ui/?" + query).c_str());
    ASSERT_TRUE(bad) << query;
    EXPECT_EQ(bad->status, 400) << query;
    EXPECT_NE(bad->body.find("must be one of"), std::string::npos) << query;
    EXPECT_EQ(bad->body.find("<script>"), std::string::npos) << query;
    EXPECT_EQ(bad->body.find('\x1b'), std::string::npos) << query;
  }
}

// covers issue 40 item 3: ids in viewer URLs are checked against the identifier grammar before any lookup
TEST_F(UiServerTest, IdsInUrlsThatAreNotIdentifiersAre400) {
  Start();
  auto client = Client();
  std::string long_id(300, 'a');
  for (const auto& [path, which] : std::vector<std::pair<std::string, std::string>>{
           {"/ui/runs/%1B%5D0%3Bpwned%07", "run id"},
           {"/ui/runs/..", "run id"},
           {"/ui/runs/" + long_id + "/tasks", "run id"},
           {"/ui/runs/" + run_id_ + "/artifacts/" + long_id, "artifact id"},
           {"/ui/runs/" + run_id_ + "/artifacts/a%20b", "artifact id"},
           {"/ui/api/runs/.x/live?after=0", "run id"}}) {
    auto res = client.Get(path.c_str());
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 400) << path;
    EXPECT_NE(res->body.find("the " + which + " in the URL is not an identifier"), std::string::npos) << path << res->body;
    EXPECT_EQ(res->body.find('\x1b'), std::string::npos);
  }
  auto fine = client.Get(("/ui/runs/" + run_id_).c_str());
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 200);
}

TEST_F(UiServerTest, ChangesNothing) {
  Start();
  auto client = Client();
  auto before = store_->GetRun(run_id_);
  for (const char* path : {"/ui/", "/ui/runs/x", "/ui/api/runs/x/live"}) {
    auto post = client.Post(path, "{}", "application/json");
    ASSERT_TRUE(post);
    EXPECT_GE(post->status, 400) << path;
    auto del = client.Delete(path);
    ASSERT_TRUE(del);
    EXPECT_GE(del->status, 400) << path;
  }
  EXPECT_EQ(store_->GetRun(run_id_)->version, before->version);
  // Without /mcp the transport has no MCP endpoint at all.
  auto mcp = client.Post("/mcp", "{}", "application/json");
  ASSERT_TRUE(mcp);
  EXPECT_EQ(mcp->status, 404);
}

// The guard of `telic serve --http` (D-series rules of the HTTP transport).
TEST_F(UiServerTest, HostOriginAndTokenRulesApply) {
  mcp::HttpOptions options;
  options.auth_token = kToken;
  Start(options);
  auto client = Client();
  auto anonymous = client.Get("/ui/");
  ExpectSecurityHeaders(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  httplib::Headers bearer = {{"Authorization", std::string("Bearer ") + kToken}};
  auto ok = client.Get("/ui/", bearer);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  httplib::Headers foreign_host = bearer;
  foreign_host.emplace("Host", "attacker.example:80");
  auto host = Client().Get("/ui/", foreign_host);
  ExpectSecurityHeaders(host);
  EXPECT_EQ(host->status, 403);
  httplib::Headers foreign_origin = bearer;
  foreign_origin.emplace("Origin", "http://attacker.example");
  auto origin = Client().Get("/ui/", foreign_origin);
  ASSERT_TRUE(origin);
  EXPECT_EQ(origin->status, 403);
}

TEST_F(UiServerTest, BesideMcpOnlyUiPathsGetThePagePolicy) {
  Start({}, true);
  auto client = Client();
  auto page = client.Get("/ui/");
  ExpectSecurityHeaders(page);
  EXPECT_EQ(page->status, 200);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_FALSE(health->has_header("Content-Security-Policy"));
}

TEST(UiAssetTest, EveryAssetIsEmbeddedWithItsType) {
  auto js = FindAsset("ui.js");
  ASSERT_TRUE(js);
  EXPECT_FALSE(js->content.empty());
  EXPECT_TRUE(FindAsset("ui.css"));
  EXPECT_EQ(FindAsset("favicon.svg")->content_type, "image/svg+xml");
  EXPECT_FALSE(FindAsset("../CMakeLists.txt"));
}

}  // namespace
}  // namespace telic::ui
