#include "cli/commands.h"

#include <unistd.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/text.h"
#include "cli/format.h"
#include "cli/ground_command.h"
#include "controller/grounder.h"
#include "controller/run_service.h"
#include "controller/views.h"
#include "mcp/child_client.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp/stdio.h"
#include "store/open_store.h"
#include "store/pg_store.h"
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
};

// Everything a command needs: where state lives, the open store, the service.
struct Context {
  store::StateLocation location;
  std::unique_ptr<store::Store> store;
  SystemClock clock;
  RandomIdSource ids;
  std::unique_ptr<controller::RunService> service;
};

std::string CurrentDirectory() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

// Resolves the state location from --repo / --db and the environment.
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
  return location;
}

// Opens the store. With `create` false, a missing ledger is an error.
Result<std::unique_ptr<Context>> OpenContext(const Options& options, bool create) {
  auto context = std::make_unique<Context>();
  TELIC_ASSIGN_OR_RETURN(context->location, Locate(options));
  bool postgres = store::IsPostgresUrl(options.db);
  if (!create && !postgres && !std::filesystem::exists(context->location.ledger_path)) {
    return Fail(ErrorCode::kNotFound, fmt::format("No Telic ledger exists at {}", context->location.state_dir));
  }
  if (options.db.empty()) TELIC_RETURN_IF_ERROR(store::PrepareStateDir(context->location));
  TELIC_ASSIGN_OR_RETURN(context->store, store::OpenStore(context->location.ledger_path));
  context->service = std::make_unique<controller::RunService>(*context->store, context->clock, context->ids,
                                                               context->location.repository_root);
  context->service->set_grounder(controller::MakeRepositoryGrounder({context->location.state_dir}));
  return context;
}

int Failure(const Error& error) {
  std::cerr << "telic: " << CleanMessage(error.message()) << "\n";
  return 1;
}

void PrintJson(const Json& value, const Options& options) {
  std::cout << (options.json ? value.dump() : value.dump(2)) << "\n";
}

// The bearer token from --auth-token-file: the file's content without
// surrounding whitespace; the file must not be readable by group or others.
Result<std::string> ReadToken(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Fail(ErrorCode::kFailedPrecondition, "cannot read --auth-token-file " + path);
  if (st.st_mode & 077) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("--auth-token-file {} is accessible by group or others; chmod 600 it", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  token.erase(token.begin(), std::find_if(token.begin(), token.end(), not_space));
  token.erase(std::find_if(token.rbegin(), token.rend(), not_space).base(), token.end());
  if (token.size() < 16) return Fail(ErrorCode::kFailedPrecondition, "the token in --auth-token-file must have at least 16 characters");
  return token;
}

int ServeOverHttp(const Options& options, mcp::Server& server, Context& context) {
  auto address = mcp::ParseListenAddress(options.http);
  if (!address) return Failure(address.error());
  mcp::HttpOptions http;
  http.host = address->first;
  http.port = address->second;
  if (!options.auth_token_file.empty()) {
    auto token = ReadToken(options.auth_token_file);
    if (!token) return Failure(token.error());
    http.auth_token = *token;
  }
  http.allowed_origins = options.allow_origins;
  http.allowed_hosts = options.allow_hosts;
  store::Store& ledger = *context.store;
  http.readiness = [&ledger] { return store::CheckStoreReady(ledger); };
  return mcp::ServeHttp(server, std::move(http), context.location.repository_root);
}

int Serve(const Options& options) {
  auto context = OpenContext(options, true);
  if (!context) {
    std::cerr << "Telic MCP failed: " << CleanMessage(context.error().message()) << "\n";
    return 1;
  }
  mcp::Server server(*(*context)->service);
  if (!options.http.empty()) return ServeOverHttp(options, server, **context);
  std::cerr << "Telic MCP ready for " << (*context)->location.repository_root << std::endl;
  return mcp::ServeStdio(server, stdin, stdout);
}

int Runs(const Options& options, int limit) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto runs = (*context)->service->ListRuns(limit);
  if (!runs) return Failure(runs.error());
  if (options.json) {
    Json list = Json::array();
    for (const auto& run : *runs) list.push_back(controller::RunSummaryToJson(run));
    PrintJson(Json{{"runs", list}}, options);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : *runs) {
    rows.push_back({run.run_id, run.requested_mode, run.topology, run.status, run.phase,
                    std::to_string(run.version), run.updated_at});
  }
  std::cout << FormatTable({"RUN", "MODE", "TOPOLOGY", "STATUS", "PHASE", "VERSION", "UPDATED"}, rows);
  return 0;
}

