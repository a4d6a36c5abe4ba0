#include "cli/doctor_command.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/install_command.h"
#include "cli/install_hosts.h"
#include "mcp/server.h"
#include "store/open_store.h"
#include "store/pg_store.h"
#include "store/sqlite_store.h"

namespace telic::cli {
namespace {

enum class Mark { kPass, kFail, kInfo };

std::string MarkText(Mark mark, bool color) {
  switch (mark) {
    case Mark::kPass: return Paint("✓", Style::kGreen, color);
    case Mark::kFail: return Paint("✗", Style::kRed, color);
    case Mark::kInfo: return Paint("-", Style::kDim, color);
  }
  return "";
}

std::string Line(Mark mark, std::string_view label, const std::string& text, bool color) {
  return fmt::format("{} {:<11} {}\n", MarkText(mark, color), label, TerminalText(text));
}

std::string Str(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
}

bool True(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_boolean() && object[key].get<bool>();
}

std::string RepositoryLine(const Json& check, bool color) {
  if (True(check, "ok")) return Line(Mark::kPass, "repository", Str(check, "root"), color);
  return Line(Mark::kFail, "repository", Str(check, "error"), color);
}

std::string LedgerLine(const Json& check, bool color) {
  std::string path = Str(check, "path");
  if (!True(check, "exists")) {
    return Line(Mark::kInfo, "ledger", fmt::format("none yet at {} (the first run creates it)", path), color);
  }
  if (Str(check, "integrity") == "ok") return Line(Mark::kPass, "ledger", path + " (integrity ok)", color);
  std::string error = Str(check, "error");
  return Line(Mark::kFail, "ledger", path + ": integrity check failed" + (error.empty() ? "" : ": " + error), color);
}

std::string GitLine(const Json& check, bool color) {
  if (True(check, "ok")) return Line(Mark::kPass, "git", "found", color);
  return Line(Mark::kInfo, "git", "not found (optional: grounding reads the files without it)", color);
}

// One line per install of `host`, its problems indented below.
std::string HostLines(const std::string& host, const Json& entry, bool color) {
  if (!True(entry, "installed")) {
    return Line(Mark::kInfo, host, fmt::format("found here, not set up (telic install {})", host), color);
  }
  std::string out;
  for (const Json& install : entry.value("installs", Json::array())) {
    std::string label = fmt::format("{} ({})", host, Str(install, "scope"));
    std::string gate = Str(install, "gate");
    std::string hook = Str(install, "hook");
    std::string summary = True(install, "current") ? "current" : "needs attention";
    if (!hook.empty()) summary += ", hook " + hook;
    if (!gate.empty() && gate != "no hook") summary += ", gate " + gate;
    out += fmt::format("  {} {:<22} {}\n", MarkText(True(install, "current") ? Mark::kPass : Mark::kFail, color),
                       TerminalText(label), TerminalText(summary));
    for (const Json& problem : install.value("problems", Json::array())) {
      if (problem.is_string()) out += fmt::format("    {}\n", TerminalText(problem.get<std::string>()));
    }
    if (std::string by = Str(install, "recordedBy"); !by.empty()) out += fmt::format("    recorded by {}\n", TerminalText(by));
  }
  return out;
}

}  // namespace

Json DoctorReport(const LedgerFlags& flags, const std::string& self) {
  Json checks = Json::object();
  bool ok = true;
  auto location = Locate(flags);
  if (!location) {
    checks["repository"] = {{"ok", false}, {"error", location.error().message()}};
    ok = false;
  } else {
    checks["repository"] = {{"ok", true}, {"root", location->repository_root}};
    bool postgres = store::IsPostgresUrl(location->ledger_path);
    bool exists = LedgerExists(*location);
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
  return {{"ok", ok}, {"version", mcp::kServerVersion}, {"checks", checks}};
}

std::string FormatDoctor(const Json& report, bool color) {
  const Json& checks = report["checks"];
  std::string out = fmt::format("telic {}\n", TerminalText(Str(report, "version")));
  out += RepositoryLine(checks.value("repository", Json::object()), color);
  if (checks.contains("ledger")) out += LedgerLine(checks["ledger"], color);
  out += GitLine(checks.value("git", Json::object()), color);
  const Json hosts = checks.value("hosts", Json::object());
  if (hosts.empty()) {
    out += Line(Mark::kInfo, "hosts",
                fmt::format("none set up (telic install HOST; hosts: {})", fmt::join(InstallHostNames(), ", ")), color);
  } else {
    out += "hosts\n";
    for (auto it = hosts.begin(); it != hosts.end(); ++it) out += HostLines(it.key(), it.value(), color);
  }
  out += True(report, "ok") ? Paint("all checks passed", Style::kGreen, color) + "\n"
                            : Paint("some checks failed (see ✗ above)", Style::kRed, color) + "\n";
  return out;
}

int Doctor(const LedgerFlags& flags, const std::string& self, const Terminal& terminal) {
  Json report = DoctorReport(flags, self);
  if (flags.json) {
    std::cout << TerminalJson(report, -1) << "\n";
  } else {
    std::cout << FormatDoctor(report, terminal.color);
  }
  return report["ok"].get<bool>() ? 0 : 1;
}

}  // namespace telic::cli
