// The MCP server core without a transport: lines in, lines out.
#include "mcp/server.h"

#include <gtest/gtest.h>

#include "mcp/jsonrpc.h"
#include "mcp/revision.h"
#include "mcp/tool_output.h"
#include "schema/bundle.h"
#include "schema/registry.h"
#include "store/sqlite_store.h"
#include "store/trace_context.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    server_ = std::make_unique<Server>(*service_);
  }
  Json Reply(const std::string& line) {
    auto reply = server_->HandleLine(line);
    EXPECT_TRUE(reply.has_value()) << line;
    return reply ? Json::parse(*reply) : Json();
  }
  Json Call(const std::string& tool, const Json& arguments) {
    Json request = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
                    {"params", {{"name", tool}, {"arguments", arguments}}}};
    return Reply(request.dump())["result"];
  }
  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<Server> server_;
};

// Issue 42: a refused write about a run is kept in its refused-call log
// with its code, reason and pointers; the run does not move; a refused read
// and a call about no run are not kept.
TEST_F(ServerTest, RefusedWritesAreKeptBesideTheirRun) {
  Json started = Call("telic_start_run", {{"original_request", "Summarize the README"}, {"mode", "report_only"}});
  ASSERT_FALSE(started.contains("isError")) << started.dump();
  const std::string run_id = started["structuredContent"]["run"]["runId"];
  const int64_t version = started["structuredContent"]["run"]["version"];
  Json stale = Call("telic_cancel_run", {{"run_id", run_id}, {"action_id", "action:" + run_id + ":1"},
                                         {"expected_run_version", 7}});
  ASSERT_TRUE(stale.value("isError", false)) << stale.dump();
  Json bad = Call("telic_submit_artifact", {{"run_id", run_id}, {"action_id", "action:" + run_id + ":1"},
                                            {"expected_run_version", 1}, {"artifact_type", "ProblemFrame"},
                                            {"body", {{"id", 7}}}});
  ASSERT_TRUE(bad.value("isError", false)) << bad.dump();
  Json read = Call("telic_get_artifact", {{"run_id", run_id}, {"artifact_id", "no-such-artifact"}});
  ASSERT_TRUE(read.value("isError", false));
  Json nobody = Call("telic_cancel_run", {{"run_id", "no-such-run"}, {"action_id", "a"}, {"expected_run_version", 1}});
  ASSERT_TRUE(nobody.value("isError", false));

  auto refused = store_->ListRefusedCalls(run_id, 0, 100);
  ASSERT_TRUE(refused) << refused.error().message();
  ASSERT_EQ(refused->size(), 2u);
  EXPECT_EQ((*refused)[0].tool, "telic_cancel_run");
  EXPECT_EQ((*refused)[0].code, "stale_version");
  EXPECT_NE((*refused)[0].error.find("Stale run version 7"), std::string::npos) << (*refused)[0].error;
  EXPECT_EQ((*refused)[0].run_version, version);
  EXPECT_EQ((*refused)[1].tool, "telic_submit_artifact");
  EXPECT_EQ((*refused)[1].error, bad["structuredContent"]["error"]);
  EXPECT_EQ(store_->GetRun(run_id)->version, version);
  auto none = store_->ListRefusedCalls("no-such-run", 0, 100);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(ServerTest, NotificationsAndBlankLinesGetNoReply) {
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})"));
  EXPECT_FALSE(server_->HandleLine("   "));
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc":"2.0","id":3,"result":{}})"));
}

TEST_F(ServerTest, RepliesEchoStringAndIntegerIds) {
  EXPECT_EQ(Reply(R"({"jsonrpc":"2.0","id":"abc","method":"ping"})")["id"], "abc");
  EXPECT_EQ(Reply(R"({"jsonrpc":"2.0","id":9007199254740993,"method":"ping"})")["id"].get<uint64_t>(),
            9007199254740993ull);
}

TEST_F(ServerTest, ProtocolErrorsUseJsonRpcCodes) {
  EXPECT_EQ(Reply("{")["error"]["code"], kParseError);
  EXPECT_TRUE(Reply("{")["id"].is_null());
  EXPECT_EQ(Reply("[]")["error"]["code"], kInvalidRequest);
  EXPECT_EQ(Reply(R"({"jsonrpc":"2.0","id":1,"method":"nope"})")["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Reply(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}})")["error"]["code"],
            kInvalidParams);
}

