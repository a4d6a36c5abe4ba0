#include "cli/install_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>

#include "base/sha256.h"
#include "cli/config_limits.h"
#include "cli/install_config_edit.h"
#include "cli/install_hosts.h"
#include "cli/install_legacy.h"
#include "cli/install_manifest.h"
#include "cli/install_paths.h"
#include "mcp/server.h"

namespace telic::cli::install {
namespace {

const char* FormatName(PieceFormat format) {
  switch (format) {
    case PieceFormat::kJson:
      return "json";
    case PieceFormat::kToml:
      return "toml";
    case PieceFormat::kFile:
      break;
  }
  return "file";
}

struct Outcome {
  std::vector<std::string> changed;
  std::vector<std::string> unchanged;
};

// Sets the record's created/backup fields, which describe the file before
// telic first touched it: kept from `origin` (this host's earlier install,
// or another host's record of the file); else taken now, the original bytes
// backed up in the state folder, where the repository cannot reach them.
Status RecordOrigin(const Scope& scope, const std::string& host, const std::string& path, const OrderedJson* origin,
                    const std::optional<std::string>& current, const std::string& bytes, OrderedJson& record) {
  if (origin != nullptr) {
    for (const char* key : {"created", "backup", "backupSha256"}) {
      if (origin->contains(key)) record[key] = origin->at(key);
    }
    return Ok();
  }
  record["created"] = !current.has_value();
  record["backup"] = nullptr;
  if (current && bytes != *current) {
    std::string backup = BackupName(host, path);
    TELIC_RETURN_IF_ERROR(MakePrivateFolder((scope.state / backup).parent_path()));
    TELIC_RETURN_IF_ERROR(WriteBytes(scope.state / backup, *current, false));
    record["backup"] = backup;
    record["backupSha256"] = Sha256Hex(*current);
  }
  return Ok();
}

Status InstallFile(const Scope& scope, const std::string& host, const FileGroup& group, OrderedJson& manifest,
                   const OrderedJson* old_install, OrderedJson& new_files, Outcome& outcome) {
  TELIC_ASSIGN_OR_RETURN(const fs::path full, ConfinePath(scope.base, group.path, "to write"));
  const std::string shown = full.string();
  const std::optional<std::string> current = ReadBytes(full);
  const OrderedJson* old_record = RecordOf(old_install, group.path);
  const OrderedJson* shared = SharedRecord(manifest, host, group.path);
  OrderedJson record = {{"path", group.path}, {"format", FormatName(group.format)}};
  std::string bytes;
  bool executable = false;
  switch (group.format) {
    case PieceFormat::kJson: {
      OrderedJson pieces = OrderedJson::array();
      TELIC_ASSIGN_OR_RETURN(bytes, MergeJson(group, current, old_record, pieces, shown));
      record["pieces"] = pieces;
      break;
    }
    case PieceFormat::kToml: {
      TELIC_ASSIGN_OR_RETURN(bytes, MergeToml(group, current, old_record, record, shown));
      break;
    }
    case PieceFormat::kFile: {
      bytes = group.pieces.front()->text;
      executable = group.pieces.front()->executable;
      bool ours = old_record != nullptr && current && Sha256Hex(*current) == old_record->at("sha256");
      bool same = current == bytes;
      bool theirs_shared = shared != nullptr && current && Sha256Hex(*current) == shared->at("sha256");
      if (current && !same && !ours && !theirs_shared) {
        return Fail(ErrorCode::kFailedPrecondition,
                    fmt::format("{} exists and is not telic's; move it away and install again", shown));
      }
      break;
    }
  }
  const OrderedJson* origin = old_record != nullptr ? old_record : shared;
  TELIC_RETURN_IF_ERROR(RecordOrigin(scope, host, group.path, origin, current, bytes, record));
  std::vector<std::string> created_dirs;
  if (bytes != current) {
    TELIC_RETURN_IF_ERROR(MakeParents(scope.base, full, created_dirs));
    TELIC_RETURN_IF_ERROR(WriteBytes(full, bytes, executable));
    outcome.changed.push_back(shown);
    // Folders install made belong to the scope (hosts share some, e.g. .kiro).
    OrderedJson& dirs = manifest["createdDirs"];
    if (!dirs.is_array()) dirs = OrderedJson::array();
    for (const auto& dir : created_dirs) {
      if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
    }
  } else {
    outcome.unchanged.push_back(shown);
  }
  record["sha256"] = Sha256Hex(bytes);
  new_files.push_back(record);
  return Ok();
}

int Refuse(std::ostream& err, const std::string& message) {
  err << "telic: " << message << "\n";
  return 1;
}

// The paths one recorded install names (files and backups), each confined:
// the first that leaves its scope refuses the whole uninstall before anything
// changes.
Status CheckRecordedPaths(const Scope& scope, const OrderedJson& install) {
  for (const auto& record : install.at("files")) {
    auto file = ConfinePath(scope.base, record.at("path").get<std::string>(), "recorded path");
    if (!file) return std::unexpected(file.error());
    if (record.at("backup").is_string()) {
      const std::string backup = record.at("backup").get<std::string>();
      if (!backup.starts_with("backups/")) {
        return Fail(ErrorCode::kPermissionDenied,
                    fmt::format("refusing recorded backup {}: backups live in {}/backups", backup, scope.state.string()));
      }
      auto saved = ConfinePath(scope.state, backup, "recorded backup");
      if (!saved) return std::unexpected(saved.error());
    }
  }
  return Ok();
}

// Removes what one recorded file holds of this host's install. Called after
// CheckRecordedPaths: every path is inside the scope.
Status UninstallFile(const Scope& scope, const std::string& host, const OrderedJson& record,
                     const OrderedJson& manifest, std::vector<std::string>& notes) {
  const std::string rel = record.at("path").get<std::string>();
  const fs::path full = scope.base / rel;
  const std::optional<std::string> current = ReadBytes(full);
  const bool shared = SharedRecord(manifest, host, rel) != nullptr;
  const bool has_backup = record.at("backup").is_string();
  const fs::path backup = has_backup ? scope.state / record.at("backup").get<std::string>() : fs::path();
  std::error_code ec;
  auto drop_backup = [&] {
    if (has_backup) fs::remove(backup, ec);
  };
  if (!current) {
    drop_backup();
    return Ok();
  }
  if (!shared && Sha256Hex(*current) == record.at("sha256")) {
    if (record.at("created").get<bool>()) {
      fs::remove(full, ec);
    } else if (has_backup) {
      auto original = ReadBytes(backup);
      if (!original) return Fail(ErrorCode::kNotFound, fmt::format("the backup of {} is missing", full.string()));
      if (Sha256Hex(*original) != record.at("backupSha256")) {
        return Fail(ErrorCode::kDataLoss, fmt::format("the backup of {} ({}) is not what telic saved; {} left as it is",
                                                      full.string(), backup.string(), full.string()));
      }
      TELIC_RETURN_IF_ERROR(WriteBytes(full, *original, false));
    }
    drop_backup();
    return Ok();
  }
  const std::string format = record.at("format").get<std::string>();
  if (format == "file") {
    if (!shared) notes.push_back(fmt::format("{} was changed after install; left in place", full.string()));
    if (!shared) drop_backup();
    return Ok();
  }
  std::optional<std::string> bytes;
  if (format == "toml") {
    bytes = WithoutBlock(*current, {record.value("block", "")});
    if (!bytes) notes.push_back(fmt::format("{}: telic's [mcp_servers.telic] block was changed; left in place", full.string()));
  } else {
    bytes = WithoutPieces(*current, record.at("pieces"), full.string(), notes);
  }
  if (bytes && *bytes != *current) TELIC_RETURN_IF_ERROR(WriteBytes(full, *bytes, false));
  drop_backup();
  return Ok();
}

// --- doctor -----------------------------------------------------------------

// The gate mode an install recorded; installs recorded before modes existed wired strict hooks.
GateMode RecordedGate(const OrderedJson& install) {
  if (!install.contains("gate") || !install["gate"].is_string()) return GateMode::kStrict;
  return ParseGateMode(install["gate"].get<std::string>()).value_or(GateMode::kStrict);
}

// Whether an install recorded in `scope` is still what this binary would write.
Json CheckInstall(const Scope& scope, const std::string& host, const OrderedJson& install, const std::string& telic,
                  bool& ok) {
  Json problems = Json::array();
  const std::string binary = LegacyBinary(install);
  std::error_code ec;
  if (!fs::is_regular_file(binary, ec)) problems.push_back(fmt::format("the configured binary {} is missing", binary));
  if (binary != telic) problems.push_back(fmt::format("configured for {}, not this telic ({})", binary, telic));
  const GateMode gate = RecordedGate(install);
  auto plan = PlanHost(host, scope.name == "user", binary, gate);
  std::optional<bool> hook;
  if (plan) {
    for (const Piece& piece : plan->pieces) {
      auto full = ConfinePath(scope.base, piece.path, "to check");
      if (!full) {
        problems.push_back(full.error().message());
        continue;
      }
      auto bytes = ReadBytes(*full);
      bool present = false;
      if (bytes && piece.format == PieceFormat::kFile) present = *bytes == piece.text;
      if (bytes && piece.format == PieceFormat::kToml) present = bytes->find(piece.text) != std::string::npos;
      if (bytes && piece.format == PieceFormat::kJson) {
        auto root = ParseConfig(*bytes, full->string());
        present = root && PiecePresent(*root, piece);
      }
      if (piece.role == "hook") hook = hook.value_or(true) && present;
      if (!present) problems.push_back(fmt::format("{} ({}) is missing or changed", full->string(), piece.role));
    }
  }
  bool current = problems.empty();
  ok = ok && current;
  Json report = {{"scope", scope.name}, {"binary", binary}, {"current", current}, {"problems", problems}};
  report["hook"] = hook.has_value() ? Json(*hook ? "wired" : "not wired") : Json("host has no hook");
  report["gate"] = hook.has_value() ? GateModeName(gate) : "no hook";
  return report;
}

// What install tells the user besides the files: what was wired where, the
// gate mode and what it means, and what to do next.
struct InstallSummary {
  Json wired = Json::array();  // [{"role", "path"}]
  std::string gate;            // "run" | "strict" | "no hook"
  std::string gate_meaning;
  std::string next;
};

InstallSummary Summarize(const Scope& scope, const HostPlan& plan, GateMode gate) {
  static const std::map<std::string, std::string> kRoles = {
      {"mcp", "MCP server"}, {"instructions", "instructions"}, {"hook", "hook (telic broker-gate)"}};
  InstallSummary summary;
  bool hook = false;
  for (const Piece& piece : plan.pieces) {
    const std::string path = (scope.base / piece.path).string();
    const Json entry = {{"role", kRoles.at(piece.role)}, {"path", path}};
    if (std::find(summary.wired.begin(), summary.wired.end(), entry) == summary.wired.end()) summary.wired.push_back(entry);
    hook = hook || piece.role == "hook";
  }
  if (!hook) {
    summary.gate = "no hook";
    summary.gate_meaning = fmt::format("telic wires no hook for {}; the host's own permissions decide its tool calls",
                                       plan.host);
  } else if (gate == GateMode::kRun) {
    summary.gate = "run";
    summary.gate_meaning = fmt::format(
        "while a telic run is active for this folder, the hook decides shell and file changes by the run's "
        "permissions (deny by default); with no run active, {}'s own permissions decide. `telic install {} "
        "--gate strict` denies them when no run is active",
        plan.host, plan.host);
  } else {
    summary.gate = "strict";
    summary.gate_meaning = fmt::format(
        "the hook decides shell and file changes by the active telic run's permissions and denies them when no run "
        "is active. `telic install {}` (run mode) leaves calls outside a run to {}",
        plan.host, plan.host);
  }
  summary.next = fmt::format("restart {} (or reload its window) so it reads the new configuration, and approve the "
                             "`telic` MCP server when it asks; `telic doctor` checks the install",
                             plan.host);
  return summary;
}

int UninstallScope(const InstallRequest& request, const Scope& scope, std::ostream& out, std::ostream& err) {
  auto manifest = LoadManifest(scope);
  if (!manifest) return Refuse(err, manifest.error().message());
  Legacy legacy = LoadLegacy(scope);
  const bool recorded = (*manifest)["hosts"].contains(request.host);
  if (!recorded && !LegacyHas(legacy, request.host)) {
    if (request.json) {
      out << Json{{"host", request.host}, {"scope", scope.name}, {"removed", false}, {"notes", Json::array()}}.dump()
          << "\n";
      return 0;
    }
    out << fmt::format("telic is not installed for {} ({} scope, {}): nothing to remove\n", request.host, scope.name,
                       scope.base.string());
    return 0;
  }
  std::vector<std::string> notes;
  if (recorded) {
    const OrderedJson install = (*manifest)["hosts"][request.host];
    if (auto checked = CheckRecordedPaths(scope, install); !checked) return Refuse(err, checked.error().message());
    const OrderedJson& files = install.at("files");
    for (auto it = files.rbegin(); it != files.rend(); ++it) {
      if (auto removed = UninstallFile(scope, request.host, *it, *manifest, notes); !removed) {
        return Refuse(err, removed.error().message());
      }
    }
    (*manifest)["hosts"].erase(request.host);
    RemoveCreatedDirs(scope, request.host, *manifest);
    if (auto saved = SaveManifest(scope, *manifest); !saved) return Refuse(err, saved.error().message());
    if (LegacyHas(legacy, request.host)) {
      if (auto forgot = ForgetLegacy(scope, legacy, request.host); !forgot) return Refuse(err, forgot.error().message());
    }
  } else if (auto removed = UninstallLegacy(scope, request.host, *manifest, legacy, notes); !removed) {
    return Refuse(err, removed.error().message());
  }
  if (request.json) {
    out << Json{{"host", request.host}, {"scope", scope.name}, {"removed", true}, {"notes", notes}}.dump() << "\n";
    return 0;
  }
  out << fmt::format("telic uninstalled for {} ({} scope, {})\n", request.host, scope.name, scope.base.string());
  for (const auto& note : notes) out << "  note: " << note << "\n";
  return 0;
}

// What `telic install` did: as JSON with --json, else one line per fact.
void PrintInstalled(const InstallRequest& request, const Scope& scope, const HostPlan& plan, GateMode gate,
                    const Outcome& outcome, const std::vector<std::string>& notes, std::ostream& out) {
  const InstallSummary summary = Summarize(scope, plan, gate);
  if (request.json) {
    out << Json{{"host", request.host},
                {"scope", scope.name},
                {"changed", outcome.changed},
                {"unchanged", outcome.unchanged},
                {"wired", summary.wired},
                {"gate", summary.gate},
                {"gateMeaning", summary.gate_meaning},
                {"next", summary.next},
                {"note", plan.note}}
               .dump()
        << "\n";
    return;
  }
  out << fmt::format("telic installed for {} ({} scope, {}): {} file(s) written, {} already current\n", request.host,
                     scope.name, scope.base.string(), outcome.changed.size(), outcome.unchanged.size());
  for (const auto& wired : summary.wired) {
    out << fmt::format("  wired {}: {}\n", wired["role"].get<std::string>(), wired["path"].get<std::string>());
  }
  out << fmt::format("  gate: {}: {}\n", summary.gate, summary.gate_meaning);
  out << "  next: " << summary.next << "\n";
  for (const auto& path : outcome.changed) out << "  wrote " << path << "\n";
  if (!plan.note.empty()) out << "  note: " << plan.note << "\n";
  for (const auto& note : notes) out << "  note: " << note << "\n";
}

// Every file of the plan lies inside the scope (checked before the first
// one is written).
Status CheckPlanConfined(const Scope& scope, const HostPlan& plan) {
  for (const Piece& piece : plan.pieces) TELIC_RETURN_IF_ERROR(ConfinePath(scope.base, piece.path, "to write"));
  return Ok();
}

}  // namespace
}  // namespace telic::cli::install

