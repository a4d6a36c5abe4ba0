#include "cli/graph_commands.h"

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "base/file_read.h"
#include "base/json_parse.h"
#include "base/text.h"
#include "cli/format.h"
#include "store/open_store.h"
#include "reports/dispatcher.h"
#include "reports/report.h"

namespace telic::cli {
namespace {

// Larger than any report the parser accepts: it says which limit was passed.
constexpr size_t kMaxReportFileBytes = 16 * 1024 * 1024;

std::string Short(const std::string& id) { return id.size() > 8 ? id.substr(0, 8) : id; }

Result<std::string> ReadInput(const std::string& file) {
  std::stringstream buffer;
  if (file == "-") {
    buffer << std::cin.rdbuf();
  } else {
    return ReadRegularFile(file, kMaxReportFileBytes, "FILE");
  }
  return buffer.str();
}

void PrintList(std::ostream& out, const char* label, const std::vector<std::string>& items) {
  if (items.empty()) return;
  out << label << ":\n";
  for (const auto& item : items) out << "  - " << item << "\n";
}

}  // namespace

Result<std::unique_ptr<GraphContext>> OpenGraph(const std::string& ledger_path, store::Store& runs, Clock& clock,
                                                IdSource& ids, bool connect_on_first_use) {
  auto context = std::make_unique<GraphContext>();
  TELIC_ASSIGN_OR_RETURN(context->store, store::OpenTaskStore(runs, ledger_path, connect_on_first_use));
  context->service = std::make_unique<graph::TaskService>(*context->store, clock, ids, &runs);
  return context;
}

void DefineReportCommands(CLI::App& report, GraphCommands& commands) {
  commands.report_parse = report.add_subcommand("parse", "parse a report (text or JSON; - for stdin) and show its decision");
  commands.report_parse->add_option("FILE", commands.file, "the sub-agent's response")->required();
  commands.report_parse->footer(
      "List fields hold '- item' lines. An empty list is the bare key, 'KEY: []', or only an empty-list marker, as "
      "the item or inline: none, n/a, na, nil, nothing or the field's 'no ...' phrase (no blockers, no findings, no "
      "concerns, ...), any case, an optional trailing '.' and parentheses. A marker beside real items is rejected; "
      "'none of the tests fail' is an item. JSON lists follow the same rule ([\"none\"] is []).");
  commands.report_parse->add_option("--retries-allowed", commands.retries_allowed, "the MissionBrief's retry budget")
      ->check(CLI::Range(0, 10));
  commands.report_parse->add_option("--retries-used", commands.retries_used, "re-dispatches already spent")
      ->check(CLI::Range(0, 10));
  commands.report_parse->add_option("--new-mechanism", commands.new_mechanism, "yes, no or unknown (default)")
      ->check(CLI::IsMember({"yes", "no", "unknown"}));
  report.require_subcommand(1);
}

void DefineTasksOptions(CLI::App& tasks, GraphCommands& commands) {
  tasks.add_option("RUN_ID", commands.run_id, "the run (its id or a unique prefix)");
}

int RunReportParse(const GraphCommands& commands, bool json) {
  auto input = ReadInput(commands.file);
  if (!input) {
    std::cerr << "telic: " << input.error().message() << "\n";
    return 1;
  }
  Result<reports::Report> report = [&]() -> Result<reports::Report> {
    std::string_view trimmed = TrimJs(*input);
    if (!trimmed.empty() && trimmed.front() == '{') {
      TELIC_ASSIGN_OR_RETURN(Json parsed, ParseJsonStrict(trimmed));
      return reports::ReportFromJson(parsed);
    }
    return reports::ParseReportText(*input);
  }();
  if (!report) {
    if (json) {
      std::cout << Json{{"ok", false}, {"error", report.error().message()}}.dump() << "\n";
    } else {
      std::cerr << "telic: report rejected: " << report.error().message() << "\n";
    }
    return 1;
  }
  reports::DispatchContext context{commands.retries_allowed, commands.retries_used, std::nullopt};
  if (commands.new_mechanism != "unknown") context.new_mechanism = commands.new_mechanism == "yes";
  reports::Decision decision = reports::Decide(*report, context);
  if (json) {
    std::cout << Json{{"ok", true}, {"report", reports::ReportToJson(*report)}, {"decision", reports::DecisionToJson(decision)}}
                     .dump()
              << "\n";
    return 0;
  }
  Json r = reports::ReportToJson(*report);
  std::cout << fmt::format("report    {} {}\n", r["kind"].get<std::string>(), r["status"].get<std::string>());
  if (r.contains("confidence")) std::cout << fmt::format("confidence {}\n", FormatJsNumber(r["confidence"].get<double>()));
  std::cout << fmt::format("decision  {} (rule {})\n", reports::ActionName(decision.action), decision.rule);
  std::cout << "steps     ";
  for (size_t i = 0; i < decision.steps.size(); ++i) std::cout << (i ? " -> " : "") << decision.steps[i];
  std::cout << "\nreason    " << decision.reason << "\n";
  PrintList(std::cout, "key tasks for the next brief", decision.key_tasks);
  PrintList(std::cout, "missing context", decision.missing_context);
  PrintList(std::cout, "actions needing approval", decision.pending_actions);
  PrintList(std::cout, "concerns to weigh", decision.concerns);
  PrintList(std::cout, "blockers", decision.blockers);
  if (!decision.findings.empty()) {
    std::cout << "findings to route:\n";
    for (const auto& f : decision.findings) std::cout << fmt::format("  - {}:{} {}\n", f.path, f.line, f.fix);
  }
  return 0;
}

std::string FormatTaskTree(const graph::TaskList& list) {
  std::map<std::string, const store::TaskRecord*> by_id;
  std::map<std::string, std::vector<const store::TaskRecord*>> children;
  std::vector<const store::TaskRecord*> roots;
  std::map<std::string, int> counts;
  for (const auto& t : list.tasks) {
    by_id[t.task_id] = &t;
    ++counts[std::string(domain::Name(t.state))];
  }
  for (const auto& t : list.tasks) {
    if (t.parent_task_id && by_id.contains(*t.parent_task_id)) {
      children[*t.parent_task_id].push_back(&t);
    } else {
      roots.push_back(&t);
    }
  }
  std::string out = fmt::format("{} task{}", list.tasks.size(), list.tasks.size() == 1 ? "" : "s");
  std::string tally;
  for (const char* state : {"completed", "running", "ready", "pending", "failed", "cancelled"}) {
    if (counts[state]) tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", counts[state], state);
  }
  out += tally.empty() ? "\n" : " (" + tally + ")\n";
  std::function<void(const store::TaskRecord*, const std::string&, bool)> print =
      [&](const store::TaskRecord* t, const std::string& prefix, bool last) {
        std::string line = fmt::format("{}{}[{}] {} ({})", prefix, last ? "└─ " : "├─ ", t->state, t->name, Short(t->task_id));
        if (t->hold) line += fmt::format(" waiting: {}", *t->hold);
        if (!t->depends_on.empty()) {
          std::string deps;
          for (const auto& d : t->depends_on) {
            auto it = by_id.find(d);
            deps += (deps.empty() ? "" : ", ") + (it != by_id.end() ? it->second->name : Short(d));
          }
          line += " after " + deps;
        }
        if (t->state == domain::TaskState::kFailed && t->failure_reason) line += " — " + *t->failure_reason;
        out += line + "\n";
        const auto& kids = children[t->task_id];
        for (size_t i = 0; i < kids.size(); ++i) print(kids[i], prefix + (last ? "   " : "│  "), i + 1 == kids.size());
      };
  for (size_t i = 0; i < roots.size(); ++i) print(roots[i], "", i + 1 == roots.size());
  if (!list.stories.empty()) {
    out += "stories:\n";
    for (const auto& s : list.stories) {
      auto it = by_id.find(s.arbitration_task_id);
      out += fmt::format("  [{}] {} (arbitration: {})\n", s.status, s.name,
                         it != by_id.end() ? it->second->name : Short(s.arbitration_task_id));
    }
  }
  return out;
}

int RunTasks(graph::TaskService& service, const std::optional<std::string>& run_id, bool json) {
  if (run_id) {
    // Repairs the mirror of the run's accepted WorkPlans/WorkResults first.
    if (auto synced = service.SyncRun(*run_id); !synced && synced.error().code() != ErrorCode::kFailedPrecondition) {
      std::cerr << "telic: " << CleanMessage(synced.error().message()) << "\n";
      return 1;
    }
  }
  auto list = service.ListTasks(run_id);
  if (!list) {
    return ReportFailure(std::cerr, list.error());
  }
  if (json) {
    Json tasks = Json::array(), stories = Json::array();
    for (const auto& t : list->tasks) tasks.push_back(store::TaskToJson(t));
    for (const auto& s : list->stories) stories.push_back(store::StoryToJson(s));
    std::cout << TerminalJson(Json{{"runId", run_id ? Json(*run_id) : Json(nullptr)}, {"tasks", tasks}, {"stories", stories}})
              << "\n";
    return 0;
  }
  // Task names and notes are free text from tool arguments: escaped line by line.
  std::istringstream tree(FormatTaskTree(*list));
  std::cout << TerminalText(run_id ? "run " + *run_id : std::string("standalone graph")) << ": ";
  for (std::string line; std::getline(tree, line);) std::cout << TerminalText(line) << "\n";
  return 0;
}

}  // namespace telic::cli
