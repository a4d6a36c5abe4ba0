#include "cli/install_command.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "base/json_parse.h"
#include "base/sha256.h"
#include "cli/config_limits.h"
#include "cli/install_hosts.h"
#include "cli/install_paths.h"
#include "cli/jsonc_edit.h"
#include "mcp/server.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;

// Where an older telic recorded installs, inside the scope (advisory now).
constexpr const char* kLegacyManifest = ".telic/installs.json";

// --- files ----------------------------------------------------------------

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

// --- JSON merging ---------------------------------------------------------

// Whether a config file is JSONC (comments or trailing commas) rather than
// strict JSON: such a file is edited as text (cli/jsonc_edit.h), never re-dumped.
// Only called on text ParseConfig accepted (its bounds checked).
bool IsJsonc(const std::string& bytes) { return !IsBlank(bytes) && !OrderedJson::accept(bytes); }

std::string JsonPointer(const std::vector<std::string>& keys) {
  std::string pointer;
  for (const auto& key : keys) pointer += "/" + key;
  return pointer;
}

// The container at keys[0..depth) (objects created as needed, depth of the
// first created key reported); an error when a non-object is in the way.
Result<OrderedJson*> Descend(OrderedJson& root, const std::vector<std::string>& keys, size_t depth, size_t& created_at,
                             const std::string& path) {
  OrderedJson* node = &root;
  created_at = keys.size();
  for (size_t i = 0; i < depth; ++i) {
    if (!node->contains(keys[i])) {
      if (created_at == keys.size()) created_at = i;
      (*node)[keys[i]] = OrderedJson::object();
    }
    node = &(*node)[keys[i]];
    if (!node->is_object()) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("{}: {} is not an object", path, JsonPointer({keys.begin(), keys.begin() + i + 1})));
    }
  }
  return node;
}

const OrderedJson* Find(const OrderedJson& root, const std::vector<std::string>& keys) {
  const OrderedJson* node = &root;
  for (const auto& key : keys) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

// Equality that ignores key order: ordered_json compares objects in order,
// and a host or an editor may rewrite a file with its keys reordered.
bool Same(const OrderedJson& a, const OrderedJson& b) { return Json::parse(a.dump()) == Json::parse(b.dump()); }

OrderedJson::iterator FindSame(OrderedJson& items, const OrderedJson& value) {
  return std::find_if(items.begin(), items.end(), [&](const OrderedJson& item) { return Same(item, value); });
}

bool ContainsSame(const OrderedJson& items, const OrderedJson& value) {
  return std::any_of(items.begin(), items.end(), [&](const OrderedJson& item) { return Same(item, value); });
}

// Whether the piece is in `root` as install leaves it.
bool PiecePresent(const OrderedJson& root, const Piece& piece) {
  const OrderedJson* at = Find(root, piece.keys);
  if (at == nullptr) return false;
  if (!piece.append) return piece.only_if_absent || Same(*at, piece.value);
  return at->is_array() && ContainsSame(*at, piece.value);
}

// Applies one piece; `previous` is the value an earlier install of this host
// wrote (replaced in place on a reinstall with another binary). Returns the
// depth of the first key it created (keys.size() when none).
Result<size_t> ApplyPiece(OrderedJson& root, const Piece& piece, const OrderedJson* previous, const std::string& path) {
  const std::string& leaf = piece.keys.back();
  size_t created_at = 0;
  if (!piece.append) {
    TELIC_ASSIGN_OR_RETURN(OrderedJson * parent, Descend(root, piece.keys, piece.keys.size() - 1, created_at, path));
    if (parent->contains(leaf)) {
      const OrderedJson& current = (*parent)[leaf];
      if (piece.only_if_absent || Same(current, piece.value)) return created_at;
      if (previous == nullptr || !Same(current, *previous)) {
        return Fail(ErrorCode::kFailedPrecondition,
                    fmt::format("{}: {} already holds something telic did not write; remove it or run "
                                "`telic uninstall` first",
                                path, JsonPointer(piece.keys)));
      }
    } else if (created_at == piece.keys.size()) {
      created_at = piece.keys.size() - 1;
    }
    (*parent)[leaf] = piece.value;
    return created_at;
  }
  TELIC_ASSIGN_OR_RETURN(OrderedJson * parent, Descend(root, piece.keys, piece.keys.size() - 1, created_at, path));
  if (!parent->contains(leaf)) {
    if (created_at == piece.keys.size()) created_at = piece.keys.size() - 1;
    (*parent)[leaf] = OrderedJson::array();
  }
  OrderedJson& items = (*parent)[leaf];
  if (!items.is_array()) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("{}: {} is not an array", path, JsonPointer(piece.keys)));
  }
  if (ContainsSame(items, piece.value)) return created_at;
  if (previous != nullptr) {
    auto old = FindSame(items, *previous);
    if (old != items.end()) {
      *old = piece.value;
      return created_at;
    }
  }
  items.push_back(piece.value);
  return created_at;
}