TEST_F(ServerTest, ToolFailuresAreToolResultsWithCodeAndIssues) {
  Json result = Call("telic_get_run", {{"run_id", "bad id"}, {"extra", 1}});
  EXPECT_EQ(result["isError"], true);
  const Json& payload = result["structuredContent"];
  EXPECT_EQ(payload["ok"], false);
  EXPECT_EQ(payload["code"], "invalid_argument");
  ASSERT_EQ(payload["issues"].size(), 2u);
  EXPECT_EQ(Json::parse(result["content"][0]["text"].get<std::string>()), payload);
}

// covers issue 39 item 2: the text block is the compact payload.
TEST_F(ServerTest, SuccessTextIsTheCompactPayload) {
  Json result = Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "plan_only"}});
  ASSERT_FALSE(result.contains("isError"));
  std::string text = result["content"][0]["text"];
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(Json::parse(text), result["structuredContent"]);
  EXPECT_EQ(result["structuredContent"]["ok"], true);
}

// The read tools' written results are kept per run stamp (read_cache.h):
// sent again to later requests, with their ids, while the run is unchanged,
// and never after a write, by this server or by another one on the ledger.
TEST_F(ServerTest, ReadResultsAreSentAgainOnlyWhileTheRunIsUnchanged) {
  Json started = Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "plan_only"}});
  const std::string run_id = started["structuredContent"]["run"]["runId"];
  // Another server with its own caches on the same ledger: what a read answers without this server's cache.
  controller::RunService other_service(*store_, clock_, ids_, dir_.path().string());
  Server other(other_service);
  auto line = [&run_id](Server& server, const std::string& tool, const Json& id) {
    Json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                    {"params", {{"name", tool}, {"arguments", {{"run_id", run_id}}}}}};
    return server.HandleLine(request.dump()).value_or("");
  };
  for (const char* tool : {"telic_get_run", "telic_get_next_action"}) {
    std::string first = line(*server_, tool, 1);
    std::string again = line(*server_, tool, "again");
    ASSERT_EQ(again.rfind(R"({"id":"again",)", 0), 0u) << again.substr(0, 40);
    EXPECT_EQ(again.substr(std::string(R"({"id":"again")").size()), first.substr(std::string(R"({"id":1)").size()))
        << tool;
    EXPECT_EQ(first, line(other, tool, 1)) << tool;
  }
  // A write by the other server: this one's next reads show it.
  Json action = Json::parse(line(other, "telic_get_next_action", 2))["result"]["structuredContent"]["nextAction"];
  std::string before_run = line(*server_, "telic_get_run", 3), before_action = line(*server_, "telic_get_next_action", 3);
  Json cancel = {{"run_id", run_id},
                 {"action_id", action["id"]},
                 {"expected_run_version", started["structuredContent"]["run"]["version"]}};
  Json cancelled = other.CallTool("telic_cancel_run", &cancel).value();
  ASSERT_FALSE(cancelled.contains("isError")) << cancelled.dump();
  std::string after_run = line(*server_, "telic_get_run", 3), after_action = line(*server_, "telic_get_next_action", 3);
  EXPECT_EQ(after_run, line(other, "telic_get_run", 3));
  EXPECT_EQ(after_action, line(other, "telic_get_next_action", 3));
  EXPECT_NE(after_run, before_run);
  EXPECT_NE(after_action, before_action);
  EXPECT_NE(after_run.find(R"("status":"cancelled")"), std::string::npos);
}

TEST_F(ServerTest, DefaultsAreAppliedBeforeTheHandlerRuns) {
  Json result = Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"}});
  std::string run_id = result["structuredContent"]["run"]["runId"];
  auto envelope = store_->GetArtifact(run_id, run_id);
  ASSERT_TRUE(envelope);
  Json body = Json::parse(envelope->canonical_body);
  EXPECT_EQ(body["host"]["name"], "mcp-host");
  EXPECT_EQ(body["host"]["nativeSubagents"], "unknown");
  EXPECT_EQ(body["host"]["capabilities"], Json::array({"repository.read"}));
}

