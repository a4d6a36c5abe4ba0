#include "cli/demo.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include <fmt/format.h>

#include "base/clock.h"
#include "mcp/child_client.h"
#include "mcp/server.h"
#include "schema/embedded.h"
#include "store/pg_store.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;

Status WriteFile(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) return Fail(ErrorCode::kInternal, fmt::format("cannot write {}", path.string()));
  return Ok();
}

Result<fs::path> MakeWorkdir(const std::string& requested) {
  if (!requested.empty()) {
    std::error_code ec;
    fs::create_directories(requested, ec);
    if (ec) return Fail(ErrorCode::kInvalidArgument, fmt::format("cannot create {}: {}", requested, ec.message()));
    return fs::absolute(requested);
  }
  std::string pattern = (fs::temp_directory_path() / "telic-demo-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return Fail(ErrorCode::kInternal, "cannot create a temporary folder for the demo");
  return fs::path(pattern);
}

// The payload of a successful tool call, or its error.
Result<Json> Call(mcp::ChildClient& client, const std::string& tool, const Json& args) {
  return client.CallTool(tool, args);
}

struct RunState {
  Json run;
  Json action;
  // A lean result's `run` holds the members that changed (docs/API.md
  // "Profiles"): they are merged into the record kept so far.
  void Update(const Json& payload) {
    if (payload.contains("run")) {
      if (!run.is_object()) run = Json::object();
      run.update(payload["run"]);
    }
    if (payload.contains("nextAction")) {
      const Json& next = payload["nextAction"];
      Json merged = Json::object();  // a lean action names the members it shares with the last one
      for (const Json& key : next.value("unchanged", Json::array())) {
        if (key.is_string() && action.is_object() && action.contains(key.get<std::string>())) {
          merged[key.get<std::string>()] = action[key.get<std::string>()];
        }
      }
      merged.update(next);
      merged.erase("unchanged");
      action = std::move(merged);
    }
  }
  Json Tokens() const {
    return {{"run_id", run["runId"]}, {"action_id", action["id"]}, {"expected_run_version", run["version"]}};
  }
};

std::string PhaseOf(const Json& action) {
  return action.value("kind", "") == "terminal" ? "terminal: " + action.value("status", "") : action.value("phase", "");
}

// Commits the demo repository with `git`, so the server shares a Git work
// tree and observes the host's work (issue 38). False when git is missing or
// fails: the demo then runs unobserved, and every result says so.
bool CommitDemoRepository(const fs::path& repo) {
  const std::string dir = repo.string();
  std::vector<std::vector<std::string>> steps = {
      {"git", "-C", dir, "init", "-q"},
      {"git", "-C", dir, "add", "-A"},
      {"git", "-C", dir, "-c", "user.name=telic demo", "-c", "user.email=demo@telic.invalid", "commit", "-qm",
       "the demo repository"}};
  std::vector<std::string> env_text = {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null", "LC_ALL=C",
                                       std::string("PATH=") + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")};
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  for (auto& step : steps) {
    std::vector<char*> argv;
    for (auto& a : step) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    int spawned = posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    if (spawned != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  }
  return true;
}

// One line saying what telic observed of a submission's work, or "".
std::string ObservationLine(const Json& payload) {
  if (!payload.contains("observation")) return "";
  const Json& o = payload["observation"];
  if (!o.value("observed", false)) return "  telic: " + o.value("reason", std::string("not observed"));
  std::string line;
  for (const Json& file : o.value("filesChecked", Json::array())) {
    line += fmt::format("  telic checked {} against the work tree (now {}); its own diff: {}\n",
                        file.value("path", ""), file.value("afterHash", "").substr(0, 19), file.value("diffRef", ""));
  }
  if (o.contains("undeclaredChanges")) {
    line += fmt::format("  telic found {} undeclared change(s) in the work tree\n", o["undeclaredChanges"].size());
  }
  if (!line.empty()) line.pop_back();
  return line;
}

// The demo's verification, run by telic rather than reported by the host
// (issue 38): a test script in the demo repository that telic runs in its
// sandbox before and after the fix; the fix's WorkResult and the UserReport
// cite telic's output and telic's own diff.
constexpr char kCheckScript[] = "test_greet.sh";
constexpr char kCheckCommand[] = "sh test_greet.sh";
constexpr char kCheckScriptText[] =
    "# The greeting test: greet() must say \"Hello\".\n"
    "if grep -q 'return f\"Hello, {name}!\"' src/greet.py; then\n"
    "  echo 'test_greet: 1 passed'\n"
    "else\n"
    "  echo \"test_greet: 1 failed: greet() returns $(grep -o 'f\"[^,]*' src/greet.py)\"\n"
    "  exit 1\n"
    "fi\n";

struct DemoChecks {
  bool enabled = false;     // the scenario writes a fix and telic observes the work tree
  std::string passed_ref;   // telic's Evidence of the passing check, once it ran
  std::string diff_ref;     // telic's own diff of the fix, once the WorkResult was accepted

  // Lets the run execute exactly the check, and complete only on telic's own evidence.
  void AdjustStart(Json& start) const {
    if (!enabled) return;
    start["host_capabilities"].push_back("shell.execute");
    start["authorization_granted"] = start["host_capabilities"];
    start["shell_execute_allowlist"] = Json::array({kCheckCommand});
    start["observation"] = "require_observed";
  }

  // Runs the check for the current execution node and says what telic saw;
  // a refusal (no sandbox on this machine) is said and the demo goes on without it.
  void Run(mcp::ChildClient& client, const RunState& s, const std::function<void(const std::string&)>& say) {
    if (!enabled) return;
    auto ran = client.CallTool("telic_run_check", {{"run_id", s.run["runId"]},
                                                   {"command", kCheckCommand},
                                                   {"node_id", s.action.value("workNodeId", "")}});
    if (!ran) {
      say("  telic could not run the check: " + ran.error().message());
      enabled = false;
      return;
    }
    const Json& check = (*ran)["check"];
    bool passed = check.value("passed", false);
    say(fmt::format("  telic ran `{}` in its sandbox: exit status {} ({}) → {}", kCheckCommand,
                    check.value("exitStatus", -1), passed ? "passed" : "failed", check.value("evidenceRef", "")));
    if (passed) passed_ref = check.value("evidenceRef", "");
  }

  // The fix's WorkResult cites the passing check as its test result.
  void CiteInWorkResult(Json& body) const {
    if (passed_ref.empty() || body.value("filesChanged", Json::array()).empty()) return;
    body["testResults"] = Json::array({{{"id", "test-greet"},
                                        {"name", kCheckScript},
                                        {"status", "passed"},
                                        {"commandRef", nullptr},
                                        {"outputRef", passed_ref},
                                        {"exitCode", 0},
                                        {"rationaleSummary", "telic ran the test in its sandbox."}}});
  }

  void NoteDiff(const Json& payload) {
    const Json* refs = payload.contains("observation") ? &payload["observation"] : nullptr;
    if (refs && refs->contains("diffEvidenceRefs") && !(*refs)["diffEvidenceRefs"].empty()) {
      diff_ref = (*refs)["diffEvidenceRefs"][0];
    }
  }

  // The report's last claim, and the release audit's matrix row of that
  // claim, cite telic's evidence (verificationRefs stay exactly the review's
  // required verifications, PROTOCOL §15).
  void Cite(const std::string& type, Json& body) const {
    if (passed_ref.empty()) return;
    std::optional<domain::ArtifactType> kind = domain::ArtifactTypeNamed(type);
    bool report = kind == domain::ArtifactType::kUserReport;
    Json* rows = report                                         ? &body["completionClaims"]
                 : kind == domain::ArtifactType::kReleaseAudit ? &body["claimEvidenceMatrix"]
                                                               : nullptr;
    if (!rows || !rows->is_array()) return;
    for (Json& row : *rows) {
      if (row.value(report ? "id" : "claimId", "") != fix_claim) continue;
      if (!diff_ref.empty()) row["evidenceRefs"].push_back(diff_ref);
      row["evidenceRefs"].push_back(passed_ref);
    }
  }
  std::string fix_claim;  // the id of the UserReport's last claim: the claim the fix backs
};

std::string LastReportClaim(const Json& scenario) {
  std::string id;
  for (const Json& step : scenario["steps"]) {
    if (domain::ArtifactTypeNamed(step.value("submit", "")) != domain::ArtifactType::kUserReport) continue;
    for (const Json& claim : step["body"].value("completionClaims", Json::array())) id = claim.value("id", "");
  }
  return id;
}

bool WritesAFix(const Json& scenario) {
  for (const Json& step : scenario["steps"]) {
    if (step.contains("write_file")) return true;
  }
  return false;
}

}  // namespace

Result<Json> LoadScenario(const std::string& name) {
  for (const auto& file : schema::EmbeddedExampleFiles()) {
    if (file.path == name + ".json") return Json::parse(file.content);
  }
  return Fail(ErrorCode::kNotFound, fmt::format("no scenario named {}", name));
}

Json SubstituteNames(const Json& value, const std::map<std::string, std::string>& names) {
  if (value.is_string()) {
    static const std::regex kName(R"(\$\{(\w+)\})");
    const std::string& text = value.get_ref<const std::string&>();
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), kName);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out.append(text, last, static_cast<size_t>(it->position(0)) - last);
      auto found = names.find((*it)[1].str());
      out += found != names.end() ? found->second : it->str();
      last = static_cast<size_t>(it->position(0) + it->length(0));
    }
    out.append(text, last, std::string::npos);
    return out;
  }
  if (value.is_array() || value.is_object()) {
    Json copy = value;
    for (auto it = copy.begin(); it != copy.end(); ++it) *it = SubstituteNames(*it, names);
    return copy;
  }
  return value;
}

