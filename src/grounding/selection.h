// Ranking and selection of grounding candidates (PROTOCOL §16.4).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"

namespace telic::grounding {

// Unpinned zero-score candidates selected at most (the rest: low_relevance).
inline constexpr int kMaxZeroScoreFallbackFiles = 8;
// Bytes inspected by the binary check.
inline constexpr size_t kBinaryPrefixBytes = 8192;

// Exclusion reason → count; std::map keeps the reasons sorted.
using ExclusionCounts = std::map<std::string, int64_t>;

// Normalised tokens of a path or text: camelCase boundaries ([a-z0-9]
// followed by [A-Z]) split, lower-cased, runs of [a-z0-9], a trailing 's'
// dropped from tokens longer than 4 that do not end in ss, is or us. So
// "src/apiClient.ts" gives src, api, client, ts.
std::vector<std::string> Tokens(std::string_view text);

// Request terms: Tokens of the request, at least 2 characters, without stop
// words, unique, sorted.
std::vector<std::string> RequestTerms(std::string_view request);

// Path hints: request substrings `seg(/seg)+` with seg [A-Za-z0-9_.-]+, one
// leading "./" removed, lower-cased, unique, sorted.
std::vector<std::string> RequestPathHints(std::string_view request);

// Root-level package.json, package-lock.json, pyproject.toml, cargo.toml,
// go.mod, readme, readme.*, tsconfig*.json (`lower_path` lower-cased).
bool IsRootProjectMetadata(std::string_view lower_path);

// Why a candidate scored what it did, strongest first (PROTOCOL §16.4).
enum class RankBasis : uint8_t { kInstruction, kActiveExact, kHint, kTerms, kActiveAdjacent, kMetadata, kFallback };

struct RankedCandidate {
  std::string_view path;  // views the storage RankCandidates' input views: it must outlive the candidate
  int64_t score = 0;
  bool pinned = false;
  RankBasis basis = RankBasis::kFallback;
  std::string matched;  // kHint: up to 3 hints, kTerms: up to 5 terms, ", "-joined

  // The manifest's selectionReason sentence.
  std::string Reason() const;
};

// Scores every path and orders them: score descending, then path ascending
// (UTF-16 code units). `active_paths` are normalised repository paths.
std::vector<RankedCandidate> RankCandidates(const std::vector<std::string_view>& paths, std::string_view request,
                                            const std::vector<std::string>& active_paths);

enum class ResolveOutcome { kFile, kNotRegular, kPathEscape, kSymlinkEscape, kUnreadable };
struct ResolvedPath {
  ResolveOutcome outcome = ResolveOutcome::kUnreadable;
  std::string absolute_path;  // the real path, for kFile
};

// Where `repository_path` leads under `root` (a real path): a path that is
// not normalisable → kNotRegular; lexically outside → kPathEscape; missing →
// kPathEscape when the nearest existing ancestor resolves outside the root,
// else kUnreadable; real path outside the root → kSymlinkEscape when the
// final component is a symlink, else kPathEscape; real path not a regular
// file → kNotRegular.
ResolvedPath ResolveRepositoryPath(const std::string& root, std::string_view repository_path);

enum class ReadOutcome { kText, kTooLarge, kBinary, kInvalidUtf8, kUnreadable };
struct FileRead {
  ReadOutcome outcome = ReadOutcome::kUnreadable;
  std::string bytes;  // for kText
};

// Opens `absolute_path` without following a final symlink (a symlink there
// → kUnreadable) and reads at most `max_bytes`: not a regular file →
// kBinary (the reference's quirk), larger → kTooLarge, IsProbablyBinary on
// the first 8192 bytes → kBinary, not strict UTF-8 → kInvalidUtf8.
FileRead ReadBoundedTextFile(const std::string& absolute_path, int64_t max_bytes);

struct SelectionLimits {
  int64_t max_files = 0;
  int64_t max_file_bytes = 0;
  int64_t max_total_bytes = 0;
  // When > 0: a file whose ContextDocument body (canonical JSON, for
  // `run_id`) would exceed this many bytes is file_too_large, so that every
  // selected document fits the store's per-body cap.
  int64_t max_document_bytes = 0;
  std::string run_id;
};

// Length of a ContextDocument id: "context-" + 16 hex + "-source-NNN-" + 13 hex.
inline constexpr size_t kDocumentIdLength = 49;

// The ContextDocument body of a selected file (PROTOCOL §16.5, schemas/artifacts/
// ContextDocument.json).
Json ContextDocumentBody(std::string_view id, std::string_view run_id, std::string_view path, std::string_view ref,
                         std::string_view content_hash, int64_t size_bytes, std::string_view content);

struct SelectedSource {
  std::string path;
  std::string ref;  // repo://…
  std::string reason;
  std::string content_hash;  // sha256:…
  int64_t size_bytes = 0;
  int64_t score = 0;
  bool pinned = false;
  std::string content;  // the decoded text (a leading UTF-8 BOM removed, as TextDecoder does)
};

struct Selection {
  std::vector<SelectedSource> selected;
  int64_t selected_bytes = 0;
  // Content hashes of every file read that passed the secret check
  // (selected or not), for the fingerprint.
  std::map<std::string, std::string> read_hashes;
};

// Walks `ranked` in order (PROTOCOL §16.4) and adds one count to `exclusions` per
// candidate not selected. `excluded_roots` are real absolute paths.
// `progress(done, total)` is called as candidates are examined.
Selection SelectCandidates(const std::string& root, const std::vector<RankedCandidate>& ranked,
                           const SelectionLimits& limits, const std::vector<std::string>& excluded_roots,
                           ExclusionCounts& exclusions, const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace telic::grounding
