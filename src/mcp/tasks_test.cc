#include "mcp/tasks.h"

#include <chrono>
#include <future>
#include <regex>
#include <set>

#include <gtest/gtest.h>

namespace telic::mcp {
namespace {

// Polls until the task leaves "working" (each poll re-reads the registry).
Json AwaitTerminal(TaskRegistry& registry, const std::string& id) {
  for (int i = 0; i < 2000; ++i) {
    auto task = registry.Get(id);
    if (!task || (*task)["status"] != "working") return task ? *task : Json();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Json();
}

Json ToolResult(std::string text) {
  return {{"content", Json::array({{{"type", "text"}, {"text", text}}})}, {"structuredContent", {{"ok", true}}}};
}

TEST(TaskRegistryTest, WorkingThenCompletedWithProgressAndResult) {
  ManualClock clock(1'000'000);
  TaskRegistry registry({}, &clock);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> reported;
  auto started = registry.Start([&](const TaskControl& control) {
    control.progress("inventory: 1024 paths found");
    reported.set_value();
    released.wait();
    return TaskOutcome{ToolResult("done"), false};
  });
  ASSERT_TRUE(started);
  std::string id = (*started)["taskId"];
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{64}")));
  EXPECT_EQ((*started)["status"], "working");
  EXPECT_EQ((*started)["ttlMs"], 3'600'000);
  EXPECT_EQ((*started)["createdAt"], "1970-01-01T00:16:40.000Z");
  EXPECT_FALSE(started->contains("result"));

  reported.get_future().wait();
  auto working = registry.Get(id);
  ASSERT_TRUE(working);
  EXPECT_EQ((*working)["status"], "working");
  EXPECT_EQ((*working)["statusMessage"], "inventory: 1024 paths found");
  EXPECT_FALSE(working->contains("result"));

  release.set_value();
  Json done = AwaitTerminal(registry, id);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["result"], ToolResult("done"));
}

TEST(TaskRegistryTest, StatusesPrintTheirWireNames) {
  EXPECT_EQ(McpTaskStatusName(McpTaskStatus::kWorking), "working");
  EXPECT_EQ(McpTaskStatusName(McpTaskStatus::kInputRequired), "input_required");
  EXPECT_EQ(McpTaskStatusName(McpTaskStatus::kCompleted), "completed");
  EXPECT_EQ(McpTaskStatusName(McpTaskStatus::kFailed), "failed");
  EXPECT_EQ(McpTaskStatusName(McpTaskStatus::kCancelled), "cancelled");
}

TEST(TaskRegistryTest, CancelStopsTheWorkAndKeepsNoResult) {
  TaskRegistry registry;
  auto started = registry.Start([](const TaskControl& control) {
    while (!control.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return TaskOutcome{ToolResult("stopped"), true};
  });
  ASSERT_TRUE(started);
  std::string id = (*started)["taskId"];
  EXPECT_TRUE(registry.Cancel(id));
  Json done = AwaitTerminal(registry, id);
  EXPECT_EQ(done["status"], "cancelled");
  EXPECT_FALSE(done.contains("result"));
  EXPECT_TRUE(registry.Cancel(id));  // a terminal task stays as it is
  EXPECT_EQ(registry.Get(id).value()["status"], "cancelled");
}

TEST(TaskRegistryTest, UnknownIdsAreNotFound) {
  TaskRegistry registry;
  EXPECT_FALSE(registry.Get("00"));
  EXPECT_FALSE(registry.Cancel(std::string(64, 'a')));
}

TEST(TaskRegistryTest, ConcurrentTasksAreBounded) {
  TaskLimits limits;
  limits.max_working = 2;
  TaskRegistry registry(limits);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto blocked = [released](const TaskControl&) {
    released.wait();
    return TaskOutcome{ToolResult("ok"), false};
  };
  auto first = registry.Start(blocked), second = registry.Start(blocked);
  ASSERT_TRUE(first && second);
  EXPECT_NE((*first)["taskId"], (*second)["taskId"]);
  EXPECT_FALSE(registry.Start(blocked));  // the third waits for a slot
  release.set_value();
  AwaitTerminal(registry, (*first)["taskId"]);
  AwaitTerminal(registry, (*second)["taskId"]);
  EXPECT_TRUE(registry.Start(blocked));
}

TEST(TaskRegistryTest, TerminalTasksAreForgottenAfterTheirTtl) {
  ManualClock clock(0);
  TaskLimits limits;
  limits.ttl_ms = 1000;
  TaskRegistry registry(limits, &clock);
  auto started = registry.Start([](const TaskControl&) { return TaskOutcome{ToolResult("ok"), false}; });
  std::string id = (*started)["taskId"];
  EXPECT_EQ(AwaitTerminal(registry, id)["status"], "completed");
  clock.Set(999);
  EXPECT_TRUE(registry.Get(id));
  clock.Set(1000);
  EXPECT_FALSE(registry.Get(id));
}

TEST(TaskRegistryTest, RememberedTasksAreBoundedOldestFirst) {
  ManualClock clock(0, 1);
  TaskLimits limits;
  limits.max_kept = 3;
  TaskRegistry registry(limits, &clock);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto started = registry.Start([](const TaskControl&) { return TaskOutcome{ToolResult("ok"), false}; });
    ASSERT_TRUE(started);
    ids.push_back((*started)["taskId"]);
    AwaitTerminal(registry, ids.back());
  }
  EXPECT_FALSE(registry.Get(ids[0]));
  EXPECT_FALSE(registry.Get(ids[1]));
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(registry.Get(ids[i])) << i;
}

// Destroying the registry cancels working tasks and waits for them.
TEST(TaskRegistryTest, DestructionCancelsAndJoins) {
  std::atomic<bool> saw_cancel = false;
  {
    TaskRegistry registry;
    registry.Start([&saw_cancel](const TaskControl& control) {
      while (!control.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      saw_cancel = true;
      return TaskOutcome{Json::object(), true};
    });
  }
  EXPECT_TRUE(saw_cancel);
}

TEST(TaskRegistryTest, ExtensionIsDeclaredOnlyAsAnObject) {
  RequestContext context;
  EXPECT_FALSE(DeclaresTasksExtension(context));
  context.client_capabilities = {{"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}};
  EXPECT_TRUE(DeclaresTasksExtension(context));
  context.client_capabilities = {{"extensions", {{"io.modelcontextprotocol/tasks", true}}}};
  EXPECT_FALSE(DeclaresTasksExtension(context));
}

}  // namespace
}  // namespace telic::mcp
