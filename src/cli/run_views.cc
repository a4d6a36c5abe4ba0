#include "cli/run_views.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/text.h"
#include "cli/format.h"
#include "cli/run_ids.h"
#include "controller/observe_work.h"
#include "controller/phases.h"
#include "controller/verify.h"
#include "controller/views.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::cli {
namespace {

// The page size `--all` reads with.
constexpr int kAllRunsPage = 500;
constexpr size_t kShortIdLength = 8;
// A request cell without a terminal width.
constexpr size_t kRequestCell = 60;

void PrintJson(const Json& value, const LedgerFlags& flags) {
  std::cout << TerminalJson(value, flags.json ? -1 : 2) << "\n";
}

// Opens the ledger and resolves the run `typed` names; prints why not.
struct OpenRun {
  std::unique_ptr<Context> context;
  std::string run_id;
};
std::optional<OpenRun> OpenRunNamed(const LedgerFlags& flags, const std::string& typed, int& code) {
  auto context = OpenContext(flags, false);
  if (!context) {
    code = Failure(context.error());
    return std::nullopt;
  }
  auto run_id = ResolveRunId(*(*context)->store, typed);
  if (!run_id) {
    code = ReportResolutionFailure(std::cerr, run_id.error());
    return std::nullopt;
  }
  return OpenRun{std::move(*context), std::move(*run_id)};
}

std::string Phase(const std::string& internal) { return controller::ProtocolPhaseName(internal); }
std::string Phase(domain::Phase phase) { return controller::ProtocolPhaseName(phase); }

// The run's request as one line (credentials masked, as the viewer shows it).
std::string RequestLine(store::Store& store, const store::RunRecord& run, size_t max_chars) {
  return ui::FirstLine(ui::RequestText(store, run), max_chars);
}

// --- runs ---

bool Filtered(const RunsArgs& args) { return !args.status.empty() || !args.mode.empty() || !args.before.empty(); }

// What `runs` prints when no run is listed.
void PrintNoRuns(const RunsArgs& args, const std::string& missing_ledger) {
  if (!missing_ledger.empty()) {
    std::cout << "No runs yet (no ledger at " << TerminalText(missing_ledger) << ").\n";
  } else if (Filtered(args)) {
    std::cout << "No runs match these filters.\n";
    return;
  } else {
    std::cout << "No runs yet.\n";
  }
  std::cout << "Start one from your agent (telic install --help sets one up), or try: telic demo\n";
}

struct RunsTable {
  TableStream table;
  bool compact;
  int64_t now_ms;
};

RunsTable MakeRunsTable(const Terminal& terminal) {
  TableLayout layout;
  layout.color = terminal.color;
  layout.width = terminal.width;
  bool compact = terminal.width > 0;
  std::vector<std::string> header =
      compact ? std::vector<std::string>{"RUN", "STATUS", "PHASE", "MODE", "UPDATED", "REQUEST"}
              : std::vector<std::string>{"RUN", "MODE", "TOPOLOGY", "STATUS", "PHASE", "VERSION", "UPDATED", "REQUEST"};
  size_t status_column = compact ? 1 : 3;
  layout.flex = header.size() - 1;
  layout.style = [status_column](size_t column, const std::string& cell) {
    if (column == 0) return Style::kYellow;
    return column == status_column ? StatusStyle(cell) : Style::kPlain;
  };
  SystemClock clock;
  return {TableStream(std::move(header), std::move(layout)), compact, clock.NowMillis()};
}

std::vector<std::vector<std::string>> RunRows(store::Store& store, const std::vector<store::RunRecord>& runs,
                                              const RunsTable& table) {
  std::vector<std::string> ids;
  for (const auto& run : runs) ids.push_back(run.run_id);
  if (table.compact) ids = ShortIds(ids);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    // Cut to the widest a row could show; the table cuts it to the column.
    std::string request = RequestLine(store, run, table.compact ? 1000 : kRequestCell);
    if (table.compact) {
      auto updated = ui::ParseIsoMillis(run.updated_at);
      rows.push_back({ids[i], std::string(domain::Name(run.status)), Phase(run.phase), std::string(domain::Name(run.requested_mode)),
                      updated ? ui::FormatAgo(table.now_ms - *updated) : run.updated_at, request});
    } else {
      rows.push_back({run.run_id, std::string(domain::Name(run.requested_mode)), std::string(domain::Name(run.topology)), std::string(domain::Name(run.status)), Phase(run.phase),
                      std::to_string(run.version), run.updated_at, request});
    }
  }
  return rows;
}