// Listed input schemas are self-contained and leave the closing
// `additionalProperties: false` to the server, which refuses an unknown
// argument by name (the reference's unrecognized_keys issue).
TEST_F(ServerTest, ToolsListSchemasAreSelfContainedAndTheServerStillClosesThem) {
  Json tools = server_->ListTools();
  for (const Json& tool : tools) {
    const Json& schema = tool["inputSchema"];
    EXPECT_FALSE(schema.contains("additionalProperties")) << tool["name"];
    EXPECT_EQ(schema.dump().find("common.json"), std::string::npos) << tool["name"];
  }
  Json refused = Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"},
                                          {"not_an_argument", 1}});
  EXPECT_TRUE(refused.value("isError", false)) << refused;
  const Json& issue = refused["structuredContent"]["issues"][0];
  EXPECT_EQ(issue["code"], "unrecognized_keys") << refused;
  EXPECT_NE(issue["message"].get<std::string>().find("not_an_argument"), std::string::npos) << refused;
}

// tools/list's reply splices the entries' kept text into the reply: byte for
// byte what serialising the whole result writes, whatever the request id
// (also one that holds the bytes the splice looks for), in both revisions.
TEST_F(ServerTest, ToolListReplyIsTheSerialisedResultForEveryId) {
  for (const Json& id : {Json(1), Json("abc"), Json(nullptr), Json(R"("tools":[] "tools":[])"), Json(9007199254740993ull)}) {
    EXPECT_EQ(server_->ToolListReply(id, false), ResultResponse(id, Json{{"tools", server_->ListTools()}})) << id;
    EXPECT_EQ(server_->ToolListReply(id, true),
              ResultResponse(id, ModernResult(Json{{"tools", server_->ListTools()}}, kStaticList)))
        << id;
  }
  Json reply = Reply(R"({"jsonrpc":"2.0","id":"\"tools\":[]","method":"tools/list"})");
  EXPECT_EQ(reply["id"], "\"tools\":[]");
  EXPECT_EQ(reply["result"]["tools"], server_->ListTools());
}

// The entries are assembled from schema bundles made at build time: each
// entry's schemas are what bundling at run time gives, and the reply's text is
// what serialising those entries writes.
TEST_F(ServerTest, ToolListTextIsTheRunTimeBundlesSerialised) {
  Json expected = server_->ListTools();
  ASSERT_GT(expected.size(), 5u);
  for (Json& entry : expected) {
    std::string name = entry["name"];
    auto input = schema::BundleToolInputForListing(schema::Registry::Default(), "tools/" + name + ".json");
    ASSERT_TRUE(input) << name;
    entry["inputSchema"] = *input;
    auto output = schema::BundleToolOutputForListing(schema::Registry::Default(), "results/" + name + ".json");
    ASSERT_TRUE(output) << name;
    entry["outputSchema"] = *output;
  }
  EXPECT_EQ(server_->ToolListReply(7, false), ResultResponse(7, Json{{"tools", expected}}));
}

// Tools added after a tools/list are listed by the next one.
TEST_F(ServerTest, AddingToolsRebuildsTheList) {
  size_t before = server_->ListTools().size();
  ToolSpec extra = {};
  extra.name = "telic_extra_for_test";
  extra.title = "Extra";
  extra.description = "A tool added after the list was built.";
  extra.schema_path = "tools/telic_list_runs.json";
  extra.handler = [](const Json&) -> Result<Json> { return Json{{"ok", true}}; };
  server_->AddTools({extra});
  Json tools = server_->ListTools();
  ASSERT_EQ(tools.size(), before + 1);
  EXPECT_EQ(tools.back()["name"], "telic_extra_for_test");
  EXPECT_NE(server_->ToolListReply(1, false).find("telic_extra_for_test"), std::string::npos);
}

