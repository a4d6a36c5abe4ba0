// Revision 2026-07-28 beside the legacy revisions: per-request selection,
// header checks, resources and completion, subscriptions.
#include "mcp/revision.h"

#include <gtest/gtest.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

Json ModernMeta(const std::string& version = kModernRevision) {
  return {{kMetaProtocolVersion, version}, {kMetaClientCapabilities, Json::object()},
          {kMetaClientInfo, {{"name", "unit"}, {"version", "1"}}}};
}

Json ModernParams(Json params = Json::object()) {
  params["_meta"] = ModernMeta();
  return params;
}

TEST(RevisionTest, RequestsWithoutProtocolVersionMetaAreLegacy) {
  auto context = ReadRequestContext(1, Json{{"name", "x"}});
  ASSERT_TRUE(std::holds_alternative<RequestContext>(context));
  EXPECT_FALSE(std::get<RequestContext>(context).modern);
  // A legacy revision named in _meta is served as that revision (D-MCP2).
  auto named = ReadRequestContext(1, Json{{"_meta", ModernMeta("2025-11-25")}});
  ASSERT_TRUE(std::holds_alternative<RequestContext>(named));
  EXPECT_FALSE(std::get<RequestContext>(named).modern);
}

TEST(RevisionTest, ModernMetaCarriesCapabilitiesAndTraceContext) {
  Json meta = ModernMeta();
  meta[kMetaClientCapabilities] = {{"elicitation", Json::object()}};
  meta["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto context = ReadRequestContext(1, Json{{"_meta", meta}});
  ASSERT_TRUE(std::holds_alternative<RequestContext>(context));
  const RequestContext& request = std::get<RequestContext>(context);
  EXPECT_TRUE(request.modern);
  EXPECT_TRUE(request.SupportsFormElicitation());
  EXPECT_EQ(request.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_EQ(request.client_info["name"], "unit");
}

TEST(RevisionTest, InvalidTraceparentIsIgnored) {
  Json meta = ModernMeta();
  for (const char* bad : {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "garbage",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}) {
    meta["traceparent"] = bad;
    auto context = ReadRequestContext(1, Json{{"_meta", meta}});
    EXPECT_FALSE(std::get<RequestContext>(context).traceparent.has_value()) << bad;
  }
}

// covers issue 20 item 6: legacy requests carry trace context in _meta too;
// a tracestate is kept only when valid and free of anything redaction removes.
TEST(RevisionTest, TraceContextIsReadInEveryEraAndTracestateIsCheckedAlone) {
  const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto legacy = ReadRequestContext(1, Json{{"_meta", {{"traceparent", parent}, {"tracestate", "rojo=00f067aa0ba902b7"}}}});
  ASSERT_TRUE(std::holds_alternative<RequestContext>(legacy));
  EXPECT_FALSE(std::get<RequestContext>(legacy).modern);
  EXPECT_EQ(std::get<RequestContext>(legacy).traceparent, parent);
  EXPECT_EQ(std::get<RequestContext>(legacy).tracestate, "rojo=00f067aa0ba902b7");
  for (const Json& bad : {Json("Rojo=1"), Json("k=" + std::string(300, 'a')), Json(7),
                          Json("k=ghp_abcdefghijklmnopqrstuvwxyz0123456789")}) {
    auto context = ReadRequestContext(1, Json{{"_meta", {{"traceparent", parent}, {"tracestate", bad}}}});
    EXPECT_EQ(std::get<RequestContext>(context).traceparent, parent) << bad;
    EXPECT_FALSE(std::get<RequestContext>(context).tracestate.has_value()) << bad;
  }
  auto orphan = ReadRequestContext(1, Json{{"_meta", {{"traceparent", "garbage"}, {"tracestate", "rojo=1"}}}});
  EXPECT_FALSE(std::get<RequestContext>(orphan).traceparent.has_value());
  EXPECT_FALSE(std::get<RequestContext>(orphan).tracestate.has_value());
}

TEST(RevisionTest, UnknownVersionIsRefusedWithTheSupportedList) {
  auto context = ReadRequestContext("a", Json{{"_meta", ModernMeta("1900-01-01")}});
  ASSERT_TRUE(std::holds_alternative<std::string>(context));
  Json reply = Json::parse(std::get<std::string>(context));
  EXPECT_EQ(reply["id"], "a");
  EXPECT_EQ(reply["error"]["code"], kUnsupportedProtocolVersion);
  EXPECT_EQ(reply["error"]["code"], -32022);
  EXPECT_EQ(reply["error"]["data"]["requested"], "1900-01-01");
  EXPECT_EQ(reply["error"]["data"]["supported"][0], "2026-07-28");
  EXPECT_EQ(reply["error"]["data"]["supported"][1], "2025-11-25");
  EXPECT_EQ(ModernHttpStatus(std::get<std::string>(context)), 400);
}

TEST(RevisionTest, NonObjectCapabilitiesAreInvalidParams) {
  Json meta = ModernMeta();
  meta[kMetaClientCapabilities] = "all";
  auto context = ReadRequestContext(1, Json{{"_meta", meta}});
  ASSERT_TRUE(std::holds_alternative<std::string>(context));
  EXPECT_EQ(Json::parse(std::get<std::string>(context))["error"]["code"], kInvalidParams);
}

MirroredHeaders GoodHeaders(const std::string& method, std::optional<std::string> name = std::nullopt) {
  MirroredHeaders headers;
  headers.protocol_version = kModernRevision;
  headers.method = method;
  headers.name = std::move(name);
  return headers;
}

int MismatchCode(const std::optional<std::string>& reply) {
  return reply ? Json::parse(*reply)["error"]["code"].get<int>() : 0;
}

TEST(RevisionTest, MirroredHeadersMustMatchTheBody) {
  Json params = ModernParams({{"name", "telic_list_runs"}});
  EXPECT_FALSE(CheckMirroredHeaders(GoodHeaders("tools/call", "telic_list_runs"), 1, "tools/call", params));
  // Missing headers.
  MirroredHeaders no_version = GoodHeaders("tools/call", "telic_list_runs");
  no_version.protocol_version.reset();
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(no_version, 1, "tools/call", params)), kHeaderMismatch);
  MirroredHeaders no_method = GoodHeaders("tools/call", "telic_list_runs");
  no_method.method.reset();
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(no_method, 1, "tools/call", params)), kHeaderMismatch);
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(GoodHeaders("tools/call"), 1, "tools/call", params)), kHeaderMismatch);
  // Mismatched values.
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(GoodHeaders("tools/list", "telic_list_runs"), 1, "tools/call", params)),
            kHeaderMismatch);
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(GoodHeaders("tools/call", "telic_get_run"), 1, "tools/call", params)),
            kHeaderMismatch);
  MirroredHeaders other_version = GoodHeaders("tools/call", "telic_list_runs");
  other_version.protocol_version = "2025-11-25";
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(other_version, 1, "tools/call", params)), kHeaderMismatch);
  MirroredHeaders twice = GoodHeaders("tools/call", "telic_list_runs");
  twice.duplicated = true;
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(twice, 1, "tools/call", params)), kHeaderMismatch);
  // Methods without a name need no Mcp-Name.
  EXPECT_FALSE(CheckMirroredHeaders(GoodHeaders("tools/list"), 1, "tools/list", ModernParams()));
  EXPECT_EQ(ModernHttpStatus(*CheckMirroredHeaders(no_method, 1, "tools/call", params)), 400);
}