namespace telic::cli {

int RunInstall(const InstallRequest& request, std::ostream& out, std::ostream& err) {
  using namespace install;  // the steps below (cli/install_*.h)
  const std::optional<GateMode> gate = ParseGateMode(request.gate);
  if (!gate) return Refuse(err, fmt::format("unknown gate mode {} (run or strict)", request.gate));
  auto plan = PlanHost(request.host, request.user, request.telic, *gate);
  if (!plan) return Refuse(err, plan.error().message());
  auto scope_found = ScopeOf(request);
  if (!scope_found) return Refuse(err, scope_found.error().message());
  const Scope& scope = *scope_found;
  if (auto confined = CheckPlanConfined(scope, *plan); !confined) return Refuse(err, confined.error().message());
  auto manifest = LoadManifest(scope);
  if (!manifest) return Refuse(err, manifest.error().message());
  // No reference into the manifest is held across changes to it: its objects
  // keep their keys in a vector, so an insertion moves them.
  const OrderedJson old_install =
      (*manifest)["hosts"].contains(request.host) ? (*manifest)["hosts"][request.host] : OrderedJson();
  const OrderedJson* old = old_install.is_null() ? nullptr : &old_install;
  // An install an older telic recorded inside the scope: its entries are
  // taken out (as uninstall does) and this install records them afresh.
  std::vector<std::string> notes;
  if (Legacy legacy = LoadLegacy(scope); old == nullptr && LegacyHas(legacy, request.host)) {
    if (auto migrated = UninstallLegacy(scope, request.host, *manifest, legacy, notes); !migrated) {
      return Refuse(err, migrated.error().message());
    }
  }
  OrderedJson files = OrderedJson::array();
  Outcome outcome;
  Status status = Ok();
  for (const FileGroup& group : GroupByFile(*plan)) {
    status = InstallFile(scope, request.host, group, *manifest, old, files, outcome);
    if (!status) break;
  }
  if (!status && old != nullptr) {
    // Keep the earlier install's files this attempt did not reach.
    const OrderedJson attempted = {{"files", files}};
    for (const auto& file : old->at("files")) {
      if (RecordOf(&attempted, file.at("path").get<std::string>()) == nullptr) files.push_back(file);
    }
  }
  if (!files.empty()) {
    (*manifest)["hosts"][request.host] = {{"binary", request.telic},
                                          {"telicVersion", mcp::kServerVersion},
                                          {"gate", GateModeName(*gate)},
                                          {"files", files}};
  }
  if (auto saved = SaveManifest(scope, *manifest); !saved) return Refuse(err, saved.error().message());
  if (!status) return Refuse(err, status.error().message());
  PrintInstalled(request, scope, *plan, *gate, outcome, notes, out);
  return 0;
}

int RunUninstall(const InstallRequest& request, std::ostream& out, std::ostream& err) {
  using namespace install;  // the steps below (cli/install_*.h)
  if (std::find(InstallHostNames().begin(), InstallHostNames().end(), request.host) == InstallHostNames().end()) {
    return Refuse(err, fmt::format("unknown host {}", request.host));
  }
  auto scope = ScopeOf(request);
  if (!scope) return Refuse(err, scope.error().message());
  try {
    return UninstallScope(request, *scope, out, err);
  } catch (const std::exception& ex) {  // a record of an unexpected shape: nothing more is touched
    return Refuse(err, fmt::format("uninstall stopped: {}", ex.what()));
  }
}

Json HostDoctorChecks(const InstallRequest& where, bool& ok) {
  using namespace install;  // the steps below (cli/install_*.h)
  Json report = Json::object();
  std::vector<Scope> scopes;
  if (auto real = RealFolder(where.project_root, "repository"); real && !where.state_dir.empty()) {
    scopes.push_back({*real, "project", where.state_dir});
  }
  if (auto real = RealFolder(where.home, "$HOME"); real && !where.user_state_dir.empty() &&
                                                     (scopes.empty() || *real != scopes.front().base)) {
    scopes.push_back({*real, "user", where.user_state_dir});
  }
  for (const std::string& host : InstallHostNames()) {
    Json installs = Json::array();
    bool found = false;
    const HostMarkers markers = MarkersOf(host);
    for (const Scope& scope : scopes) {
      std::error_code ec;
      for (const auto& marker : scope.name == "user" ? markers.home : markers.project) {
        found = found || fs::exists(scope.base / marker, ec);
      }
      auto manifest = LoadManifest(scope);
      if (!manifest) {
        installs.push_back({{"scope", scope.name}, {"current", false}, {"problems", {manifest.error().message()}}});
        ok = false;
        continue;
      }
      if ((*manifest)["hosts"].contains(host)) {
        installs.push_back(CheckInstall(scope, host, (*manifest)["hosts"][host], where.telic, ok));
        continue;
      }
      Legacy legacy = LoadLegacy(scope);
      if (LegacyHas(legacy, host)) {
        Json check = CheckInstall(scope, host, legacy.manifest["hosts"][host], where.telic, ok);
        check["recordedBy"] = fmt::format("an older telic in {} (run `telic install {}` to record it safely)",
                                          legacy.path.string(), host);
        installs.push_back(check);
      }
    }
    if (!found && installs.empty()) continue;
    report[host] = {{"found", true}, {"installed", !installs.empty()}, {"installs", installs}};
  }
  return report;
}

}  // namespace telic::cli
