// Repository grounding: the ContextManifest and its ContextDocuments
// (PROTOCOL §16, body shape PROTOCOL §13.4; issue 6, TEL-056–069).
//
// GroundRepository is deterministic: the same repository state, request,
// active paths, budget and permissions give a byte-identical manifest
// (canonical JSON), ids included. It reads the file system and Git but
// writes nothing; storing the documents and the manifest is the caller's job.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::grounding {

// Budget limits as given by a host (absent members take the defaults).
struct GroundingBudgetInput {
  std::optional<int64_t> max_files;
  std::optional<int64_t> max_file_bytes;
  std::optional<int64_t> max_total_bytes;
  std::optional<int64_t> max_inventory_files;
};

struct GroundingBudget {
  int64_t max_files = 0;
  int64_t max_file_bytes = 0;
  int64_t max_total_bytes = 0;
  int64_t max_inventory_files = 0;
};

// telic's defaults (issue 6): 32 files, 1,000,000 bytes per file and in
// total, 10,000 inventory files. The reference's are 48 / 131,072 / 524,288
// / 20,000.
inline constexpr GroundingBudget kDefaultBudget{32, 1'000'000, 1'000'000, 10'000};
// The hard caps of an explicit budget (the reference's, PROTOCOL §6.2).
inline constexpr GroundingBudget kBudgetCaps{256, 2 * 1024 * 1024, 16 * 1024 * 1024, 100'000};

// Applies the defaults and checks each value is an integer 1..cap
// (kInvalidArgument "<name> must be a positive integer no greater than <cap>.").
Result<GroundingBudget> ResolveBudget(const GroundingBudgetInput& input);

struct GroundingProgress {
  std::string_view stage;  // "inventory", "rank", "read"
  int64_t done = 0;
  int64_t total = 0;  // 0 while unknown (the filesystem walk)
};

struct GroundingRequest {
  std::string run_id;           // an Identifier
  std::string repository_root;  // the run's root; grounding uses its Git work tree top
  std::string request_text;     // the original request, at most 32,768 UTF-8 bytes
  std::vector<std::string> active_paths;  // at most 256; relative to the grounded root, or absolute inside it
  GroundingBudgetInput budget;
  std::vector<std::string> excluded_roots;  // absolute; at most 16 (the state directory)
  // Whether the run may read a repository path (normalised, relative to
  // `repository_root`, the run's root, as the run's read scopes are). When
  // grounding widens a sub-folder root to its Git work tree top, paths under
  // the sub-folder are asked without its prefix and paths outside it are not
  // readable. Paths it denies are never listed, read or hashed; they are
  // counted in one warning. Empty: every path may be read.
  std::function<bool(std::string_view rel_path)> may_read;
  std::function<void(const GroundingProgress&)> progress;  // may be empty
  // Polled between stages and during the filesystem walk; once it returns
  // true, GroundRepository stops and fails with kFailedPrecondition
  // "Grounding was cancelled" (it writes nothing in any case). May be empty.
  std::function<bool()> cancelled;
};

// One selected file, to be stored as a ContextDocument artifact before the
// manifest (producer controller, sourceRefs [ref], trace
// context_source_stored).
struct ContextDocument {
  std::string id;    // <manifestId>-source-<NNN>-<13 hex of the content hash>
  std::string uri;   // artifact://<runId>/<id>
  std::string ref;   // repo://… of the file
  std::string path;  // repository-relative path
  Json body;         // the ContextDocument body (schemas/artifacts/ContextDocument.json)
};

struct GroundingResult {
  std::string repository_root;   // the root actually grounded (Git top or the run root)
  std::string inventory_source;  // "git" or "filesystem"
  Json manifest;                 // the camelCase ContextManifest body (PROTOCOL §13.4)
  std::vector<ContextDocument> documents;
};

// PROTOCOL §16. Errors (kInvalidArgument, or kPermissionDenied for an active path
// outside the root) carry the reference's messages; see GROUNDING.md.
Result<GroundingResult> GroundRepository(const GroundingRequest& request);

// PROTOCOL §16.6: the fixed manifest of a report_only run (no discovery).
Json ReportOnlyManifest(std::string_view run_id);

}  // namespace telic::grounding
