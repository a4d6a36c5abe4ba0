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
#include "cli/install_hosts.h"
#include "cli/jsonc_edit.h"
#include "mcp/server.h"

namespace telic::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = ".telic/installs.json";

// --- files ----------------------------------------------------------------

std::optional<std::string> ReadBytes(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

bool IsBlank(const std::string& bytes) { return bytes.find_first_not_of(" \t\r\n") == std::string::npos; }

// Whether a config file is JSONC (comments or trailing commas) rather than
// strict JSON: such a file is edited as text (cli/jsonc_edit.h), never re-dumped.
bool IsJsonc(const std::string& bytes) { return !IsBlank(bytes) && !OrderedJson::accept(bytes); }

// Parses a config file (an object) as JSON or JSONC; for JSONC the DOM has the
// comments and trailing commas dropped and serves decisions only.
Result<OrderedJson> ParseConfig(const std::string& bytes, const std::string& path) {
  if (IsBlank(bytes)) return OrderedJson::object();
  OrderedJson parsed = ParseOrderedJson(bytes).value_or(OrderedJson(OrderedJson::value_t::discarded));
  if (parsed.is_discarded()) {
    auto lenient = jsonc::Parse(bytes);
    if (!lenient) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("{} is not valid JSON ({}); telic will not rewrite it", path, lenient.error().message()));
    }
    parsed = std::move(*lenient);
  }
  if (!parsed.is_object()) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not a JSON object; telic will not rewrite it", path));
  }
  return parsed;
}

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
  try {
    return toml::parse(bytes, path);
  } catch (const toml::parse_error& error) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not valid TOML ({} at line {}); telic will not change it", path,
                            std::string(error.description()), error.source().begin.line));
  }
}

// --- the manifest -----------------------------------------------------------

struct Scope {
  fs::path base;     // project root or home
  std::string name;  // "project" | "user"
  fs::path manifest() const { return base / kManifest; }
};

Result<OrderedJson> LoadManifest(const Scope& scope) {
  auto bytes = ReadBytes(scope.manifest());
  if (!bytes) return OrderedJson{{"version", 1}, {"hosts", OrderedJson::object()}};
  OrderedJson manifest = ParseOrderedJson(*bytes).value_or(OrderedJson(OrderedJson::value_t::discarded));
  if (manifest.is_discarded() || !manifest.is_object() || !manifest.contains("hosts") ||
      !manifest["hosts"].is_object()) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is not a telic install manifest; move it away", scope.manifest().string()));
  }
  return manifest;
}