int Show(const Options& options, const std::string& run_id) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto detail = (*context)->service->GetRun(run_id);
  if (!detail) return Failure(detail.error());
  Json artifacts = Json::array();
  for (const auto& meta : detail->artifacts) artifacts.push_back(controller::ArtifactMetaToJson(meta));
  if (options.json) {
    PrintJson(Json{{"run", controller::RunToJson(detail->run)}, {"artifacts", artifacts}, {"nextAction", detail->next_action}},
              options);
    return 0;
  }
  const auto& run = detail->run;
  std::cout << fmt::format("run        {}\nmode       {}\ntopology   {}\nstatus     {}\nphase      {}\nversion    {}\n"
                           "repository {}\ncreated    {}\nupdated    {}\nnext       {} ({})\n\n",
                           run.run_id, run.requested_mode, run.topology, run.status, run.phase, run.version,
                           run.repository_root, run.created_at, run.updated_at,
                           detail->next_action.value("phase", ""), detail->next_action.value("kind", ""));
  std::vector<std::vector<std::string>> rows;
  for (const auto& meta : detail->artifacts) rows.push_back({meta.id, meta.type, meta.producer, meta.sha256.substr(0, 19), meta.created_at});
  std::cout << FormatTable({"ARTIFACT", "TYPE", "PRODUCER", "SHA256", "CREATED"}, rows);
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
      events.push_back(controller::TraceEventToInternal(event));
      rows.push_back({std::to_string(event.sequence), event.timestamp, event.actor, event.phase, event.event_type,
                      event.summary});
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

// Accepts "artifact://RUN/ID" or RUN and ID as two arguments.
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
  if (options.json) {
    PrintJson(Json{{"artifact", hydrated}}, options);
  } else {
    std::cout << hydrated.dump(2) << "\n";
  }
  return 0;
}

int Doctor(const Options& options) {
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
  Json report = {{"ok", ok}, {"version", mcp::kServerVersion}, {"checks", checks}};
  if (options.json) {
    PrintJson(report, options);
  } else {
    std::cout << report.dump(2) << "\n";
  }
  return ok ? 0 : 1;
}

int Verify(const Options& options, const std::string& run_id) {
  auto context = OpenContext(options, false);
  if (!context) return Failure(context.error());
  auto& service = *(*context)->service;
  auto detail = service.GetRun(run_id);
  if (!detail) return Failure(detail.error());
  std::vector<std::string> problems;
  size_t artifacts_ok = 0;
  for (const auto& meta : detail->artifacts) {
    auto artifact = service.GetArtifact(run_id, meta.id);
    if (artifact) {
      ++artifacts_ok;
    } else {
      problems.push_back(artifact.error().message());
    }
  }
  int64_t after = 0, events = 0;
  std::string prev;
  while (true) {
    auto page = service.GetTrace(run_id, after, 500);
    if (!page) return Failure(page.error());
    for (const auto& event : page->events) {
      ++events;
      if (event.sequence != after + 1) problems.push_back(fmt::format("trace gap before sequence {}", event.sequence));
      if (event.prev_hash != prev) problems.push_back(fmt::format("event {} does not chain to its predecessor", event.sequence));
      if (store::ComputeTraceEventHash(event) != event.hash) problems.push_back(fmt::format("event {} hash mismatch", event.sequence));
      prev = event.hash;
      after = event.sequence;
    }
    if (!page->has_more) break;
  }
  Json report = {{"ok", problems.empty()}, {"runId", run_id}, {"artifactsVerified", artifacts_ok},
                 {"artifacts", detail->artifacts.size()}, {"traceEvents", events}, {"problems", problems}};
  if (options.json) {
    PrintJson(report, options);
  } else {
    std::cout << fmt::format("{}: {} of {} artifacts verified, {} trace events chained{}\n", run_id, artifacts_ok,
                             detail->artifacts.size(), events, problems.empty() ? ", no problems" : "");
    for (const auto& p : problems) std::cout << "  problem: " << p << "\n";
  }
  return problems.empty() ? 0 : 1;
}

