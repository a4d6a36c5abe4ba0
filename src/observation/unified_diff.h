// Item 3 of issue 38: the unified diff telic computes itself between the
// grounded content of a path and its content now, redacted and size-capped
// to fit one Evidence artifact.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telic::observation {

// The diff text kept in an Evidence's content: at most this many bytes of
// the redacted diff (cut at a line end), then a line saying how long it was.
// Evidence content holds at most 32,768 bytes.
inline constexpr size_t kMaxDiffBytes = 32'000;
// Lines of unchanged context around each change.
inline constexpr size_t kDiffContext = 3;
// Above this many (before lines x after lines) between the common head and
// tail, the middle is shown as removed then added, not aligned line by line.
inline constexpr size_t kMaxAlignedCells = 4'000'000;

struct DiffText {
  std::string text;                     // "--- a/<path>\n+++ b/<path>\n@@ ... @@\n..." (never empty)
  std::vector<std::string> redactions;  // one line per redacted value ("credential redacted from the diff")
  bool truncated = false;               // cut at kMaxDiffBytes
  size_t full_bytes = 0;                // the redacted diff's length before the cut
  bool binary = false;                  // a side is not UTF-8 text (or holds NUL): only the digests are compared
};

// The diff of `path` from `before` to `after` (nullopt: no file, shown as
// /dev/null). Binary content (a NUL byte or invalid UTF-8) is named, not
// shown. Secrets are redacted (base/redact.h) before the cut.
DiffText UnifiedDiff(std::string_view path, const std::optional<std::string>& before,
                     const std::optional<std::string>& after);

}  // namespace telic::observation
