#include "cli/install_config_edit.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>

#include "cli/config_limits.h"
#include "cli/jsonc_edit.h"

namespace telic::cli::install {
namespace {

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

OrderedJson::iterator FindSame(OrderedJson& items, const OrderedJson& value) {
  return std::find_if(items.begin(), items.end(), [&](const OrderedJson& item) { return Same(item, value); });
}

bool ContainsSame(const OrderedJson& items, const OrderedJson& value) {
  return std::any_of(items.begin(), items.end(), [&](const OrderedJson& item) { return Same(item, value); });
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

}  // namespace

// Equality that ignores key order: ordered_json compares objects in order,
// and a host or an editor may rewrite a file with its keys reordered.
bool Same(const OrderedJson& a, const OrderedJson& b) { return Json::parse(a.dump()) == Json::parse(b.dump()); }

// Whether the piece is in `root` as install leaves it.
bool PiecePresent(const OrderedJson& root, const Piece& piece) {
  const OrderedJson* at = Find(root, piece.keys);
  if (at == nullptr) return false;
  if (!piece.append) return piece.only_if_absent || Same(*at, piece.value);
  return at->is_array() && ContainsSame(*at, piece.value);
}

std::string DumpConfig(const OrderedJson& root) { return root.dump(2) + "\n"; }

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

}  // namespace telic::cli::install
