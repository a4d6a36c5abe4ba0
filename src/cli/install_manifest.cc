#include "cli/install_manifest.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "base/json_parse.h"
#include "cli/config_limits.h"
#include "cli/install_config_edit.h"
#include "cli/install_paths.h"

namespace telic::cli::install {
namespace {

OrderedJson EmptyManifest() { return OrderedJson{{"version", 2}, {"hosts", OrderedJson::object()}}; }

bool IsStringArray(const OrderedJson& value) {
  return value.is_array() && std::all_of(value.begin(), value.end(), [](const OrderedJson& v) { return v.is_string(); });
}

// Whether one file record has every member uninstall reads, with its type.
bool WellFormedFile(const OrderedJson& file) {
  if (!file.is_object() || !file.contains("path") || !file["path"].is_string()) return false;
  if (!file.contains("format") || !file["format"].is_string()) return false;
  if (!file.contains("sha256") || !file["sha256"].is_string()) return false;
  if (!file.contains("created") || !file["created"].is_boolean()) return false;
  if (!file.contains("backup") || !(file["backup"].is_null() || file["backup"].is_string())) return false;
  if (file["backup"].is_string() && !(file.contains("backupSha256") && file["backupSha256"].is_string())) return false;
  const std::string format = file["format"].get<std::string>();
  if (format == "toml") return !file.contains("block") || file["block"].is_string();
  if (format == "file") return true;
  if (format != "json" || !file.contains("pieces") || !file["pieces"].is_array()) return false;
  return std::all_of(file["pieces"].begin(), file["pieces"].end(), [](const OrderedJson& piece) {
    return piece.is_object() && piece.contains("keys") && IsStringArray(piece["keys"]) && piece.contains("value") &&
           (!piece.contains("createdAt") || piece["createdAt"].is_number_unsigned());
  });
}

bool WellFormedManifest(const OrderedJson& manifest) {
  if (!manifest.is_object() || !manifest.contains("hosts") || !manifest["hosts"].is_object()) return false;
  if (manifest.contains("createdDirs") && !IsStringArray(manifest["createdDirs"])) return false;
  for (const auto& [host, install] : manifest["hosts"].items()) {
    if (!install.is_object() || !install.contains("files") || !install["files"].is_array()) return false;
    if (!std::all_of(install["files"].begin(), install["files"].end(), WellFormedFile)) return false;
  }
  return true;
}

// Whether `full` is a real folder (not a symlink) with nothing in it.
bool IsEmptyRealFolder(const fs::path& full) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(full, ec)) && fs::is_empty(full, ec);
}

}  // namespace

// A regular file's bytes; at most kMaxConfigBytes + 1 of them (a larger
// file then fails every size check and hash comparison).
std::optional<std::string> ReadBytes(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes(kMaxConfigBytes + 1, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

// Creates the missing folders above `file`; appends each one created (relative
// to `base`, outermost first) to `created`.
Status MakeParents(const fs::path& base, const fs::path& file, std::vector<std::string>& created) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path dir = file.parent_path(); !dir.empty() && !fs::exists(dir, ec); dir = dir.parent_path()) {
    missing.push_back(dir);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) && ec) {
      return Fail(ErrorCode::kInternal, fmt::format("cannot create {}: {}", it->string(), ec.message()));
    }
    created.push_back(fs::relative(*it, base).string());
  }
  return Ok();
}

// Writes through a temporary file and a rename, keeping an existing file's mode.
Status WriteBytes(const fs::path& path, const std::string& bytes, bool executable) {
  fs::path temp = path;
  temp += ".telic-tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out.flush()) return Fail(ErrorCode::kInternal, fmt::format("cannot write {}", temp.string()));
  }
  struct stat st;
  mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  if (executable) mode |= 0755;
  ::chmod(temp.c_str(), mode);
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) return Fail(ErrorCode::kInternal, fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return Ok();
}

