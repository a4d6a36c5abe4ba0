#include <map>

#include <fmt/format.h>

#include "ui/dag_layout.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::ui {
namespace {

std::string TaskAnchor(const std::string& task_id) { return "task-" + EncodeComponent(task_id); }

// Tasks as nodes (name, state), dependency edges (dependency above the task
// that waits for it) and parent → subtask edges ("extra").
DagGraph TaskGraph(const std::vector<store::TaskRecord>& tasks, const std::optional<std::string>& run_id) {
  DagGraph graph;
  for (const auto& task : tasks) {
    std::string subtitle = std::string(domain::Name(task.state)) + (task.hold ? " · " + *task.hold : "");
    graph.nodes.push_back({task.task_id, task.name, subtitle, "task task-" + std::string(domain::Name(task.state)),
                           TasksPath(run_id) + "#" + TaskAnchor(task.task_id), task.name + " (" + task.task_id + "): " + subtitle});
    for (const auto& dependency : task.depends_on) graph.edges.push_back({dependency, task.task_id, "", "dependency"});
    if (task.parent_task_id) graph.edges.push_back({*task.parent_task_id, task.task_id, "subtask", "extra subtask"});
  }
  return graph;
}

void Verdicts(Html& out, const std::vector<store::TaskEventRecord>& events) {
  bool any = false;
  for (const auto& event : events) {
    if (event.kind != "verdict_reported" || !event.payload.is_object()) continue;
    bool approved = event.payload.value("approved", false);
    out.Open("div", {{"class", "verdict"}});
    out.Element("span", {{"class", approved ? "badge ok" : "badge bad"}}, approved ? "approved" : "rejected");
    std::string reasoning = event.payload.contains("reasoning") && event.payload["reasoning"].is_string()
                                ? event.payload["reasoning"].get<std::string>() : "";
    out.Text(" " + reasoning).Close("div");
    any = true;
  }
  if (!any) out.Element("span", {{"class", "muted"}}, "—");
}

void Approvals(Html& out, const store::TaskRecord& task, const std::vector<store::ApprovalRecord>& approvals) {
  if (task.pending.is_object() && task.pending.contains("pendingActions") && !task.pending["pendingActions"].empty()) {
    out.Open("div", {{"class", "pending"}}).Element("strong", {}, "pending: ");
    for (const Json& action : task.pending["pendingActions"]) out.Element("code", {}, action.is_string() ? action.get<std::string>() : action.dump()).Raw(" ");
    out.Close("div");
  }
  for (const auto& approval : approvals) {
    out.Open("div", {{"class", "approval"}});
    out.Element("span", {{"class", approval.used_at ? "badge" : "badge warn"}}, approval.used_at ? "used" : "unused");
    out.Text(" ").Element("code", {}, approval.action);
    out.Element("span", {{"class", "muted"}}, " " + approval.user_decision + (approval.used_at ? " · used " + *approval.used_at : ""));
    out.Close("div");
  }
}

void TaskTable(Html& out, store::TaskStore& store, const std::vector<store::TaskRecord>& tasks) {
  std::map<std::string, std::string> names;
  for (const auto& task : tasks) names[task.task_id] = task.name;
  out.Open("div", {{"class", "scroll"}}).Open("table", {{"id", "tasks"}});
  out.Raw("<thead><tr><th>task</th><th>state</th><th>role</th><th>depends on</th><th>attempts</th><th>verdicts</th>"
          "<th>approvals</th><th>notes</th></tr></thead><tbody>");
  for (const auto& task : tasks) {
    out.Open("tr", {{"id", TaskAnchor(task.task_id)}, {"class", "task"}, {"data-task-id", task.task_id}});
    out.Open("td", {{"class", "wrap"}}).Element("strong", {{"class", "task-name"}}, task.name);
    out.Element("div", {{"class", "muted mono"}}, task.task_id).Element("div", {{"class", "muted"}}, FirstLine(task.instructions, 160)).Close("td");
    out.Open("td").Element("span", {{"class", "badge " + std::string(domain::Name(task.state))}, {"data-state", std::string(domain::Name(task.state))}}, std::string(domain::Name(task.state)));
    if (task.hold) out.Element("div", {{"class", "muted"}}, "waiting: " + *task.hold);
    out.Close("td");
    out.Element("td", {}, task.role.empty() ? "—" : task.role);
    out.Open("td");
    for (size_t i = 0; i < task.depends_on.size(); ++i) {
      if (i) out.Raw(", ");
      auto name = names.find(task.depends_on[i]);
      out.Raw(fmt::format("<a href=\"#{}\">", Escape(TaskAnchor(task.depends_on[i]))))
          .Text(name != names.end() ? name->second : task.depends_on[i]).Raw("</a>");
    }
    if (task.depends_on.empty()) out.Text("—");
    out.Close("td");
    out.Element("td", {}, fmt::format("{} (retries {}/{})", task.attempts, task.retries_used, task.retries_allowed));
    out.Open("td");
    auto events = store.ListEvents(task.task_id);
    Verdicts(out, events ? *events : std::vector<store::TaskEventRecord>{});
    out.Close("td").Open("td");
    auto approvals = store.ListApprovals(task.task_id);
    Approvals(out, task, approvals ? *approvals : std::vector<store::ApprovalRecord>{});
    out.Close("td").Open("td", {{"class", "wrap"}});
    if (task.failure_reason) out.Element("div", {{"class", "check-bad"}}, *task.failure_reason);
    if (task.failed_dependency) out.Element("div", {{"class", "muted"}}, "failed dependency: " + *task.failed_dependency);
    if (!task.summary.empty()) out.Element("div", {}, task.summary);
    out.Close("td").Close("tr");
  }
  out.Raw("</tbody></table></div>");
}

void StoryTable(Html& out, const std::vector<store::StoryRecord>& stories, const std::vector<store::TaskRecord>& tasks) {
  std::map<std::string, std::string> names;
  for (const auto& task : tasks) names[task.task_id] = task.name;
  auto name_of = [&](const std::string& id) { return names.contains(id) ? names[id] : id; };
  out.Element("h2", {}, "Stories");
  if (stories.empty()) {
    out.Element("p", {{"class", "muted"}}, "No stories.");
    return;
  }
  out.Open("table", {{"id", "stories"}});
  out.Raw("<thead><tr><th>story</th><th>status</th><th>arbitration</th><th>evaluators</th></tr></thead><tbody>");
  for (const auto& story : stories) {
    out.Open("tr").Element("td", {}, story.name);
    out.Open("td").Element("span", {{"class", "badge"}}, story.status).Close("td");
    out.Element("td", {}, name_of(story.arbitration_task_id));
    std::string evaluators;
    for (const auto& id : story.evaluator_task_ids) evaluators += (evaluators.empty() ? "" : ", ") + name_of(id);
    out.Element("td", {}, evaluators).Close("tr");
  }
  out.Raw("</tbody></table>");
}

}  // namespace

