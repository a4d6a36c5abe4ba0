// The in-memory task DAG and its scheduler: dependency gating (a task is
// ready only when every dependency completed, DAG-008), a ready set handed
// out in insertion order up to a worker limit, and transitive cascade-fail
// (DAG-010). Every operation is incremental: completing a task touches only
// its dependents, a cascade only the failed subtree, so scheduling a whole
// graph costs O((V + E) log V).
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "domain/vocabulary.h"

namespace telic::graph {

// A node's state is its task's state (domain::IsTerminal names the final ones).
using domain::TaskState;

class Graph {
 public:
  struct Node {
    std::string id;
    std::vector<int> deps;        // in the given order
    std::vector<int> dependents;  // reverse edges
    int unmet = 0;                // dependencies not yet completed
    TaskState state = TaskState::kPending;
  };

  // One task failed by a cascade: `node` failed because its dependency
  // `via` failed or was cancelled; `root` is where the failure started.
  struct CascadeStep {
    int node;
    int via;
    int root;
  };

  // Adds a node whose dependencies are already in the graph (so no cycle
  // can form). kAlreadyExists for a known id, kInvalidArgument for an unknown
  // or repeated dependency. A pending node with every dependency completed
  // joins the ready set (state kReady).
  Result<int> Add(std::string id, const std::vector<std::string>& depends_on, TaskState state = TaskState::kPending);

  std::optional<int> Find(std::string_view id) const;
  const Node& node(int index) const { return nodes_[static_cast<size_t>(index)]; }
  size_t size() const { return nodes_.size(); }
  int running() const { return running_; }

  // Hands out ready nodes, lowest insertion index first, until `max_running`
  // nodes run; they become kRunning.
  std::vector<int> Dispatch(int max_running);

  // Marks a node completed (from ready or running) and returns the
  // dependents that became ready, in index order.
  std::vector<int> Complete(int index);

  // Marks a running or ready node ready again (a re-dispatch).
  void Requeue(int index);

  // Ends a non-terminal node as kFailed or kCancelled and fails every
  // non-terminal node that depends on it, directly or transitively. Returns
  // the cascaded nodes in breadth-first order (not including `index`).
  std::vector<CascadeStep> Fail(int index, TaskState terminal = TaskState::kFailed);

  // Checks a batch of (id, dependsOn) for unknown ids, self references,
  // duplicates and cycles, naming the offending ids (for imported plans
  // whose nodes may reference each other in any order). Returns the ids in
  // a topological order.
  static Result<std::vector<std::string>> TopologicalOrder(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& batch);

 private:
  void SetState(int index, TaskState state);

  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> index_;
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready_;  // lazily pruned
  int running_ = 0;
};

}  // namespace telic::graph