std::string SelfExecutable(const char* argv0) {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : path.string();
}

// Drives telic over MCP as a host would: a child `telic serve` on stdio.
int Demo(const Options& options, const std::string& self) {
  std::map<std::string, std::string> env;
  if (!options.repo.empty()) env["TELIC_REPOSITORY_ROOT"] = options.repo;
  auto location = Locate(options);
  if (!location) return Failure(location.error());
  std::vector<std::string> argv = {self, "serve"};
  if (!options.db.empty()) argv.insert(argv.end(), {"--db", options.db});
  auto client = mcp::ChildClient::Start(argv, env);
  if (!client) return Failure(client.error());
  auto& c = **client;
  auto step = [](const std::string& what) { std::cout << "• " << what << std::endl; };
  auto init = c.Request("initialize", Json{{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()},
                                           {"clientInfo", {{"name", "telic-demo"}, {"version", mcp::kServerVersion}}}});
  if (!init) return Failure(init.error());
  (void)c.Notify("notifications/initialized", Json::object());
  step(fmt::format("connected to telic {} over MCP stdio (protocol {})", init->value("/serverInfo/version"_json_pointer, ""),
                   init->value("protocolVersion", "")));
  std::string request = "Explain how the main entry point of this repository is wired, without changing anything.";
  auto started = c.CallTool("telic_start_run", Json{{"original_request", request}, {"mode", "report_only"},
                                                    {"host_name", "telic-demo"}});
  if (!started) return Failure(started.error());
  std::string run_id = (*started)["run"]["runId"];
  step(fmt::format("started run {} ({} topology), next phase: {}", run_id, (*started)["run"]["topology"].get<std::string>(),
                   (*started)["nextAction"]["phase"].get<std::string>()));
  auto run = c.CallTool("telic_get_run", Json{{"run_id", run_id}});
  if (!run) return Failure(run.error());
  for (const auto& meta : (*run)["artifacts"]) {
    auto artifact = c.CallTool("telic_get_artifact", Json{{"run_id", run_id}, {"artifact_id", meta["id"]}});
    if (!artifact) return Failure(artifact.error());
    step(fmt::format("stored {} {} (digest verified)", meta["type"].get<std::string>(), meta["sha256"].get<std::string>()));
  }
  const Json& action = (*started)["nextAction"];
  auto cancelled = c.CallTool("telic_cancel_run", Json{{"run_id", run_id}, {"action_id", action["id"]},
                                                      {"expected_run_version", (*started)["run"]["version"]}});
  if (!cancelled) return Failure(cancelled.error());
  step(fmt::format("cancelled the run before grounding: status {}", (*cancelled)["run"]["status"].get<std::string>()));
  auto trace = c.CallTool("telic_get_trace", Json{{"run_id", run_id}});
  if (!trace) return Failure(trace.error());
  for (const auto& event : (*trace)["events"]) {
    step(fmt::format("trace #{} {} by {}: {}", event["sequence"].get<int64_t>(), event["eventType"].get<std::string>(),
                     event["actor"].get<std::string>(), event["rationaleSummary"].get<std::string>()));
  }
  int status = c.Close();
  if (status != 0) return Failure(Error(ErrorCode::kInternal, fmt::format("telic serve exited with {}", status)));
  std::cout << fmt::format("\nledger: {}\nsee it with: telic runs · telic show {} · telic trace {} · telic verify {}\n",
                           options.db.empty()                  ? location->ledger_path
                           : store::IsPostgresUrl(options.db) ? store::RedactPostgresUrl(options.db)
                                                              : options.db,
                           run_id, run_id, run_id);
  return 0;
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{fmt::format("telic {}: a deterministic, model-free MCP controller for AI-agent work", mcp::kServerVersion),
               "telic"};
  app.require_subcommand(0, 1);
  Options options;
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--repo", options.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
    sub->add_option("--db", options.db,
                    "SQLite ledger file to use instead of the state directory's, or a postgresql:// URL (shared store)");
    sub->add_flag("--json", options.json, "machine-readable JSON output");
  };
  std::string run_id, second;
  int limit = 20;
  auto* serve = app.add_subcommand("serve", "serve MCP on stdin/stdout");
  auto* mcp_alias = app.add_subcommand("mcp", "alias of serve (the reference CLI's name)");
  auto* runs = app.add_subcommand("runs", "list runs, newest first");
  runs->add_option("--limit", limit, "at most this many runs (1-100)")->check(CLI::Range(1, 100));
  auto* show = app.add_subcommand("show", "show one run, its artifacts and next action");
  show->add_option("RUN_ID", run_id)->required();
  auto* status = app.add_subcommand("status", "alias of show --json (the reference CLI's name)");
  status->add_option("RUN_ID", run_id)->required();
  auto* trace = app.add_subcommand("trace", "show a run's trace events with their hash chain");
  trace->add_option("RUN_ID", run_id)->required();
  auto* artifact = app.add_subcommand("artifact", "print one artifact (artifact://RUN/ID or RUN_ID ARTIFACT_ID)");
  artifact->add_option("REF", run_id)->required();
  artifact->add_option("ARTIFACT_ID", second);
  auto* verify = app.add_subcommand("verify", "re-hash every artifact and check the trace hash chain of a run");
  verify->add_option("RUN_ID", run_id)->required();
  auto* doctor = app.add_subcommand("doctor", "check the repository, state directory and ledger");
  std::string ground_request;
  auto* ground = app.add_subcommand("ground", "preview the ContextManifest for a request, without a run");
  ground->add_option("REQUEST", ground_request, "the request text")->required();
  auto* demo = app.add_subcommand("demo", "drive a run over MCP the way a host would, and show what telic recorded");
  for (auto* sub : {serve, mcp_alias, runs, show, status, trace, artifact, verify, doctor, ground, demo}) add_common(sub);
  for (auto* sub : {serve, mcp_alias}) {
    sub->add_option("--http", options.http, "serve MCP Streamable HTTP on HOST:PORT (POST /mcp) instead of stdio");
    sub->add_option("--auth-token-file", options.auth_token_file,
                    "require this bearer token on every HTTP request (needed to listen beyond loopback)");
    sub->add_option("--allow-origin", options.allow_origins, "an extra Origin allowed over HTTP (exact, repeatable)");
    sub->add_option("--allow-host", options.allow_hosts, "an extra Host header value allowed over HTTP (repeatable)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (*serve || *mcp_alias) return Serve(options);
  if (*runs) return Runs(options, limit);
  if (*show) return Show(options, run_id);
  if (*status) {
    options.json = true;
    return Show(options, run_id);
  }
  if (*trace) return Trace(options, run_id);
  if (*artifact) return Artifact(options, run_id, second);
  if (*verify) return Verify(options, run_id);
  if (*doctor) return Doctor(options);
  if (*ground) {
    std::string repo = options.repo;
    if (repo.empty()) {
      auto location = Locate(options);
      if (!location) return Failure(location.error());
      repo = location->repository_root;
    }
    return RunGroundCommand(repo, ground_request, options.json);
  }
  if (*demo) return Demo(options, SelfExecutable(argv[0]));
  std::cout << app.help();
  return 0;
}

}  // namespace telic::cli
