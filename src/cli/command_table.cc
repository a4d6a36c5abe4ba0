#include "cli/command_table.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "base/redact.h"
#include "cli/broker_gate.h"
#include "cli/bundle_command.h"
#include "cli/check_command.h"
#include "cli/completion.h"
#include "cli/demo.h"
#include "cli/doctor_command.h"
#include "cli/format.h"
#include "cli/graph_commands.h"
#include "cli/ground_command.h"
#include "cli/hook_hosts.h"
#include "cli/install_command.h"
#include "cli/install_hosts.h"
#include "cli/ledger_context.h"
#include "cli/retention_command.h"
#include "cli/run_ids.h"
#include "cli/run_views.h"
#include "cli/serve_command.h"
#include "cli/validate_command.h"
#include "base/file_read.h"
#include "mcp/server.h"
#include "policy/permission_set.h"
#include "store/state_dir.h"
#include "store/store.h"

namespace telic::cli {
namespace {

// A required RUN_ID positional.
void AddRunId(CLI::App& sub, std::string& run_id) {
  sub.add_option("RUN_ID", run_id, "the run: its id or a unique prefix of it")->required();
}

// A --flag whose value is one of `choices`.
template <typename Choices>
CLI::Option* AddChoice(CLI::App& sub, const std::string& name, std::string& value, const Choices& choices,
                       const std::string& help) {
  std::vector<std::string> names(std::begin(choices), std::end(choices));
  return sub.add_option(name, value, help)->check(CLI::IsMember(names));
}

// Resolves `typed` run ids (or unique prefixes) in place; prints why not.
std::optional<int> ResolveRunIds(const LedgerFlags& flags, std::vector<std::string*> typed) {
  auto context = OpenContext(flags, false);
  if (!context) return Failure(context.error());
  for (std::string* id : typed) {
    if (id->empty()) continue;
    auto resolved = ResolveRunId(*(*context)->store, *id);
    if (!resolved) return ReportResolutionFailure(std::cerr, resolved.error());
    *id = *resolved;
  }
  return std::nullopt;
}

// The default ledger's path when no --db was given and telic has not run in
// the repository yet (an empty list, not an error); nullopt otherwise.
std::optional<std::string> MissingDefaultLedger(const LedgerFlags& flags) {
  if (!flags.db.empty()) return std::nullopt;
  auto location = Locate(flags);
  if (!location || LedgerExists(*location)) return std::nullopt;
  return location->ledger_path;
}

// --- serve, mcp, ui ---

Handler DefineServe(CLI::App& sub) {
  auto flags = std::make_shared<ServeFlags>();
  DefineServeOptions(sub, *flags);
  return [flags](const Invocation&) { return Serve(*flags); };
}

Handler DefineUi(CLI::App& sub) {
  auto flags = std::make_shared<ServeFlags>();
  DefineUiOptions(sub, *flags);
  return [flags](const Invocation&) { return Ui(*flags); };
}

// --- runs and its retention commands ---

Handler DefineRuns(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    RunsArgs args;
    std::unique_ptr<RetentionCommands> retention;
  };
  auto s = std::make_shared<State>();
  AddLedgerFlags(sub, s->flags);
  auto* limit = sub.add_option("--limit", s->args.limit, "at most this many runs per page (1-100, default 20)")
                    ->check(CLI::Range(1, 100));
  sub.add_option("--before", s->args.before, "list the page after this cursor (the previous page prints it as next:)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            bool printable = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char c) {
              return c > 0x20 && c != 0x7F;
            });
            return printable ? "" : "a cursor is the run id a previous page printed after next: --before";
          },
          "CURSOR"));
  sub.add_flag("--all", s->args.all, "list every run, streamed page by page")->excludes(limit);
  std::vector<std::string> statuses;
  for (domain::RunStatus status : domain::AllRunStatuses()) statuses.emplace_back(domain::Name(status));
  AddChoice(sub, "--status", s->args.status, statuses, "only runs with this status");
  AddChoice(sub, "--mode", s->args.mode, policy::Modes(), "only runs of this requested mode");
  s->retention = AddRetentionCommands(&sub);
  for (auto* nested : {s->retention->remove, s->retention->prune, s->retention->deleted}) AddLedgerFlags(*nested, s->flags);
  return [s](const Invocation& invocation) {
    if (!s->retention->Selected()) return Runs(s->flags, s->args, invocation.terminal());
    if (auto missing = MissingDefaultLedger(s->flags); missing && *s->retention->deleted) {
      std::cout << (s->flags.json ? std::string(R"({"tombstones":[]})")
                                  : "No deleted runs (no ledger at " + TerminalText(*missing) + ").")
                << "\n";
      return 0;
    }
    if (*s->retention->remove) {
      std::vector<std::string*> ids;
      for (std::string& id : s->retention->run_ids) ids.push_back(&id);
      if (auto failed = ResolveRunIds(s->flags, ids)) return *failed;
    }
    auto context = OpenContext(s->flags, false);
    if (!context) return Failure(context.error());
    return RunRetentionCommand(*s->retention, *(*context)->service, s->flags.json, std::cout, std::cerr);
  };
}

