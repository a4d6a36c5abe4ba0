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

std::string TableStream::Line(const std::vector<std::string>& cells) const {
  std::string line;
  for (size_t i = 0; i < cells.size() && i < widths_.size(); ++i) {
    line += cells[i];
    size_t length = Utf16Length(cells[i]);
    if (i + 1 < cells.size()) line.append(std::max(widths_[i], length) - length + 2, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string TableStream::Rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : rows) {
    std::vector<std::string> cut;
    for (const auto& value : row) cut.push_back(Cell(value, max_width_));
    cells.push_back(std::move(cut));
  }
  std::string out;
  if (widths_.empty()) {
    widths_.assign(header_.size(), 0);
    for (size_t i = 0; i < header_.size(); ++i) widths_[i] = Utf16Length(header_[i]);
    for (const auto& row : cells) {
      for (size_t i = 0; i < row.size() && i < widths_.size(); ++i) widths_[i] = std::max(widths_[i], Utf16Length(row[i]));
    }
    out += Line(header_);
    std::vector<std::string> rule;
    for (size_t w : widths_) rule.push_back(std::string(w, '-'));
    out += Line(rule);
  }
  for (const auto& row : cells) out += Line(row);
  return out;
}

std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        size_t max_width) {
  return TableStream(header, max_width).Rows(rows);
}

int ReportFailure(std::ostream& err, const Error& error) {
  err << "telic: " << CleanMessage(error.message()) << "\n";
  return 1;
}

}  // namespace telic::cli