// covers issue 20 item 6: the trace events a request causes record its
// traceparent; a later request without one records none.
TEST_F(ServerTest, TraceparentInMetaLandsOnTheEventsOfThatRequest) {
  const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  Json request = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
                  {"params", {{"name", "telic_start_run"},
                              {"arguments", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"}}},
                              {"_meta", {{"traceparent", parent}}}}}};
  Json started = Reply(request.dump())["result"]["structuredContent"];
  std::string run_id = started["run"]["runId"];
  Json check = {{"run_id", run_id}, {"action_id", started["nextAction"]["id"]},
                {"expected_run_version", started["run"]["version"]}, {"capability", "repository.read"}};
  Call("telic_check_tool_action", check);
  auto trace = store_->GetTrace(run_id, 0, 100);
  ASSERT_TRUE(trace);
  ASSERT_GE(trace->events.size(), 2u);
  for (size_t i = 0; i + 1 < trace->events.size(); ++i) EXPECT_EQ(trace->events[i].traceparent, parent) << i;
  EXPECT_EQ(trace->events.back().event_type, "broker_decision");
  EXPECT_FALSE(trace->events.back().traceparent.has_value());
  EXPECT_EQ(Reply(request.dump())["result"]["structuredContent"]["ok"], true);
  EXPECT_FALSE(store::CurrentTraceContext().has_value()) << "the scope ends with the request";
}

// The server builds NextActions with served-schema references
// (RunService::set_action_schemas) and writes or expands them: every line it
// sends, on the written path (HandleLine) and the dump() path (CallTool),
// is byte for byte the line of a server whose service copies the schemas;
// so is a run:// resource (written with dump()).
TEST_F(ServerTest, SchemaReferencesChangeNoByteOfAnyReply) {
  auto copies_store = std::move(*store::SqliteStore::Open(dir_.File("copies.sqlite3")));
  ManualClock copies_clock(1764662400000, 1);
  SequentialIdSource copies_ids;
  controller::RunService copies_service(*copies_store, copies_clock, copies_ids, dir_.path().string());
  Server copies(copies_service);
  copies_service.set_action_schemas(controller::ActionSchemas::kCopies);

  auto line = [](int id, const std::string& tool, const Json& arguments) {
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                {"params", {{"name", tool}, {"arguments", arguments}}}}.dump();
  };
  auto both = [&](const std::string& request) {
    auto with_references = server_->HandleLine(request);
    auto with_copies = copies.HandleLine(request);
    EXPECT_TRUE(with_references && with_copies) << request;
    EXPECT_EQ(with_references.value_or(""), with_copies.value_or("")) << request;
    return Json::parse(with_copies.value_or("null"));
  };
  Json started = both(line(1, "telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "plan_only"}}));
  const Json& run = started["result"]["structuredContent"]["run"];
  std::string run_id = run["runId"];
  ASSERT_NE(both(line(2, "telic_get_run", {{"run_id", run_id}})).dump().find("requiredOutputSchema"), std::string::npos);
  both(line(3, "telic_get_next_action", {{"run_id", run_id}}));
  both(line(4, "telic_get_next_action", {{"run_id", run_id}}));  // the kept result
  both(line(5, "telic_submit_artifact", {{"run_id", run_id}, {"action_id", "action:" + run_id + ":1"},
                                          {"expected_run_version", 1}, {"artifact_type", "ContextManifest"},
                                          {"body", Json::object()}}));
  both(line(6, "telic_cancel_run", {{"run_id", run_id}, {"action_id", "action:" + run_id + ":1"},
                                     {"expected_run_version", 1}}));
  both(line(7, "telic_get_run", {{"run_id", run_id}}));
  // run:// resources are the get_run payload written with dump().
  Json second = both(line(8, "telic_start_run", {{"original_request", "Plan a change"}, {"mode", "plan_only"}}));
  std::string second_id = second["result"]["structuredContent"]["run"]["runId"];
  Json read = {{"jsonrpc", "2.0"}, {"id", 9}, {"method", "resources/read"}, {"params", {{"uri", "run://" + second_id}}}};
  Json resource = both(read.dump());
  std::string text = resource["result"]["contents"][0]["text"];
  EXPECT_EQ(Json::parse(text)["nextAction"]["requiredOutputSchema"]["title"], "ContextManifest");

  Json arguments = {{"original_request", "Plan another change"}, {"mode", "plan_only"}};
  auto with_references = server_->CallTool("telic_start_run", &arguments);
  auto with_copies = copies.CallTool("telic_start_run", &arguments);
  ASSERT_TRUE(with_references && with_copies);
  EXPECT_EQ(with_references->dump(), with_copies->dump());
  EXPECT_EQ(with_references->dump().find("\"subtype\""), std::string::npos);
}

}  // namespace
}  // namespace telic::mcp