// --- show, status, trace, artifact, verify, replay ---

Handler DefineShow(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string run_id;
  };
  auto s = std::make_shared<State>();
  AddRunId(sub, s->run_id);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation& invocation) { return Show(s->flags, s->run_id, invocation.terminal()); };
}

Handler DefineStatus(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string run_id;
  };
  auto s = std::make_shared<State>();
  AddRunId(sub, s->run_id);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation& invocation) {
    LedgerFlags flags = s->flags;
    flags.json = true;
    return Show(flags, s->run_id, invocation.terminal());
  };
}

Handler DefineTrace(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string run_id;
    std::string time = "relative";
  };
  auto s = std::make_shared<State>();
  AddRunId(sub, s->run_id);
  AddLedgerFlags(sub, s->flags);
  AddChoice(sub, "--time", s->time, kTimeStyles,
            "when each event happened: relative to the first (default), clock (time of day, UTC) or full (ISO-8601)");
  return [s](const Invocation& invocation) {
    return Trace(s->flags, s->run_id, ParseTimeStyle(s->time).value_or(TimeStyle::kRelative), invocation.terminal());
  };
}

Handler DefineArtifact(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string ref, artifact_id;
    bool reveal = false;
  };
  auto s = std::make_shared<State>();
  sub.add_option("REF", s->ref, "artifact://RUN/ID, or the run (its id or a unique prefix)")->required();
  sub.add_option("ARTIFACT_ID", s->artifact_id, "the artifact (its id or a unique prefix) when REF is a run");
  sub.add_flag("--reveal", s->reveal, "print the body's strings exactly, with values that look like credentials unmasked");
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) { return Artifact(s->flags, s->ref, s->artifact_id, s->reveal); };
}

Handler DefineVerify(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string run_id, bundle;
  };
  auto s = std::make_shared<State>();
  auto* run = sub.add_option("RUN_ID", s->run_id, "the run: its id or a unique prefix of it");
  sub.add_option("--bundle", s->bundle, "check a run bundle file instead (no ledger needed)")->excludes(run);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation& invocation) {
    if (!s->bundle.empty()) {
      auto context = LocateContext(s->flags, /*create=*/true);  // the state directory holds the scratch ledger
      if (!context) return Failure(context.error());
      return RunVerifyBundle(s->bundle, (*context)->location.state_dir, s->flags.json, std::cout, std::cerr);
    }
    if (s->run_id.empty()) {
      std::cerr << "telic: verify needs RUN_ID or --bundle FILE\n";
      return 2;
    }
    return Verify(s->flags, s->run_id, invocation.terminal());
  };
}

Handler DefineReplay(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string run_id;
  };
  auto s = std::make_shared<State>();
  AddRunId(sub, s->run_id);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation& invocation) { return Replay(s->flags, s->run_id, invocation.terminal()); };
}

// --- export, import ---