Result<std::string> TasksPage(Sources& sources, const std::optional<std::string>& run_id) {
  if (!sources.tasks) return Fail(ErrorCode::kNotFound, "This store has no task graph");
  if (run_id) {
    if (auto run = sources.runs.GetRun(*run_id); !run) return std::unexpected(run.error());
  }
  TELIC_ASSIGN_OR_RETURN(std::vector<store::TaskRecord> tasks, sources.tasks->ListTasks(run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::StoryRecord> stories, sources.tasks->ListStories(run_id));
  Html out;
  if (run_id) out.Open("p").Link(RunPath(*run_id), "← run " + *run_id, {{"id", "run-link"}}).Close("p");
  out.Element("h1", {}, run_id ? "Task graph of run " + *run_id : std::string("Standalone task graph"));
  std::map<std::string, int> counts;
  for (const auto& task : tasks) ++counts[std::string(domain::Name(task.state))];
  std::string tally = fmt::format("{} task{}", tasks.size(), tasks.size() == 1 ? "" : "s");
  for (const auto& [state, n] : counts) tally += fmt::format(" · {} {}", n, state);
  out.Element("p", {{"class", "muted"}, {"id", "task-tally"}}, tally);
  if (!tasks.empty()) {
    DagOptions options;
    options.id_prefix = "tasks";
    options.aria_label = "task graph";
    options.node_width = 200;
    out.Open("div", {{"class", "card scroll"}, {"id", "task-graph"}}).Raw(RenderDagSvg(TaskGraph(tasks, run_id), options)).Close("div");
    TaskTable(out, *sources.tasks, tasks);
  } else {
    out.Element("p", {{"class", "muted"}, {"id", "no-tasks"}},
                run_id ? "This run has no tasks: its task graph is built from accepted WorkPlans."
                       : "No standalone tasks.");
  }
  StoryTable(out, stories, tasks);
  return PageShell(run_id ? "Tasks of " + *run_id : std::string("Standalone tasks"), out.Take());
}

}  // namespace telic::ui
