#include "cli/commands.h"

#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "base/file_read.h"
#include "base/ids.h"
#include "base/redact.h"
#include "base/text.h"
#include "cli/demo.h"
#include "cli/format.h"
#include "cli/ground_command.h"
#include "cli/validate_command.h"
#include "cli/graph_commands.h"
#include "cli/http_features.h"
#include "cli/http_settings.h"
#include "cli/retention_command.h"
#include "cli/bundle_command.h"
#include "mcp/check_tool.h"
#include "store/state_config.h"
#include "mcp/graph_tools.h"
#include "cli/broker_gate.h"
#include "cli/check_command.h"
#include "cli/install_command.h"
#include "cli/install_hosts.h"
#include "cli/ui_command.h"
#include "controller/broker.h"
#include "controller/grounder.h"
#include "controller/run_service.h"
#include "controller/verify.h"
#include "controller/views.h"
#include "observation/work_tree.h"
#include "mcp/child_client.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp/stdio.h"
#include "policy/permission_set.h"
#include "store/background_open.h"
#include "store/open_store.h"
#include "store/pg_store.h"
#include "store/records.h"
#include "store/sqlite_store.h"
#include "store/state_dir.h"

namespace telic::cli {
namespace {

struct Options {
  std::string repo;
  std::string db;  // a SQLite file path, or a postgresql:// URL
  bool json = false;
  // serve --http
  std::string http;
  std::string auth_token_file;
  std::vector<std::string> allow_origins;
  std::vector<std::string> allow_hosts;
  bool ui = false;  // serve --http --ui: the web UI under /ui
  std::string idle_after = "15m";  // the UI marks a running run idle after this long without a change
  bool reveal = false;  // artifact --reveal: the body's exact strings, likely credentials included
  HttpLimitFlags http_limits;
  std::string profile;  // serve --profile: default | lean ("" = TELIC_PROFILE, else default)
  // serve: whether telic shares the host's work tree (issue 38) and how
  // strictly runs observe it (observe_work.h); also TELIC_WORKTREE=none and
  // TELIC_OBSERVATION=checked|require_observed.
  bool no_worktree = false;
  std::string observation;
};

// Everything a command needs: where state lives, the open store, the service.
struct Context {
  store::StateLocation location;
  std::unique_ptr<store::Store> store;
  SystemClock clock;
  RandomIdSource ids;
  std::unique_ptr<controller::RunService> service;
  std::unique_ptr<GraphContext> graph;  // the task graph in the same ledger
};

std::string CurrentDirectory() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

// Resolves the state location from --repo / --db and the environment. The
// repository root must be a directory and an existing SQLite ledger a
// regular file (a FIFO or device there would block or read forever).
Result<store::StateLocation> Locate(const Options& options) {
  store::Environment env = store::CurrentEnvironment();
  if (!options.repo.empty()) env["TELIC_REPOSITORY_ROOT"] = options.repo;
  TELIC_ASSIGN_OR_RETURN(store::StateLocation location, store::ResolveStateLocation(env, CurrentDirectory()));
  if (store::IsPostgresUrl(options.db)) {
    location.ledger_path = options.db;  // the state dir stays the default (excluded from grounding)
  } else if (!options.db.empty()) {
    location.ledger_path = std::filesystem::absolute(options.db).lexically_normal().string();
    location.state_dir = std::filesystem::path(location.ledger_path).parent_path().string();
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(location.repository_root, ec)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the repository root {} is not a directory", location.repository_root));
  }
  if (!store::IsPostgresUrl(location.ledger_path)) {
    std::string why = NonRegularFileReason(location.ledger_path);
    if (!why.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("the ledger {} cannot be used: {}", location.ledger_path, why));
  }
  return location;
}

// The run service over context.store, its grounder, the task graph beside
// it and the listener that mirrors accepted changes into the graph.
// `serving`: for `telic serve`, whose task graph store connects on first use
// (a session that never touches the graph does not open it, D-START3).
Status WireContext(Context& context, bool serving) {
  context.service = std::make_unique<controller::RunService>(*context.store, context.clock, context.ids,
                                                             context.location.repository_root);
  context.service->set_grounder(controller::MakeRepositoryGrounder({context.location.state_dir}));
  // The task graph lives beside the runs: the same SQLite ledger, or the same
  // PostgreSQL database shared by every instance (docs/DECISIONS.md D43).
  TELIC_ASSIGN_OR_RETURN(context.graph,
                         OpenGraph(context.location.ledger_path, *context.store, context.clock, context.ids, serving));
  // Accepted WorkPlans and WorkResults drive the task graph (issue 7): every
  // committed change of a run is mirrored, serially within this process.
  context.service->set_change_listener(
      [tasks = context.graph->service.get(), mutex = std::make_shared<std::mutex>()](const std::string& run_id) {
        std::lock_guard lock(*mutex);
        // The run's change is committed: nothing here may turn it into a
        // failure, so errors (and exceptions) are logged, never thrown.
        try {
          auto synced = tasks->SyncRun(run_id);
          if (!synced) {
            std::cerr << "telic: the task graph of run " << run_id
                      << " is behind (repaired on the next change): " << CleanMessage(synced.error().message()) << "\n";
          } else {
            for (const auto& skipped : synced->skipped_plans) {
              std::cerr << "telic: run " << run_id << ": WorkPlan not mirrored in the task graph: " << skipped << "\n";
            }
          }
        } catch (const std::exception& ex) {
          std::cerr << "telic: the task graph of run " << run_id << " could not be synced: " << ex.what() << "\n";
        }
      });
  return Ok();
}

// Resolves the state location; with `create`, prepares the default state
// directory; with `create` false, a missing SQLite ledger is an error.
Result<std::unique_ptr<Context>> LocateContext(const Options& options, bool create) {
  auto context = std::make_unique<Context>();
  TELIC_ASSIGN_OR_RETURN(context->location, Locate(options));
  bool postgres = store::IsPostgresUrl(options.db);
  if (!create && !postgres && !std::filesystem::exists(context->location.ledger_path)) {
    return Fail(ErrorCode::kNotFound, fmt::format("No Telic ledger exists at {}", context->location.state_dir));
  }
  if (options.db.empty()) TELIC_RETURN_IF_ERROR(store::PrepareStateDir(context->location));
  // Scratch left by a killed import or verify is removed at the next start;
  // failing to clean it does not stop the command.
  (void)store::CleanStaleScratch(context->location.state_dir);
  return context;
}

// Opens the store. With `create` false, a missing ledger is an error.
Result<std::unique_ptr<Context>> OpenContext(const Options& options, bool create, bool serving = false) {
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, LocateContext(options, create));
  TELIC_ASSIGN_OR_RETURN(context->store, store::OpenStore(context->location.ledger_path));
  TELIC_RETURN_IF_ERROR(WireContext(*context, serving));
  return context;
}

// Ends `telic serve` whose ledger could not be opened, as a failed start
// ends: one "Telic MCP failed: ..." line on stderr, exit status 1. It takes
// stdout's lock first, so a reply being written (ServeStdio writes each line
// under it) is finished, and no later one starts.
// Only the first caller prints: a second failure on another thread (the
// background open and the main thread's own checks) waits for the exit.
[[noreturn]] void EndFailedServe(const Error& error) {
  static std::atomic<bool> ending{false};
  if (ending.exchange(true)) {
    for (;;) ::pause();
  }
  std::cerr << "Telic MCP failed: " << CleanMessage(error.message()) << std::endl;
  ::flockfile(stdout);
  std::_Exit(1);
}

// `telic serve` over stdio on a SQLite ledger: the ledger opens, migrates and
// applies retention on start (PruneOnStart) on a thread of its own, while the
// client's `initialize` is answered (issue 18 target 3, D-START6); every tool
// call waits for the open. A failed open ends the process (EndFailedServe);
// a successful one prints the "ready" line.
Result<std::unique_ptr<Context>> OpenServingContextInBackground(const Options& options) {
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, LocateContext(options, true));
  // The opener owns copies of what it uses: it may outlive a Context whose
  // wiring failed (the store's destructor joins it).
  context->store = std::make_unique<store::BackgroundOpenedStore>(
      [location = context->location]() -> Result<std::unique_ptr<store::Store>> {
        auto opened = store::OpenStore(location.ledger_path);
        if (!opened) EndFailedServe(opened.error());
        SystemClock clock;
        RandomIdSource ids;
        controller::RunService retention(**opened, clock, ids, location.repository_root);
        if (auto pruned = PruneOnStart(location.state_dir, retention, std::cerr); !pruned) EndFailedServe(pruned.error());
        std::cerr << "Telic MCP ready for " << location.repository_root << std::endl;
        return opened;
      });
  TELIC_RETURN_IF_ERROR(WireContext(*context, /*serving=*/true));
  return context;
}

