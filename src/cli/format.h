// Plain-text tables for the CLI's human output.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

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

// The same table written batch by batch, for output that is streamed: the
// column widths are fixed by the header and the first batch (so one batch
// renders exactly as FormatTable), and a wider cell in a later batch shifts
// the rest of its own row instead of holding rows back.
class TableStream {
 public:
  explicit TableStream(std::vector<std::string> header, size_t max_width = 60)
      : header_(std::move(header)), max_width_(max_width) {}

  // The lines of `rows`; the first call starts with the header and its rule.
  std::string Rows(const std::vector<std::vector<std::string>>& rows);

 private:
  std::string Line(const std::vector<std::string>& cells) const;

  std::vector<std::string> header_;
  size_t max_width_;
  std::vector<size_t> widths_;  // empty until the first batch
};

// Prints "telic: <message>" (one line, through TerminalText) on `err`;
// returns 1, the exit code of a failed operation.
int ReportFailure(std::ostream& err, const Error& error);

}  // namespace telic::cli