// Parses a manifest's bytes with the config bounds; nullopt when it is not one.
std::optional<OrderedJson> ParseManifest(const std::string& bytes, const std::string& shown) {
  if (!CheckJsonBounds(bytes, shown)) return std::nullopt;
  OrderedJson manifest = ParseOrderedJson(bytes).value_or(OrderedJson(OrderedJson::value_t::discarded));
  if (manifest.is_discarded()) return std::nullopt;
  return manifest;
}

Result<OrderedJson> LoadManifest(const Scope& scope) {
  auto bytes = ReadBytes(scope.manifest());
  if (!bytes) return EmptyManifest();
  std::optional<OrderedJson> manifest = ParseManifest(*bytes, scope.manifest().string());
  if (!manifest || !WellFormedManifest(*manifest)) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not a telic install manifest; move it away", scope.manifest().string()));
  }
  return *manifest;
}

// Creates `dir` and its missing parents, private to the user (0700).
Status MakePrivateFolder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  }
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  return Ok();
}

Status SaveManifest(const Scope& scope, const OrderedJson& manifest) {
  const fs::path path = scope.manifest();
  std::error_code ec;
  if (manifest["hosts"].empty()) {
    fs::remove(path, ec);
    fs::remove(scope.state / "backups", ec);  // only when empty
    return Ok();
  }
  std::string bytes = DumpConfig(manifest);
  if (ReadBytes(path) == bytes) return Ok();
  TELIC_RETURN_IF_ERROR(MakePrivateFolder(scope.state));
  return WriteBytes(path, bytes, false);
}

// The record of `path` in another host's install in this scope, if any.
const OrderedJson* SharedRecord(const OrderedJson& manifest, const std::string& host, const std::string& path) {
  for (const auto& [name, install] : manifest.at("hosts").items()) {
    if (name == host) continue;
    for (const auto& file : install.at("files")) {
      if (file.at("path") == path) return &file;
    }
  }
  return nullptr;
}

const OrderedJson* RecordOf(const OrderedJson* install, const std::string& path) {
  if (install == nullptr) return nullptr;
  for (const auto& file : install->at("files")) {
    if (file.at("path") == path) return &file;
  }
  return nullptr;
}

// A backup's name, relative to the scope's state folder.
std::string BackupName(const std::string& host, const std::string& path) {
  std::string name = path;
  std::replace(name.begin(), name.end(), '/', '%');
  return fmt::format("backups/{}/{}", host, name);
}

Result<Scope> ScopeOf(const InstallRequest& request) {
  const std::string& base = request.user ? request.home : request.project_root;
  const std::string& state = request.user ? request.user_state_dir : request.state_dir;
  if (state.empty()) return Fail(ErrorCode::kFailedPrecondition, "no state directory to keep the install record in");
  TELIC_ASSIGN_OR_RETURN(fs::path real, RealFolder(base, request.user ? "$HOME" : "the repository root"));
  return Scope{real, request.user ? "user" : "project", fs::path(state)};
}

// Removes the recorded folders (relative to the scope) that are inside the
// scope and empty now, deepest first; returns the ones that stay.
std::vector<std::string> RemoveEmptyFolders(const Scope& scope, std::vector<std::string> dirs) {
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::vector<std::string> kept;
  for (const auto& dir : dirs) {
    auto full = ConfinePath(scope.base, dir, "recorded folder");
    if (!full) continue;  // forgotten: never removed outside the scope
    std::error_code ec;
    if (IsEmptyRealFolder(*full)) fs::remove(*full, ec);
    if (fs::exists(fs::symlink_status(*full, ec))) kept.push_back(dir);
  }
  return kept;
}

// Removes the folders installs created that are empty now and forgets them;
// the others stay recorded for a later uninstall.
void RemoveCreatedDirs(const Scope& scope, const std::string& host, OrderedJson& manifest) {
  std::error_code ec;
  fs::remove(scope.state / "backups" / host, ec);  // only when empty
  if (!manifest.contains("createdDirs")) return;
  std::vector<std::string> kept = RemoveEmptyFolders(scope, manifest["createdDirs"].get<std::vector<std::string>>());
  if (kept.empty()) {
    manifest.erase("createdDirs");
  } else {
    manifest["createdDirs"] = kept;
  }
}

}  // namespace telic::cli::install
