// Editing host config files for `telic install` / `telic uninstall`: merging a
// plan's pieces into a JSON, JSONC or TOML file and taking recorded pieces out
// again. Strict JSON is edited as a DOM and re-dumped; JSONC is edited as text
// (cli/jsonc_edit.h) so its comments and layout stay; TOML gets one appended
// block, the rest of the file untouched. Every text is bounded first
// (cli/config_limits.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/install_hosts.h"

namespace telic::cli::install {

// Equality that ignores key order.
bool Same(const OrderedJson& a, const OrderedJson& b);

// Whether the piece is in `root` as install leaves it.
bool PiecePresent(const OrderedJson& root, const Piece& piece);

// A config DOM as install writes it: two-space indent, a final line break.
std::string DumpConfig(const OrderedJson& root);

// The pieces of a plan that go into one file, in plan order.
struct FileGroup {
  std::string path;
  PieceFormat format;
  std::vector<const Piece*> pieces;
};

std::vector<FileGroup> GroupByFile(const HostPlan& plan);

// The new bytes of a JSON file (`current`, nullopt when absent) with the
// group's pieces merged; appends each piece's record to `piece_records`.
// `old_record` is this host's earlier record of the file, if any.
[[nodiscard]] Result<std::string> MergeJson(const FileGroup& group, const std::optional<std::string>& current,
                                            const OrderedJson* old_record, OrderedJson& piece_records,
                                            const std::string& shown);

// The new bytes of a TOML file with the group's table appended as a block;
// sets record["block"]. Refuses a table of that name telic did not write.
[[nodiscard]] Result<std::string> MergeToml(const FileGroup& group, const std::optional<std::string>& current,
                                            const OrderedJson* old_record, OrderedJson& record,
                                            const std::string& shown);

// `bytes` with the recorded JSON pieces taken out (JSONC edited as text);
// nullopt (and a note) when the file no longer parses.
std::optional<std::string> WithoutPieces(const std::string& bytes, const OrderedJson& pieces, const std::string& shown,
                                         std::vector<std::string>& notes);

// `bytes` with the first of `blocks` found taken out; nullopt when none is there.
std::optional<std::string> WithoutBlock(const std::string& bytes, const std::vector<std::string>& blocks);

}  // namespace telic::cli::install
