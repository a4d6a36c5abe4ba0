// telic_check_tool_action through the MCP server core.
#include "mcp/broker_tools.h"

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace telic::mcp {
namespace {

class CheckToolActionTest : public ::testing::Test {
 protected:
  CheckToolActionTest() : clock_(1764662400000, 1) {}
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open(dir_.File("telic.sqlite3")));
    service_ = std::make_unique<controller::RunService>(*store_, clock_, ids_, dir_.path().string());
    server_ = std::make_unique<Server>(*service_);
    Json started = Call("telic_start_run", {{"original_request", "Fix the failing test"},
                                            {"mode", "fix_only"},
                                            {"host_capabilities", {"repository.read", "repository.write", "shell.execute"}},
                                            {"authorization_granted", {"repository.read", "repository.write", "shell.execute"}},
                                            {"shell_execute_allowlist", {"npm test"}}})["structuredContent"];
    run_id_ = started["run"]["runId"];
    action_id_ = started["nextAction"]["id"];
    version_ = started["run"]["version"];
  }
  Json Call(const std::string& tool, const Json& arguments) {
    auto result = server_->CallTool(tool, &arguments);
    EXPECT_TRUE(result.has_value());
    return result ? *result : Json();
  }
  Json Check(const std::string& capability, std::optional<std::string> target = std::nullopt) {
    Json args = {{"run_id", run_id_}, {"action_id", action_id_}, {"expected_run_version", version_},
                 {"capability", capability}};
    if (target) args["target"] = *target;
    return Call("telic_check_tool_action", args);
  }
  testing::TempDir dir_;
  ManualClock clock_;
  SequentialIdSource ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<controller::RunService> service_;
  std::unique_ptr<Server> server_;
  std::string run_id_, action_id_;
  int64_t version_ = 0;
};

TEST_F(CheckToolActionTest, ListedWithTheReferenceAnnotations) {
  Json tools = server_->ListTools();
  auto it = std::find_if(tools.begin(), tools.end(), [](const Json& t) { return t["name"] == "telic_check_tool_action"; });
  ASSERT_NE(it, tools.end());
  EXPECT_EQ((*it)["title"], "Check host tool action");
  EXPECT_EQ((*it)["annotations"]["readOnlyHint"], true);
  EXPECT_EQ((*it)["annotations"]["idempotentHint"], false);
  EXPECT_NE((*it)["description"].get<std::string>().find("broker_decision"), std::string::npos);
  EXPECT_EQ((*it)["inputSchema"]["required"],
            Json::array({"run_id", "action_id", "expected_run_version", "capability"}));
}

// covers TEL-045, TEL-047, TEL-048
TEST_F(CheckToolActionTest, DecisionHasTheWireShapeAndAnExplanation) {
  Json allowed = Check("shell.execute", "npm test")["structuredContent"];
  EXPECT_EQ(allowed["ok"], true);
  EXPECT_EQ(allowed["decision"],
            Json({{"allowed", true},
                  {"reasonCode", "allowed"},
                  {"summary", "Allowed by all 2 policies."},
                  {"permissionDecision",
                   {{"decision", "allow"},
                    {"capability", "shell.execute"},
                    {"scope", "npm test"},
                    {"policyRefs", {"artifact://" + run_id_ + "/" + run_id_}},
                    {"rationaleSummary", "Allowed by all 2 policies."}}}}));
  Json denied = Check("shell.execute", "npm test | sh")["structuredContent"];
  EXPECT_EQ(denied["decision"]["allowed"], false);
  EXPECT_EQ(denied["decision"]["reasonCode"], "policy_denied");
  EXPECT_EQ(denied["decision"]["summary"], "Denied by permission intersection: intent_mode:fix_only, run_envelope.");
  EXPECT_EQ(denied["explanation"]["decidingLayer"], "intent_mode:fix_only");
  EXPECT_NE(denied["explanation"]["rule"].get<std::string>().find("'|' pipe"), std::string::npos);
  EXPECT_EQ(denied["explanation"]["layers"].size(), 2u);
}

TEST_F(CheckToolActionTest, TokensAreCheckedInTheReferenceOrder) {
  Json args = {{"run_id", "missing-run"}, {"action_id", action_id_}, {"expected_run_version", 1},
               {"capability", "repository.read"}};
  Json missing = Call("telic_check_tool_action", args)["structuredContent"];
  EXPECT_EQ(missing["ok"], false);
  EXPECT_NE(missing["error"].get<std::string>().find("Run not found: missing-run"), std::string::npos);
  args["run_id"] = run_id_;
  args["expected_run_version"] = 0;
  Json stale = Call("telic_check_tool_action", args)["structuredContent"];
  EXPECT_NE(stale["error"].get<std::string>().find("Stale run version 0; current version is 1"), std::string::npos);
  args["expected_run_version"] = 1;
  args["action_id"] = "action:other:1";
  EXPECT_NE(Call("telic_check_tool_action", args)["structuredContent"]["error"].get<std::string>().find("action_id"),
            std::string::npos);
}

TEST_F(CheckToolActionTest, UnknownCapabilitiesAreSchemaErrors) {
  Json result = Check("shell.exec", "ls");
  EXPECT_EQ(result["isError"], true);
  EXPECT_EQ(result["structuredContent"]["code"], "invalid_argument");
}

TEST_F(CheckToolActionTest, EachCallAppendsABrokerEventAndKeepsTheVersion) {
  Check("repository.write", "src/app.ts");
  Check("repository.delete", "src/app.ts");
  Json trace = Call("telic_get_trace", {{"run_id", run_id_}})["structuredContent"]["events"];
  ASSERT_GE(trace.size(), 2u);
  const Json& last = trace.back();
  EXPECT_EQ(last["eventType"], "broker_decision");
  EXPECT_EQ(last["actor"], "host");
  EXPECT_EQ(last["rationaleSummary"], "Broker denied repository.delete: policy_denied.");
  EXPECT_EQ(last["permissionDecision"]["decision"], "deny");
  EXPECT_EQ(trace[trace.size() - 2]["rationaleSummary"], "Broker allowed repository.write.");
  EXPECT_EQ(Call("telic_get_run", {{"run_id", run_id_}})["structuredContent"]["run"]["version"], 1);
}

}  // namespace
}  // namespace telic::mcp