// After `telic export RUN` wrote a bundle: a note on stderr when the run's
// requests (its UserMessages, stored exactly) hold likely credentials, which
// the bundle keeps byte for byte because its digests cover them.
void NoteExactRequests(controller::RunService& service, const std::string& run_id) {
  auto detail = service.GetRun(run_id);
  if (!detail) return;
  size_t credentials = 0;
  for (const auto& meta : detail->artifacts) {
    if (meta.type != domain::ArtifactType::kUserMessage) continue;
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

Handler DefineExport(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    BundleCommands bundle;
  };
  auto s = std::make_shared<State>();
  DefineExportOptions(sub, s->bundle);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) {
    auto context = OpenContext(s->flags, false);
    if (!context) return Failure(context.error());
    // The bundle is renamed over -o FILE: never over a directory, FIFO or device.
    if (std::string why = NonRegularFileReason(s->bundle.output); !s->bundle.output.empty() && !why.empty()) {
      return Failure(Error(ErrorCode::kInvalidArgument, fmt::format("cannot write -o {}: {}", s->bundle.output, why)));
    }
    auto run_id = ResolveRunId(*(*context)->store, s->bundle.run_id);
    if (!run_id) return ReportResolutionFailure(std::cerr, run_id.error());
    s->bundle.run_id = *run_id;
    int code = RunExport(s->bundle, *(*context)->service, std::cout, std::cerr);
    if (code == 0 && s->bundle.otlp->count() == 0) NoteExactRequests(*(*context)->service, s->bundle.run_id);
    return code;
  };
}

Handler DefineImport(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    BundleCommands bundle;
  };
  auto s = std::make_shared<State>();
  DefineImportOptions(sub, s->bundle);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) {
    auto context = OpenContext(s->flags, true);
    if (!context) return Failure(context.error());
    auto* tasks = (*context)->graph->service.get();
    return RunImport(s->bundle, *(*context)->store, (*context)->location.state_dir,
                     [tasks](const std::string& id) { (void)tasks->SyncRun(id); }, s->flags.json, std::cout, std::cerr);
  };
}

// --- doctor, ground, validate, schema, demo ---

Handler DefineDoctor(CLI::App& sub) {
  auto flags = std::make_shared<LedgerFlags>();
  AddLedgerFlags(sub, *flags);
  return [flags](const Invocation& invocation) { return Doctor(*flags, invocation.self(), invocation.terminal()); };
}

Handler DefineGround(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string request;
  };
  auto s = std::make_shared<State>();
  sub.add_option("REQUEST", s->request, "the request text")->required();
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) {
    std::string repo = s->flags.repo;
    if (repo.empty()) {
      auto location = Locate(s->flags);
      if (!location) return Failure(location.error());
      repo = location->repository_root;
    }
    return RunGroundCommand(repo, s->request, s->flags.json);
  };
}

Handler DefineValidate(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string file, type;
  };
  auto s = std::make_shared<State>();
  sub.add_option("FILE", s->file, "the artifact file")->required();
  sub.add_option("--type", s->type, "artifact type (default: the stored artifact's own type field)");
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) { return RunValidateCommand(s->file, s->type, s->flags.json, std::cout, std::cerr); };
}

Handler DefineSchema(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string type;
    bool list = false;
  };
  auto s = std::make_shared<State>();
  sub.add_option("TYPE", s->type, "the artifact type");
  sub.add_flag("--list", s->list, "list the artifact types");
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) { return RunSchemaCommand(s->type, s->list, std::cout, std::cerr); };
}

Handler DefineDemo(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string scenario = "analyze_and_fix", workdir;
  };
  auto s = std::make_shared<State>();
  sub.add_option("--scenario", s->scenario, "embedded scenario to drive (examples/<name>.json)");
  sub.add_option("--workdir", s->workdir, "folder for the demo repository and state (default: a new temporary folder)");
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation& invocation) {
    DemoOptions demo{invocation.self(), s->scenario, s->flags.db, s->workdir, s->flags.json};
    auto run = RunDemo(demo, std::cout);
    if (!run) return Failure(run.error());
    return 0;
  };
}

// --- report, tasks ---

Handler DefineReport(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    GraphCommands graph;
  };
  auto s = std::make_shared<State>();
  DefineReportCommands(sub, s->graph);
  AddLedgerFlags(*s->graph.report_parse, s->flags);
  return [s](const Invocation&) { return RunReportParse(s->graph, s->flags.json); };
}

Handler DefineTasks(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    GraphCommands graph;
  };
  auto s = std::make_shared<State>();
  DefineTasksOptions(sub, s->graph);
  AddLedgerFlags(sub, s->flags);
  return [s](const Invocation&) {
    if (auto missing = MissingDefaultLedger(s->flags); missing && s->graph.run_id.empty()) {
      std::cout << (s->flags.json ? std::string(R"({"runId":null,"tasks":[],"stories":[]})")
                                  : "No tasks yet (no ledger at " + TerminalText(*missing) + ").")
                << "\n";
      return 0;
    }
    auto context = OpenContext(s->flags, false);
    if (!context) return Failure(context.error());
    std::optional<std::string> run;
    if (!s->graph.run_id.empty()) {
      auto run_id = ResolveRunId(*(*context)->store, s->graph.run_id);
      if (!run_id) return ReportResolutionFailure(std::cerr, run_id.error());
      run = *run_id;
    }
    return RunTasks(*(*context)->graph->service, run, s->flags.json);
  };
}