int PrintEmptyLedger(const LedgerFlags& flags, const RunsArgs& args, const std::string& ledger) {
  if (flags.json) {
    std::cout << R"({"nextCursor":null,"runs":[]})" << "\n";
  } else {
    PrintNoRuns(args, ledger);
  }
  return 0;
}

// --- trace, replay ---

Result<std::vector<store::TraceEventRecord>> WholeTrace(controller::RunService& service, const std::string& run_id) {
  std::vector<store::TraceEventRecord> events;
  int64_t after = 0;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::TracePage page, service.GetTrace(run_id, after, 500));
    for (auto& event : page.events) {
      after = event.sequence;
      events.push_back(std::move(event));
    }
    if (!page.has_more) return events;
  }
}

// "observed" | "claimed" for Evidence events, "" for every other.
std::string EventProvenance(const store::TraceEventRecord& event) {
  return event.event_type == store::kEvidenceObservedEvent  ? "observed"
         : event.event_type == store::kEvidenceClaimedEvent ? "claimed"
                                                             : "";
}

// "observed" | "claimed" for Evidence, "-" for every other artifact.
std::string ProvenanceColumn(const store::ArtifactMeta& meta) {
  auto provenance = store::ProvenanceOf(meta);
  return provenance ? std::string(store::ProvenanceName(*provenance)) : "-";
}

// What the run says about observation: its policy and whether telic saw the work tree.
Json ObservationSummary(const store::RunRecord& run) {
  controller::RunObservation observed = controller::RunObservationOf(run);
  Json out = {{"policy", std::string(controller::ObservationPolicyName(observed.policy))},
              {"workTree", observed.shared ? "shared" : "not shared"}};
  if (!observed.shared) out["reason"] = observed.unobserved_reason;
  if (observed.baseline) out["groundedCommit"] = observed.baseline->value("headCommit", Json());
  return out;
}

// One "label      value" line of `show`.
std::string Field(std::string_view label, const std::string& value) { return fmt::format("{:<11}{}\n", label, value); }

}  // namespace

std::string NextRunsCommand(const RunsArgs& args, const LedgerFlags& flags, const std::string& cursor) {
  std::string command = "telic runs";
  if (args.limit != kDefaultRunsLimit) command += " --limit " + std::to_string(args.limit);
  if (!args.status.empty()) command += " --status " + ShellWord(args.status);
  if (!args.mode.empty()) command += " --mode " + ShellWord(args.mode);
  return command + LocationArguments(flags) + " --before " + ShellWord(cursor);
}

std::vector<std::string> ShortIds(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids) {
    size_t length = std::min(kShortIdLength, id.size());
    for (const auto& other : ids) {
      if (&other == &id) continue;
      size_t common = 0;
      while (common < id.size() && common < other.size() && id[common] == other[common]) ++common;
      length = std::max(length, std::min(common + 1, id.size()));
    }
    out.push_back(id.substr(0, length));
  }
  return out;
}

int Runs(const LedgerFlags& flags, const RunsArgs& args, const Terminal& terminal) {
  auto location = Locate(flags);
  if (!location) return Failure(location.error());
  // A repository telic has not run in yet: an empty list. A --db naming a
  // missing file stays an error (OpenContext names the file).
  if (flags.db.empty() && !LedgerExists(*location)) return PrintEmptyLedger(flags, args, location->ledger_path);
  auto context = OpenContext(flags, false);
  if (!context) return Failure(context.error());
  store::RunQuery query;
  query.limit = args.all ? kAllRunsPage : args.limit;
  if (!args.before.empty()) query.before = args.before;
  // --status and --mode were checked against their vocabularies (AddChoice).
  if (!args.status.empty()) {
    auto status = domain::ParseRunStatus(args.status, "--status");
    if (!status) return Failure(status.error());
    query.status = *status;
  }
  if (!args.mode.empty()) {
    auto mode = domain::ParseMode(args.mode, "--mode");
    if (!mode) return Failure(mode.error());
    query.mode = *mode;
  }
  RunsTable table = MakeRunsTable(terminal);
  for (bool first_page = true, any_run = false;; first_page = false) {
    auto page = (*context)->service->QueryRuns(query);
    if (!page) {
      std::cout << std::flush;  // a stream cut short; the exit status says so
      return Failure(page.error());
    }
    std::optional<std::string> next = args.all ? std::nullopt : page->next;
    if (flags.json) {
      if (first_page) std::cout << R"({"nextCursor":)" << TerminalJson(next ? Json(*next) : Json(nullptr)) << R"(,"runs":[)";
      for (const auto& run : page->runs) {
        std::cout << (any_run ? "," : "") << TerminalJson(controller::RunSummaryToJson(run));
        any_run = true;
      }
    } else if (first_page && page->runs.empty()) {
      PrintNoRuns(args, "");
    } else {
      std::cout << table.table.Rows(RunRows(*(*context)->store, page->runs, table));
      if (next) std::cout << "next: " << TerminalText(NextRunsCommand(args, flags, *next)) << "\n";
    }
    if (!args.all || !page->next) break;
    std::cout << std::flush;  // streamed: each page is out before the next is read
    query.before = page->next;
  }
  if (flags.json) std::cout << "]}\n";
  return 0;
}

