#include "cli/install_legacy.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/config_limits.h"
#include "cli/install_config_edit.h"
#include "cli/install_paths.h"

namespace telic::cli::install {
namespace {

// Where an older telic recorded installs, inside the scope (advisory now).
constexpr const char* kLegacyManifest = ".telic/installs.json";

// What the older record says about `path` that cannot hurt: whether telic
// created the file, and per piece the depth of the first container it created.
const OrderedJson* LegacyRecordOf(const OrderedJson& install, const std::string& path) {
  if (!install.contains("files") || !install["files"].is_array()) return nullptr;
  for (const auto& file : install["files"]) {
    if (file.is_object() && file.contains("path") && file["path"] == path) return &file;
  }
  return nullptr;
}

size_t LegacyCreatedAt(const OrderedJson* record, const Piece& piece) {
  if (record == nullptr || !record->contains("pieces") || !(*record)["pieces"].is_array()) return piece.keys.size();
  for (const auto& old : (*record)["pieces"]) {
    if (!old.is_object() || !old.contains("keys") || old["keys"] != OrderedJson(piece.keys)) continue;
    if (old.contains("createdAt") && old["createdAt"].is_number_unsigned()) {
      return std::min(old["createdAt"].get<size_t>(), piece.keys.size());
    }
  }
  return piece.keys.size();
}

// Whether another host (in telic's record or the older one) still holds `path`.
bool PathShared(const OrderedJson& manifest, const Legacy& legacy, const std::string& host, const std::string& path) {
  if (SharedRecord(manifest, host, path) != nullptr) return true;
  for (const auto& [name, install] : legacy.manifest["hosts"].items()) {
    if (name != host && install.is_object() && LegacyRecordOf(install, path) != nullptr) return true;
  }
  return false;
}

// Takes this telic's plan for the host out of one file of an older install.
Status UninstallLegacyFile(const FileGroup& group, const fs::path& full, const OrderedJson* old, bool shared,
                           std::vector<std::string>& notes) {
  const std::optional<std::string> current = ReadBytes(full);
  if (!current) return Ok();
  const bool created = old != nullptr && old->contains("created") && (*old)["created"] == true;
  std::error_code ec;
  std::optional<std::string> bytes;
  switch (group.format) {
    case PieceFormat::kFile:
      if (shared) return Ok();
      if (*current == group.pieces.front()->text) {
        fs::remove(full, ec);
      } else {
        notes.push_back(fmt::format("{} is not what telic writes; left in place", full.string()));
      }
      return Ok();
    case PieceFormat::kToml: {
      const std::string block = "# telic: added by `telic install`; `telic uninstall` removes it\n" +
                                group.pieces.front()->text;
      bytes = WithoutBlock(*current, {"\n\n" + block, "\n" + block, block});
      if (!bytes) notes.push_back(fmt::format("{}: telic's [mcp_servers.telic] block was not found; left in place", full.string()));
      break;
    }
    case PieceFormat::kJson: {
      OrderedJson pieces = OrderedJson::array();
      for (const Piece* piece : group.pieces) {
        OrderedJson record = {{"keys", piece->keys},
                              {"append", piece->append},
                              {"value", piece->value},
                              {"createdAt", LegacyCreatedAt(old, *piece)}};
        if (piece->only_if_absent) record["onlyIfAbsent"] = true;
        pieces.push_back(record);
      }
      bytes = WithoutPieces(*current, pieces, full.string(), notes);
      if (bytes && created && !shared) {
        // A file telic created goes when only its set-if-absent keys are left.
        auto rest = ParseConfig(*bytes, full.string());
        for (const Piece* piece : group.pieces) {
          if (rest && piece->only_if_absent && piece->keys.size() == 1 && rest->contains(piece->keys[0]) &&
              Same((*rest)[piece->keys[0]], piece->value)) {
            rest->erase(piece->keys[0]);
          }
        }
        if (rest && rest->empty()) {
          fs::remove(full, ec);
          return Ok();
        }
      }
      break;
    }
  }
  if (bytes && *bytes != *current) TELIC_RETURN_IF_ERROR(WriteBytes(full, *bytes, false));
  return Ok();
}

// The folders above the plan's files that the older record says install created.
std::vector<std::string> LegacyCreatedDirs(const Legacy& legacy, const HostPlan& plan) {
  const OrderedJson& recorded = legacy.manifest.contains("createdDirs") ? legacy.manifest["createdDirs"] : OrderedJson();
  std::vector<std::string> dirs;
  if (!recorded.is_array()) return dirs;
  for (const Piece& piece : plan.pieces) {
    for (fs::path dir = fs::path(piece.path).parent_path(); !dir.empty(); dir = dir.parent_path()) {
      const std::string name = dir.string();
      if (std::find(recorded.begin(), recorded.end(), name) != recorded.end() &&
          std::find(dirs.begin(), dirs.end(), name) == dirs.end()) {
        dirs.push_back(name);
      }
    }
  }
  return dirs;
}

// Refuses an older record that names anything outside the scope (a path,
// a backup, a created folder): telic never wrote such a record, so it was
// forged or damaged, and nothing of it is acted on.
Status CheckLegacyRecord(const Scope& scope, const Legacy& legacy, const OrderedJson& install) {
  auto refuse = [&](const Error& error) {
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("{} was not written by telic ({}); nothing was removed: move it away", legacy.path.string(),
                            error.message()));
  };
  auto check = [&](const OrderedJson& value, const char* what) -> Status {
    if (value.is_null()) return Ok();
    if (!value.is_string()) return refuse(Error(ErrorCode::kInvalidArgument, fmt::format("a {} is not a string", what)));
    if (auto confined = ConfinePath(scope.base, value.get<std::string>(), what); !confined) return refuse(confined.error());
    return Ok();
  };
  if (install.contains("files")) {
    if (!install["files"].is_array()) return refuse(Error(ErrorCode::kInvalidArgument, "files is not an array"));
    for (const auto& file : install["files"]) {
      if (!file.is_object()) return refuse(Error(ErrorCode::kInvalidArgument, "a file record is not an object"));
      TELIC_RETURN_IF_ERROR(check(file.contains("path") ? file["path"] : OrderedJson(), "recorded path"));
      TELIC_RETURN_IF_ERROR(check(file.contains("backup") ? file["backup"] : OrderedJson(), "recorded backup"));
    }
  }
  if (legacy.manifest.contains("createdDirs")) {
    const OrderedJson& dirs = legacy.manifest["createdDirs"];
    if (!dirs.is_array()) return refuse(Error(ErrorCode::kInvalidArgument, "createdDirs is not an array"));
    for (const auto& dir : dirs) TELIC_RETURN_IF_ERROR(check(dir, "recorded folder"));
  }
  return Ok();
}

}  // namespace