TEST(RevisionTest, McpNameMayBeBase64Encoded) {
  Json params = ModernParams({{"uri", "artifact://run-1/Δ"}});
  // "artifact://run-1/Δ" in UTF-8, base64.
  EXPECT_FALSE(CheckMirroredHeaders(GoodHeaders("resources/read", "=?base64?YXJ0aWZhY3Q6Ly9ydW4tMS/OlA==?="), 1,
                                    "resources/read", params));
  EXPECT_EQ(MismatchCode(CheckMirroredHeaders(GoodHeaders("resources/read", "=?base64?!!!!?="), 1, "resources/read", params)),
            kHeaderMismatch);
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="), "Hello, 世界");
  EXPECT_EQ(DecodeHeaderValue("us-west1"), "us-west1");
  EXPECT_FALSE(DecodeHeaderValue("=?base64?abc?="));
}

TEST(RevisionTest, MethodsOfEachEra) {
  for (const char* removed : {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}) {
    EXPECT_FALSE(MethodExistsIn(true, removed)) << removed;
    EXPECT_TRUE(MethodExistsIn(false, removed)) << removed;
  }
  for (const char* added : {"server/discover", "subscriptions/listen"}) {
    EXPECT_TRUE(MethodExistsIn(true, added)) << added;
    EXPECT_FALSE(MethodExistsIn(false, added)) << added;
  }
  EXPECT_EQ(ModernHttpStatus(ErrorResponse(1, kMethodNotFound, "Method not found")), 404);
  EXPECT_EQ(ModernHttpStatus(ResultResponse(1, Json::object())), 200);
}