int Show(const LedgerFlags& flags, const std::string& typed_run, const Terminal& terminal) {
  int code = 0;
  auto open = OpenRunNamed(flags, typed_run, code);
  if (!open) return code;
  auto& context = *open->context;
  auto detail = context.service->GetRun(open->run_id);
  if (!detail) return Failure(detail.error());
  Json observation = ObservationSummary(detail->run);
  auto cost = context.store->GetContextCost(open->run_id);
  if (!cost) return Failure(cost.error());
  if (flags.json) {
    Json artifacts = Json::array();
    for (const auto& meta : detail->artifacts) {
      Json item = controller::ArtifactMetaToJson(meta);
      if (auto provenance = store::ProvenanceOf(meta)) item["provenance"] = std::string(store::ProvenanceName(*provenance));
      artifacts.push_back(std::move(item));
    }
    PrintJson(Json{{"run", controller::RunToJson(detail->run)}, {"observation", observation}, {"artifacts", artifacts},
                   {"nextAction", detail->next_action}, {"contextCost", controller::ContextCostToJson(*cost)}},
              flags);
    return 0;
  }
  const auto& run = detail->run;
  // Free text is cut to what the terminal leaves beside the label.
  const size_t label = 11;
  size_t room = terminal.width > label + kMinFlexWidth ? terminal.width - label : 0;
  std::string out;
  out += Field("run", Paint(TerminalText(run.run_id), Style::kYellow, terminal.color));
  out += Field("request", OneLine(RequestLine(*context.store, run, 100), room));
  out += Field("mode", TerminalText(std::string(domain::Name(run.requested_mode))));
  out += Field("topology", TerminalText(std::string(domain::Name(run.topology))));
  out += Field("status", Paint(TerminalText(std::string(domain::Name(run.status))), StatusStyle(domain::Name(run.status)), terminal.color));
  out += Field("phase", TerminalText(Phase(run.phase)));
  out += Field("version", std::to_string(run.version));
  out += Field("repository", TerminalText(run.repository_root));
  out += Field("created", TerminalText(run.created_at));
  out += Field("updated", TerminalText(run.updated_at));
  out += Field("next", fmt::format("{} ({})", TerminalText(detail->next_action.value("phase", "")),
                                   TerminalText(detail->next_action.value("kind", ""))));
  out += Field("context", OneLine(controller::ContextCostSummary(*cost), room));  // what the results cost the host's model
  std::string observed = observation.contains("reason") ? observation["reason"].get<std::string>()
                                                        : std::string("the work tree telic shares with the host");
  out += Field("observed", OneLine(fmt::format("{} (policy {})", observed, observation["policy"].get<std::string>()), room));
  std::cout << out << "\n";
  std::vector<std::vector<std::string>> rows;
  auto created = ui::ParseIsoMillis(run.created_at);
  for (const auto& meta : detail->artifacts) {
    std::string when = meta.created_at;
    if (terminal.width > 0 && created) when = EventTime(meta.created_at, *created, TimeStyle::kRelative);
    rows.push_back({meta.id, std::string(domain::Name(meta.type)), meta.producer, ProvenanceColumn(meta), meta.sha256.substr(0, 19), when});
  }
  TableLayout layout;
  layout.color = terminal.color;
  layout.width = terminal.width;
  layout.flex = 0;  // long artifact ids give way first
  std::cout << FormatTable({"ARTIFACT", "TYPE", "PRODUCER", "PROVENANCE", "SHA256", "CREATED"}, rows, layout);
  std::cout << "see also: telic trace " << TerminalText(ShellWord(run.run_id) + LocationArguments(flags)) << "\n";
  return 0;
}

std::optional<TimeStyle> ParseTimeStyle(std::string_view text) {
  if (text == "relative") return TimeStyle::kRelative;
  if (text == "clock") return TimeStyle::kClock;
  if (text == "full") return TimeStyle::kFull;
  return std::nullopt;
}

