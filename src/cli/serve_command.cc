#include "cli/serve_command.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "base/text.h"
#include "cli/format.h"
#include "cli/http_features.h"
#include "cli/retention_command.h"
#include "cli/ui_command.h"
#include "controller/run_service.h"
#include "mcp/check_tool.h"
#include "mcp/graph_tools.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp/stdio.h"
#include "observation/work_tree.h"
#include "store/background_open.h"
#include "store/open_store.h"
#include "store/pg_store.h"
#include "store/state_config.h"

namespace telic::cli {
namespace {

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
Result<std::unique_ptr<Context>> OpenServingContextInBackground(const ServeFlags& options) {
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, LocateContext(options.ledger, true));
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
Status ConfigureObservation(Context& context, const ServeFlags& options) {
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

// The viewer's idle threshold and the HTTP listener's options (serve, mcp, ui).
void AddListenerOptions(CLI::App& command, ServeFlags& flags) {
  command.add_option("--idle-after", flags.idle_after,
                     "the viewer marks a running run idle after this long without a change: <N>s|m|h|d|w (default 15m)");
  command.add_option("--auth-token-file", flags.auth_token_file,
                     "require this bearer token on every HTTP request (needed to listen beyond loopback)");
  command.add_option("--allow-origin", flags.allow_origins, "an extra Origin allowed over HTTP (exact, repeatable)");
  command.add_option("--allow-host", flags.allow_hosts, "an extra Host header value allowed over HTTP (repeatable)");
  AddHttpLimitOptions(command, flags.http_limits);
}

// The HTTP listener settings shared by `serve --http` and `ui`: address,
// bearer token, extra origins and hosts.
Result<mcp::HttpOptions> HttpSettings(const ServeFlags& options, Context& context) {
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

int ServeOverHttp(const HttpFeatures& features, const ServeFlags& options, mcp::Server& server, Context& context) {
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

// --profile, else TELIC_PROFILE, else default; an unknown name is a usage
// error (printed; nullopt).
std::optional<mcp::Profile> ChosenProfile(const ServeFlags& options) {
  const char* from_env = std::getenv("TELIC_PROFILE");
  std::string profile_name = !options.profile.empty()             ? options.profile
                             : from_env != nullptr && *from_env    ? std::string(from_env)
                                                                   : std::string("default");
  std::optional<mcp::Profile> profile = mcp::ProfileNamed(profile_name);
  if (!profile) std::cerr << "telic: unknown profile '" << CleanMessage(profile_name, 64) << "' (default or lean)\n";
  return profile;
}

// The task-graph tools and telic_run_check beside the run tools, and the
// request-state key file.
void AddServedTools(mcp::Server& server, Context& context) {
  server.AddTools(mcp::BuildGraphTools(*context.graph->service));
  // telic_run_check: sandboxed unless config.json says "checks": {"sandbox": "none"}.
  auto checks = store::ReadCheckConfig(context.location.state_dir);
  if (!checks) EndFailedServe(checks.error());  // the background open may be failing on the same file
  controller::CheckSettings check_settings;
  if (checks->unsandboxed) check_settings.sandbox.mode = observation::SandboxMode::kUnsandboxed;
  check_settings.protected_paths = {context.location.state_dir};
  server.AddTools({mcp::RunCheckTool(*context.service, *context.graph->service, std::move(check_settings))});
  // The per-store key that authenticates requestState (D-MCPB1), created on first use.
  server.set_request_state_key_file((std::filesystem::path(context.location.state_dir) / "request-state.key").string());
}

}  // namespace

int Serve(const ServeFlags& options) {
  if (options.ui && options.http.empty()) {
    std::cerr << "telic: --ui needs --http HOST:PORT\n";
    return 2;
  }
  const HttpFeatures* features = nullptr;
  if (!options.http.empty()) {
    auto linked = RequireHttp();  // in `telic`: runs telic-http instead, or fails
    if (!linked) {
      std::cerr << "Telic MCP failed: " << CleanMessage(linked.error().message()) << "\n";
      return 1;
    }
    features = *linked;
  }
  std::optional<mcp::Profile> profile = ChosenProfile(options);
  if (!profile) return 2;
  // Over stdio on SQLite the ledger opens while `initialize` is answered.
  bool open_in_background = features == nullptr && !store::IsPostgresUrl(options.ledger.db);
  auto context = open_in_background ? OpenServingContextInBackground(options)
                                    : OpenContext(options.ledger, true, /*serving=*/true);
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
  AddServedTools(server, **context);
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

int Ui(ServeFlags options) {
  auto features = RequireHttp();  // in `telic`: runs telic-http instead, or fails
  if (!features) return Failure(features.error());
  if (options.http.empty()) options.http = "127.0.0.1:7420";
  auto context = OpenContext(options.ledger, false);
  if (!context) return Failure(context.error());
  auto http = HttpSettings(options, **context);
  if (!http) return Failure(http.error());
  auto idle = store::ParseDuration(options.idle_after);
  if (!idle) return Failure(Error(ErrorCode::kInvalidArgument, "--idle-after: " + idle.error().message()));
  return ServeUi(**features, std::move(*http), *(*context)->store, (*context)->graph->store.get(),
                 *(*context)->service, *idle);
}

void DefineServeOptions(CLI::App& command, ServeFlags& flags) {
  AddLedgerFlags(command, flags.ledger);
  command.add_option("--http", flags.http, "serve MCP Streamable HTTP on HOST:PORT (POST /mcp) instead of stdio");
  command.add_flag("--ui", flags.ui, "with --http: also serve the web trace viewer under /ui");
  command.add_option("--profile", flags.profile,
                     "tool results: default (reference shapes) or lean (schemas by reference, short results); "
                     "env TELIC_PROFILE; a client may choose per session at initialize");
  command.add_flag("--no-worktree", flags.no_worktree,
                   "the server does not see the host's work tree: observations say \"not observed\" (also TELIC_WORKTREE=none)");
  command
      .add_option("--observation", flags.observation,
                  "how strictly runs observe the work: checked (default) or require_observed (also TELIC_OBSERVATION)")
      ->check(CLI::IsMember({"checked", "require_observed"}));
  AddListenerOptions(command, flags);
}

void DefineUiOptions(CLI::App& command, ServeFlags& flags) {
  command.add_option("--http", flags.http, "listen on HOST:PORT (default 127.0.0.1:7420; port 0: any free port)");
  AddLedgerFlags(command, flags.ledger);
  AddListenerOptions(command, flags);
}

}  // namespace telic::cli