// `telic serve`'s observation settings: the host's work tree (the
// repository root) is observed unless --no-worktree or TELIC_WORKTREE=none
// says the server does not see it; --observation or TELIC_OBSERVATION sets
// the policy of runs that do not choose one.
Status ConfigureObservation(Context& context, const Options& options) {
  store::Environment env = store::CurrentEnvironment();
  std::string worktree = env.count("TELIC_WORKTREE") ? env["TELIC_WORKTREE"] : "shared";
  if (worktree != "shared" && worktree != "none") {
    return Fail(ErrorCode::kInvalidArgument, "TELIC_WORKTREE must be shared or none");
  }
  if (options.no_worktree || worktree == "none") {
    context.service->set_work_tree(nullptr);
  } else {
    context.service->set_work_tree(std::make_shared<observation::LazyGitWorkTree>(
        context.location.repository_root, std::vector<std::string>{context.location.state_dir}));
  }
  std::string policy = !options.observation.empty()         ? options.observation
                       : env.count("TELIC_OBSERVATION") ? env["TELIC_OBSERVATION"]
                                                          : "checked";
  auto parsed = controller::ParseObservationPolicy(policy);
  if (!parsed) return Fail(ErrorCode::kInvalidArgument, "The observation policy must be checked or require_observed");
  context.service->set_default_observation_policy(*parsed);
  return Ok();
}

int Failure(const Error& error) { return ReportFailure(std::cerr, error); }

void PrintJson(const Json& value, const Options& options) { std::cout << TerminalJson(value, options.json ? -1 : 2) << "\n"; }


// The HTTP listener settings shared by `serve --http` and `ui`: address,
// bearer token, extra origins and hosts.
Result<mcp::HttpOptions> HttpSettings(const Options& options, Context& context) {
  TELIC_ASSIGN_OR_RETURN(auto address, mcp::ParseListenAddress(options.http));
  mcp::HttpOptions http;
  http.host = address.first;
  http.port = address.second;
  if (!options.auth_token_file.empty()) {
    TELIC_ASSIGN_OR_RETURN(http.auth_token, ReadTokenFile(options.auth_token_file));
  }
  http.allowed_origins = options.allow_origins;
  http.allowed_hosts = options.allow_hosts;
  ApplyHttpLimits(options.http_limits, http);
  store::Store& ledger = *context.store;
  http.readiness = [&ledger] { return store::CheckStoreReady(ledger); };
  return http;
}

int ServeOverHttp(const HttpFeatures& features, const Options& options, mcp::Server& server, Context& context) {
  auto http = HttpSettings(options, context);
  if (!http) return Failure(http.error());
  UiBinding ui;
  if (options.ui) {
    auto idle = store::ParseDuration(options.idle_after);
    if (!idle) return Failure(Error(ErrorCode::kInvalidArgument, "--idle-after: " + idle.error().message()));
    ui = MountUi(features, *http, *context.store, context.graph->store.get(), *context.service, *idle);
  }
  return features.serve_http(server, std::move(*http), context.location.repository_root);
}