// Takes a recorded piece out of `root`; prunes the containers install created.
void RemovePiece(OrderedJson& root, const OrderedJson& record) {
  std::vector<std::string> keys = record.at("keys").get<std::vector<std::string>>();
  if (record.value("onlyIfAbsent", false) || keys.empty()) return;
  OrderedJson* parent = &root;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    if (!parent->is_object() || !parent->contains(keys[i])) return;
    parent = &(*parent)[keys[i]];
  }
  if (!parent->is_object() || !parent->contains(keys.back())) return;
  OrderedJson& at = (*parent)[keys.back()];
  if (record.value("append", false)) {
    if (!at.is_array()) return;
    auto it = FindSame(at, record.at("value"));
    if (it == at.end()) return;
    at.erase(it);
  } else {
    if (!Same(at, record.at("value"))) return;  // the user changed it: theirs now
    parent->erase(keys.back());
  }
  // Prune empty containers from the deepest up to the first one install made.
  size_t created_at = record.value("createdAt", keys.size());
  for (size_t depth = keys.size(); depth > created_at; --depth) {
    OrderedJson* holder = &root;
    for (size_t i = 0; i + 1 < depth; ++i) holder = &(*holder)[keys[i]];
    const std::string& key = keys[depth - 1];
    if (!holder->contains(key)) continue;
    const OrderedJson& value = (*holder)[key];
    if ((value.is_object() || value.is_array()) && value.empty()) holder->erase(key);
  }
}

std::string DumpConfig(const OrderedJson& root) { return root.dump(2) + "\n"; }

// The JSONC text edit that does to `text` what ApplyPiece does to `before`
// (the DOM of `text`); ApplyPiece has accepted the piece already.
Result<std::string> ApplyPieceText(const std::string& text, const OrderedJson& before, const Piece& piece,
                                   const OrderedJson* previous) {
  const OrderedJson* at = Find(before, piece.keys);
  if (!piece.append) {
    if (at != nullptr && (piece.only_if_absent || Same(*at, piece.value))) return text;
    return jsonc::SetValue(text, piece.keys, piece.value);
  }
  if (at == nullptr) {
    OrderedJson items = OrderedJson::array();
    items.push_back(piece.value);
    return jsonc::SetValue(text, piece.keys, items);
  }
  if (ContainsSame(*at, piece.value)) return text;
  if (previous != nullptr) {
    for (size_t i = 0; i < at->size(); ++i) {
      if (Same((*at)[i], *previous)) return jsonc::ReplaceItem(text, piece.keys, i, piece.value);
    }
  }
  return jsonc::AppendItem(text, piece.keys, piece.value);
}

// RemovePiece on JSONC text: takes out the recorded piece and the containers
// install created, leaving every other byte (comments included) in place.
Result<std::string> RemovePieceText(std::string text, const OrderedJson& record) {
  std::vector<std::string> keys = record.at("keys").get<std::vector<std::string>>();
  if (record.value("onlyIfAbsent", false) || keys.empty()) return text;
  TELIC_ASSIGN_OR_RETURN(OrderedJson root, jsonc::Parse(text));
  const OrderedJson* at = Find(root, keys);
  if (at == nullptr) return text;
  if (record.value("append", false)) {
    if (!at->is_array()) return text;
    size_t index = 0;
    while (index < at->size() && !Same((*at)[index], record.at("value"))) ++index;
    if (index == at->size()) return text;
    TELIC_ASSIGN_OR_RETURN(text, jsonc::RemoveItem(text, keys, index));
  } else {
    if (!Same(*at, record.at("value"))) return text;  // the user changed it: theirs now
    TELIC_ASSIGN_OR_RETURN(text, jsonc::RemoveMember(text, keys));
  }
  size_t created_at = record.value("createdAt", keys.size());
  for (size_t depth = keys.size(); depth > created_at; --depth) {
    const std::vector<std::string> holder(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(depth));
    TELIC_ASSIGN_OR_RETURN(root, jsonc::Parse(text));
    const OrderedJson* value = Find(root, holder);
    if (value != nullptr && (value->is_object() || value->is_array()) && value->empty()) {
      TELIC_ASSIGN_OR_RETURN(text, jsonc::RemoveMember(text, holder));
    }
  }
  return text;
}

