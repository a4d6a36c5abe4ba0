// Plain-text tables for the CLI's human output.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "cli/terminal.h"

namespace telic::cli {

// `text` (from a ledger, a bundle or an argument) safe to write to a
// terminal: C0 control characters and DEL as \xNN, C1 controls (U+0080 to
// U+009F) as \u00NN, and bytes that are not UTF-8 as \xNN; everything else,
// other languages included, unchanged. Every printer of the CLI that shows
// stored or imported text goes through this (tables, show, trace, verify,
// replay, import, artifact, errors).
std::string TerminalText(std::string_view text);

// `value` as JSON for a terminal (`indent` as Json::dump; -1 compact): the
// same JSON value, with DEL and C1 controls written as \u escapes (JSON
// already escapes C0) and invalid UTF-8 replaced by U+FFFD.
std::string TerminalJson(const Json& value, int indent = -1);

// Renders rows as left-aligned columns separated by two spaces, with the
// header underlined. Cells are shown through TerminalText, line breaks as
// one space; cells longer than `max_width` are cut with "…" (max_width 0: no
// limit).
std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        size_t max_width = 60);

// `text` as one terminal-safe line (TerminalText, line breaks as one
// space) of at most `max_units` UTF-16 units, cut with "…" (0: no limit).
std::string OneLine(std::string_view text, size_t max_units);

// How a table fits its terminal. With a `width`, the `flex` column (the
// last, free-text one) takes what the others leave of the width, at least
// kMinFlexWidth; every other cell, and every cell without a width, is cut
// at `max_width`.
struct TableLayout {
  size_t max_width = 60;
  size_t width = 0;  // Terminal::width; 0: unknown
  std::optional<size_t> flex;
  bool color = false;  // the header bold, cells as `style` says
  // The style of one cell (its column and its text before cutting); plain when unset.
  std::function<Style(size_t column, const std::string& cell)> style;
};

inline constexpr size_t kMinFlexWidth = 12;

// The same table written batch by batch, for output that is streamed: the
// column widths are fixed by the header and the first batch (so one batch
// renders exactly as FormatTable), and a wider cell in a later batch shifts
// the rest of its own row instead of holding rows back.
class TableStream {
 public:
  explicit TableStream(std::vector<std::string> header, size_t max_width = 60)
      : header_(std::move(header)) {
    layout_.max_width = max_width;
  }
  TableStream(std::vector<std::string> header, TableLayout layout)
      : header_(std::move(header)), layout_(std::move(layout)) {}

  // The lines of `rows`; the first call starts with the header and its rule.
  std::string Rows(const std::vector<std::vector<std::string>>& rows);

 private:
  // One line of `cells` (cut and terminal-safe) painted `style`, or, with
  // `raw` (the same row as given), as layout_.style says.
  std::string Line(const std::vector<std::string>& cells, Style style, const std::vector<std::string>* raw) const;
  std::string Cut(size_t column, const std::string& value) const;
  void FixWidths(const std::vector<std::vector<std::string>>& rows);

  std::vector<std::string> header_;
  TableLayout layout_;
  std::vector<size_t> widths_;  // empty until the first batch
  size_t flex_width_ = 0;       // the flexible column's cut, once fixed (0: max_width)
};

// FormatTable with a layout.
std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                        const TableLayout& layout);

// Prints "telic: <message>" (one line, through TerminalText) on `err`;
// returns 1, the exit code of a failed operation.
int ReportFailure(std::ostream& err, const Error& error);

// ReportFailure on std::cerr.
int Failure(const Error& error);

}  // namespace telic::cli