// telic ui: the read-only web trace viewer over the ledger (no /mcp).
int Ui(Options options) {
  auto features = RequireHttp();  // in `telic`: runs telic-http instead, or fails
  if (!features) return Failure(features.error());
  if (options.http.empty()) options.http = "127.0.0.1:7420";
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto http = HttpSettings(options, **context);
  if (!http) return Failure(http.error());
  auto idle = store::ParseDuration(options.idle_after);
  if (!idle) return Failure(Error(ErrorCode::kInvalidArgument, "--idle-after: " + idle.error().message()));
  return ServeUi(**features, std::move(*http), *(*context)->store, (*context)->graph->store.get(),
                 *(*context)->service, *idle);
}

int Serve(const Options& options) {
  const HttpFeatures* features = nullptr;
  if (!options.http.empty()) {
    auto linked = RequireHttp();  // in `telic`: runs telic-http instead, or fails
    if (!linked) {
      std::cerr << "Telic MCP failed: " << CleanMessage(linked.error().message()) << "\n";
      return 1;
    }
    features = *linked;
  }
  // --profile, else TELIC_PROFILE, else default; an unknown name is a usage error.
  const char* from_env = std::getenv("TELIC_PROFILE");
  std::string profile_name = !options.profile.empty()             ? options.profile
                             : from_env != nullptr && *from_env    ? std::string(from_env)
                                                                   : std::string("default");
  std::optional<mcp::Profile> profile = mcp::ProfileNamed(profile_name);
  if (!profile) {
    std::cerr << "telic: unknown profile '" << CleanMessage(profile_name, 64) << "' (default or lean)\n";
    return 2;
  }
  // Over stdio on SQLite the ledger opens while `initialize` is answered.
  bool open_in_background = features == nullptr && !store::IsPostgresUrl(options.db);
  auto context = open_in_background ? OpenServingContextInBackground(options)
                                    : OpenContext(options, true, /*serving=*/true);
  if (!context) {
    std::cerr << "Telic MCP failed: " << CleanMessage(context.error().message()) << "\n";
    return 1;
  }
  if (auto configured = ConfigureObservation(**context, options); !configured) {
    std::cerr << "Telic MCP failed: " << CleanMessage(configured.error().message()) << "\n";
    return 1;
  }
  // Retention (issue 22): the state directory's config.json may ask to prune
  // on start (in the background open, it is part of the open).
  if (!open_in_background) {
    if (auto pruned = PruneOnStart((*context)->location.state_dir, *(*context)->service, std::cerr); !pruned) {
      std::cerr << "Telic MCP failed: " << CleanMessage(pruned.error().message()) << "\n";
      return 1;
    }
  }
  mcp::Server server(*(*context)->service);
  server.set_profile(*profile);
  server.AddTools(mcp::BuildGraphTools(*(*context)->graph->service));
  // telic_run_check: sandboxed unless config.json says "checks": {"sandbox": "none"}.
  auto checks = store::ReadCheckConfig((*context)->location.state_dir);
  if (!checks) EndFailedServe(checks.error());  // the background open may be failing on the same file

  controller::CheckSettings check_settings;
  if (checks->unsandboxed) check_settings.sandbox.mode = observation::SandboxMode::kUnsandboxed;
  check_settings.protected_paths = {(*context)->location.state_dir};
  server.AddTools({mcp::RunCheckTool(*(*context)->service, *(*context)->graph->service, std::move(check_settings))});
  // The per-store key that authenticates requestState (D-MCPB1), created on first use.
  server.set_request_state_key_file((std::filesystem::path((*context)->location.state_dir) / "request-state.key").string());
  // `telic broker-gate` finds the active run in the ledger (D-P2): nothing
  // besides the commit is written per call (no active-session.json).
  if (features != nullptr) return ServeOverHttp(*features, options, server, **context);
  if (!open_in_background) std::cerr << "Telic MCP ready for " << (*context)->location.repository_root << std::endl;
  int status = mcp::ServeStdio(server, stdin, stdout);
  // Input ended, maybe before the ledger was open: the exit status still says
  // whether the start succeeded (a failed open ends the process in EndFailedServe).
  if (open_in_background) (void)static_cast<store::BackgroundOpenedStore&>(*(*context)->store).Opened();
  return status;
}

// `telic runs` flags.
struct RunsArgs {
  int limit = 20;
  std::string before;  // a cursor; "" for the first page
  bool all = false;
  std::string status, mode;  // "" for any
};

constexpr int kDefaultRunsLimit = 20;
// The page size `--all` reads with.
constexpr int kAllRunsPage = 500;

