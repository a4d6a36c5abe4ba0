#include "cli/broker_gate.h"

#include <filesystem>
#include <istream>
#include <ostream>
#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/json_parse.h"
#include "base/redact.h"
#include "base/text.h"
#include "cli/hook_hosts.h"
#include "controller/broker.h"
#include "store/sqlite_store.h"

namespace telic::cli {
namespace {

using Ordered = nlohmann::ordered_json;

const Json* Member(const Json& object, const char* a, const char* b = nullptr) {
  if (!object.is_object()) return nullptr;
  for (const char* key : {a, b}) {
    if (key == nullptr) continue;
    auto it = object.find(key);
    if (it != object.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

// The JavaScript String(value) of a JSON member, as the reference maps it.
std::string Text(const Json* value) {
  if (value == nullptr) return "";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_object()) return "[object Object]";
  return value->dump();
}

// A decision before it is written in a host's answer format.
struct Verdict {
  bool allowed = true;
  std::string user_message;
  std::string agent_message;
};

Verdict Allow() { return Verdict{}; }

Verdict Deny(const std::string& user_message, const std::string& agent_message) {
  return Verdict{false, user_message, agent_message};
}

Ordered Render(HookHost host, const Verdict& verdict) {
  return verdict.allowed ? HostAllowAnswer(host) : HostDenyAnswer(host, verdict.user_message, verdict.agent_message);
}

// A hook input larger than this is denied unread (a tool call's JSON is a
// few kilobytes; a whole-file write may be a few megabytes).
constexpr size_t kMaxHookInputBytes = 16 * 1024 * 1024;

constexpr const char* kStartOrResume =
    "Start or resume a Telic run before mutating tools, or set TELIC_BROKER_PERMISSIVE=1 for local development only.";

// The agent's side of a deny inside a run: the capability and target, the
// deciding layer and rule, and how to ask for it through the run.
std::string RunDenyMessage(const GatedCall& call, const std::string& run_id, const controller::BrokerDecision& decision) {
  const std::string target =
      call.target.empty() ? "" : fmt::format(" `{}`", CleanMessage(RedactedText(call.target), 200));
  const std::string layer = decision.detail.deciding_layer.empty() ? "none grants it" : decision.detail.deciding_layer;
  const std::string how = call.capability == "shell.execute"
                              ? "the exact command in the contract's shell allowlist"
                              : fmt::format("{} for this target in the contract's permissions", call.capability);
  return fmt::format(
      "Telic denied {}{} for run {} ({}): deciding layer {}, rule: {}. Do not bypass it. To ask for it, "
      "raise it in the run: a ClarificationRequest to the user, or a contract revision that adds {}.",
      call.capability, target, run_id, decision.reason_code, layer,
      CleanMessage(RedactedText(decision.detail.rule), 400), how);
}

// How the gate answers when it cannot decide: strict denies, permissive
// (TELIC_BROKER_PERMISSIVE=1) allows.
struct GatePolicy {
  bool strict = true;
  OutsideRun outside_run = OutsideRun::kDeny;

  Verdict Unavailable(const std::string& user_message, const std::string& agent_message) const {
    return strict ? Deny(user_message, agent_message) : Allow();
  }
  // No run of this repository is active: the host decides, or (strict) deny.
  Verdict NoRun(const std::string& user_message) const {
    return outside_run == OutsideRun::kHost ? Allow() : Unavailable(user_message, kStartOrResume);
  }
};

// The gated calls of a hook input, or (unreadable) the verdict for input
// Telic cannot read.
struct HookCalls {
  std::vector<GatedCall> calls;
  std::optional<Verdict> unreadable;
};

HookCalls ReadHookCalls(const GatePolicy& policy, HookHost host, const std::string& input) {
  HookCalls out;
  Json hook = Json::object();
  if (input.size() > kMaxHookInputBytes) {
    out.unreadable = policy.Unavailable(
        "Telic broker could not read the hook input.",
        fmt::format("The hook input is larger than {} bytes; Telic denies tool calls it cannot read.", kMaxHookInputBytes));
    return out;
  }
  if (!TrimJs(input).empty()) {
    auto parsed = ParseJsonStrict(input);
    if (!parsed || !parsed->is_object()) {
      out.unreadable = policy.Unavailable("Telic broker could not read the hook input.",
                                          "The hook input must be one JSON object; Telic denies tool calls it cannot read.");
      return out;
    }
    hook = std::move(*parsed);
  }
  if (host == HookHost::kTelic) {
    if (std::optional<HookToolCall> call = MapHookInput(hook)) out.calls.push_back({call->capability, call->target});
    return out;
  }
  auto request = MapHostHookInput(host, hook);
  if (!request) {
    out.unreadable = policy.Unavailable("Telic broker could not read the hook input.",
                                        fmt::format("Telic denies tool calls it cannot read: {}.",
                                                    CleanMessage(request.error().message(), 300)));
  } else {
    out.calls = std::move(request->calls);
  }
  return out;
}

// The repository's running run and the ledger it was read from.
struct ActiveSession {
  std::unique_ptr<store::SqliteStore> store;
  store::RunRecord run;
};

// The active session of the repository at `cwd` (or --repo), in its ledger
// (or --db); otherwise the verdict for having none.
std::variant<ActiveSession, Verdict> FindSession(const GatePolicy& policy, const store::Environment& env,
                                                 const std::string& cwd, const std::string& repo_flag,
                                                 const std::string& db_flag) {
  store::Environment located_env = env;
  if (!repo_flag.empty()) located_env["TELIC_REPOSITORY_ROOT"] = repo_flag;
  auto location = store::ResolveStateLocation(located_env, cwd);
  if (!location) {
    return policy.Unavailable("Telic broker is in strict mode but the repository root cannot be resolved.",
                              kStartOrResume);
  }
  if (!db_flag.empty()) {
    location->ledger_path = std::filesystem::absolute(db_flag).lexically_normal().string();
    location->state_dir = std::filesystem::path(location->ledger_path).parent_path().string();
  }
  // No ledger, or no running run in it: no session to evaluate against.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(location->ledger_path, ec)) {
    return policy.NoRun("Telic broker is in strict mode but no active Telic session matches this repository.");
  }
  auto store = store::SqliteStore::Open(location->ledger_path);
  if (!store) {
    return policy.Unavailable("Telic broker is in strict mode but the ledger cannot be opened.",
                              "Run telic doctor and ensure Telic state is initialized before mutating tools.");
  }
  auto found = controller::FindActiveRun(**store, location->repository_root);
  if (!found) {
    return policy.Unavailable("Telic broker is in strict mode but the ledger cannot be read.",
                              "Run telic doctor and ensure Telic state is initialized before mutating tools.");
  }
  if (!*found) return policy.NoRun("Telic broker is in strict mode but no active Telic session matches this repository.");
  const store::RunRecord& active = **found;
  auto run = (*store)->GetRun(active.run_id);
  if (!run || run->status != domain::RunStatus::kRunning || run->version != active.version) {
    return policy.NoRun("Telic broker is in strict mode but the active session run is not running.");
  }
  return ActiveSession{std::move(*store), std::move(*run)};
}

// Decides and records every call until one is denied: one deny denies.
Verdict RecordCalls(const GatePolicy& policy, ActiveSession& session, const std::vector<GatedCall>& calls) {
  SystemClock clock;
  RandomIdSource ids;
  for (const GatedCall& call : calls) {
    std::optional<std::string> target;
    if (!call.target.empty()) target = call.target;
    auto decision =
        controller::DecideAndRecord(*session.store, clock, ids, session.run, call.capability, target, "Hook broker");
    if (!decision) {
      return policy.Unavailable("Telic broker could not record its decision for this run.",
                                fmt::format("Telic could not record the broker decision ({}); retry the tool call.",
                                            CleanMessage(decision.error().message(), 200)));
    }
    if (decision->allowed) continue;
    return Deny(fmt::format("Telic denied {} for this run ({}).", call.capability, decision->reason_code),
                RunDenyMessage(call, session.run.run_id, *decision));
  }
  return Allow();
}

Verdict Decide(const store::Environment& env, const std::string& cwd, const std::string& repo_flag,
               const std::string& db_flag, HookHost host, const std::string& input, bool reads_ungated,
               OutsideRun outside_run) {
  auto var = env.find("TELIC_BROKER_PERMISSIVE");
  const GatePolicy policy{var == env.end() || var->second != "1", outside_run};
  // Input telic cannot read is denied; with --outside-run host only while a run is active.
  HookCalls hook = ReadHookCalls(policy, host, input);
  if (hook.unreadable && outside_run == OutsideRun::kDeny) return *hook.unreadable;
  if (reads_ungated) {
    std::erase_if(hook.calls, [](const GatedCall& call) {
      return call.capability == "repository.read" || call.capability == "network.read";
    });
  }
  if (!hook.unreadable && hook.calls.empty()) return Allow();
  std::variant<ActiveSession, Verdict> session = FindSession(policy, env, cwd, repo_flag, db_flag);
  if (Verdict* verdict = std::get_if<Verdict>(&session)) return *verdict;
  if (hook.unreadable) return *hook.unreadable;
  return RecordCalls(policy, std::get<ActiveSession>(session), hook.calls);
}

}  // namespace

std::optional<HookToolCall> MapHookInput(const Json& hook) {
  if (!hook.is_object()) return std::nullopt;
  if (auto it = hook.find("command"); it != hook.end() && it->is_string() && !it->get<std::string>().empty()) {
    return HookToolCall{"shell.execute", it->get<std::string>()};
  }
  const std::string tool = Text(Member(hook, "tool_name", "toolName"));
  const Json* input = Member(hook, "tool_input", "toolInput");
  static const Json kEmpty = Json::object();
  const Json& args = input != nullptr && input->is_object() ? *input : kEmpty;
  auto first = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (const Json* value = Member(args, key)) return Text(value);
    }
    return std::string();
  };
  std::optional<HookToolCall> call;
  if (tool == "Write" || tool == "StrReplace" || tool == "ApplyPatch" || tool == "EditNotebook" || tool == "Edit" ||
      tool == "MultiEdit" || tool == "NotebookEdit") {
    call = HookToolCall{"repository.write", first({"path", "file_path", "target_notebook", "notebook_path"})};
  } else if (tool == "Delete") {
    call = HookToolCall{"repository.delete", first({"path"})};
  } else if (tool == "Shell" || tool == "Bash") {
    call = HookToolCall{"shell.execute", first({"command"})};
  }
  if (!call || call->target.empty()) return std::nullopt;
  return call;
}

int RunBrokerGate(const store::Environment& env, const std::string& cwd, const std::string& repo_flag,
                  const std::string& db_flag, HookHost host, std::istream& in, std::ostream& out,
                  bool reads_ungated, OutsideRun outside_run) {
  try {
    std::stringstream input;
    input << in.rdbuf();
    out << Render(host, Decide(env, cwd, repo_flag, db_flag, host, input.str(), reads_ungated, outside_run))
               .dump(-1, ' ', false, Json::error_handler_t::replace)
        << "\n";
    return 0;
  } catch (const std::exception& ex) {
    out << Render(host, Deny("Telic broker failed.", std::string("Telic broker failed: ") + ex.what())).dump() << "\n";
    return 1;
  }
}

}  // namespace telic::cli