std::string EventTime(const std::string& timestamp, int64_t start_ms, TimeStyle style) {
  auto at = ui::ParseIsoMillis(timestamp);
  if (!at || style == TimeStyle::kFull) return timestamp;
  if (style == TimeStyle::kRelative) return ui::FormatOffset(*at - start_ms);
  size_t t = timestamp.find('T');
  std::string clock = t == std::string::npos ? timestamp : timestamp.substr(t + 1);
  if (!clock.empty() && clock.back() == 'Z') clock.pop_back();
  return clock;
}

int Trace(const LedgerFlags& flags, const std::string& typed_run, TimeStyle style, const Terminal& terminal) {
  int code = 0;
  auto open = OpenRunNamed(flags, typed_run, code);
  if (!open) return code;
  auto events = WholeTrace(*open->context->service, open->run_id);
  if (!events) return Failure(events.error());
  if (flags.json) {
    Json list = Json::array();
    for (const auto& event : *events) {
      Json internal = controller::TraceEventToInternal(event);
      // Evidence events say whose it is (store::Provenance): telic's own, or the host's claim.
      if (std::string provenance = EventProvenance(event); !provenance.empty()) internal["provenance"] = provenance;
      list.push_back(std::move(internal));
    }
    PrintJson(Json{{"runId", open->run_id}, {"events", list}}, flags);
    return 0;
  }
  int64_t start = 0;
  if (!events->empty()) start = ui::ParseIsoMillis(events->front().timestamp).value_or(0);
  std::vector<std::vector<std::string>> rows;
  for (const auto& event : *events) {
    std::string provenance = EventProvenance(event);
    rows.push_back({std::to_string(event.sequence), EventTime(event.timestamp, start, style), event.actor,
                    Phase(event.phase), provenance.empty() ? event.event_type : event.event_type + " (" + provenance + ")",
                    event.summary});
  }
  TableLayout layout;
  layout.color = terminal.color;
  layout.width = terminal.width;
  layout.flex = 5;
  layout.style = [](size_t column, const std::string& cell) {
    if (column == 1) return Style::kDim;
    bool denied = cell.find("deny") != std::string::npos || cell.find("rejected") != std::string::npos;
    return column == 4 && denied ? Style::kRed : Style::kPlain;
  };
  std::cout << FormatTable({"SEQ", style == TimeStyle::kRelative ? "AFTER" : "TIME", "ACTOR", "PHASE", "EVENT", "SUMMARY"},
                           rows, layout);
  return 0;
}

int Artifact(const LedgerFlags& flags, const std::string& first, const std::string& second, bool reveal) {
  std::string run_text = first, artifact_text = second;
  const std::string prefix = "artifact://";
  if (first.rfind(prefix, 0) == 0) {
    std::string rest = first.substr(prefix.size());
    auto slash = rest.find('/');
    if (slash == std::string::npos) return Failure(Error(ErrorCode::kInvalidArgument, "artifact reference must be artifact://<run>/<id>"));
    run_text = rest.substr(0, slash);
    artifact_text = rest.substr(slash + 1);
  } else if (second.empty()) {
    return Failure(Error(ErrorCode::kInvalidArgument, "give artifact://<run>/<id> or RUN_ID ARTIFACT_ID"));
  }
  int code = 0;
  auto open = OpenRunNamed(flags, run_text, code);
  if (!open) return code;
  auto& service = *open->context->service;
  auto artifact = service.GetArtifact(open->run_id, artifact_text);
  if (!artifact && artifact.error().code() == ErrorCode::kNotFound) {
    auto detail = service.GetRun(open->run_id);
    if (!detail) return Failure(detail.error());
    auto artifact_id = ResolveArtifactId(detail->artifacts, artifact_text);
    if (!artifact_id) return ReportResolutionFailure(std::cerr, artifact_id.error());
    artifact = service.GetArtifact(open->run_id, *artifact_id);
  }
  if (!artifact) return Failure(artifact.error());
  Json hydrated = controller::HydratedArtifactToJson(*artifact);
  if (!reveal) {
    Json masked = store::RedactedJson(hydrated["body"]);
    if (masked != hydrated["body"]) {
      std::cerr << "telic: values that look like credentials are shown as [REDACTED:...]; the stored bytes are "
                   "unchanged (--reveal prints them)\n";
      hydrated["body"] = std::move(masked);
    }
  }
  if (flags.json) {
    PrintJson(Json{{"artifact", hydrated}}, flags);
  } else {
    std::cout << TerminalJson(hydrated, 2) << "\n";
  }
  return 0;
}