namespace {

using Say = std::function<void(const std::string&)>;

// Writes the scenario's repository (and the check script when the scenario
// writes a fix); true when it is committed in Git, so telic can observe the
// host's changes.
Result<bool> WriteDemoRepository(const Json& scenario, const fs::path& repo) {
  for (auto it = scenario["repository"].begin(); it != scenario["repository"].end(); ++it) {
    TELIC_RETURN_IF_ERROR(WriteFile(repo / it.key(), it->get<std::string>()));
  }
  if (WritesAFix(scenario)) TELIC_RETURN_IF_ERROR(WriteFile(repo / kCheckScript, kCheckScriptText));
  return CommitDemoRepository(repo);
}

// Plays one scripted step: host work (a file written between two check runs),
// a grounding, a clarification answer or an artifact submission; then says
// the run's new version and next action.
Status PlayStep(mcp::ChildClient& client, const Json& step, const fs::path& repo, RunState& s, DemoChecks& checks,
                std::map<std::string, std::string>& names, const Say& say) {
  std::string text = step.value("say", "");
  if (step.contains("write_file")) {
    checks.Run(client, s, say);  // the test fails before the fix...
    TELIC_RETURN_IF_ERROR(WriteFile(repo / step["write_file"]["path"].get<std::string>(),
                                    step["write_file"]["content"].get<std::string>()));
    say(fmt::format("  host work: {}", text));
    checks.Run(client, s, say);  // ...and passes after it
    return Ok();
  }
  Json payload;
  if (step.contains("ground")) {
    Json args = s.Tokens();
    args.update(step["ground"]);
    TELIC_ASSIGN_OR_RETURN(payload, Call(client, "telic_ground_context", args));
    names["manifest"] = payload["nextAction"].value("contextManifestRef", "");
    size_t selected = payload["manifest"].value("/budget/selectedFiles"_json_pointer, 0);
    text += fmt::format(" ({} file{} selected)", selected, selected == 1 ? "" : "s");
  } else if (step.contains("answer")) {
    Json args = s.Tokens();
    args["clarification_response"] = step["answer"];
    TELIC_ASSIGN_OR_RETURN(payload, Call(client, "telic_submit_artifact", args));
  } else {
    Json args = s.Tokens();
    args["artifact_type"] = step["submit"];
    args["body"] = SubstituteNames(step["body"], names);
    if (domain::ArtifactTypeNamed(step.value("submit", "")) == domain::ArtifactType::kWorkResult) {
      checks.CiteInWorkResult(args["body"]);
    }
    checks.Cite(step["submit"], args["body"]);
    TELIC_ASSIGN_OR_RETURN(payload, Call(client, "telic_submit_artifact", args));
    checks.NoteDiff(payload);
    text = fmt::format("{} — {} accepted", text, step["submit"].get<std::string>());
  }
  s.Update(payload);
  say(fmt::format("  [v{}] {} → next: {}", s.run["version"].get<int64_t>(), text, PhaseOf(s.action)));
  if (std::string line = ObservationLine(payload); !line.empty()) say(line);
  return Ok();
}

// Says the run's UserReport, when it ended with one, and its replay check.
Status SayOutcome(mcp::ChildClient& client, const RunState& s, const std::string& run_id, const Say& say) {
  if (s.action.value("kind", "") == "terminal" && s.action["reportRef"].is_string()) {
    std::string ref = s.action["reportRef"];
    TELIC_ASSIGN_OR_RETURN(Json report, Call(client, "telic_get_artifact", {{"run_id", run_id}, {"artifact_id", ref.substr(ref.rfind('/') + 1)}}));
    const Json& body = report["artifact"]["body"];
    say(fmt::format("\nUserReport ({}): {}", body.value("terminalStatus", ""), body.value("summary", "")));
    for (const Json& claim : body.value("completionClaims", Json::array())) {
      say(fmt::format("  claim {}: {} [{}]", claim.value("id", ""), claim.value("text", ""),
                      fmt::join(claim.value("evidenceRefs", std::vector<std::string>{}), ", ")));
    }
  }
  TELIC_ASSIGN_OR_RETURN(Json replay, Call(client, "telic_replay_run", {{"run_id", run_id}}));
  say(fmt::format("\nreplay: {} steps, state check {}", replay["report"]["steps"].size(),
                  replay["report"]["stateCheck"]["consistent"].get<bool>() ? "consistent" : "INCONSISTENT"));
  return Ok();
}

// Where the demo's ledger is, and the commands that read it.
std::string LedgerLines(const DemoOptions& options, const fs::path& state, const std::string& run_id) {
  std::string ledger = options.db.empty()                  ? (state / "telic.sqlite3").string()
                       : store::IsPostgresUrl(options.db) ? store::RedactPostgresUrl(options.db)
                                                          : options.db;
  return fmt::format(
      "\nledger: {}\nsee it with:\n  telic runs --db {}\n  telic show {} --db {}\n  telic trace {} --db {}\n"
      "  telic verify {} --db {}\n  telic replay {} --db {}",
      ledger, ledger, run_id, ledger, run_id, ledger, run_id, ledger, run_id, ledger);
}

}  // namespace