Legacy LoadLegacy(const Scope& scope) {
  Legacy legacy{scope.base / kLegacyManifest, OrderedJson{{"hosts", OrderedJson::object()}}};
  auto confined = ConfinePath(scope.base, kLegacyManifest, "older install record");
  if (!confined) return legacy;
  auto bytes = ReadBytes(*confined);
  if (!bytes) return legacy;
  std::optional<OrderedJson> parsed = ParseManifest(*bytes, confined->string());
  if (parsed && parsed->is_object() && parsed->contains("hosts") && (*parsed)["hosts"].is_object()) {
    legacy.manifest = std::move(*parsed);
  }
  return legacy;
}

bool LegacyHas(const Legacy& legacy, const std::string& host) {
  const OrderedJson& hosts = legacy.manifest["hosts"];
  return hosts.contains(host) && hosts[host].is_object();
}

// The binary an older install configured ("" when it did not say).
std::string LegacyBinary(const OrderedJson& install) {
  return install.contains("binary") && install["binary"].is_string() ? install["binary"].get<std::string>() : "";
}

// Forgets the host in the older record; removes the record when it is empty.
Status ForgetLegacy(const Scope& scope, Legacy& legacy, const std::string& host) {
  legacy.manifest["hosts"].erase(host);
  std::error_code ec;
  if (legacy.manifest["hosts"].empty()) {
    fs::remove(legacy.path, ec);
    fs::remove(scope.base / ".telic", ec);  // only when empty
    return Ok();
  }
  return WriteBytes(legacy.path, DumpConfig(legacy.manifest), false);
}

Status UninstallLegacy(const Scope& scope, const std::string& host, const OrderedJson& manifest, Legacy& legacy,
                       std::vector<std::string>& notes) {
  const OrderedJson install = legacy.manifest["hosts"][host];
  TELIC_RETURN_IF_ERROR(CheckLegacyRecord(scope, legacy, install));
  TELIC_ASSIGN_OR_RETURN(HostPlan plan, PlanHost(host, scope.name == "user", LegacyBinary(install)));
  const std::vector<FileGroup> groups = GroupByFile(plan);
  std::vector<fs::path> paths;
  for (const FileGroup& group : groups) {
    TELIC_ASSIGN_OR_RETURN(fs::path full, ConfinePath(scope.base, group.path, "to remove"));
    paths.push_back(full);
  }
  notes.push_back(fmt::format("recorded by an older telic in {}: only telic's own entries were removed; its backups "
                              "under {} were not restored",
                              legacy.path.string(), (scope.base / ".telic/backups").string()));
  for (size_t i = groups.size(); i > 0; --i) {
    const FileGroup& group = groups[i - 1];
    const bool shared = PathShared(manifest, legacy, host, group.path);
    TELIC_RETURN_IF_ERROR(
        UninstallLegacyFile(group, paths[i - 1], LegacyRecordOf(install, group.path), shared, notes));
  }
  (void)RemoveEmptyFolders(scope, LegacyCreatedDirs(legacy, plan));
  return ForgetLegacy(scope, legacy, host);
}

}  // namespace telic::cli::install