// --- check, broker-gate, install, uninstall ---

Handler DefineCheck(CLI::App& sub) {
  struct State {
    std::string policy_file, action_json;
    bool json = false;
  };
  auto s = std::make_shared<State>();
  sub.add_option("--policy", s->policy_file, "policy file (JSON, see docs/PERMISSIONS.md)")->required();
  sub.add_option("--action", s->action_json, "the action as JSON, or @FILE")->required();
  sub.add_flag("--json", s->json, "machine-readable JSON output");
  return [s](const Invocation&) { return RunCheckCommand(s->policy_file, s->action_json, s->json, std::cout, std::cerr); };
}

Handler DefineBrokerGate(CLI::App& sub) {
  struct State {
    LedgerFlags flags;
    std::string host, gate = "all", outside_run = "deny";
  };
  auto s = std::make_shared<State>();
  sub.add_option("--repo", s->flags.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
  sub.add_option("--db", s->flags.db, "SQLite ledger file to use instead of the state directory's");
  AddChoice(sub, "--host", s->host, HookHostNames(), "read and answer this host's pre-tool-use hook format (docs/HOSTS.md)");
  AddChoice(sub, "--gate", s->gate, std::vector<std::string>{"all", "mutating"},
            "all (default) or mutating: leave reads and web fetches ungated");
  AddChoice(sub, "--outside-run", s->outside_run, std::vector<std::string>{"deny", "host"},
            "deny (default) or host: with no active run, let the host's own permissions decide");
  return [s](const Invocation&) {
    HookHost host = s->host.empty() ? HookHost::kTelic : *ParseHookHost(s->host);
    return RunBrokerGate(store::CurrentEnvironment(), CurrentDirectory(), s->flags.repo, s->flags.db, host, std::cin,
                         std::cout, s->gate == "mutating", s->outside_run == "host" ? OutsideRun::kHost : OutsideRun::kDeny);
  };
}

// telic install|uninstall HOST: the repository root comes from --repo or the
// environment like every command; the binary configured is this one.
int InstallCommand(const LedgerFlags& flags, InstallRequest request, const std::string& self, bool install) {
  auto location = Locate(flags);
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

struct InstallState {
  LedgerFlags flags;
  InstallRequest request;
};

std::shared_ptr<InstallState> DefineInstallOptions(CLI::App& sub) {
  auto s = std::make_shared<InstallState>();
  AddChoice(sub, "HOST", s->request.host, InstallHostNames(), "the host to set up")->required();
  sub.add_flag("--user", s->request.user, "the host's user scope ($HOME) instead of this repository");
  sub.add_option("--repo", s->flags.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
  sub.add_flag("--json", s->request.json, "machine-readable JSON output");
  return s;
}

Handler DefineInstall(CLI::App& sub) {
  auto s = DefineInstallOptions(sub);
  AddChoice(sub, "--gate", s->request.gate, std::vector<std::string>{"run", "strict"},
            "run (default): the hook gates only while a telic run is active; strict: also deny when none is");
  return [s](const Invocation& invocation) { return InstallCommand(s->flags, s->request, invocation.self(), true); };
}

Handler DefineUninstall(CLI::App& sub) {
  auto s = DefineInstallOptions(sub);
  return [s](const Invocation& invocation) { return InstallCommand(s->flags, s->request, invocation.self(), false); };
}

// --- completion ---

Handler DefineCompletion(CLI::App& sub) {
  auto shell = std::make_shared<std::string>();
  AddChoice(sub, "SHELL", *shell, std::vector<std::string>{"bash", "zsh"}, "bash or zsh")->required();
  sub.footer(
      "bash: source <(telic completion bash), or save it as ~/.local/share/bash-completion/completions/telic\n"
      "zsh:  source <(telic completion zsh), or save it as _telic in a folder of $fpath");
  return [shell](const Invocation&) {
    std::unique_ptr<Parser> all = BuildParser(nullptr);
    std::vector<CompletionCommand> tree = CompletionTree(*all->app);
    std::cout << (*shell == "bash" ? BashCompletion(tree, "telic") : ZshCompletion(tree, "telic"));
    return 0;
  };
}

constexpr Command kCommands[] = {
    {"serve", "serve MCP on stdin/stdout (or HTTP with --http)", DefineServe},
    {"mcp", "alias of serve (the reference CLI's name)", DefineServe},
    {"runs", "list runs, newest first (by creation), a page at a time", DefineRuns},
    {"export", "write a run as a verifiable bundle (docs/BUNDLE.md) or as OTLP spans", DefineExport},
    {"import", "load a run bundle into this ledger as a new run (checked first)", DefineImport},
    {"show", "show one run, its request, artifacts and next action", DefineShow},
    {"status", "alias of show --json (the reference CLI's name)", DefineStatus},
    {"trace", "show a run's trace events with their hash chain", DefineTrace},
    {"artifact", "print one artifact (artifact://RUN/ID or RUN_ID ARTIFACT_ID)", DefineArtifact},
    {"verify", "re-hash every artifact and check the trace hash chain of a run", DefineVerify},
    {"doctor", "check the repository, state directory, ledger and host installs", DefineDoctor},
    {"ground", "preview the ContextManifest for a request, without a run", DefineGround},
    {"validate", "validate an artifact file against its schema and refinements", DefineValidate},
    {"schema", "print an artifact type's JSON Schema", DefineSchema},
    {"replay", "re-derive a run's state from its artifacts and events; exit 1 on a difference", DefineReplay},
    {"demo", "drive a complete analyze_and_fix run over MCP the way a host would", DefineDemo},
    {"report", "sub-agent reports (UpwardReport, Execution and Review envelopes)", DefineReport},
    {"tasks", "show a run's task graph as a tree (no RUN_ID: the standalone graph)", DefineTasks},
    {"check", "decide one action against a policy file (exit 0 allow, 3 deny, 2 usage)", DefineCheck},
    {"broker-gate", "host hook: decide one tool call read from stdin against the active run", DefineBrokerGate},
    {"install", "set a host up: MCP server entry, workflow skill, broker-gate hook", DefineInstall},
    {"uninstall", "remove exactly what `telic install HOST` added", DefineUninstall},
    {"ui", "serve the read-only web trace viewer (default http://127.0.0.1:7420/ui/)", DefineUi},
    {"completion", "print a shell completion script: telic completion bash|zsh", DefineCompletion},
};

// Adds --color to `app` and every command below it.
void AddColorOption(CLI::App& app, std::string& color) {
  AddChoice(app, "--color", color, kColorChoices,
            "colour the output: auto (default: on a terminal, unless NO_COLOR is set), always or never");
  for (CLI::App* sub : app.get_subcommands([](CLI::App* sub) { return !sub->get_name().empty(); })) {
    AddColorOption(*sub, color);
  }
}

}  // namespace

const std::string& Invocation::self() const {
  if (!self_) {
    std::error_code ec;
    auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    self_ = ec ? argv0_ : path.string();
  }
  return *self_;
}

const Terminal& Invocation::terminal() const {
  if (!terminal_) terminal_ = DecideTerminal(color_, CurrentTerminalFacts());
  return *terminal_;
}

std::span<const Command> Commands() { return kCommands; }

const Command* FindCommand(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::unique_ptr<Parser> BuildParser(const Command* only) {
  auto parser = std::make_unique<Parser>();
  parser->app = std::make_unique<CLI::App>(
      fmt::format("telic {}: a deterministic, model-free MCP controller for AI-agent work", mcp::kServerVersion), "telic");
  CLI::App& app = *parser->app;
  app.require_subcommand(0, 1);
  // Unknown words and options are collected, not thrown at once, so that
  // RunCli can say which command or option was probably meant.
  app.allow_extras();
  app.set_version_flag("--version", fmt::format("telic {}", mcp::kServerVersion), "print the version and exit");
  for (const Command& command : kCommands) {
    if (only != nullptr && only != &command) continue;
    CLI::App* sub = app.add_subcommand(std::string(command.name), std::string(command.help));
    parser->defined.push_back({&command, sub, command.define(*sub)});
  }
  AddColorOption(app, parser->color);
  return parser;
}

}  // namespace telic::cli
