#include "graph/graph.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

#include <fmt/format.h>

namespace telic::graph {

void Graph::SetState(int index, TaskState state) {
  Node& n = nodes_[static_cast<size_t>(index)];
  if (n.state == TaskState::kRunning) --running_;
  if (state == TaskState::kRunning) ++running_;
  n.state = state;
  if (state == TaskState::kReady) ready_.push(index);
}

Result<int> Graph::Add(std::string id, const std::vector<std::string>& depends_on, TaskState state) {
  if (index_.contains(id)) return telic::Fail(ErrorCode::kAlreadyExists, fmt::format("Task already exists: {}", id));
  Node node;
  node.id = id;
  std::unordered_set<int> seen;
  for (const std::string& dep : depends_on) {
    auto it = index_.find(dep);
    if (it == index_.end()) {
      return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("dependsOn names unknown task {}", dep));
    }
    if (!seen.insert(it->second).second) {
      return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("dependsOn names {} more than once", dep));
    }
    node.deps.push_back(it->second);
    if (nodes_[static_cast<size_t>(it->second)].state != TaskState::kCompleted) ++node.unmet;
  }
  int index = static_cast<int>(nodes_.size());
  for (int dep : node.deps) nodes_[static_cast<size_t>(dep)].dependents.push_back(index);
  node.state = TaskState::kPending;
  nodes_.push_back(std::move(node));
  index_.emplace(std::move(id), index);
  if (state == TaskState::kPending && nodes_.back().unmet == 0) state = TaskState::kReady;
  SetState(index, state);
  return index;
}

std::optional<int> Graph::Find(std::string_view id) const {
  auto it = index_.find(std::string(id));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<int> Graph::Dispatch(int max_running) {
  std::vector<int> out;
  while (running_ < max_running && !ready_.empty()) {
    int index = ready_.top();
    ready_.pop();
    if (nodes_[static_cast<size_t>(index)].state != TaskState::kReady) continue;  // stale entry
    SetState(index, TaskState::kRunning);
    out.push_back(index);
  }
  return out;
}

std::vector<int> Graph::Complete(int index) {
  SetState(index, TaskState::kCompleted);
  std::vector<int> ready;
  for (int dependent : nodes_[static_cast<size_t>(index)].dependents) {
    Node& d = nodes_[static_cast<size_t>(dependent)];
    if (--d.unmet == 0 && d.state == TaskState::kPending) {
      SetState(dependent, TaskState::kReady);
      ready.push_back(dependent);
    }
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

void Graph::Requeue(int index) { SetState(index, TaskState::kReady); }

std::vector<Graph::CascadeStep> Graph::Fail(int index, TaskState terminal) {
  SetState(index, terminal);
  std::vector<CascadeStep> steps;
  std::deque<int> queue = {index};
  while (!queue.empty()) {
    int current = queue.front();
    queue.pop_front();
    for (int dependent : nodes_[static_cast<size_t>(current)].dependents) {
      if (domain::IsTerminal(nodes_[static_cast<size_t>(dependent)].state)) continue;
      SetState(dependent, TaskState::kFailed);
      steps.push_back({dependent, current, index});
      queue.push_back(dependent);
    }
  }
  return steps;
}

Result<std::vector<std::string>> Graph::TopologicalOrder(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& batch) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!index.emplace(batch[i].first, i).second) {
      return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("task id {} appears more than once", batch[i].first));
    }
  }
  std::vector<int> unmet(batch.size(), 0);
  std::vector<std::vector<size_t>> dependents(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    std::unordered_set<std::string> seen;
    for (const std::string& dep : batch[i].second) {
      if (dep == batch[i].first) {
        return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("task {} depends on itself", dep));
      }
      if (!seen.insert(dep).second) {
        return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("task {} names dependency {} more than once", batch[i].first, dep));
      }
      auto it = index.find(dep);
      if (it == index.end()) {
        return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("task {} depends on unknown task {}", batch[i].first, dep));
      }
      dependents[it->second].push_back(i);
      ++unmet[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < batch.size(); ++i)
    if (unmet[i] == 0) ready.push(i);
  std::vector<std::string> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(batch[i].first);
    for (size_t d : dependents[i])
      if (--unmet[d] == 0) ready.push(d);
  }
  if (order.size() != batch.size()) {
    std::string cycle;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (unmet[i] > 0) cycle += (cycle.empty() ? "" : ", ") + batch[i].first;
    }
    return telic::Fail(ErrorCode::kInvalidArgument, fmt::format("dependsOn forms a cycle among: {}", cycle));
  }
  return order;
}

}  // namespace telic::graph
