// Plain-text tables for the CLI's human output.
#pragma once

#include <string>
#include <vector>

namespace telic::cli {

// Renders rows as left-aligned columns separated by two spaces, with the
// header underlined. Cells longer than `max_width` are cut with "…"
// (max_width 0: no limit).
std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        size_t max_width = 60);

}  // namespace telic::cli