Result<std::string> RunDemo(const DemoOptions& options, std::ostream& out) {
  TELIC_ASSIGN_OR_RETURN(Json scenario, LoadScenario(options.scenario));
  TELIC_ASSIGN_OR_RETURN(fs::path workdir, MakeWorkdir(options.workdir));
  fs::path repo = workdir / "repo";
  fs::path state = workdir / "state";
  TELIC_ASSIGN_OR_RETURN(bool observed, WriteDemoRepository(scenario, repo));
  DemoChecks checks;
  checks.enabled = observed && WritesAFix(scenario);
  checks.fix_claim = LastReportClaim(scenario);
  std::vector<std::string> argv = {options.telic_binary, "serve"};
  if (!options.db.empty()) argv.insert(argv.end(), {"--db", options.db});
  TELIC_ASSIGN_OR_RETURN(auto client, mcp::ChildClient::Start(argv, {{"TELIC_REPOSITORY_ROOT", repo.string()},
                                                                     {"TELIC_STATE_DIR", state.string()}}));
  auto say = [&](const std::string& text) { out << text << std::endl; };
  TELIC_ASSIGN_OR_RETURN(Json init, client->Request("initialize", Json{{"protocolVersion", "2025-11-25"},
                                                                      {"capabilities", Json::object()},
                                                                      {"clientInfo", {{"name", "telic-demo"}, {"version", mcp::kServerVersion}}}}));
  TELIC_RETURN_IF_ERROR(client->Notify("notifications/initialized", Json::object()));
  say(fmt::format("telic demo: {} — {}", options.scenario, scenario.value("description", "")));
  say(fmt::format("  host: this process, talking MCP {} over stdio to a child `telic serve`", init.value("protocolVersion", "")));
  say(fmt::format("  repository: {}{}", repo.string(),
                  observed ? " (a Git work tree: telic checks the host's file changes itself)"
                           : " (git is unavailable: telic cannot observe the work, and says so)"));

  RunState s;
  Json start = scenario["start"];
  start["host_name"] = "telic-demo";
  checks.AdjustStart(start);
  TELIC_ASSIGN_OR_RETURN(Json started, Call(*client, "telic_start_run", start));
  s.Update(started);
  std::string run_id = s.run["runId"];
  TELIC_ASSIGN_OR_RETURN(Json envelope, Call(*client, "telic_get_artifact", {{"run_id", run_id}, {"artifact_id", run_id}}));
  std::map<std::string, std::string> names = {{"run", run_id},
                                              {"request", envelope["artifact"]["body"]["originalRequestRef"]},
                                              {"now", FormatIsoMillis(SystemClock().NowMillis())},
                                              {"manifest", ""}};
  say(fmt::format("\nrun {} · mode {} · topology {}", run_id, s.run["requestedMode"].get<std::string>(),
                  s.run["topology"].get<std::string>()));
  say(fmt::format("  [v{}] next: {}", s.run["version"].get<int64_t>(), PhaseOf(s.action)));
  for (const Json& step : scenario["steps"]) {
    TELIC_RETURN_IF_ERROR(PlayStep(*client, step, repo, s, checks, names, say));
  }
  TELIC_RETURN_IF_ERROR(SayOutcome(*client, s, run_id, say));
  int status = client->Close();
  if (status != 0) return Fail(ErrorCode::kInternal, fmt::format("telic serve exited with {}", status));
  say(LedgerLines(options, state, run_id));
  return run_id;
}

}  // namespace telic::cli