// `value` as one shell word (quoted when it holds anything but [A-Za-z0-9._:/=@+-]).
std::string ShellWord(const std::string& value) {
  bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("._:/=@+-").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return value;
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command that lists the page after `cursor` with the same filters.
std::string NextRunsCommand(const RunsArgs& args, const std::string& cursor) {
  std::string command = "telic runs";
  if (args.limit != kDefaultRunsLimit) command += " --limit " + std::to_string(args.limit);
  if (!args.status.empty()) command += " --status " + ShellWord(args.status);
  if (!args.mode.empty()) command += " --mode " + ShellWord(args.mode);
  return command + " --before " + ShellWord(cursor);
}

// One page (or with --all every run, streamed a page at a time), newest
// created first. Table output ends with "next: <command>" when more runs
// follow; JSON output is {"nextCursor": cursor|null, "runs": [RunSummary...]}.
int Runs(const Options& options, const RunsArgs& args) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  store::RunQuery query;
  query.limit = args.all ? kAllRunsPage : args.limit;
  if (!args.before.empty()) query.before = args.before;
  if (!args.status.empty()) query.status = args.status;
  if (!args.mode.empty()) query.mode = args.mode;
  TableStream table({"RUN", "MODE", "TOPOLOGY", "STATUS", "PHASE", "VERSION", "UPDATED"});
  for (bool first_page = true, any_run = false;; first_page = false) {
    auto page = (*context)->service->QueryRuns(query);
    if (!page) {
      std::cout << std::flush;  // a stream cut short; the exit status says so
      return Failure(page.error());
    }
    std::optional<std::string> next = args.all ? std::nullopt : page->next;
    if (options.json) {
      if (first_page) std::cout << R"({"nextCursor":)" << TerminalJson(next ? Json(*next) : Json(nullptr)) << R"(,"runs":[)";
      for (const auto& run : page->runs) {
        std::cout << (any_run ? "," : "") << TerminalJson(controller::RunSummaryToJson(run));
        any_run = true;
      }
    } else {
      std::vector<std::vector<std::string>> rows;
      for (const auto& run : page->runs) {
        rows.push_back({run.run_id, run.requested_mode, run.topology, run.status, run.phase,
                        std::to_string(run.version), run.updated_at});
      }
      std::cout << table.Rows(rows);
      if (next) std::cout << "next: " << NextRunsCommand(args, *next) << "\n";
    }
    if (!args.all || !page->next) break;
    std::cout << std::flush;  // streamed: each page is out before the next is read
    query.before = page->next;
  }
  if (options.json) std::cout << "]}\n";
  return 0;
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

int Show(const Options& options, const std::string& run_id) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto detail = (*context)->service->GetRun(run_id);
  if (!detail) return Failure(detail.error());
  Json artifacts = Json::array();
  for (const auto& meta : detail->artifacts) {
    Json item = controller::ArtifactMetaToJson(meta);
    if (auto provenance = store::ProvenanceOf(meta)) item["provenance"] = std::string(store::ProvenanceName(*provenance));
    artifacts.push_back(std::move(item));
  }
  Json observation = ObservationSummary(detail->run);
  auto cost = (*context)->store->GetContextCost(run_id);
  if (!cost) return Failure(cost.error());
  if (options.json) {
    PrintJson(Json{{"run", controller::RunToJson(detail->run)}, {"observation", observation}, {"artifacts", artifacts},
                   {"nextAction", detail->next_action}, {"contextCost", controller::ContextCostToJson(*cost)}},
              options);
    return 0;
  }
  const auto& run = detail->run;
  std::cout << fmt::format("run        {}\nmode       {}\ntopology   {}\nstatus     {}\nphase      {}\nversion    {}\n"
                           "repository {}\ncreated    {}\nupdated    {}\nnext       {} ({})\n",
                           TerminalText(run.run_id), TerminalText(run.requested_mode), TerminalText(run.topology),
                           TerminalText(run.status), TerminalText(run.phase), run.version,
                           TerminalText(run.repository_root), TerminalText(run.created_at), TerminalText(run.updated_at),
                           TerminalText(detail->next_action.value("phase", "")),
                           TerminalText(detail->next_action.value("kind", "")));
  std::cout << fmt::format("context    {}\n", controller::ContextCostSummary(*cost));  // what the results cost the host's model
  std::cout << fmt::format("observed   {} (policy {})\n\n",
                           TerminalText(observation.contains("reason") ? observation["reason"].get<std::string>()
                                                                       : std::string("the work tree telic shares with the host")),
                           observation["policy"].get<std::string>());
  std::vector<std::vector<std::string>> rows;
  for (const auto& meta : detail->artifacts) {
    rows.push_back({meta.id, meta.type, meta.producer, ProvenanceColumn(meta), meta.sha256.substr(0, 19), meta.created_at});
  }
  std::cout << FormatTable({"ARTIFACT", "TYPE", "PRODUCER", "PROVENANCE", "SHA256", "CREATED"}, rows);
  return 0;
}

int Trace(const Options& options, const std::string& run_id) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  Json events = Json::array();
  std::vector<std::vector<std::string>> rows;
  int64_t after = 0;
  while (true) {
    auto page = (*context)->service->GetTrace(run_id, after, 500);
    if (!page) return Failure(page.error());
    for (const auto& event : page->events) {
      Json internal = controller::TraceEventToInternal(event);
      // Evidence events say whose it is (store::Provenance): telic's own, or the host's claim.
      std::string provenance = event.event_type == store::kEvidenceObservedEvent  ? "observed"
                               : event.event_type == store::kEvidenceClaimedEvent ? "claimed"
                                                                                   : "";
      if (!provenance.empty()) internal["provenance"] = provenance;
      events.push_back(std::move(internal));
      rows.push_back({std::to_string(event.sequence), event.timestamp, event.actor, event.phase,
                      provenance.empty() ? event.event_type : event.event_type + " (" + provenance + ")", event.summary});
      after = event.sequence;
    }
    if (!page->has_more) break;
  }
  if (options.json) {
    PrintJson(Json{{"runId", run_id}, {"events", events}}, options);
  } else {
    std::cout << FormatTable({"SEQ", "TIME", "ACTOR", "PHASE", "EVENT", "SUMMARY"}, rows);
  }
  return 0;
}

// Accepts "artifact://RUN/ID" or RUN and ID as two arguments. Likely
// credentials in the body are masked (store::RedactedJson) unless --reveal.
int Artifact(const Options& options, const std::string& first, const std::string& second) {
  std::string run_id = first, artifact_id = second;
  const std::string prefix = "artifact://";
  if (first.rfind(prefix, 0) == 0) {
    std::string rest = first.substr(prefix.size());
    auto slash = rest.find('/');
    if (slash == std::string::npos) return Failure(Error(ErrorCode::kInvalidArgument, "artifact reference must be artifact://<run>/<id>"));
    run_id = rest.substr(0, slash);
    artifact_id = rest.substr(slash + 1);
  } else if (second.empty()) {
    return Failure(Error(ErrorCode::kInvalidArgument, "give artifact://<run>/<id> or RUN_ID ARTIFACT_ID"));
  }
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto artifact = (*context)->service->GetArtifact(run_id, artifact_id);
  if (!artifact) return Failure(artifact.error());
  Json hydrated = controller::HydratedArtifactToJson(*artifact);
  if (!options.reveal) {
    Json masked = store::RedactedJson(hydrated["body"]);
    if (masked != hydrated["body"]) {
      std::cerr << "telic: values that look like credentials are shown as [REDACTED:...]; the stored bytes are "
                   "unchanged (--reveal prints them)\n";
      hydrated["body"] = std::move(masked);
    }
  }
  if (options.json) {
    PrintJson(Json{{"artifact", hydrated}}, options);
  } else {
    std::cout << TerminalJson(hydrated, 2) << "\n";
  }
  return 0;
}

