#include "cli/format.h"

#include <algorithm>

#include "base/text.h"

namespace telic::cli {
namespace {

std::string Cell(const std::string& text, size_t max_width) {
  std::string flat = CollapseLineBreaks(text);
  if (max_width == 0 || Utf16Length(flat) <= max_width) return flat;
  return TruncateUtf16(flat, max_width - 1) + "…";
}

}  // namespace

std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        size_t max_width) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back(header);
  for (const auto& row : rows) {
    std::vector<std::string> cut;
    for (const auto& value : row) cut.push_back(Cell(value, max_width));
    cells.push_back(std::move(cut));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], Utf16Length(row[i]));
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - Utf16Length(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(cells[0]);
  std::vector<std::string> rule;
  for (size_t w : widths) rule.push_back(std::string(w, '-'));
  emit(rule);
  for (size_t i = 1; i < cells.size(); ++i) emit(cells[i]);
  return out;
}

}  // namespace telic::cli
