#include "observation/unified_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "base/redact.h"
#include "base/sha256.h"
#include "grounding/paths.h"

namespace telic::observation {
namespace {

// The lines of `text`, each with its '\n' (the last may lack one).
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

bool IsText(const std::optional<std::string>& content) {
  return !content || (content->find('\0') == std::string::npos && grounding::IsValidUtf8(*content));
}

enum class Op : char { kKeep = ' ', kRemove = '-', kAdd = '+' };
struct Edit {
  Op op;
  size_t a;  // line index in before (kKeep, kRemove)
  size_t b;  // line index in after (kKeep, kAdd)
};

// The edit script of a and b: the common head and tail kept, the middle
// aligned by a longest common subsequence when small enough.
std::vector<Edit> EditScript(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  size_t n = a.size() - head - tail;
  size_t m = b.size() - head - tail;
  std::vector<Edit> edits;
  for (size_t i = 0; i < head; ++i) edits.push_back({Op::kKeep, i, i});
  if (n > 0 && m > 0 && n * m <= kMaxAlignedCells) {
    // lcs[i][j]: LCS length of a[head+i..] and b[head+j..].
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = a[head + i] == b[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[head + i] == b[head + j]) {
        edits.push_back({Op::kKeep, head + i++, head + j++});
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        edits.push_back({Op::kRemove, head + i++, 0});  // removals before additions, as diff prints them
      } else {
        edits.push_back({Op::kAdd, 0, head + j++});
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) edits.push_back({Op::kRemove, head + i, 0});
    for (size_t j = 0; j < m; ++j) edits.push_back({Op::kAdd, 0, head + j});
  }
  for (size_t k = 0; k < tail; ++k) edits.push_back({Op::kKeep, a.size() - tail + k, b.size() - tail + k});
  return edits;
}

std::string Range(size_t start, size_t count) {
  // Unified diff ranges are 1-based; an empty range names the line before it.
  return count == 1 ? fmt::format("{}", start + 1) : fmt::format("{},{}", count == 0 ? start : start + 1, count);
}

void AppendLine(std::string& out, char op, std::string_view line) {
  out.push_back(op);
  out.append(line);
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

std::string Hunks(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::vector<Edit> edits = EditScript(a, b);
  std::string out;
  size_t k = 0;
  while (k < edits.size()) {
    while (k < edits.size() && edits[k].op == Op::kKeep) ++k;
    if (k == edits.size()) break;
    size_t start = k >= kDiffContext ? k - kDiffContext : 0;
    size_t end = k;  // one past the hunk's last edit
    size_t keeps = 0;
    for (size_t x = k; x < edits.size(); ++x) {
      if (edits[x].op == Op::kKeep) {
        if (++keeps > 2 * kDiffContext) break;
      } else {
        keeps = 0;
        end = x + 1;
      }
    }
    end = std::min(edits.size(), end + kDiffContext);
    size_t a_start = 0, b_start = 0, a_count = 0, b_count = 0;
    for (size_t x = 0; x < start; ++x) {
      if (edits[x].op != Op::kAdd) ++a_start;
      if (edits[x].op != Op::kRemove) ++b_start;
    }
    std::string body;
    for (size_t x = start; x < end; ++x) {
      const Edit& e = edits[x];
      if (e.op != Op::kAdd) ++a_count;
      if (e.op != Op::kRemove) ++b_count;
      AppendLine(body, static_cast<char>(e.op), e.op == Op::kAdd ? b[e.b] : a[e.a]);
    }
    out += fmt::format("@@ -{} +{} @@\n", Range(a_start, a_count), Range(b_start, b_count));
    out += body;
    k = end;
  }
  return out;
}

// `text` cut to at most `limit` bytes at a line end (or a UTF-8 boundary).
size_t CutPoint(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text.size();
  size_t cut = text.rfind('\n', limit - 1);
  if (cut != std::string_view::npos && cut > 0) return cut + 1;
  cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

DiffText UnifiedDiff(std::string_view path, const std::optional<std::string>& before,
                     const std::optional<std::string>& after) {
  DiffText diff;
  std::string text = fmt::format("--- {}\n+++ {}\n", before ? "a/" + std::string(path) : "/dev/null",
                                 after ? "b/" + std::string(path) : "/dev/null");
  if (!IsText(before) || !IsText(after)) {
    diff.binary = true;
    text += fmt::format("Binary files differ: {} -> {}\n", before ? Sha256Ref(*before) : "absent",
                        after ? Sha256Ref(*after) : "absent");
  } else {
    text += Hunks(Lines(before.value_or("")), Lines(after.value_or("")));
  }
  Redacted redacted = RedactSecrets(text);
  for (const std::string& category : redacted.categories) {
    diff.redactions.push_back(fmt::format("{} redacted from the diff", category));
  }
  diff.full_bytes = redacted.text.size();
  size_t cut = CutPoint(redacted.text, kMaxDiffBytes);
  diff.text = redacted.text.substr(0, cut);
  if (cut < redacted.text.size()) {
    diff.truncated = true;
    diff.text += fmt::format("[telic: diff truncated at {} of {} bytes]\n", cut, redacted.text.size());
  }
  return diff;
}

}  // namespace telic::observation