std::string SelfExecutable(const char* argv0);

// After `telic export RUN` wrote a bundle: a note on stderr when the run's
// requests (its UserMessages, stored exactly) hold likely credentials, which
// the bundle keeps byte for byte because its digests cover them.
void NoteExactRequests(controller::RunService& service, const std::string& run_id) {
  auto detail = service.GetRun(run_id);
  if (!detail) return;
  size_t credentials = 0;
  for (const auto& meta : detail->artifacts) {
    if (meta.type != "UserMessage") continue;
    auto artifact = service.GetArtifact(run_id, meta.id);
    if (!artifact) continue;
    Json body = Json::parse(artifact->canonical_body, nullptr, false);
    if (body.is_object()) credentials += RedactSecrets(body.value("content", "")).categories.size();
  }
  if (credentials == 0) return;
  std::cerr << fmt::format("telic: the bundle keeps the run's request exactly, with {} value{} that look like "
                           "credentials (its digests cover the exact bytes); share it only as you would share them\n",
                           credentials, credentials == 1 ? "" : "s");
}

// telic install|uninstall HOST: the repository root comes from --repo or the
// environment like every command; the binary configured is this one.
int InstallCommand(const Options& options, InstallRequest request, const std::string& self, bool install) {
  auto location = Locate(options);
  if (!location) return Failure(location.error());
  const char* home = std::getenv("HOME");
  if (request.user && (home == nullptr || *home == '\0')) {
    return Failure(Error(ErrorCode::kFailedPrecondition, "--user needs $HOME"));
  }
  request.project_root = location->repository_root;
  request.home = home != nullptr ? home : "";
  request.telic = self;
  // The install record lives in a state folder (out of the repository's reach).
  if (request.user) {
    auto state = store::ResolveHomeStateDir(store::CurrentEnvironment(), request.home);
    if (!state) return Failure(state.error());
    request.user_state_dir = *state;
  } else {
    if (auto prepared = store::PrepareStateDir(*location); !prepared) return Failure(prepared.error());
    request.state_dir = location->state_dir;
  }
  return install ? RunInstall(request, std::cout, std::cerr) : RunUninstall(request, std::cout, std::cerr);
}

int Doctor(const Options& options, const std::string& self) {
  Json checks = Json::object();
  bool ok = true;
  auto location = Locate(options);
  if (!location) {
    checks["repository"] = {{"ok", false}, {"error", location.error().message()}};
    ok = false;
  } else {
    checks["repository"] = {{"ok", true}, {"root", location->repository_root}};
    bool postgres = store::IsPostgresUrl(location->ledger_path);
    bool exists = postgres || std::filesystem::exists(location->ledger_path);
    checks["ledger"] = {{"exists", exists}, {"stateDirectory", location->state_dir},
                        {"path", postgres ? store::RedactPostgresUrl(location->ledger_path) : location->ledger_path}};
    if (postgres) {
      auto store = store::OpenStore(location->ledger_path);
      bool healthy = store && store::CheckStoreReady(**store).has_value();
      checks["ledger"]["integrity"] = healthy ? "ok" : "failed";
      if (!store) checks["ledger"]["error"] = store.error().message();
      ok = ok && healthy;
    } else if (exists) {
      auto store = store::SqliteStore::Open(location->ledger_path);
      bool healthy = store && (*store)->CheckIntegrity().has_value();
      checks["ledger"]["integrity"] = healthy ? "ok" : "failed";
      ok = ok && healthy;
    }
  }
  checks["git"] = {{"ok", std::system("git --version >/dev/null 2>&1") == 0}, {"optional", true}};
  // Hosts set up by `telic install` (or found here) and whether they are current.
  const char* home = std::getenv("HOME");
  InstallRequest where;
  where.telic = self;
  if (location) {
    where.project_root = location->repository_root;
    where.state_dir = location->state_dir;
  }
  if (home != nullptr && *home != '\0') {
    where.home = home;
    if (auto state = store::ResolveHomeStateDir(store::CurrentEnvironment(), home)) where.user_state_dir = *state;
  }
  checks["hosts"] = HostDoctorChecks(where, ok);
  Json report = {{"ok", ok}, {"version", mcp::kServerVersion}, {"checks", checks}};
  if (options.json) {
    PrintJson(report, options);
  } else {
    std::cout << TerminalJson(report, 2) << "\n";
  }
  return ok ? 0 : 1;
}

int Verify(const Options& options, const std::string& run_id) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto report = controller::VerifyRun(*(*context)->service, run_id);
  if (!report) return Failure(report.error());
  bool ok = (*report)["ok"].get<bool>();
  if (options.json) {
    PrintJson(*report, options);
  } else {
    std::cout << fmt::format("{}: {} of {} artifacts verified, {} trace events chained{}\n", TerminalText(run_id),
                             (*report)["artifactsVerified"].get<size_t>(), (*report)["artifacts"].get<size_t>(),
                             (*report)["traceEvents"].get<int64_t>(), ok ? ", no problems" : "");
    for (const Json& p : (*report)["problems"]) std::cout << "  problem: " << TerminalText(p.get<std::string>()) << "\n";
  }
  return ok ? 0 : 1;
}

std::string SelfExecutable(const char* argv0) {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : path.string();
}