// --- TOML -----------------------------------------------------------------

Result<toml::table> ParseToml(const std::string& bytes, const std::string& path) {
  TELIC_RETURN_IF_ERROR(CheckTomlBounds(bytes, path));
  try {
    return toml::parse(bytes, path);
  } catch (const toml::parse_error& error) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not valid TOML ({} at line {}); telic will not change it", path,
                            std::string(error.description()), error.source().begin.line));
  }
}

// --- the manifest -----------------------------------------------------------

// A scope: the folder install writes into and the folder telic keeps its
// record in. The record lives in the state directory, out of the
// repository's reach: a repository cannot forge what uninstall will remove.
struct Scope {
  fs::path base;     // real path of the project root or $HOME
  std::string name;  // "project" | "user"
  fs::path state;    // the state folder of this scope: installs.json, backups/
  fs::path manifest() const { return state / "installs.json"; }
};

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

// --- install ----------------------------------------------------------------

struct FileGroup {
  std::string path;
  PieceFormat format;
  std::vector<const Piece*> pieces;
};

std::vector<FileGroup> GroupByFile(const HostPlan& plan) {
  std::vector<FileGroup> groups;
  for (const Piece& piece : plan.pieces) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const FileGroup& g) { return g.path == piece.path; });
    if (it == groups.end()) {
      groups.push_back({piece.path, piece.format, {&piece}});
    } else {
      it->pieces.push_back(&piece);
    }
  }
  return groups;
}

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

// The new bytes of a JSON file with the group's pieces merged, and each
// piece's record.
Result<std::string> MergeJson(const FileGroup& group, const std::optional<std::string>& current,
                              const OrderedJson* old_record, OrderedJson& piece_records, const std::string& shown) {
  TELIC_ASSIGN_OR_RETURN(OrderedJson root, ParseConfig(current.value_or(""), shown));
  const OrderedJson original = root;
  // JSONC is edited as text so its comments and layout stay.
  std::optional<std::string> text;
  if (current && IsJsonc(*current)) text = *current;
  for (const Piece* piece : group.pieces) {
    const OrderedJson* previous = nullptr;
    const OrderedJson* previous_record = nullptr;
    bool existed = Find(root, piece->keys) != nullptr;
    if (old_record != nullptr) {
      for (const auto& old : old_record->at("pieces")) {
        if (old.at("keys") == OrderedJson(piece->keys) && old.value("append", false) == piece->append) {
          previous = &old.at("value");
          previous_record = &old;
        }
      }
    }
    const OrderedJson before = root;
    TELIC_ASSIGN_OR_RETURN(size_t created_at, ApplyPiece(root, *piece, previous, shown));
    if (text) {
      auto edited = ApplyPieceText(*text, before, *piece, previous);
      if (!edited) return Fail(ErrorCode::kFailedPrecondition, fmt::format("{}: {}", shown, edited.error().message()));
      text = std::move(*edited);
    }
    // What install created is a fact of the first install: a reinstall keeps it.
    if (previous_record != nullptr) {
      created_at = previous_record->value("createdAt", created_at);
      existed = !previous_record->value("added", !existed);
    }
    OrderedJson record = {
        {"keys", piece->keys}, {"append", piece->append}, {"value", piece->value}, {"createdAt", created_at}};
    if (piece->only_if_absent) {
      record["onlyIfAbsent"] = true;
      record["added"] = !existed;
    }
    piece_records.push_back(record);
  }
  if (current && root == original) return *current;  // nothing to add: the user's bytes stay
  if (text) return *text;
  return DumpConfig(root);
}

