// The tools/call response line written without a result tree
// (mcp/result_writer.h): the envelope and structuredContent are the bytes
// nlohmann's dump() wrote before, and the text puts short fields first in the
// reference's order (issue 22 item 5) with every other object as before.
#include "mcp/result_writer.h"

#include <gtest/gtest.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "schema/host_schemas.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

using Ordered = nlohmann::ordered_json;

// An independent oracle of the text order: nlohmann's insertion-ordered JSON
// built with `first` keys first, the rest sorted, then dumped by nlohmann.
Ordered InOrder(const Json& value, const std::string& path) {
  static const std::map<std::string, std::vector<std::string>> kFirst = {
      {"", {"ok", "error", "code", "issues", "run", "artifact", "artifacts", "events", "hasMore", "nextAction",
            "manifest"}},
      {"/run", {"runId", "schemaVersion", "repositoryRoot", "requestedMode", "topology", "escalationCount",
                "priorRunId", "status", "phase", "resumePhase", "version", "budgets", "outcomeHint", "createdAt",
                "updatedAt"}},
      {"/run/budgets", {"promptRevisionsRemaining", "postExecutionRemediationsRemaining"}},
      {"/nextAction", {"schemaVersion", "id", "runId", "createdAt", "rationaleSummary", "kind", "phase",
                       "logicalRole", "instructionRef", "inputRefs", "contextManifestRef", "requiredOutputType",
                       "requiredOutputSchema", "additionalOutputSchemas", "workNodeId", "effectivePermissions",
                       "remainingBudgets", "stopConditions"}}};
  if (value.is_array()) {
    Ordered out = Ordered::array();
    for (const Json& item : value) out.push_back(InOrder(item, "#"));
    return out;
  }
  if (!value.is_object()) return Ordered::parse(value.dump());
  Ordered out = Ordered::object();
  auto first = kFirst.find(path);
  if (first != kFirst.end()) {
    for (const std::string& key : first->second) {
      if (value.contains(key)) out[key] = InOrder(value.at(key), path + "/" + key);
    }
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!out.contains(it.key())) out[it.key()] = InOrder(*it, path + "/" + it.key());
  }
  return out;
}

class ResultWriterTest : public ::testing::Test {
 protected:
  ResultWriterTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    server_ = std::make_unique<Server>(*service_);
  }
  std::string CallLine(const std::string& tool, const Json& arguments) {
    Json request = {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"},
                    {"params", {{"name", tool}, {"arguments", arguments}}}};
    auto reply = server_->HandleLine(request.dump());
    EXPECT_TRUE(reply.has_value());
    return reply.value_or("");
  }
  // The line is nlohmann's compact dump of itself (envelope and
  // structuredContent unchanged), and its text is the oracle's order.
  void ExpectWireForm(const std::string& line, bool pretty) {
    Json reply = Json::parse(line);
    EXPECT_EQ(line, Compact(reply));
    const Json& result = reply.at("result");
    const std::string& text = result.at("content").at(0).at("text").get_ref<const std::string&>();
    EXPECT_EQ(Json::parse(text), result.at("structuredContent"));
    EXPECT_EQ(text, InOrder(result.at("structuredContent"), "").dump(pretty ? 2 : -1, ' ', false,
                                                                      Ordered::error_handler_t::replace));
  }
  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<Server> server_;
};

TEST_F(ResultWriterTest, StartRunAndGetRunPutShortFieldsBeforeTheSchemas) {
  std::string line = CallLine("telic_start_run", {{"original_request", "Explain what src/app.ts does \"quoted\"\n"},
                                                  {"mode", "plan_only"}});
  ExpectWireForm(line, false);
  Json result = Json::parse(line).at("result");
  const std::string text = result.at("content").at(0).at("text").get<std::string>();
  EXPECT_EQ(text.rfind("{\"ok\":true,\"run\":{\"runId\":", 0), 0u) << text.substr(0, 200);
  auto type = text.find("\"requiredOutputType\"");
  auto schema = text.find("\"requiredOutputSchema\"");
  ASSERT_NE(type, std::string::npos);
  EXPECT_LT(type, schema);
  EXPECT_LT(type, 4096u);  // a host that keeps 4 KB of the text still sees what to produce
  const std::string run_id = result.at("structuredContent").at("run").at("runId").get<std::string>();
  ExpectWireForm(CallLine("telic_get_run", {{"run_id", run_id}}), false);
  ExpectWireForm(CallLine("telic_get_next_action", {{"run_id", run_id}}), false);
  ExpectWireForm(CallLine("telic_get_trace", {{"run_id", run_id}}), false);
}

TEST_F(ResultWriterTest, ErrorsAreCompactWithOkFirst) {
  std::string line = CallLine("telic_get_run", {{"run_id", "no-such-run"}});
  ExpectWireForm(line, false);
  Json result = Json::parse(line).at("result");
  EXPECT_EQ(result.at("isError"), true);
  EXPECT_EQ(result.at("content").at(0).at("text").get<std::string>().rfind("{\"ok\":false,\"error\":", 0), 0u);
}