// Drives telic over MCP as a host would (src/cli/demo.cc).
int Demo(const Options& options, const std::string& self, const std::string& scenario, const std::string& workdir) {
  DemoOptions demo{self, scenario, options.db, workdir, options.json};
  auto run = RunDemo(demo, std::cout);
  if (!run) return Failure(run.error());
  return 0;
}

// telic replay RUN: the replay report and the state check; exit 1 on a difference.
int Replay(const Options& options, const std::string& run_id) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto report = (*context)->service->ReplayRun(run_id);
  if (!report) return Failure(report.error());
  bool consistent = (*report)["stateCheck"]["consistent"].get<bool>();
  if (options.json) {
    std::cout << TerminalJson(*report, 2) << "\n";
  } else {
    std::cout << fmt::format("{} ({} topology): {} steps\n", TerminalText(run_id),
                             TerminalText((*report)["topology"].get<std::string>()),
                             (*report)["steps"].size());
    for (const Json& step : (*report)["steps"]) {
      std::cout << TerminalText(fmt::format(
          "  #{:<4} {:<26} {:<20} {}{}", step["sequence"].get<int64_t>(), step["phase"].get<std::string>(),
          step["artifactType"].get<std::string>(), step["digestStatus"].get<std::string>(),
          step.contains("escalationReason") ? " (" + step["escalationReason"].get<std::string>() + ")" : ""))
                << "\n";
    }
    for (const Json& h : (*report)["traceHighlights"]) std::cout << "  highlight: " << TerminalText(h.get<std::string>()) << "\n";
    std::cout << (consistent ? "state check: the stored run equals its replay\n" : "state check: DIFFERENCES\n");
    for (const Json& d : (*report)["stateCheck"]["differences"]) {
      std::cout << "  difference: " << TerminalText(d.get<std::string>()) << "\n";
    }
  }
  return consistent ? 0 : 1;
}

// Every top-level subcommand RunCli registers (a name missing here would only
// make that command's start-up register all of them; RunCliTest checks the
// list against the help).
constexpr std::string_view kSubcommandNames[] = {
    "serve",  "mcp",    "runs",   "export", "import", "show",  "status", "trace",       "artifact", "verify", "doctor",
    "ground", "validate", "schema", "replay", "demo", "report", "tasks", "check", "broker-gate", "install",
    "uninstall", "ui"};

// Whether `sub` was registered and named on the command line.
bool Chosen(const CLI::App* sub) { return sub != nullptr && sub->parsed(); }

// Which top-level subcommands RunCli registers with CLI11. Registering all
// of them with their options cost ~2 M instructions and ~40 page faults of
// every start-up (issue 18 target 3), though a process runs one command.
// When argv[1] names a subcommand, only that one is registered, and its
// parse, help and errors are what they are with all registered. Otherwise
// (no arguments, --help, --version, a misspelt name) every one is, so the
// help and CLI11's errors list them all.
class SubcommandFilter {
 public:
  SubcommandFilter(int argc, char** argv) {
    if (argc < 2 || argv[1] == nullptr) return;
    std::string_view first = argv[1];
    for (std::string_view name : SubcommandNames()) {
      if (name == first) only_ = name;
    }
  }
  bool Wants(std::string_view name) const { return only_.empty() || only_ == name; }

 private:
  std::string_view only_;
};

}  // namespace

std::span<const std::string_view> SubcommandNames() { return kSubcommandNames; }

