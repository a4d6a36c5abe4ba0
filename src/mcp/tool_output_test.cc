// Every tool's outputSchema (issue 20 item 3): declared in tools/list,
// self-contained JSON Schema 2020-12 of type object, and satisfied by the
// structuredContent of real results, success and error alike.
#include "mcp/tool_output.h"

#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "graph/task_service.h"
#include "mcp/graph_tools.h"
#include "mcp/server.h"
#include "schema/registry.h"
#include "schema/validator.h"
#include "store/sqlite_store.h"
#include "store/sqlite_task_store.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

// Calls `visit` on every object inside `node`.
void EachObject(const Json& node, const std::function<void(const Json&)>& visit) {
  if (node.is_object()) {
    visit(node);
    for (const auto& [key, value] : node.items()) EachObject(value, visit);
  } else if (node.is_array()) {
    for (const Json& item : node) EachObject(item, visit);
  }
}

class ToolOutputTest : public ::testing::Test {
 protected:
  ToolOutputTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    tasks_ = std::move(*store::SqliteTaskStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    graph_ = std::make_unique<graph::TaskService>(*tasks_, clock_, ids_, store_.get());
    server_ = std::make_unique<Server>(*service_);
    server_->AddTools(BuildGraphTools(*graph_));
  }

  // The served outputSchema of `tool`, compiled by telic's own validator with
  // no resolver: it must not need any other document.
  const schema::Validator& Compiled(const std::string& tool) {
    auto it = compiled_.find(tool);
    if (it == compiled_.end()) {
      auto output = ToolOutputSchema(tool);
      EXPECT_TRUE(output.has_value()) << tool;
      auto validator = schema::Validator::Compile(output ? **output : Json::object());
      if (!validator) {
        ADD_FAILURE() << tool << ": " << validator.error().message();
        validator = schema::Validator::Compile(Json{{"type", "null"}});  // rejects every payload
      }
      it = compiled_.emplace(tool, std::move(*validator)).first;
    }
    return it->second;
  }

  // Violations of `payload` against `tool`'s served outputSchema and against
  // the embedded schema telic compiles with cross-document refs (both agree).
  std::vector<Issue> Violations(const std::string& tool, Json payload) {
    schema::ValidateOptions options;
    options.apply_defaults = false;
    Json copy = payload;
    std::vector<Issue> served = Compiled(tool).Validate(payload, options);
    auto embedded = schema::Registry::Default().Find(ToolOutputSchemaPath(tool));
    EXPECT_TRUE(embedded.has_value()) << tool;
    if (embedded) {
      EXPECT_EQ((*embedded)->Validate(copy, options).empty(), served.empty()) << tool;
    }
    return served;
  }

  // tools/call through the server; checks the result's structuredContent
  // against the tool's outputSchema and returns it.
  Json Call(const std::string& tool, const Json& arguments) {
    auto result = server_->CallTool(tool, &arguments);
    EXPECT_TRUE(result.has_value()) << tool;
    if (!result) return Json();
    const Json& payload = (*result)["structuredContent"];
    std::vector<Issue> issues = Violations(tool, payload);
    EXPECT_TRUE(issues.empty()) << tool << ": " << (issues.empty() ? "" : issues[0].pointer + " " + issues[0].message)
                                << "\n" << payload.dump();
    EXPECT_EQ(result->value("isError", false), !payload.value("ok", false)) << tool;
    checked_.insert(tool + (payload.value("ok", false) ? " ok" : " error"));
    return payload;
  }

  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<store::SqliteTaskStore> tasks_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<graph::TaskService> graph_;
  std::unique_ptr<Server> server_;
  std::map<std::string, schema::Validator> compiled_;
  std::set<std::string> checked_;
};

TEST_F(ToolOutputTest, EveryToolDeclaresASelfContainedObjectSchemaOfSuccessOrError) {
  Json tools = server_->ListTools();
  ASSERT_GE(tools.size(), 24u);
  for (const Json& tool : tools) {
    std::string name = tool["name"];
    SCOPED_TRACE(name);
    ASSERT_TRUE(tool.contains("outputSchema"));
    const Json& schema = tool["outputSchema"];
    EXPECT_FALSE(schema.contains("$schema"));  // 2020-12: MCP's default dialect, not repeated per tool
    EXPECT_FALSE(schema.contains("description"));
    EXPECT_EQ(schema["type"], "object");
    ASSERT_EQ(schema["oneOf"].size(), 2u);
    EXPECT_EQ(schema["oneOf"][0]["properties"]["ok"], Json({{"const", true}}));
    EXPECT_EQ(schema["oneOf"][1], Json({{"$ref", "#/$defs/ToolError"}}));
    EXPECT_FALSE(schema.contains("$id"));
    EachObject(schema, [&](const Json& object) {
      if (!object.contains("$ref") || !object["$ref"].is_string()) return;
      std::string ref = object["$ref"];
      ASSERT_EQ(ref.rfind("#/$defs/", 0), 0u) << ref;
      EXPECT_TRUE(schema["$defs"].contains(ref.substr(8))) << ref;
      EXPECT_FALSE(object.contains("format")) << ref;
    });
    Compiled(name);
    EXPECT_EQ(*ToolOutputSchema(name), *ToolOutputSchema(name));  // cached: one bundle per process
  }
}

