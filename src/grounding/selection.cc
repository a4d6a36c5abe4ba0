#include "grounding/selection.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <set>

#include "base/canonical_json.h"
#include "base/sha256.h"
#include "base/text.h"
#include "grounding/parallel.h"
#include "grounding/paths.h"
#include "grounding/secrets.h"

namespace telic::grounding {
namespace {

constexpr auto kStopWords = std::to_array<std::string_view>({
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "check", "code", "com", "could", "do",
    "does", "file", "fix", "for", "from", "have", "how", "in", "investigate", "is", "it", "me", "my", "of",
    "on", "or", "please", "project", "report", "review", "so", "task", "that", "the", "this", "to", "use",
    "using", "we", "what", "when", "where", "who", "why", "will", "with", "would", "you"});

bool IsStopWord(std::string_view word) {
  return std::find(kStopWords.begin(), kStopWords.end(), word) != kStopWords.end();
}

bool IsLowerOrDigit(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

// A trailing 's' dropped from tokens longer than 4 not ending in ss, is, us.
std::string_view NormalizeToken(std::string_view token) {
  if (token.size() > 4 && token.back() == 's' && !EndsWith(token, "ss") && !EndsWith(token, "is") &&
      !EndsWith(token, "us")) {
    token.remove_suffix(1);
  }
  return token;
}

// `text` with a space at each camelCase boundary ([a-z0-9] then [A-Z]),
// then lower-cased, into `out` (cleared first; `split` is scratch).
void SplitLower(std::string_view text, std::string& split, std::string& out) {
  // One pass that splits and folds, written through a pointer (at most one
  // space per byte), given up at the lead byte of U+0130 or U+212A: those
  // lower-case to other bytes, and the two-pass form below handles them.
  bool folded = true;
  out.resize_and_overwrite(text.size() * 2, [&](char* begin, size_t) {
    char* w = begin;
    unsigned char previous = 0;
    for (const char byte : text) {
      const auto c = static_cast<unsigned char>(byte);
      if (c == 0xC4 || c == 0xE2) {
        folded = false;
        return size_t{0};
      }
      const bool upper = IsUpper(c);
      if (upper && IsLowerOrDigit(previous)) *w++ = ' ';
      *w++ = static_cast<char>(upper ? c - 'A' + 'a' : c);
      previous = c;
    }
    return static_cast<size_t>(w - begin);
  });
  if (folded) return;
  split.clear();
  split.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size(); ++i) {
    if (i > 0 && IsLowerOrDigit(static_cast<unsigned char>(text[i - 1])) && IsUpper(static_cast<unsigned char>(text[i]))) {
      split.push_back(' ');
    }
    split.push_back(text[i]);
  }
  AppendJsLowerCase(split, out);
}

// Calls visit(token, offset) for each normalised token of SplitLower's
// output: runs of [a-z0-9], offset where the run starts.
template <typename Visit>
void ForEachToken(std::string_view lowered, Visit&& visit) {
  size_t i = 0;
  while (i < lowered.size()) {
    if (!IsLowerOrDigit(static_cast<unsigned char>(lowered[i]))) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < lowered.size() && IsLowerOrDigit(static_cast<unsigned char>(lowered[i]))) ++i;
    visit(NormalizeToken(lowered.substr(start, i - start)), start);
  }
}

bool IsHintChar(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

void SortUnique(std::vector<std::string>& values) {
  std::sort(values.begin(), values.end(), [](const std::string& a, const std::string& b) { return Utf16Before(a, b); });
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

template <typename Strings>
std::string Join(const Strings& values, size_t limit) {
  std::string out;
  for (size_t i = 0; i < values.size() && i < limit; ++i) {
    if (i > 0) out += ", ";
    out += values[i];
  }
  return out;
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::vector<std::string> Tokens(std::string_view text) {
  std::string split;
  std::string lowered;
  SplitLower(text, split, lowered);
  std::vector<std::string> tokens;
  ForEachToken(lowered, [&tokens](std::string_view token, size_t) { tokens.emplace_back(token); });
  return tokens;
}

std::vector<std::string> RequestTerms(std::string_view request) {
  std::vector<std::string> terms;
  for (std::string& token : Tokens(request)) {
    if (token.size() >= 2 && !IsStopWord(token)) terms.push_back(std::move(token));
  }
  SortUnique(terms);
  return terms;
}

std::vector<std::string> RequestPathHints(std::string_view request) {
  std::vector<std::string> hints;
  auto run_end = [&](size_t i) {
    while (i < request.size() && IsHintChar(static_cast<unsigned char>(request[i]))) ++i;
    return i;
  };
  size_t i = 0;
  while (i < request.size()) {
    if (!IsHintChar(static_cast<unsigned char>(request[i]))) {
      ++i;
      continue;
    }
    size_t start = i;
    size_t end = run_end(i);
    bool matched = false;
    while (end + 1 < request.size() && request[end] == '/' && IsHintChar(static_cast<unsigned char>(request[end + 1]))) {
      end = run_end(end + 1);
      matched = true;
    }
    if (matched) {
      std::string_view match = request.substr(start, end - start);
      if (StartsWith(match, "./")) match.remove_prefix(2);
      hints.push_back(JsLowerCase(match));
    }
    i = end;
  }
  SortUnique(hints);
  return hints;
}

bool IsRootProjectMetadata(std::string_view path) {
  if (path.find('/') != std::string_view::npos) return false;
  return path == "package.json" || path == "package-lock.json" || path == "pyproject.toml" || path == "cargo.toml" ||
         path == "go.mod" || path == "readme" || StartsWith(path, "readme.") || path == "tsconfig.json" ||
         (StartsWith(path, "tsconfig.") && EndsWith(path, ".json"));
}

namespace {

// What every candidate is scored against (PROTOCOL §16.4).
struct RankingContext {
  std::vector<std::string> terms;
  std::vector<std::string> hints;
  std::vector<std::string> active;  // lower-cased, sorted
};

// Per-thread buffers of RankOne, reused from one candidate to the next.
struct RankingScratch {
  std::string lower;
  std::string split;
  std::string tokens;            // SplitLower(path)
  std::vector<uint8_t> matched;  // per term: 1 in the path, 2 in the basename
};

// Whether `lower` is an ancestor or a descendant folder/file of an active path.
bool IsActiveAdjacent(std::string_view lower, const std::vector<std::string>& active) {
  for (const std::string& a : active) {
    if ((a.size() > lower.size() && StartsWith(a, lower) && a[lower.size()] == '/') ||
        (lower.size() > a.size() && StartsWith(lower, a) && lower[a.size()] == '/')) {
      return true;
    }
  }
  return false;
}

// The hints `lower` is, or ends with as its last path segments.
std::vector<std::string_view> MatchingHints(std::string_view lower, const std::vector<std::string>& hints) {
  std::vector<std::string_view> matching;
  for (const std::string& hint : hints) {
    if (lower == hint ||
        (lower.size() > hint.size() && EndsWith(lower, hint) && lower[lower.size() - hint.size() - 1] == '/')) {
      matching.push_back(hint);
    }
  }
  return matching;
}

struct TermMatches {
  std::vector<std::string_view> terms;  // in term order
  int64_t in_basename = 0;
};

// The request terms among the path's tokens. Terms are [a-z0-9] tokens,
// sorted (byte order is UTF-16 order there). The basename's tokens are the
// path's tokens after its last '/': no camelCase boundary or token spans a '/'.
TermMatches MatchingTerms(std::string_view path, const std::vector<std::string>& terms, RankingScratch& scratch) {
  scratch.matched.assign(terms.size(), 0);
  SplitLower(path, scratch.split, scratch.tokens);
  const size_t last_slash = scratch.tokens.rfind('/');
  const size_t basename_start = last_slash == std::string::npos ? 0 : last_slash + 1;
  ForEachToken(scratch.tokens, [&](std::string_view token, size_t offset) {
    auto it = std::lower_bound(terms.begin(), terms.end(), token,
                               [](const std::string& term, std::string_view value) { return term < value; });
    if (it == terms.end() || *it != token) return;
    scratch.matched[static_cast<size_t>(it - terms.begin())] |= offset >= basename_start ? 3 : 1;
  });
  TermMatches matches;
  for (size_t t = 0; t < terms.size(); ++t) {
    if ((scratch.matched[t] & 1) == 0) continue;
    matches.terms.push_back(terms[t]);
    if ((scratch.matched[t] & 2) != 0) ++matches.in_basename;
  }
  return matches;
}

RankedCandidate RankOne(std::string_view path, const RankingContext& context, RankingScratch& scratch) {
  const std::vector<std::string>& active = context.active;
  scratch.lower.clear();
  AppendJsLowerCase(path, scratch.lower);
  const std::string_view lower(scratch.lower);
  const bool instruction = IsInstructionPath(path);
  const bool active_exact = std::binary_search(active.begin(), active.end(), lower,
                                               [](std::string_view a, std::string_view b) { return Utf16Before(a, b); });
  const bool active_adjacent = IsActiveAdjacent(lower, active);
  const std::vector<std::string_view> matching_hints = MatchingHints(lower, context.hints);
  const TermMatches term_matches = MatchingTerms(path, context.terms, scratch);
  const std::vector<std::string_view>& matching_terms = term_matches.terms;
  const int64_t basename_matches = term_matches.in_basename;
  const bool metadata = IsRootProjectMetadata(lower);

  RankedCandidate candidate;
  candidate.path = path;
  candidate.pinned = instruction || active_exact;
  int64_t score = candidate.pinned ? 1'000'000 : 0;
  score += active_exact ? 50'000 : active_adjacent ? 10'000 : 0;
  score += static_cast<int64_t>(matching_hints.size()) * 5'000;
  score += basename_matches * 250;
  score += (static_cast<int64_t>(matching_terms.size()) - basename_matches) * 75;
  score += metadata ? 20 : 0;
  candidate.score = score;
  if (instruction) {
    candidate.basis = RankBasis::kInstruction;
  } else if (active_exact) {
    candidate.basis = RankBasis::kActiveExact;
  } else if (!matching_hints.empty()) {
    candidate.basis = RankBasis::kHint;
    candidate.matched = Join(matching_hints, 3);
  } else if (!matching_terms.empty()) {
    candidate.basis = RankBasis::kTerms;
    candidate.matched = Join(matching_terms, 5);
  } else if (active_adjacent) {
    candidate.basis = RankBasis::kActiveAdjacent;
  } else if (metadata) {
    candidate.basis = RankBasis::kMetadata;
  }
  return candidate;
}

}  // namespace

std::string RankedCandidate::Reason() const {
  std::string reason;
  switch (basis) {
    case RankBasis::kInstruction: return "Applicable repository instruction source pinned by policy.";
    case RankBasis::kActiveExact: return "Exact active-path source pinned by the host context.";
    case RankBasis::kHint: reason = "Path matches an explicit request hint: " + matched + "."; break;
    case RankBasis::kTerms: reason = "Path matches request terms: " + matched + "."; break;
    case RankBasis::kActiveAdjacent: return "Path is adjacent to an active host path.";
    case RankBasis::kMetadata: return "Root project metadata selected for bounded baseline context.";
    case RankBasis::kFallback: return "Repository source selected by the deterministic budget fallback.";
  }
  // A Summary is at most 4096 UTF-16 units; only absurdly long hints or
  // terms could exceed it.
  if (reason.size() > 4096) reason = TruncateUtf16(reason, 4096);
  return reason;
}

std::vector<RankedCandidate> RankCandidates(const std::vector<std::string_view>& paths, std::string_view request,
                                            const std::vector<std::string>& active_paths) {
  RankingContext context;
  context.terms = RequestTerms(request);
  context.hints = RequestPathHints(request);
  for (const std::string& path : active_paths) context.active.push_back(JsLowerCase(path));
  SortUnique(context.active);

  // Each candidate is scored on its own, so large inventories are split
  // across threads; the order comes from the sort below, not from them.
  std::vector<RankedCandidate> ranked(paths.size());
  ParallelFor(paths.size(), 2048, [&](size_t begin, size_t end) {
    RankingScratch scratch;
    for (size_t i = begin; i < end; ++i) ranked[i] = RankOne(paths[i], context, scratch);
  });
  // Paths that arrive in order (the usual case) need only a stable sort by
  // score: ties keep their path order.
  auto path_less = [](std::string_view a, std::string_view b) { return Utf16Before(a, b); };
  if (std::is_sorted(paths.begin(), paths.end(), path_less)) {
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const RankedCandidate& a, const RankedCandidate& b) { return a.score > b.score; });
  } else {
    std::sort(ranked.begin(), ranked.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
      if (a.score != b.score) return a.score > b.score;
      return Utf16Before(a.path, b.path);
    });
  }
  return ranked;
}

ResolvedPath ResolveRepositoryPath(const std::string& root, std::string_view repository_path) {
  auto normalized = NormalizeRepositoryPath(repository_path);
  if (!normalized) return {ResolveOutcome::kNotRegular, ""};
  const std::string lexical = LexicalAbsolute(root + "/" + *normalized);
  if (!IsPathContained(root, lexical)) return {ResolveOutcome::kPathEscape, ""};
  struct stat link_info;
  if (lstat(lexical.c_str(), &link_info) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) return {ResolveOutcome::kUnreadable, ""};
    // Missing: does the nearest existing ancestor lead outside the root?
    std::string ancestor = Parent(lexical);
    struct stat info;
    while (ancestor != "/" && lstat(ancestor.c_str(), &info) != 0) ancestor = Parent(ancestor);
    auto real_ancestor = RealPath(ancestor);
    if (real_ancestor && !IsPathContained(root, *real_ancestor)) return {ResolveOutcome::kPathEscape, ""};
    return {ResolveOutcome::kUnreadable, ""};
  }
  auto real = RealPath(lexical);
  if (!real) return {ResolveOutcome::kUnreadable, ""};
  if (!IsPathContained(root, *real)) {
    return {S_ISLNK(link_info.st_mode) ? ResolveOutcome::kSymlinkEscape : ResolveOutcome::kPathEscape, ""};
  }
  struct stat info;
  if (stat(real->c_str(), &info) != 0) return {ResolveOutcome::kUnreadable, ""};
  if (!S_ISREG(info.st_mode)) return {ResolveOutcome::kNotRegular, ""};
  return {ResolveOutcome::kFile, *real};
}