Result<std::string> MergeToml(const FileGroup& group, const std::optional<std::string>& current,
                              const OrderedJson* old_record, OrderedJson& record, const std::string& shown) {
  const Piece& piece = *group.pieces.front();
  std::string text = current.value_or("");
  if (old_record != nullptr) {
    // Take the block an earlier install appended out first (a new binary path).
    const std::string old_block = old_record->value("block", "");
    auto at = old_block.empty() ? std::string::npos : text.find(old_block);
    if (at != std::string::npos) text.erase(at, old_block.size());
  }
  TELIC_ASSIGN_OR_RETURN(toml::table parsed, ParseToml(text, shown));
  if (parsed.at_path(piece.keys[0] + "." + piece.keys[1])) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{}: [{}.{}] already exists and telic did not write it; remove it or run "
                            "`telic uninstall` first",
                            shown, piece.keys[0], piece.keys[1]));
  }
  std::string block = "# telic: added by `telic install`; `telic uninstall` removes it\n" + piece.text;
  if (!text.empty()) block = (text.back() == '\n' ? "\n" : "\n\n") + block;
  std::string merged = text + block;
  TELIC_ASSIGN_OR_RETURN(toml::table check, ParseToml(merged, shown));
  if (!check.at_path(piece.keys[0] + "." + piece.keys[1] + ".command").is_string()) {
    return Fail(ErrorCode::kInternal, fmt::format("{}: the appended table does not read back", shown));
  }
  record["block"] = block;
  return merged;
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

Result<Scope> ScopeOf(const InstallRequest& request) {
  const std::string& base = request.user ? request.home : request.project_root;
  const std::string& state = request.user ? request.user_state_dir : request.state_dir;
  if (state.empty()) return Fail(ErrorCode::kFailedPrecondition, "no state directory to keep the install record in");
  TELIC_ASSIGN_OR_RETURN(fs::path real, RealFolder(base, request.user ? "$HOME" : "the repository root"));
  return Scope{real, request.user ? "user" : "project", fs::path(state)};
}

int Refuse(std::ostream& err, const std::string& message) {
  err << "telic: " << message << "\n";
  return 1;
}

// --- uninstall --------------------------------------------------------------

// `bytes` with the recorded JSON pieces taken out (JSONC edited as text);
// nullopt (and a note) when the file no longer parses.
std::optional<std::string> WithoutPieces(const std::string& bytes, const OrderedJson& pieces, const std::string& shown,
                                         std::vector<std::string>& notes) {
  auto root = ParseConfig(bytes, shown);
  if (!root) {
    notes.push_back(root.error().message() + "; telic's entries left in place");
    return std::nullopt;
  }
  if (IsJsonc(bytes)) {
    std::string text = bytes;
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
      auto edited = RemovePieceText(text, *it);
      if (!edited) {
        notes.push_back(fmt::format("{}: {}; telic's entries left in place", shown, edited.error().message()));
        return std::nullopt;
      }
      text = std::move(*edited);
    }
    return text;
  }
  const OrderedJson before = *root;
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) RemovePiece(*root, *it);
  return *root != before ? DumpConfig(*root) : bytes;
}

// `bytes` with the first of `blocks` found taken out; nullopt when none is there.
std::optional<std::string> WithoutBlock(const std::string& bytes, const std::vector<std::string>& blocks) {
  for (const std::string& block : blocks) {
    auto at = block.empty() ? std::string::npos : bytes.find(block);
    if (at == std::string::npos) continue;
    std::string rest = bytes;
    rest.erase(at, block.size());
    return rest;
  }
  return std::nullopt;
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

// Whether `full` is a real folder (not a symlink) with nothing in it.
bool IsEmptyRealFolder(const fs::path& full) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(full, ec)) && fs::is_empty(full, ec);
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

// --- installs recorded by an older telic --------------------------------------
//
// An older telic kept its record in <base>/.telic/installs.json, where a
// repository can write anything. Such a record is advisory: it says which host
// was installed and with which binary, nothing more. Uninstall then removes
// only what this telic's plan for that host and binary writes (the same
// paths, confined; a whole file only when its bytes are exactly the plan's;
// only telic's own keys, items or TOML block), never restores a backup, and
// removes only empty folders on the plan's paths (D-S1.2).

struct Legacy {
  fs::path path;         // the manifest inside the scope
  OrderedJson manifest;  // {"hosts": {...}} when readable, else empty
};

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

int RunInstall(const InstallRequest& request, std::ostream& out, std::ostream& err) {
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