TEST_F(ToolOutputTest, BundlingFailsLoudlyForAnUnknownTool) {
  auto missing = ToolOutputSchema("telic_no_such_tool");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST_F(ToolOutputTest, EveryToolsErrorResultConforms) {
  for (const Json& tool : server_->ListTools()) {
    std::string name = tool["name"];
    Json payload = Call(name, Json{{"no_such_argument", true}});
    EXPECT_EQ(payload["ok"], false) << name;
    EXPECT_EQ(payload["code"], "invalid_argument") << name;
    EXPECT_TRUE(Violations(name, ToolErrorPayload(Error(ErrorCode::kConflict, "stale"))).empty()) << name;
  }
  EXPECT_EQ(checked_.size(), server_->ListTools().size());
}

// A success shape of each run tool, driven through one real run.
TEST_F(ToolOutputTest, RunToolSuccessResultsConform) {
  Json started = Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"}});
  ASSERT_EQ(started["ok"], true);
  std::string run = started["run"]["runId"];
  Json action = started["nextAction"];
  Call("telic_get_next_action", {{"run_id", run}});
  Call("telic_get_run", {{"run_id", run}});
  Call("telic_list_runs", Json::object());
  Call("telic_get_artifact", {{"run_id", run}, {"artifact_id", run}});
  Call("telic_get_schema", {{"type", "WorkPlan"}});
  Call("telic_get_schema", {{"type", "WorkPlan"}, {"form", "compact"}});
  Call("telic_get_run", {{"run_id", run}, {"artifacts_offset", 1}, {"artifacts_limit", 1}, {"include_bodies", true}});
  Call("telic_get_trace", {{"run_id", run}});
  Call("telic_replay_run", {{"run_id", run}});
  Json tokens = {{"run_id", run}, {"action_id", action["id"]}, {"expected_run_version", started["run"]["version"]}};
  Json check = tokens;
  check["capability"] = "repository.read";
  check["target"] = "src/app.ts";
  Call("telic_check_tool_action", check);
  Call("telic_ground_context", tokens);  // this build's service has no grounder: the error shape (e2e: success)
  Json submit = tokens;
  submit["body"] = Json::object();
  EXPECT_EQ(Call("telic_submit_artifact", submit)["ok"], false);  // an invalid body: the error shape
  EXPECT_EQ(Call("telic_cancel_run", tokens)["ok"], true);
  Call("telic_get_next_action", {{"run_id", run}});  // the terminal NextAction
  for (const char* tool : {"telic_start_run", "telic_get_next_action", "telic_get_run", "telic_list_runs",
                           "telic_get_artifact", "telic_get_schema", "telic_get_trace", "telic_replay_run",
                           "telic_check_tool_action",
                           "telic_cancel_run"}) {
    EXPECT_TRUE(checked_.contains(std::string(tool) + " ok")) << tool;
  }
}

TEST_F(ToolOutputTest, GraphToolSuccessResultsConform) {
  Json created = Call("telic_create_task", {{"name", "build"}, {"instructions", "build it"}});
  ASSERT_EQ(created["ok"], true) << created.dump();
  std::string task = created["taskId"];
  Call("telic_list_tasks", Json::object());
  Call("telic_get_task", {{"task_id", task}});
  Call("telic_dispatch_tasks", Json::object());
  Call("telic_approve_action", {{"task_id", task}, {"action", "rm -rf build"}, {"user_decision", "yes"}});
  Call("telic_use_approval", {{"task_id", task}, {"action", "rm -rf build"}});
  Json story = Call("telic_create_story", {{"name", "story"}, {"arbitration_task_id", task}});
  if (story["ok"] == true) Call("telic_set_story_status", {{"story_id", story["story"]["storyId"]}, {"status", "NEEDS_FIX"}});
  Call("telic_report_verdict", {{"task_id", task}, {"approved", true}, {"reasoning", "looks right"}});
  Call("telic_resolve_task", {{"task_id", task}, {"resolution", "cancel"}, {"user_decision", "stop"}});
  for (const char* tool : {"telic_create_task", "telic_list_tasks", "telic_get_task", "telic_dispatch_tasks"}) {
    EXPECT_TRUE(checked_.contains(std::string(tool) + " ok")) << tool;
  }
}

TEST_F(ToolOutputTest, SchemasRejectPayloadsOfTheWrongShape) {
  Json started = Call("telic_start_run", {{"original_request", "Explain src/app.ts"}, {"mode", "analyze_only"}});
  Json missing = started;
  missing.erase("nextAction");
  EXPECT_FALSE(Violations("telic_start_run", missing).empty());
  Json extra = started;
  extra["reasoning"] = "hidden";
  EXPECT_FALSE(Violations("telic_start_run", extra).empty());
  Json bad_run = started;
  bad_run["run"]["status"] = "sleeping";
  EXPECT_FALSE(Violations("telic_start_run", bad_run).empty());
  EXPECT_FALSE(Violations("telic_get_run", started).empty());  // another tool's shape
  EXPECT_FALSE(Violations("telic_start_run", Json{{"ok", false}, {"code", "Bogus Code"}, {"error", "x"}}).empty());
  EXPECT_FALSE(Violations("telic_start_run", Json{{"ok", false}, {"error", "x"}}).empty());
}

}  // namespace
}  // namespace telic::mcp