FileRead ReadBoundedTextFile(const std::string& absolute_path, int64_t max_bytes) {
  struct stat link_info;
  if (lstat(absolute_path.c_str(), &link_info) != 0 || S_ISLNK(link_info.st_mode)) return {ReadOutcome::kUnreadable, ""};
  int fd = open(absolute_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {ReadOutcome::kUnreadable, ""};
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat info;
  if (fstat(fd, &info) != 0) return {ReadOutcome::kUnreadable, ""};
  if (!S_ISREG(info.st_mode)) return {ReadOutcome::kBinary, ""};
  if (info.st_size > max_bytes) return {ReadOutcome::kTooLarge, ""};
  std::string bytes;
  bytes.resize(static_cast<size_t>(info.st_size) + 1);
  size_t filled = 0;
  while (true) {
    if (filled == bytes.size()) {
      if (static_cast<int64_t>(filled) > max_bytes) break;
      bytes.resize(std::min<size_t>(bytes.size() * 2, static_cast<size_t>(max_bytes) + 1));
    }
    ssize_t n = read(fd, bytes.data() + filled, bytes.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {ReadOutcome::kUnreadable, ""};
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  // The file grew since fstat.
  if (static_cast<int64_t>(filled) > max_bytes) return {ReadOutcome::kTooLarge, ""};
  bytes.resize(filled);
  if (IsProbablyBinary(std::string_view(bytes).substr(0, std::min(bytes.size(), kBinaryPrefixBytes)))) {
    return {ReadOutcome::kBinary, ""};
  }
  if (!IsValidUtf8(bytes)) return {ReadOutcome::kInvalidUtf8, ""};
  return {ReadOutcome::kText, std::move(bytes)};
}

Json ContextDocumentBody(std::string_view id, std::string_view run_id, std::string_view path, std::string_view ref,
                         std::string_view content_hash, int64_t size_bytes, std::string_view content) {
  const bool instruction = IsInstructionPath(path);
  Json body = Json::object();
  body["schemaVersion"] = "1.0";
  body["id"] = id;
  body["runId"] = run_id;
  body["repositoryRef"] = ref;
  body["contentHash"] = content_hash;
  body["sizeBytes"] = size_bytes;
  body["trustKind"] = instruction ? "applicable_instruction" : "untrusted_repository_content";
  body["instructionScope"] = instruction ? Json(InstructionScope(path)) : Json(nullptr);
  body["content"] = content;
  return body;
}

namespace {

// Why a ranked candidate's file cannot be selected ("" when it can): it is
// not a regular file inside the repository, or it lies in an excluded root.
std::string_view PathExclusion(const ResolvedPath& resolved, const std::vector<std::string>& excluded_roots) {
  switch (resolved.outcome) {
    case ResolveOutcome::kFile: break;
    case ResolveOutcome::kNotRegular: return "non_regular_file";
    case ResolveOutcome::kPathEscape: return "path_escape";
    case ResolveOutcome::kSymlinkEscape: return "symlink_escape";
    case ResolveOutcome::kUnreadable: return "unreadable_file";
  }
  const bool in_excluded_root = std::any_of(excluded_roots.begin(), excluded_roots.end(), [&](const std::string& excluded) {
    return IsPathContained(excluded, resolved.absolute_path);
  });
  return in_excluded_root ? "excluded_directory" : "";
}

// Why a file's content cannot be selected ("" when it can; `text` is then
// the content without a leading BOM, as TextDecoder (fatal, BOM not
// ignored) reads it): not UTF-8 text within the file cap, a document body
// over the store's cap, or a likely secret.
std::string_view ContentExclusion(const FileRead& read, const RankedCandidate& candidate, const SelectionLimits& limits,
                                  std::string_view& text) {
  switch (read.outcome) {
    case ReadOutcome::kText: break;
    case ReadOutcome::kTooLarge: return "file_too_large";
    case ReadOutcome::kBinary: return "binary_file";
    case ReadOutcome::kInvalidUtf8: return "invalid_utf8";
    case ReadOutcome::kUnreadable: return "unreadable_file";
  }
  text = read.bytes;
  if (StartsWith(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  // JSON escaping grows a character by at most 6x; only a file near the
  // cap needs its document body measured.
  if (limits.max_document_bytes > 0 &&
      static_cast<int64_t>(text.size()) * 6 + 4096 + 4 * static_cast<int64_t>(candidate.path.size()) +
              static_cast<int64_t>(limits.run_id.size()) > limits.max_document_bytes) {
    Json body = ContextDocumentBody(std::string(kDocumentIdLength, 'x'), limits.run_id, candidate.path,
                                    MakeRepoRef(candidate.path), Sha256Ref(""), static_cast<int64_t>(read.bytes.size()), text);
    if (static_cast<int64_t>(CanonicalJson(body).size()) > limits.max_document_bytes) return "file_too_large";
  }
  return ContainsLikelySecret(text) ? "secret_content" : "";
}

}  // namespace

Selection SelectCandidates(const std::string& root, const std::vector<RankedCandidate>& ranked,
                           const SelectionLimits& limits, const std::vector<std::string>& excluded_roots,
                           ExclusionCounts& exclusions, const std::function<void(int64_t, int64_t)>& progress) {
  Selection selection;
  std::set<std::string> selected_hashes;
  int zero_score_fallbacks = 0;
  const auto total = static_cast<int64_t>(ranked.size());
  int64_t done = 0;
  for (const RankedCandidate& candidate : ranked) {
    if (progress && (++done % 256 == 0 || done == total)) progress(done, total);
    if (!candidate.pinned && candidate.score == 0 && zero_score_fallbacks >= kMaxZeroScoreFallbackFiles) {
      ++exclusions["low_relevance"];
      continue;
    }
    if (static_cast<int64_t>(selection.selected.size()) >= limits.max_files) {
      ++exclusions["file_count_budget"];
      continue;
    }
    ResolvedPath resolved = ResolveRepositoryPath(root, candidate.path);
    if (std::string_view reason = PathExclusion(resolved, excluded_roots); !reason.empty()) {
      ++exclusions[std::string(reason)];
      continue;
    }
    FileRead read = ReadBoundedTextFile(resolved.absolute_path, limits.max_file_bytes);
    std::string_view text;
    if (std::string_view reason = ContentExclusion(read, candidate, limits, text); !reason.empty()) {
      ++exclusions[std::string(reason)];
      continue;
    }
    std::string hash = Sha256Ref(read.bytes);
    selection.read_hashes[std::string(candidate.path)] = hash;
    if (selected_hashes.contains(hash)) {
      ++exclusions["duplicate_content"];
      continue;
    }
    const auto size = static_cast<int64_t>(read.bytes.size());
    if (selection.selected_bytes + size > limits.max_total_bytes) {
      ++exclusions["total_bytes_budget"];
      continue;
    }
    selected_hashes.insert(hash);
    selection.selected_bytes += size;
    if (!candidate.pinned && candidate.score == 0) ++zero_score_fallbacks;
    SelectedSource source;
    source.path = std::string(candidate.path);
    source.ref = MakeRepoRef(candidate.path);
    source.reason = candidate.Reason();
    source.content_hash = std::move(hash);
    source.size_bytes = size;
    source.score = candidate.score;
    source.pinned = candidate.pinned;
    source.content = std::string(text);
    selection.selected.push_back(std::move(source));
  }
  return selection;
}

}  // namespace telic::grounding
