// Plain-text tables for the CLI's human output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"

namespace telic::cli {

// Renders rows as left-aligned columns separated by two spaces, with the
// header underlined. Cells longer than `max_width` are cut with "…"
// (max_width 0: no limit).
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

// Prints "telic: <message>" (the message cleaned for a terminal) on `err`;
// returns 1, the exit code of a failed operation.
int ReportFailure(std::ostream& err, const Error& error);

}  // namespace telic::cli