class ModernServerTest : public ::testing::Test {
 protected:
  ModernServerTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    server_ = std::make_unique<Server>(*service_);
    server_->set_output([this](const std::string& line) { output_.push_back(Json::parse(line)); });
  }
  Json Request(const std::string& method, const Json& params, bool modern = true) {
    Json message = {{"jsonrpc", "2.0"}, {"id", 7}, {"method", method}, {"params", modern ? ModernParams(params) : params}};
    auto reply = server_->HandleLine(message.dump());
    EXPECT_TRUE(reply.has_value()) << method;
    return reply ? Json::parse(*reply) : Json();
  }
  std::string StartRun(bool modern) {
    Json result = Request("tools/call", {{"name", "telic_start_run"},
                                         {"arguments", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"}}}},
                          modern);
    return result["result"]["structuredContent"]["run"]["runId"];
  }
  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<Server> server_;
  std::vector<Json> output_;
};

TEST_F(ModernServerTest, DiscoverAdvertisesVersionsCapabilitiesAndIdentity) {
  Json result = Request("server/discover", Json::object())["result"];
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["supportedVersions"][0], "2026-07-28");
  EXPECT_EQ(result["_meta"][kMetaServerInfo]["name"], "telic");
  EXPECT_TRUE(result["capabilities"].contains("resources"));
  EXPECT_TRUE(result["capabilities"].contains("completions"));
  EXPECT_FALSE(result["capabilities"].contains("logging"));  // 2026-07-28 removed logging/setLevel
  EXPECT_EQ(result["cacheScope"], "public");
  EXPECT_TRUE(result["ttlMs"].is_number_integer());
  // server/discover is not a legacy method.
  EXPECT_EQ(Request("server/discover", Json::object(), false)["error"]["code"], kMethodNotFound);
}

TEST_F(ModernServerTest, EveryModernResultCarriesResultTypeAndListsCarryCacheHints) {
  for (const char* method : {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}) {
    Json result = Request(method, Json::object())["result"];
    EXPECT_EQ(result["resultType"], "complete") << method;
    EXPECT_TRUE(result.contains("ttlMs") && result.contains("cacheScope")) << method;
  }
  Json call = Request("tools/call", {{"name", "telic_list_runs"}, {"arguments", Json::object()}})["result"];
  EXPECT_EQ(call["resultType"], "complete");
  // The legacy answer is unchanged: no resultType, no cache hints.
  Json legacy = Request("tools/list", Json::object(), false)["result"];
  EXPECT_FALSE(legacy.contains("resultType"));
  EXPECT_FALSE(legacy.contains("ttlMs"));
}

