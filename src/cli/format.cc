#include "cli/format.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "base/text.h"

namespace telic::cli {
namespace {

// The length of the UTF-8 sequence at `text[i]`, 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceAt(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  auto cont = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((b == 0xE0 && byte(1) < 0xA0) || (b == 0xED && byte(1) >= 0xA0)) return 0;
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((b == 0xF0 && byte(1) < 0x90) || (b == 0xF4 && byte(1) >= 0x90)) return 0;
    return 4;
  }
  return 0;
}

std::string Cell(const std::string& text, size_t max_width) {
  std::string flat = TerminalText(CollapseLineBreaks(text));
  if (max_width == 0 || Utf16Length(flat) <= max_width) return flat;
  return TruncateUtf16(flat, max_width - 1) + "…";
}

}  // namespace

std::string OneLine(std::string_view text, size_t max_units) { return Cell(std::string(text), max_units); }

std::string TerminalText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t length = Utf8SequenceAt(text, i);
    if (length == 0 || c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      i += 1;
    } else if (length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
      i += 2;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string TerminalJson(const Json& value, int indent) {
  std::string dumped = value.dump(indent, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  for (size_t i = 0; i < dumped.size(); ++i) {
    auto c = static_cast<unsigned char>(dumped[i]);
    if (c == 0x7F) {
      out += "\\u007f";
    } else if (c == 0xC2 && i + 1 < dumped.size() && static_cast<unsigned char>(dumped[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(dumped[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(dumped[++i]));
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string TableStream::Cut(size_t column, const std::string& value) const {
  bool flexible = layout_.flex && *layout_.flex == column && flex_width_ > 0;
  return Cell(value, flexible ? flex_width_ : layout_.max_width);
}

// The header's and the first rows' widths; with a terminal width, the
// flexible column's share of it.
void TableStream::FixWidths(const std::vector<std::vector<std::string>>& rows) {
  widths_.assign(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) widths_[i] = Utf16Length(header_[i]);
  bool fitting = layout_.width > 0 && layout_.flex && *layout_.flex < header_.size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths_.size(); ++i) {
      size_t cut = fitting && i == *layout_.flex ? 0 : layout_.max_width;  // the flexible column: uncut for now
      widths_[i] = std::max(widths_[i], Utf16Length(Cell(row[i], cut)));
    }
  }
  if (!fitting) return;
  size_t others = 2 * (widths_.size() - 1);
  for (size_t i = 0; i < widths_.size(); ++i) others += i == *layout_.flex ? 0 : widths_[i];
  size_t share = layout_.width > others ? layout_.width - others : 0;
  flex_width_ = std::max({share, kMinFlexWidth, Utf16Length(header_[*layout_.flex])});
  widths_[*layout_.flex] = std::min(widths_[*layout_.flex], flex_width_);
}

std::string TableStream::Line(const std::vector<std::string>& cells, Style style_all,
                              const std::vector<std::string>* raw) const {
  std::string line;
  for (size_t i = 0; i < cells.size() && i < widths_.size(); ++i) {
    size_t length = Utf16Length(cells[i]);
    Style style = style_all;
    if (raw != nullptr && layout_.style && i < raw->size()) style = layout_.style(i, (*raw)[i]);
    line += Paint(cells[i], style, layout_.color);
    if (i + 1 < cells.size()) line.append(std::max(widths_[i], length) - length + 2, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string TableStream::Rows(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  if (widths_.empty()) {
    FixWidths(rows);
    out += Line(header_, Style::kBold, nullptr);
    std::vector<std::string> rule;
    for (size_t w : widths_) rule.push_back(std::string(w, '-'));
    out += Line(rule, Style::kDim, nullptr);
  }
  for (const auto& row : rows) {
    std::vector<std::string> cut;
    for (size_t i = 0; i < row.size(); ++i) cut.push_back(Cut(i, row[i]));
    out += Line(cut, Style::kPlain, &row);
  }
  return out;
}

std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        size_t max_width) {
  return TableStream(header, max_width).Rows(rows);
}

std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        const TableLayout& layout) {
  return TableStream(header, layout).Rows(rows);
}

int ReportFailure(std::ostream& err, const Error& error) {
  err << "telic: " << TerminalText(CleanMessage(error.message())) << "\n";
  return 1;
}

int Failure(const Error& error) { return ReportFailure(std::cerr, error); }

}  // namespace telic::cli