int Verify(const LedgerFlags& flags, const std::string& typed_run, const Terminal& terminal) {
  int code = 0;
  auto open = OpenRunNamed(flags, typed_run, code);
  if (!open) return code;
  auto report = controller::VerifyRun(*open->context->service, open->run_id);
  if (!report) return Failure(report.error());
  bool ok = (*report)["ok"].get<bool>();
  if (flags.json) {
    PrintJson(*report, flags);
  } else {
    std::cout << fmt::format("{}: {} of {} artifacts verified, {} trace events chained{}\n", TerminalText(open->run_id),
                             (*report)["artifactsVerified"].get<size_t>(), (*report)["artifacts"].get<size_t>(),
                             (*report)["traceEvents"].get<int64_t>(),
                             ok ? Paint(", no problems", Style::kGreen, terminal.color) : "");
    for (const Json& p : (*report)["problems"]) {
      std::cout << "  " << Paint("problem:", Style::kRed, terminal.color) << " " << TerminalText(p.get<std::string>()) << "\n";
    }
  }
  return ok ? 0 : 1;
}

std::vector<std::string> ReplayStepPhases(const Json& steps, const std::vector<store::TraceEventRecord>& trace,
                                          const std::vector<store::ArtifactMeta>& artifacts) {
  std::map<std::string, std::string> created;  // artifact URI -> created_at
  for (const auto& meta : artifacts) created[store::ArtifactUri(meta.run_id, meta.id)] = meta.created_at;
  std::vector<std::string> phases;
  for (const Json& step : steps) {
    std::string uri = step.value("artifactRef", "");
    const store::TraceEventRecord* listing = nullptr;
    for (const auto& event : trace) {
      if (std::find(event.output_refs.begin(), event.output_refs.end(), uri) != event.output_refs.end()) listing = &event;
    }
    if (listing == nullptr && created.count(uri) && !trace.empty()) {
      listing = &trace.front();
      for (const auto& event : trace) {
        if (event.timestamp <= created[uri]) listing = &event;  // ISO-8601 UTC text orders by time
      }
    }
    phases.push_back(listing != nullptr ? listing->phase : step.value("phase", ""));
  }
  return phases;
}

int Replay(const LedgerFlags& flags, const std::string& typed_run, const Terminal& terminal) {
  int code = 0;
  auto open = OpenRunNamed(flags, typed_run, code);
  if (!open) return code;
  auto& service = *open->context->service;
  auto report = service.ReplayRun(open->run_id);
  if (!report) return Failure(report.error());
  bool consistent = (*report)["stateCheck"]["consistent"].get<bool>();
  if (flags.json) {
    std::cout << TerminalJson(*report, 2) << "\n";
    return consistent ? 0 : 1;
  }
  auto trace = WholeTrace(service, open->run_id);
  if (!trace) return Failure(trace.error());
  auto detail = service.GetRun(open->run_id);
  if (!detail) return Failure(detail.error());
  const Json& steps = (*report)["steps"];
  std::vector<std::string> phases = ReplayStepPhases(steps, *trace, detail->artifacts);
  std::cout << fmt::format("{} ({} topology): {} steps\n", TerminalText(open->run_id),
                           TerminalText((*report)["topology"].get<std::string>()), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Json& step = steps[i];
    std::string digest = step["digestStatus"].get<std::string>();
    std::cout << TerminalText(fmt::format("  #{:<4} {:<26} {:<20} ", step["sequence"].get<int64_t>(), Phase(phases[i]),
                                          step["artifactType"].get<std::string>()))
              << Paint(TerminalText(digest), digest == "ok" ? Style::kGreen : Style::kRed, terminal.color)
              << TerminalText(step.contains("escalationReason") ? " (" + step["escalationReason"].get<std::string>() + ")" : "")
              << "\n";
  }
  for (const Json& h : (*report)["traceHighlights"]) std::cout << "  highlight: " << TerminalText(h.get<std::string>()) << "\n";
  std::cout << (consistent ? Paint("state check: the stored run equals its replay", Style::kGreen, terminal.color)
                           : Paint("state check: DIFFERENCES", Style::kRed, terminal.color))
            << "\n";
  for (const Json& d : (*report)["stateCheck"]["differences"]) {
    std::cout << "  difference: " << TerminalText(d.get<std::string>()) << "\n";
  }
  return consistent ? 0 : 1;
}

}  // namespace telic::cli
