// The in-memory DAG: gating by dependsOn, the ready set, cascade-fail
// through chains and diamonds, cycle and unknown-id rejection.
#include "graph/graph.h"

#include <gtest/gtest.h>

namespace telic::graph {
namespace {

std::vector<std::string> Ids(const Graph& g, const std::vector<int>& indexes) {
  std::vector<std::string> out;
  for (int i : indexes) out.push_back(g.node(i).id);
  return out;
}

// covers DAG-008, DAG-009
TEST(Graph, DispatchOrdersByDependsOn) {
  Graph g;
  ASSERT_TRUE(g.Add("a", {}));
  ASSERT_TRUE(g.Add("b", {"a"}));
  ASSERT_TRUE(g.Add("c", {"a", "b"}));
  ASSERT_TRUE(g.Add("d", {}));
  EXPECT_EQ(g.node(1).state, TaskState::kPending);
  EXPECT_EQ(Ids(g, g.Dispatch(8)), (std::vector<std::string>{"a", "d"}));
  EXPECT_TRUE(g.Dispatch(8).empty());  // b and c wait for a
  EXPECT_EQ(Ids(g, g.Complete(0)), std::vector<std::string>{"b"});
  EXPECT_EQ(g.node(2).state, TaskState::kPending);  // c still waits for b
  EXPECT_EQ(Ids(g, g.Dispatch(8)), std::vector<std::string>{"b"});
  EXPECT_EQ(Ids(g, g.Complete(g.Find("b").value())), std::vector<std::string>{"c"});
}

// covers DAG-005
TEST(Graph, IndependentTasksRunInParallelUpToTheLimit) {
  Graph g;
  for (const char* id : {"a", "b", "c", "d"}) ASSERT_TRUE(g.Add(id, {}));
  EXPECT_EQ(Ids(g, g.Dispatch(1)), std::vector<std::string>{"a"});  // serial: the v1 protocol path
  EXPECT_TRUE(g.Dispatch(1).empty());
  EXPECT_EQ(Ids(g, g.Dispatch(3)), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(g.running(), 3);
  g.Complete(0);
  EXPECT_EQ(Ids(g, g.Dispatch(3)), std::vector<std::string>{"d"});
}

// covers DAG-010
TEST(Graph, CascadeFailThroughAChainNamesTheDependency) {
  Graph g;
  ASSERT_TRUE(g.Add("a", {}));
  ASSERT_TRUE(g.Add("b", {"a"}));
  ASSERT_TRUE(g.Add("c", {"b"}));
  ASSERT_TRUE(g.Add("x", {}));
  auto steps = g.Fail(0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(g.node(steps[0].node).id, "b");
  EXPECT_EQ(g.node(steps[0].via).id, "a");
  EXPECT_EQ(g.node(steps[1].node).id, "c");
  EXPECT_EQ(g.node(steps[1].via).id, "b");
  EXPECT_EQ(g.node(steps[1].root).id, "a");
  EXPECT_EQ(g.node(3).state, TaskState::kReady);  // unrelated
  EXPECT_EQ(Ids(g, g.Dispatch(4)), std::vector<std::string>{"x"});
}

// covers DAG-010
TEST(Graph, CascadeFailThroughADiamondFailsEachTaskOnce) {
  Graph g;
  ASSERT_TRUE(g.Add("top", {}));
  ASSERT_TRUE(g.Add("left", {"top"}));
  ASSERT_TRUE(g.Add("right", {"top"}));
  ASSERT_TRUE(g.Add("bottom", {"left", "right"}));
  g.Dispatch(1);
  g.Complete(0);
  g.Dispatch(1);  // left runs
  auto steps = g.Fail(g.Find("right").value());
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(g.node(steps[0].node).id, "bottom");
  EXPECT_EQ(g.node(g.Find("left").value()).state, TaskState::kRunning);  // siblings are not dependents
  g.Complete(g.Find("left").value());
  EXPECT_EQ(g.node(3).state, TaskState::kFailed);  // completing left does not revive bottom
  EXPECT_TRUE(g.Dispatch(4).empty());
}

// covers DAG-010 (Open: cancelled also cascades, D12)
TEST(Graph, CancelledDependencyFailsDependents) {
  Graph g;
  ASSERT_TRUE(g.Add("a", {}));
  ASSERT_TRUE(g.Add("b", {"a"}));
  auto steps = g.Fail(0, TaskState::kCancelled);
  EXPECT_EQ(g.node(0).state, TaskState::kCancelled);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(g.node(1).state, TaskState::kFailed);
}

// covers DAG-007 (Open: unknown ids, self references and cycles, D11)
TEST(Graph, RejectsUnknownRepeatedAndCyclicDependencies) {
  Graph g;
  ASSERT_TRUE(g.Add("a", {}));
  EXPECT_NE(g.Add("b", {"zzz"}).error().message().find("unknown task zzz"), std::string::npos);
  EXPECT_NE(g.Add("b", {"a", "a"}).error().message().find("more than once"), std::string::npos);
  EXPECT_EQ(g.Add("a", {}).error().code(), ErrorCode::kAlreadyExists);
  auto order = Graph::TopologicalOrder({{"c", {"b"}}, {"b", {"a"}}, {"a", {}}});
  ASSERT_TRUE(order);
  EXPECT_EQ(*order, (std::vector<std::string>{"a", "b", "c"}));
  auto cycle = Graph::TopologicalOrder({{"a", {"c"}}, {"b", {"a"}}, {"c", {"b"}}, {"d", {}}});
  ASSERT_FALSE(cycle);
  EXPECT_NE(cycle.error().message().find("cycle among: a, b, c"), std::string::npos);
  EXPECT_NE(Graph::TopologicalOrder({{"a", {"a"}}}).error().message().find("depends on itself"), std::string::npos);
  EXPECT_NE(Graph::TopologicalOrder({{"a", {"q"}}}).error().message().find("unknown task q"), std::string::npos);
}

TEST(Graph, LargeGraphDrainsCompletely) {
  Graph g;
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> deps;
    if (i > 0) deps.push_back("t" + std::to_string(i / 2));
    if (i > 2 && i - 3 != i / 2) deps.push_back("t" + std::to_string(i - 3));
    ASSERT_TRUE(g.Add("t" + std::to_string(i), deps));
  }
  int done = 0;
  while (true) {
    auto batch = g.Dispatch(7);
    if (batch.empty()) break;
    for (int index : batch) {
      for (int dep : g.node(index).deps) ASSERT_EQ(g.node(dep).state, TaskState::kCompleted);
      g.Complete(index);
      ++done;
    }
  }
  EXPECT_EQ(done, n);
}

}  // namespace
}  // namespace telic::graph