Status SaveManifest(const Scope& scope, const OrderedJson& manifest) {
  fs::path path = scope.manifest();
  if (manifest["hosts"].empty()) {
    std::error_code ec;
    fs::remove(path, ec);
    fs::remove(path.parent_path() / "backups", ec);  // only when empty
    fs::remove(path.parent_path(), ec);              // only when empty
    return Ok();
  }
  std::string bytes = DumpConfig(manifest);
  if (ReadBytes(path) == bytes) return Ok();
  std::vector<std::string> created;
  TELIC_RETURN_IF_ERROR(MakeParents(scope.base, path, created));
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

std::string BackupName(const std::string& host, const std::string& path) {
  std::string name = path;
  std::replace(name.begin(), name.end(), '/', '%');
  return fmt::format(".telic/backups/{}/{}", host, name);
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

Status InstallFile(const Scope& scope, const std::string& host, const FileGroup& group, OrderedJson& manifest,
                   const OrderedJson* old_install, OrderedJson& new_files, Outcome& outcome) {
  const fs::path full = scope.base / group.path;
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
  // created/backup describe the file before telic first touched it: kept from
  // this host's earlier install, or from another host's record of the file.
  const OrderedJson* origin = old_record != nullptr ? old_record : shared;
  std::vector<std::string> created_dirs;
  if (origin != nullptr) {
    record["created"] = origin->at("created");
    record["backup"] = origin->at("backup");
  } else {
    record["created"] = !current.has_value();
    record["backup"] = nullptr;
    if (current && bytes != *current) {
      std::string backup = BackupName(host, group.path);
      std::vector<std::string> ignored;
      TELIC_RETURN_IF_ERROR(MakeParents(scope.base, scope.base / backup, ignored));
      TELIC_RETURN_IF_ERROR(WriteBytes(scope.base / backup, *current, false));
      record["backup"] = backup;
    }
  }
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

Scope ScopeOf(const InstallRequest& request) {
  return request.user ? Scope{request.home, "user"} : Scope{request.project_root, "project"};
}

int Refuse(std::ostream& err, const std::string& message) {
  err << "telic: " << message << "\n";
  return 1;
}

// --- uninstall --------------------------------------------------------------

// Removes what one recorded file holds of this host's install.
Status UninstallFile(const Scope& scope, const std::string& host, const OrderedJson& record,
                     const OrderedJson& manifest, std::vector<std::string>& notes) {
  const std::string rel = record.at("path").get<std::string>();
  const fs::path full = scope.base / rel;
  const std::optional<std::string> current = ReadBytes(full);
  const bool shared = SharedRecord(manifest, host, rel) != nullptr;
  std::error_code ec;
  auto drop_backup = [&] {
    if (record.at("backup").is_string()) fs::remove(scope.base / record.at("backup").get<std::string>(), ec);
  };
  if (!current) {
    drop_backup();
    return Ok();
  }
  if (!shared && Sha256Hex(*current) == record.at("sha256")) {
    if (record.at("created").get<bool>()) {
      fs::remove(full, ec);
    } else if (record.at("backup").is_string()) {
      auto original = ReadBytes(scope.base / record.at("backup").get<std::string>());
      if (!original) return Fail(ErrorCode::kNotFound, fmt::format("the backup of {} is missing", full.string()));
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
  std::string bytes = *current;
  if (format == "toml") {
    const std::string block = record.value("block", "");
    auto at = block.empty() ? std::string::npos : bytes.find(block);
    if (at == std::string::npos) {
      notes.push_back(fmt::format("{}: telic's [mcp_servers.telic] block was changed; left in place", full.string()));
    } else {
      bytes.erase(at, block.size());
    }
  } else {
    auto root = ParseConfig(bytes, full.string());
    if (!root) {
      notes.push_back(root.error().message() + "; telic's entries left in place");
      return Ok();
    }
    if (IsJsonc(bytes)) {
      for (auto it = record.at("pieces").rbegin(); it != record.at("pieces").rend(); ++it) {
        auto edited = RemovePieceText(bytes, *it);
        if (!edited) {
          notes.push_back(fmt::format("{}: {}; telic's entries left in place", full.string(), edited.error().message()));
          return Ok();
        }
        bytes = std::move(*edited);
      }
    } else {
      const OrderedJson before = *root;
      for (auto it = record.at("pieces").rbegin(); it != record.at("pieces").rend(); ++it) RemovePiece(*root, *it);
      if (*root != before) bytes = DumpConfig(*root);
    }
  }
  if (bytes != *current) TELIC_RETURN_IF_ERROR(WriteBytes(full, bytes, false));
  drop_backup();
  return Ok();
}

// Removes the folders installs created that are empty now, deepest first,
// and forgets them; the others stay recorded for a later uninstall.
void RemoveCreatedDirs(const Scope& scope, const std::string& host, OrderedJson& manifest) {
  std::error_code ec;
  fs::remove(scope.base / ".telic/backups" / host, ec);  // only when empty
  if (!manifest.contains("createdDirs")) return;
  std::vector<std::string> dirs = manifest["createdDirs"].get<std::vector<std::string>>();
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  OrderedJson kept = OrderedJson::array();
  for (const auto& dir : dirs) {
    const fs::path full = scope.base / dir;
    if (fs::is_directory(full, ec) && fs::is_empty(full, ec)) fs::remove(full, ec);
    if (fs::exists(full, ec)) kept.push_back(dir);
  }
  if (kept.empty()) {
    manifest.erase("createdDirs");
  } else {
    manifest["createdDirs"] = kept;
  }
}

// --- doctor -----------------------------------------------------------------

// Whether an install recorded in `scope` is still what this binary would write.
Json CheckInstall(const Scope& scope, const std::string& host, const OrderedJson& install, const std::string& telic,
                  bool& ok) {
  Json problems = Json::array();
  const std::string binary = install.value("binary", "");
  std::error_code ec;
  if (!fs::is_regular_file(binary, ec)) problems.push_back(fmt::format("the configured binary {} is missing", binary));
  if (binary != telic) problems.push_back(fmt::format("configured for {}, not this telic ({})", binary, telic));
  auto plan = PlanHost(host, scope.name == "user", binary);
  std::optional<bool> hook;
  if (plan) {
    for (const Piece& piece : plan->pieces) {
      const fs::path full = scope.base / piece.path;
      auto bytes = ReadBytes(full);
      bool present = false;
      if (bytes && piece.format == PieceFormat::kFile) present = *bytes == piece.text;
      if (bytes && piece.format == PieceFormat::kToml) present = bytes->find(piece.text) != std::string::npos;
      if (bytes && piece.format == PieceFormat::kJson) {
        auto root = ParseConfig(*bytes, full.string());
        present = root && PiecePresent(*root, piece);
      }
      if (piece.role == "hook") hook = hook.value_or(true) && present;
      if (!present) problems.push_back(fmt::format("{} ({}) is missing or changed", full.string(), piece.role));
    }
  }
  bool current = problems.empty();
  ok = ok && current;
  Json report = {{"scope", scope.name}, {"binary", binary}, {"current", current}, {"problems", problems}};
  report["hook"] = hook.has_value() ? Json(*hook ? "wired" : "not wired") : Json("host has no hook");
  return report;
}

}  // namespace

int RunInstall(const InstallRequest& request, std::ostream& out, std::ostream& err) {
  auto plan = PlanHost(request.host, request.user, request.telic);
  if (!plan) return Refuse(err, plan.error().message());
  const Scope scope = ScopeOf(request);
  auto manifest = LoadManifest(scope);
  if (!manifest) return Refuse(err, manifest.error().message());
  // No reference into the manifest is held across changes to it: its objects
  // keep their keys in a vector, so an insertion moves them.
  const OrderedJson old_install =
      (*manifest)["hosts"].contains(request.host) ? (*manifest)["hosts"][request.host] : OrderedJson();
  const OrderedJson* old = old_install.is_null() ? nullptr : &old_install;
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
    (*manifest)["hosts"][request.host] = {
        {"binary", request.telic}, {"telicVersion", mcp::kServerVersion}, {"files", files}};
  }
  if (auto saved = SaveManifest(scope, *manifest); !saved) return Refuse(err, saved.error().message());
  if (!status) return Refuse(err, status.error().message());
  if (request.json) {
    out << Json{{"host", request.host},
                {"scope", scope.name},
                {"changed", outcome.changed},
                {"unchanged", outcome.unchanged},
                {"note", plan->note}}
               .dump()
        << "\n";
  } else {
    out << fmt::format("telic installed for {} ({} scope, {}): {} file(s) written, {} already current\n", request.host,
                       scope.name, scope.base.string(), outcome.changed.size(), outcome.unchanged.size());
    for (const auto& path : outcome.changed) out << "  wrote " << path << "\n";
    if (!plan->note.empty()) out << "  note: " << plan->note << "\n";
  }
  return 0;
}

int RunUninstall(const InstallRequest& request, std::ostream& out, std::ostream& err) {
  if (std::find(InstallHostNames().begin(), InstallHostNames().end(), request.host) == InstallHostNames().end()) {
    return Refuse(err, fmt::format("unknown host {}", request.host));
  }
  const Scope scope = ScopeOf(request);
  auto manifest = LoadManifest(scope);
  if (!manifest) return Refuse(err, manifest.error().message());
  if (!(*manifest)["hosts"].contains(request.host)) {
    if (request.json) {
      out << Json{{"host", request.host}, {"scope", scope.name}, {"removed", false}, {"notes", Json::array()}}.dump()
          << "\n";
      return 0;
    }
    out << fmt::format("telic is not installed for {} ({} scope, {}): nothing to remove\n", request.host, scope.name,
                       scope.base.string());
    return 0;
  }
  const OrderedJson files = (*manifest)["hosts"][request.host]["files"];
  std::vector<std::string> notes;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    if (auto removed = UninstallFile(scope, request.host, *it, *manifest, notes); !removed) {
      return Refuse(err, removed.error().message());
    }
  }
  (*manifest)["hosts"].erase(request.host);
  RemoveCreatedDirs(scope, request.host, *manifest);
  if (auto saved = SaveManifest(scope, *manifest); !saved) return Refuse(err, saved.error().message());
  if (request.json) {
    out << Json{{"host", request.host}, {"scope", scope.name}, {"removed", true}, {"notes", notes}}.dump() << "\n";
    return 0;
  }
  out << fmt::format("telic uninstalled for {} ({} scope, {})\n", request.host, scope.name, scope.base.string());
  for (const auto& note : notes) out << "  note: " << note << "\n";
  return 0;
}

Json HostDoctorChecks(const std::string& project_root, const std::string& home, const std::string& telic, bool& ok) {
  Json report = Json::object();
  std::vector<Scope> scopes;
  if (!project_root.empty()) scopes.push_back({project_root, "project"});
  if (!home.empty() && home != project_root) scopes.push_back({home, "user"});
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
        installs.push_back(CheckInstall(scope, host, (*manifest)["hosts"][host], telic, ok));
      }
    }
    if (!found && installs.empty()) continue;
    report[host] = {{"found", true}, {"installed", !installs.empty()}, {"installs", installs}};
  }
  return report;
}

}  // namespace telic::cli