TEST_F(ResultWriterTest, PrecomputedSchemaTextIsWhatDumpWritesAtEveryDepth) {
  for (const char* type : {"ContextManifest", "WorkPlan", "Evidence", "ClarificationRequest"}) {
    SCOPED_TRACE(type);
    auto schema = schema::ArtifactHostSchema(type);
    ASSERT_TRUE(schema.has_value()) << schema.error().message();
    EXPECT_EQ((*schema)->compact(), Compact((*schema)->json()));
    for (int depth = 0; depth < 10; ++depth) {
      // The schema `depth` levels deep inside a pretty document.
      Json doc = (*schema)->json();
      for (int i = 0; i < depth; ++i) doc = Json{{"k", doc}};
      std::string dumped = doc.dump(2);
      std::string expected = (*schema)->json().dump(2);
      std::string indented;
      for (char c : expected) {
        indented.push_back(c);
        if (c == '\n') indented.append(2 * static_cast<size_t>(depth), ' ');
      }
      EXPECT_EQ((*schema)->pretty(depth), indented);
      EXPECT_NE(dumped.find(indented), std::string::npos);
      // Its escaped form is the inside of the string literal nlohmann writes.
      EXPECT_EQ("\"" + std::string((*schema)->pretty_escaped(depth)) + "\"", Json(indented).dump());
    }
  }
}

// A schema that differs from the served one is serialised, not replaced.
TEST(ResultWriterStandaloneTest, AChangedSchemaIsWrittenAsItIs) {
  auto schema = schema::ArtifactHostSchema("WorkPlan");
  ASSERT_TRUE(schema.has_value());
  Json changed = (*schema)->json();
  changed["description"] = "changed";
  Json payload = {{"ok", true}, {"nextAction", {{"requiredOutputType", "WorkPlan"}, {"requiredOutputSchema", changed},
                                                {"additionalOutputSchemas", {{"WorkPlan", (*schema)->json()}}}}}};
  EXPECT_EQ(Json::parse(ToolResultText(payload, true)), payload);
  std::string line = ToolResultLine(1, payload, "t", false);
  EXPECT_EQ(Json::parse(line).at("result").at("structuredContent"), payload);
  EXPECT_NE(line.find("\"changed\""), std::string::npos);
}

// ToolResultBody(payload, is_error) carries the compact text of the payload
// (issue 39), with schemas given as references and as copies, beside strings
// that need escapes, non-ASCII and invalid UTF-8, and for errors.
TEST(ResultWriterStandaloneTest, ABodyCarriesTheCompactTextOfItsPayload) {
  auto work_plan = schema::ArtifactHostSchema("WorkPlan");
  auto evidence = schema::ArtifactHostSchema("Evidence");
  ASSERT_TRUE(work_plan.has_value() && evidence.has_value());
  auto plan_ref = schema::ServedSchemaRef("WorkPlan");
  auto evidence_ref = schema::ServedSchemaRef("Evidence");
  ASSERT_TRUE(plan_ref.has_value() && evidence_ref.has_value());
  Json changed = (*work_plan)->json();
  changed["description"] = "changed \"quoted\"\n\ttabbed";
  const std::string awkward = "quote \" backslash \\ newline \n control \x01 caf\xc3\xa9 \xe2\x82\xac bad \xff\xfe end";
  std::vector<std::pair<Json, bool>> payloads;
  auto action = [&](Json required, Json additional) {
    return Json{{"ok", true},
                {"run", {{"runId", "r-1"}, {"phase", awkward}}},
                {"nextAction",
                 {{"rationaleSummary", awkward},
                  {"requiredOutputType", "WorkPlan"},
                  {"requiredOutputSchema", std::move(required)},
                  {"additionalOutputSchemas", std::move(additional)},
                  {"stopConditions", Json::array({awkward, "b"})}}}};
  };
  payloads.push_back({action(*plan_ref, {{"Evidence", *evidence_ref}}), false});
  payloads.push_back({action((*work_plan)->json(), {{"Evidence", (*evidence)->json()}, {"WorkPlan", *plan_ref}}), false});
  payloads.push_back({action(changed, {{"Evidence", *evidence_ref}, {"Other", changed}}), false});
  payloads.push_back({action(nullptr, Json::object()), false});
  payloads.push_back({Json{{"ok", true}, {"requiredOutputSchema", *plan_ref}}, false});  // not inside nextAction
  payloads.push_back({Json{{"ok", false}, {"error", awkward}, {"code", "INVALID_ARGUMENT"}}, true});
  for (const auto& [payload, is_error] : payloads) {
    Json expanded = payload;
    schema::ExpandServedSchemaRefs(expanded);
    SCOPED_TRACE(expanded.dump(-1, ' ', false, Json::error_handler_t::replace).substr(0, 160));
    const std::string whole = ToolResultBody(payload, ToolResultText(payload, false), is_error);
    EXPECT_EQ(ToolResultBody(payload, is_error), whole);
    std::string text = Json::parse("{\"id\":1" + whole).at("result").at("content").at(0).at("text");
    EXPECT_EQ(text.find('\n'), std::string::npos);
    EXPECT_EQ(ToolResultTextBytes(whole), ToolResultText(payload, false).size());  // the context cost counted
  }
}

}  // namespace
}  // namespace telic::mcp