TEST_F(ModernServerTest, RemovedMethodsAreNotFoundInTheModernEra) {
  EXPECT_EQ(Request("ping", Json::object())["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Request("logging/setLevel", {{"level", "info"}})["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Request("resources/subscribe", {{"uri", "run://x"}})["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Request("ping", Json::object(), false)["result"], Json::object());
  EXPECT_EQ(Request("logging/setLevel", {{"level", "info"}}, false)["result"], Json::object());
  EXPECT_EQ(Request("logging/setLevel", {{"level", "loud"}}, false)["error"]["code"], kInvalidParams);
}

TEST_F(ModernServerTest, ArtifactsRunsAndTracesAreResources) {
  std::string run_id = StartRun(true);
  Json list = Request("resources/list", Json::object())["result"]["resources"];
  std::vector<std::string> uris;
  for (const auto& resource : list) uris.push_back(resource["uri"]);
  EXPECT_NE(std::find(uris.begin(), uris.end(), "run://" + run_id), uris.end());
  EXPECT_NE(std::find(uris.begin(), uris.end(), "trace://" + run_id), uris.end());
  std::string artifact_uri = "artifact://" + run_id + "/" + run_id;
  EXPECT_NE(std::find(uris.begin(), uris.end(), artifact_uri), uris.end());

  Json read = Request("resources/read", {{"uri", artifact_uri}})["result"];
  EXPECT_EQ(read["contents"][0]["uri"], artifact_uri);
  EXPECT_EQ(read["contents"][0]["text"], store_->GetArtifact(run_id, run_id)->canonical_body);
  EXPECT_EQ(read["cacheScope"], "private");
  Json run = Json::parse(Request("resources/read", {{"uri", "run://" + run_id}})["result"]["contents"][0]["text"].get<std::string>());
  EXPECT_EQ(run["run"]["runId"], run_id);
  Json trace = Json::parse(Request("resources/read", {{"uri", "trace://" + run_id}})["result"]["contents"][0]["text"].get<std::string>());
  EXPECT_FALSE(trace["events"].empty());
}

TEST_F(ModernServerTest, UnknownResourcesUseEachEraErrorCode) {
  EXPECT_EQ(Request("resources/read", {{"uri", "artifact://nope/nope"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request("resources/read", {{"uri", "artifact://nope/nope"}}, false)["error"]["code"], kLegacyResourceNotFound);
  EXPECT_EQ(Request("resources/read", {{"uri", "file:///etc/passwd"}}, false)["error"]["code"], kLegacyResourceNotFound);
  EXPECT_EQ(Request("resources/read", {{"uri", "run://../x"}})["error"]["code"], kInvalidParams);
}

TEST_F(ModernServerTest, ResourceListIsPaged) {
  std::vector<std::string> runs;
  for (int i = 0; i < 21; ++i) runs.push_back(StartRun(false));
  Json first = Request("resources/list", Json::object())["result"];
  ASSERT_TRUE(first.contains("nextCursor"));
  Json second = Request("resources/list", {{"cursor", first["nextCursor"]}})["result"];
  EXPECT_FALSE(second.contains("nextCursor"));
  std::set<std::string> seen;
  for (const Json* page : {&first, &second}) {
    for (const auto& resource : (*page)["resources"]) {
      std::string uri = resource["uri"];
      EXPECT_TRUE(seen.insert(uri).second) << "listed twice: " << uri;
    }
  }
  for (const auto& run : runs) EXPECT_TRUE(seen.count("run://" + run)) << run;
  EXPECT_EQ(Request("resources/list", {{"cursor", "bogus"}})["error"]["code"], kInvalidParams);
}

TEST_F(ModernServerTest, CompletionCompletesRunAndArtifactIds) {
  std::string run_id = StartRun(true);
  Json ref = {{"type", "ref/resource"}, {"uri", "artifact://{run_id}/{artifact_id}"}};
  Json runs = Request("completion/complete", {{"ref", ref}, {"argument", {{"name", "run_id"}, {"value", run_id.substr(0, 3)}}}})["result"];
  EXPECT_EQ(runs["completion"]["values"], Json::array({run_id}));
  Json none = Request("completion/complete", {{"ref", ref}, {"argument", {{"name", "run_id"}, {"value", "zzz"}}}})["result"];
  EXPECT_TRUE(none["completion"]["values"].empty());
  Json artifacts = Request("completion/complete", {{"ref", ref},
                                                   {"argument", {{"name", "artifact_id"}, {"value", ""}}},
                                                   {"context", {{"arguments", {{"run_id", run_id}}}}}},
                           false)["result"];
  std::vector<std::string> values = artifacts["completion"]["values"];
  EXPECT_NE(std::find(values.begin(), values.end(), run_id), values.end());  // the envelope's id is the run id
  EXPECT_EQ(values.size(), service_->GetRun(run_id)->artifacts.size());
  EXPECT_EQ(Request("completion/complete", {{"ref", ref}})["error"]["code"], kInvalidParams);
}

TEST_F(ModernServerTest, ListenAcknowledgesAndDeliversOptedInNotifications) {
  Json message = {{"jsonrpc", "2.0"}, {"id", "sub-1"}, {"method", "subscriptions/listen"},
                  {"params", ModernParams({{"notifications", {{"resourcesListChanged", true}, {"toolsListChanged", true}}}})}};
  EXPECT_FALSE(server_->HandleLine(message.dump()).has_value());  // the stream stays open
  ASSERT_EQ(output_.size(), 1u);
  EXPECT_EQ(output_[0]["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ(output_[0]["params"]["_meta"][kMetaSubscriptionId], "sub-1");
  EXPECT_EQ(output_[0]["params"]["notifications"]["resourcesListChanged"], true);
  StartRun(true);
  ASSERT_EQ(output_.size(), 2u);
  EXPECT_EQ(output_[1]["method"], "notifications/resources/list_changed");
  EXPECT_EQ(output_[1]["params"]["_meta"][kMetaSubscriptionId], "sub-1");
  // notifications/cancelled ends the stream: nothing more is delivered.
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1"}})"));
  StartRun(true);
  EXPECT_EQ(output_.size(), 2u);
  EXPECT_EQ(server_->hub().listener_count(), 0u);
}

TEST_F(ModernServerTest, ResourceSubscriptionsSeeTheirRunChange) {
  std::string run_id = StartRun(false);
  Request("resources/subscribe", {{"uri", "run://" + run_id}}, false);
  Json cancel = {{"name", "telic_cancel_run"}, {"arguments", {{"run_id", run_id}, {"action_id", "x"}, {"expected_run_version", 1}}}};
  Json detail = Request("tools/call", {{"name", "telic_get_run"}, {"arguments", {{"run_id", run_id}}}}, false);
  cancel["arguments"]["action_id"] = detail["result"]["structuredContent"]["nextAction"]["id"];
  cancel["arguments"]["expected_run_version"] = detail["result"]["structuredContent"]["run"]["version"];
  output_.clear();
  Json cancelled = Request("tools/call", cancel, false);
  ASSERT_FALSE(cancelled["result"].contains("isError")) << cancelled.dump();
  ASSERT_EQ(output_.size(), 1u);
  EXPECT_EQ(output_[0]["method"], "notifications/resources/updated");
  EXPECT_EQ(output_[0]["params"]["uri"], "run://" + run_id);
}

TEST_F(ModernServerTest, ListenRefusesAMalformedFilter) {
  Json reply = Request("subscriptions/listen", {{"notifications", {{"toolsListChanged", "yes"}}}});
  EXPECT_EQ(reply["error"]["code"], kInvalidParams);
  EXPECT_EQ(Request("subscriptions/listen", Json::object())["error"]["code"], kInvalidParams);
}

}  // namespace
}  // namespace telic::mcp