int RunCli(int argc, char** argv) {
  CLI::App app{fmt::format("telic {}: a deterministic, model-free MCP controller for AI-agent work", mcp::kServerVersion),
               "telic"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", fmt::format("telic {}", mcp::kServerVersion), "print the version and exit");
  Options options;
  const SubcommandFilter filter(argc, argv);
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--repo", options.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
    sub->add_option("--db", options.db,
                    "SQLite ledger file to use instead of the state directory's, or a postgresql:// URL (shared store)");
    sub->add_flag("--json", options.json, "machine-readable JSON output");
  };
  // Each `add` registers one subcommand when the filter wants it; a pointer
  // stays null otherwise (Chosen() is then false).
  auto add = [&](const char* name, const char* description) -> CLI::App* {
    return filter.Wants(name) ? app.add_subcommand(name, description) : nullptr;
  };
  std::string run_id, second;
  RunsArgs runs_args;
  auto* serve = add("serve", "serve MCP on stdin/stdout");
  auto* mcp_alias = add("mcp", "alias of serve (the reference CLI's name)");
  auto* runs = add("runs", "list runs, newest first (by creation), a page at a time");
  std::unique_ptr<RetentionCommands> retention;
  if (runs != nullptr) {
    auto* runs_limit = runs->add_option("--limit", runs_args.limit, "at most this many runs per page (1-100, default 20)")
                           ->check(CLI::Range(1, 100));
    runs->add_option("--before", runs_args.before, "list the page after this cursor (the previous page prints it as next:)")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string {
              bool printable = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char c) {
                return c > 0x20 && c != 0x7F;
              });
              return printable ? "" : "a cursor is the run id a previous page printed after next: --before";
            },
            "CURSOR"));
    runs->add_flag("--all", runs_args.all, "list every run, streamed page by page")->excludes(runs_limit);
    std::vector<std::string> run_statuses(store::kRunStatuses.begin(), store::kRunStatuses.end());
    runs->add_option("--status", runs_args.status, "only runs with this status")->check(CLI::IsMember(run_statuses));
    runs->add_option("--mode", runs_args.mode, "only runs of this requested mode")->check(CLI::IsMember(policy::Modes()));
    retention = AddRetentionCommands(runs);
    for (auto* sub : {retention->remove, retention->prune, retention->deleted}) add_common(sub);
  }
  std::unique_ptr<BundleCommands> bundles;
  if (filter.Wants("export") || filter.Wants("import")) {
    bundles = AddBundleCommands(app);
    for (auto* sub : {bundles->export_cmd, bundles->import_cmd}) add_common(sub);
  }
  auto* show = add("show", "show one run, its artifacts and next action");
  if (show != nullptr) show->add_option("RUN_ID", run_id)->required();
  auto* status = add("status", "alias of show --json (the reference CLI's name)");
  if (status != nullptr) status->add_option("RUN_ID", run_id)->required();
  auto* trace = add("trace", "show a run's trace events with their hash chain");
  if (trace != nullptr) trace->add_option("RUN_ID", run_id)->required();
  auto* artifact = add("artifact", "print one artifact (artifact://RUN/ID or RUN_ID ARTIFACT_ID)");
  if (artifact != nullptr) {
    artifact->add_option("REF", run_id)->required();
    artifact->add_option("ARTIFACT_ID", second);
    artifact->add_flag("--reveal", options.reveal,
                       "print the body's strings exactly, with values that look like credentials unmasked");
  }
  auto* verify = add("verify", "re-hash every artifact and check the trace hash chain of a run");
  std::string bundle_file;
  if (verify != nullptr) {
    auto* verify_run = verify->add_option("RUN_ID", run_id);
    verify->add_option("--bundle", bundle_file, "check a run bundle file instead (no ledger needed)")->excludes(verify_run);
  }
  auto* doctor = add("doctor", "check the repository, state directory and ledger");
  std::string ground_request;
  auto* ground = add("ground", "preview the ContextManifest for a request, without a run");
  if (ground != nullptr) ground->add_option("REQUEST", ground_request, "the request text")->required();
  auto* validate = add("validate", "validate an artifact file against its schema and refinements");
  std::string file, type;
  bool list = false;
  if (validate != nullptr) {
    validate->add_option("FILE", file)->required();
    validate->add_option("--type", type, "artifact type (default: the stored artifact's own type field)");
  }
  auto* schema_cmd = add("schema", "print an artifact type's JSON Schema");
  if (schema_cmd != nullptr) {
    schema_cmd->add_option("TYPE", type);
    schema_cmd->add_flag("--list", list, "list the artifact types");
  }
  auto* replay = add("replay", "re-derive a run's state from its artifacts and events; exit 1 on a difference");
  if (replay != nullptr) replay->add_option("RUN_ID", run_id)->required();
  auto* demo = add("demo", "drive a complete analyze_and_fix run over MCP the way a host would");
  std::string scenario = "analyze_and_fix", workdir;
  if (demo != nullptr) {
    demo->add_option("--scenario", scenario, "embedded scenario to drive (examples/<name>.json)");
    demo->add_option("--workdir", workdir, "folder for the demo repository and state (default: a new temporary folder)");
  }
  for (auto* sub : {serve, mcp_alias, runs, show, status, trace, artifact, verify, doctor, ground, replay, demo, validate, schema_cmd}) {
    if (sub != nullptr) add_common(sub);
  }
  std::unique_ptr<GraphCommands> graph_commands;
  if (filter.Wants("report") || filter.Wants("tasks")) {
    graph_commands = AddGraphCommands(app);
    for (auto* sub : {graph_commands->report_parse, graph_commands->tasks}) add_common(sub);
  }
  std::string policy_file, action_json;
  auto* check = add("check", "decide one action against a policy file (exit 0 allow, 3 deny, 2 usage)");
  if (check != nullptr) {
    check->add_option("--policy", policy_file, "policy file (JSON, see docs/PERMISSIONS.md)")->required();
    check->add_option("--action", action_json, "the action as JSON, or @FILE")->required();
    check->add_flag("--json", options.json, "machine-readable JSON output");
  }
  auto* broker_gate = add("broker-gate", "host hook: decide one tool call read from stdin against the active run");
  std::string hook_host;
  std::string gate = "all";
  std::string outside_run = "deny";
  if (broker_gate != nullptr) {
    broker_gate->add_option("--repo", options.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
    broker_gate->add_option("--db", options.db, "SQLite ledger file to use instead of the state directory's");
    broker_gate->add_option("--host", hook_host, "read and answer this host's pre-tool-use hook format (docs/HOSTS.md)")
        ->check(CLI::IsMember(HookHostNames()));
    broker_gate->add_option("--gate", gate, "all (default) or mutating: leave reads and web fetches ungated")
        ->check(CLI::IsMember({"all", "mutating"}));
    broker_gate
        ->add_option("--outside-run", outside_run,
                     "deny (default) or host: with no active run, let the host's own permissions decide")
        ->check(CLI::IsMember({"deny", "host"}));
  }
  InstallRequest install_request;
  auto* install = add("install", "set a host up: MCP server entry, workflow skill, broker-gate hook");
  auto* uninstall = add("uninstall", "remove exactly what `telic install HOST` added");
  for (auto* sub : {install, uninstall}) {
    if (sub == nullptr) continue;
    sub->add_option("HOST", install_request.host)->required()->check(CLI::IsMember(InstallHostNames()));
    sub->add_flag("--user", install_request.user, "the host's user scope ($HOME) instead of this repository");
    sub->add_option("--repo", options.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
    sub->add_flag("--json", install_request.json, "machine-readable JSON output");
  }
  if (install != nullptr) {
    install
        ->add_option("--gate", install_request.gate,
                     "run (default): the hook gates only while a telic run is active; strict: also deny when none is")
        ->check(CLI::IsMember({"run", "strict"}));
  }
  auto* ui = add("ui", "serve the read-only web trace viewer (default http://127.0.0.1:7420/ui/)");
  if (ui != nullptr) {
    ui->add_option("--http", options.http, "listen on HOST:PORT (default 127.0.0.1:7420; port 0: any free port)");
    add_common(ui);
  }
  for (auto* sub : {serve, mcp_alias}) {
    if (sub == nullptr) continue;
    sub->add_flag("--ui", options.ui, "with --http: also serve the web trace viewer under /ui");
    sub->add_option("--profile", options.profile,
                    "tool results: default (reference shapes) or lean (schemas by reference, short results); "
                    "env TELIC_PROFILE; a client may choose per session at initialize");
    sub->add_flag("--no-worktree", options.no_worktree,
                  "the server does not see the host's work tree: observations say \"not observed\" (also TELIC_WORKTREE=none)");
    sub->add_option("--observation", options.observation,
                    "how strictly runs observe the work: checked (default) or require_observed (also TELIC_OBSERVATION)")
        ->check(CLI::IsMember({"checked", "require_observed"}));
  }
  for (auto* sub : {serve, mcp_alias, ui}) {
    if (sub != nullptr) {
      sub->add_option("--idle-after", options.idle_after,
                      "the viewer marks a running run idle after this long without a change: <N>s|m|h|d|w (default 15m)");
    }
  }
  for (auto* sub : {serve, mcp_alias, ui}) {
    if (sub == nullptr) continue;
    if (sub != ui) sub->add_option("--http", options.http, "serve MCP Streamable HTTP on HOST:PORT (POST /mcp) instead of stdio");
    sub->add_option("--auth-token-file", options.auth_token_file,
                    "require this bearer token on every HTTP request (needed to listen beyond loopback)");
    sub->add_option("--allow-origin", options.allow_origins, "an extra Origin allowed over HTTP (exact, repeatable)");
    sub->add_option("--allow-host", options.allow_hosts, "an extra Host header value allowed over HTTP (repeatable)");
    AddHttpLimitOptions(*sub, options.http_limits);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if ((Chosen(serve) || Chosen(mcp_alias)) && options.ui && options.http.empty()) {
    std::cerr << "telic: --ui needs --http HOST:PORT\n";
    return 2;
  }
  if (Chosen(serve) || Chosen(mcp_alias)) return Serve(options);
  if (Chosen(ui)) return Ui(options);
  if (retention && retention->Selected()) {
    auto context = OpenContext(options, false);
    if (!context) return Failure(context.error());
    return RunRetentionCommand(*retention, *(*context)->service, options.json, std::cout, std::cerr);
  }
  if (Chosen(runs)) return Runs(options, runs_args);
  if (Chosen(show)) return Show(options, run_id);
  if (Chosen(status)) {
    options.json = true;
    return Show(options, run_id);
  }
  if (Chosen(trace)) return Trace(options, run_id);
  if (Chosen(artifact)) return Artifact(options, run_id, second);
  if (Chosen(verify) && !bundle_file.empty()) {
    auto context = LocateContext(options, /*create=*/true);  // the state directory holds the scratch ledger
    if (!context) return Failure(context.error());
    return RunVerifyBundle(bundle_file, (*context)->location.state_dir, options.json, std::cout, std::cerr);
  }
  if (Chosen(verify) && run_id.empty()) {
    std::cerr << "telic: verify needs RUN_ID or --bundle FILE\n";
    return 2;
  }
  if (Chosen(verify)) return Verify(options, run_id);
  if (bundles && (Chosen(bundles->export_cmd) || Chosen(bundles->import_cmd))) {
    auto context = OpenContext(options, static_cast<bool>(*bundles->import_cmd));
    if (!context) return Failure(context.error());
    if (*bundles->export_cmd) {
      // The bundle is renamed over -o FILE: never over a directory, FIFO or device.
      if (std::string why = NonRegularFileReason(bundles->output); !bundles->output.empty() && !why.empty()) {
        return Failure(Error(ErrorCode::kInvalidArgument, fmt::format("cannot write -o {}: {}", bundles->output, why)));
      }
      int code = RunExport(*bundles, *(*context)->service, std::cout, std::cerr);
      if (code == 0 && bundles->otlp->count() == 0) NoteExactRequests(*(*context)->service, bundles->run_id);
      return code;
    }
    auto* tasks = (*context)->graph->service.get();
    return RunImport(*bundles, *(*context)->store, (*context)->location.state_dir,
                     [tasks](const std::string& id) { (void)tasks->SyncRun(id); }, options.json, std::cout, std::cerr);
  }
  if (Chosen(doctor)) return Doctor(options, SelfExecutable(argv[0]));
  if (Chosen(ground)) {
    std::string repo = options.repo;
    if (repo.empty()) {
      auto location = Locate(options);
      if (!location) return Failure(location.error());
      repo = location->repository_root;
    }
    return RunGroundCommand(repo, ground_request, options.json);
  }
  if (Chosen(replay)) return Replay(options, run_id);
  if (Chosen(validate)) return RunValidateCommand(file, type, options.json, std::cout, std::cerr);
  if (Chosen(schema_cmd)) return RunSchemaCommand(type, list, std::cout, std::cerr);
  if (Chosen(demo)) return Demo(options, SelfExecutable(argv[0]), scenario, workdir);
  if (graph_commands && Chosen(graph_commands->report_parse)) return RunReportParse(*graph_commands, options.json);
  if (graph_commands && Chosen(graph_commands->tasks)) {
    auto context = OpenContext(options, false);
    if (!context) return Failure(context.error());
    std::optional<std::string> run;
    if (!graph_commands->run_id.empty()) run = graph_commands->run_id;
    return RunTasks(*(*context)->graph->service, run, options.json);
  }
  if (Chosen(check)) return RunCheckCommand(policy_file, action_json, options.json, std::cout, std::cerr);
  if (Chosen(broker_gate)) {
    HookHost host = hook_host.empty() ? HookHost::kTelic : *ParseHookHost(hook_host);
    return RunBrokerGate(store::CurrentEnvironment(), CurrentDirectory(), options.repo, options.db, host, std::cin,
                         std::cout, gate == "mutating", outside_run == "host" ? OutsideRun::kHost : OutsideRun::kDeny);
  }
  if (Chosen(install) || Chosen(uninstall)) return InstallCommand(options, install_request, SelfExecutable(argv[0]), Chosen(install));
  std::cout << app.help();
  return 0;
}

}  // namespace telic::cli
