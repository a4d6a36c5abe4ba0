#include "grounding/ground.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <unordered_set>

#include <fmt/format.h>

#include "base/sha256.h"
#include "base/text.h"
#include "grounding/inventory.h"
#include "grounding/parallel.h"
#include "grounding/paths.h"
#include "grounding/secrets.h"
#include "grounding/selection.h"

namespace telic::grounding {
namespace {

constexpr size_t kRequestByteLimit = 32'768;
constexpr size_t kMaxActivePaths = 256;
constexpr size_t kMaxExcludedRoots = 16;
// The store's cap on one canonical artifact body (docs/ARCHITECTURE.md).
constexpr int64_t kMaxDocumentBodyBytes = 2 * 1024 * 1024;

bool IsIdentifier(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  auto alnum = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(id[0])) return false;
  return std::all_of(id.begin(), id.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == ':' || c == '-'; });
}

std::string JsonString(std::string_view text) {
  std::string out;
  AppendJsonString(text, out);
  return out;
}

std::unexpected<Error> OutsideRoot(const std::string& root, std::string_view value) {
  return Fail(ErrorCode::kPermissionDenied,
              fmt::format("Active path {} is outside Telic's repository root {}. Remove it from active_paths or start a "
                          "run with TELIC_REPOSITORY_ROOT set to the containing project.",
                          JsonString(value), JsonString(root)));
}

// PROTOCOL §16.3.
Result<std::string> ValidateActivePath(const std::string& root, const std::string& value) {
  if (value.empty() || Utf16Length(value) > 4096 || value.find('\0') != std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument, "Active paths must be non-empty repository-relative paths.");
  }
  std::optional<std::string> normalized;
  if (value.front() == '/') {
    std::string lexical = LexicalAbsolute(value);
    if (!IsPathContained(root, lexical)) return OutsideRoot(root, value);
    // As in the reference, the relative form is not normalised further: the
    // root itself becomes "" (later a non_regular_file candidate).
    normalized = RelativeTo(root, lexical);
  } else {
    normalized = NormalizeRepositoryPath(value);
  }
  if (!normalized) return OutsideRoot(root, value);
  const std::string lexical = normalized->empty() ? root : root + "/" + *normalized;
  if (access(lexical.c_str(), F_OK) == 0) {
    auto real = RealPath(lexical);
    if (real && !IsPathContained(root, *real)) return OutsideRoot(root, value);
  }
  // A path that does not exist yet is kept as a hint.
  return *normalized;
}

struct ExcludedRoots {
  std::vector<std::string> absolute;  // real (or lexical) absolute paths
  std::vector<std::string> prefixes;  // repository-relative; "" excludes everything

  bool Excludes(std::string_view repository_path) const {
    if (prefixes.empty()) return false;
    std::optional<std::string> rewritten;
    std::string_view path = repository_path;
    if (!IsPlainRepositoryPath(path)) {  // plain paths (nearly all) need no copy
      rewritten = NormalizeRepositoryPath(repository_path);
      if (!rewritten) return false;
      path = *rewritten;
    }
    for (const std::string& prefix : prefixes) {
      if (prefix.empty() || path == prefix ||
          (path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '/')) {
        return true;
      }
    }
    return false;
  }
};

Result<ExcludedRoots> ResolveExcludedRoots(const std::string& root, const std::vector<std::string>& entries) {
  ExcludedRoots out;
  for (const std::string& entry : entries) {
    if (entry.empty() || Utf16Length(entry) > 4096 || entry.find('\0') != std::string::npos) {
      return Fail(ErrorCode::kInvalidArgument,
                  "excluded_roots entries must be non-empty paths of at most 4096 characters.");
    }
    if (entry.front() != '/') {
      return Fail(ErrorCode::kInvalidArgument, "excluded_roots entries must be absolute directory paths.");
    }
    std::string absolute = RealPath(entry).value_or(LexicalAbsolute(entry));
    if (IsPathContained(absolute, root)) {
      out.prefixes.push_back("");
    } else if (IsPathContained(root, absolute)) {
      out.prefixes.push_back(RelativeTo(root, absolute));
    }
    out.absolute.push_back(std::move(absolute));
  }
  std::sort(out.prefixes.begin(), out.prefixes.end());
  out.prefixes.erase(std::unique(out.prefixes.begin(), out.prefixes.end()), out.prefixes.end());
  return out;
}

bool IsRegularFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

Json ManifestBudget(const GroundingBudget& budget, int64_t candidate_files, int64_t selected_files,
                    int64_t selected_bytes) {
  Json out = Json::object();
  out["maximumFiles"] = budget.max_files;
  out["maximumFileBytes"] = budget.max_file_bytes;
  out["maximumTotalBytes"] = budget.max_total_bytes;
  out["maximumInventoryFiles"] = budget.max_inventory_files;
  out["candidateFiles"] = candidate_files;
  out["selectedFiles"] = selected_files;
  out["selectedBytes"] = selected_bytes;
  out["estimatedTokens"] = (selected_bytes + 3) / 4;
  return out;
}

// PROTOCOL §16.5: the JSON text the manifest id hashes, keys in exactly this order.
std::string ManifestProjection(std::string_view run_id, const Fingerprint& fingerprint,
                               const std::vector<SelectedSource>& selected, const GroundingBudget& budget) {
  std::string out = "{\"run_id\":" + JsonString(run_id) + ",\"repository_fingerprint\":{\"head_commit\":";
  out += fingerprint.head_commit ? JsonString(*fingerprint.head_commit) : std::string("null");
  out += ",\"dirty_worktree_hash\":" + JsonString(fingerprint.dirty_worktree_hash) + "},\"selected_sources\":[";
  for (size_t i = 0; i < selected.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += "{\"ref\":" + JsonString(selected[i].ref) + ",\"content_hash\":" + JsonString(selected[i].content_hash) + "}";
  }
  out += fmt::format("],\"budget\":{{\"max_files\":{},\"max_file_bytes\":{},\"max_total_bytes\":{},\"max_inventory_files\":{}}}}}",
                     budget.max_files, budget.max_file_bytes, budget.max_total_bytes, budget.max_inventory_files);
  return out;
}

void Report(const GroundingRequest& request, std::string_view stage, int64_t done, int64_t total) {
  if (request.progress) request.progress(GroundingProgress{stage, done, total});
}

Status CheckNotCancelled(const GroundingRequest& request) {
  if (request.cancelled && request.cancelled()) return Fail(ErrorCode::kFailedPrecondition, "Grounding was cancelled");
  return Ok();
}

}  // namespace

Result<GroundingBudget> ResolveBudget(const GroundingBudgetInput& input) {
  GroundingBudget budget{input.max_files.value_or(kDefaultBudget.max_files),
                         input.max_file_bytes.value_or(kDefaultBudget.max_file_bytes),
                         input.max_total_bytes.value_or(kDefaultBudget.max_total_bytes),
                         input.max_inventory_files.value_or(kDefaultBudget.max_inventory_files)};
  const std::pair<const char*, std::pair<int64_t, int64_t>> checks[] = {
      {"max_files", {budget.max_files, kBudgetCaps.max_files}},
      {"max_file_bytes", {budget.max_file_bytes, kBudgetCaps.max_file_bytes}},
      {"max_total_bytes", {budget.max_total_bytes, kBudgetCaps.max_total_bytes}},
      {"max_inventory_files", {budget.max_inventory_files, kBudgetCaps.max_inventory_files}},
  };
  for (const auto& [name, value_cap] : checks) {
    if (value_cap.first <= 0 || value_cap.first > value_cap.second) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} must be a positive integer no greater than {}.", name, value_cap.second));
    }
  }
  return budget;
}

// `may_read` answers for paths relative to the run's repository root (the
// run's read scopes are written against it), while grounding lists paths
// relative to the Git work tree top that contains it. When the two differ
// (the run root is a sub-folder), a path under the run root is asked without
// the sub-folder prefix and a path outside the run root is not readable.
static std::function<bool(std::string_view)> ReadableFromGroundedRoot(const GroundingRequest& request,
                                                              const std::string& grounded_root) {
  if (!request.may_read) return nullptr;
  std::error_code ec;
  const std::string run_root = std::filesystem::canonical(request.repository_root, ec).string();
  if (ec || run_root == grounded_root) return request.may_read;
  if (run_root.size() <= grounded_root.size() + 1 || run_root.compare(0, grounded_root.size(), grounded_root) != 0 ||
      run_root[grounded_root.size()] != '/') {
    return [](std::string_view) { return false; };
  }
  std::string prefix = run_root.substr(grounded_root.size() + 1) + "/";
  return [prefix = std::move(prefix), may_read = request.may_read](std::string_view path) {
    return path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix &&
           may_read(path.substr(prefix.size()));
  };
}

Result<GroundingResult> GroundRepository(const GroundingRequest& request) {
  if (!IsIdentifier(request.run_id)) {
    return Fail(ErrorCode::kInvalidArgument,
                "run_id must be a valid Telic identifier containing at most 128 characters.");
  }
  if (request.request_text.size() > kRequestByteLimit) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("request must not exceed {} UTF-8 bytes.", kRequestByteLimit));
  }
  if (Utf16Length(request.repository_root) > 4096) {
    return Fail(ErrorCode::kInvalidArgument, "repository_root must not exceed 4096 characters.");
  }
  if (request.active_paths.size() > kMaxActivePaths) {
    return Fail(ErrorCode::kInvalidArgument, "active_paths must not contain more than 256 entries.");
  }
  if (request.excluded_roots.size() > kMaxExcludedRoots) {
    return Fail(ErrorCode::kInvalidArgument, "excluded_roots must not contain more than 16 entries.");
  }
  TELIC_ASSIGN_OR_RETURN(const GroundingBudget budget, ResolveBudget(request.budget));
  TELIC_ASSIGN_OR_RETURN(RepositoryRoot repository, ResolveRepositoryRoot(request.repository_root));
  const std::string& root = repository.path;
  TELIC_ASSIGN_OR_RETURN(const ExcludedRoots excluded, ResolveExcludedRoots(root, request.excluded_roots));
  const std::function<bool(std::string_view)> may_read = ReadableFromGroundedRoot(request, root);
  const PathPredicate should_exclude = [&excluded](std::string_view path) { return excluded.Excludes(path); };
  std::vector<std::string> active_paths;
  for (const std::string& value : request.active_paths) {
    TELIC_ASSIGN_OR_RETURN(std::string normalized, ValidateActivePath(root, value));
    active_paths.push_back(std::move(normalized));
  }

  // PROTOCOL §16.2 inventory.
  InventoryRequest inventory_request;
  inventory_request.root = root;
  inventory_request.early_index = &repository.early_index;
  inventory_request.max_walk_paths = static_cast<size_t>(budget.max_inventory_files) + 1;
  inventory_request.is_excluded = should_exclude;
  inventory_request.may_read = may_read;
  inventory_request.cancelled = request.cancelled;
  if (request.progress) {
    inventory_request.progress = [&request](int64_t found) { Report(request, "inventory", found, 0); };
  }
  Inventory inventory = DiscoverRepositoryFiles(inventory_request);
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  std::vector<std::string> warnings = inventory.warnings;
  ExclusionCounts exclusions;
  if (inventory.excluded_path_count > 0) exclusions["excluded_directory"] += inventory.excluded_path_count;
  int64_t permission_skipped = inventory.permission_skipped;

  if (inventory.invalid_path_count > 0) exclusions["invalid_path"] += inventory.invalid_path_count;
  if (permission_skipped > 0) {
    warnings.push_back(fmt::format("{} repository {} outside the run's read permissions {} not inventoried.",
                                   permission_skipped, permission_skipped == 1 ? "path" : "paths",
                                   permission_skipped == 1 ? "was" : "were"));
  }

  // Default instruction files that exist as regular files, and the active
  // paths, join the inventory. Instruction files and active paths the run
  // may not read are left out (a denied file in the inventory was counted
  // there already).
  const std::vector<std::string_view>& inventory_paths = inventory.paths;
  auto in_inventory = [&inventory_paths](const std::string& path) {
    return std::binary_search(inventory_paths.begin(), inventory_paths.end(), std::string_view(path),
                              [](std::string_view a, std::string_view b) { return Utf16Before(a, b); });
  };
  auto readable = [&](const std::string& path) { return !may_read || may_read(path); };
  std::vector<std::string> extras;
  for (std::string_view pinned : kDefaultPinnedPaths) {
    std::string path(pinned);
    if (should_exclude(path) || in_inventory(path) || !IsRegularFile(root + "/" + path) || !readable(path)) continue;
    extras.push_back(std::move(path));
  }
  for (const std::string& path : active_paths) {
    if (should_exclude(path) || in_inventory(path) || !readable(path)) continue;
    extras.push_back(path);
  }

  // Instruction and active paths first, then code-unit order, cut to the
  // candidate budget. The inventory is sorted already and the extras are
  // not in it, so this is a partition and a merge that stops at the budget.
  const std::unordered_set<std::string_view> active_set(active_paths.begin(), active_paths.end());
  auto required = [&active_set](std::string_view path) { return IsInstructionPath(path) || active_set.contains(path); };
  auto less = [](std::string_view a, std::string_view b) { return Utf16Before(a, b); };
  std::sort(extras.begin(), extras.end(), less);
  extras.erase(std::unique(extras.begin(), extras.end()), extras.end());
  const auto candidate_files = static_cast<int64_t>(inventory_paths.size() + extras.size());
  const auto budget_files = static_cast<size_t>(std::max<int64_t>(budget.max_inventory_files, 0));
  // Views into the inventory and `extras`, which outlive the selection.
  std::vector<std::string_view> sorted;
  sorted.reserve(std::min(budget_files, static_cast<size_t>(candidate_files)));
  for (std::string_view path : inventory_paths) {
    if (required(path)) sorted.push_back(path);
  }
  for (const std::string& path : extras) {
    if (required(path)) sorted.push_back(path);
  }
  std::sort(sorted.begin(), sorted.end(), less);
  if (sorted.size() > budget_files) sorted.resize(budget_files);
  const size_t required_count = sorted.size();  // sorted[0, required_count) and the rest are each in order
  auto inventory_it = inventory_paths.begin();
  auto extras_it = extras.begin();
  while (sorted.size() < budget_files) {
    while (inventory_it != inventory_paths.end() && required(*inventory_it)) ++inventory_it;
    while (extras_it != extras.end() && required(*extras_it)) ++extras_it;
    bool inventory_left = inventory_it != inventory_paths.end();
    bool extras_left = extras_it != extras.end();
    if (!inventory_left && !extras_left) break;
    if (extras_left && (!inventory_left || less(*extras_it, *inventory_it))) {
      sorted.push_back(*extras_it++);
    } else {
      sorted.push_back(*inventory_it++);
    }
  }
  if (candidate_files > budget.max_inventory_files) {
    exclusions["inventory_budget"] += candidate_files - budget.max_inventory_files;
    warnings.push_back(
        "Repository inventory exceeded the configured candidate limit and was deterministically truncated.");
  }
  Report(request, "inventory", candidate_files, candidate_files);

  // Classified in parallel, counted in order.
  enum class Kind : uint8_t { kEligible, kExcludedDirectory, kSecretLike };
  std::vector<Kind> kinds(sorted.size());
  ParallelFor(sorted.size(), 2048, [&](size_t begin, size_t end) {
    std::string lower;  // each path lower-cased once for both checks
    for (size_t i = begin; i < end; ++i) {
      lower.clear();
      AppendJsLowerCase(sorted[i], lower);
      kinds[i] = IsExcludedDirectoryLowerPath(lower) ? Kind::kExcludedDirectory
                 : IsSecretLikeLowerPath(lower)      ? Kind::kSecretLike
                                                     : Kind::kEligible;
    }
  });
  std::vector<std::string_view> eligible;
  eligible.reserve(sorted.size());
  size_t eligible_required = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i == required_count) eligible_required = eligible.size();
    if (kinds[i] == Kind::kExcludedDirectory) {
      ++exclusions["excluded_directory"];
    } else if (kinds[i] == Kind::kSecretLike) {
      ++exclusions["secret_like_file"];
    } else {
      eligible.push_back(sorted[i]);
    }
  }

  if (required_count == sorted.size()) eligible_required = eligible.size();
  // One run in code-unit order lets the ranking keep ties in input order.
  std::inplace_merge(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(eligible_required),
                     eligible.end(), less);

  // PROTOCOL §16.4 ranking and selection.
  const auto eligible_count = static_cast<int64_t>(eligible.size());
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  Report(request, "rank", 0, eligible_count);
  std::vector<RankedCandidate> ranked = RankCandidates(eligible, request.request_text, active_paths);
  eligible.clear();
  Report(request, "rank", eligible_count, eligible_count);
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  SelectionLimits limits{budget.max_files, budget.max_file_bytes, budget.max_total_bytes, kMaxDocumentBodyBytes,
                         request.run_id};
  Selection selection = SelectCandidates(root, ranked, limits, excluded.absolute, exclusions,
                                         [&request](int64_t done, int64_t total) { Report(request, "read", done, total); });
  if (exclusions.contains("low_relevance")) {
    warnings.push_back(fmt::format("Unpinned zero-relevance context was capped at {} files.", kMaxZeroScoreFallbackFiles));
  }

  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  // PROTOCOL §16.5 outputs.
  Fingerprint fingerprint =
      FingerprintRepository(root, inventory, sorted, selection.read_hashes, may_read, should_exclude);
  warnings.insert(warnings.end(), fingerprint.warnings.begin(), fingerprint.warnings.end());
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  const std::string manifest_id =
      "context-" + Sha256Hex(ManifestProjection(request.run_id, fingerprint, selection.selected, budget)).substr(0, 16);

  GroundingResult result;
  result.repository_root = root;
  result.inventory_source = inventory.source;
  Json candidates = Json::array();
  Json pinned_refs = Json::array();
  Json derived_refs = Json::array();
  for (size_t i = 0; i < selection.selected.size(); ++i) {
    const SelectedSource& source = selection.selected[i];
    candidates.push_back(Json{{"id", fmt::format("candidate-{:04}", i + 1)},
                              {"ref", source.ref},
                              {"locations", Json::array({source.path})},
                              {"contentHash", source.content_hash},
                              {"byteSize", source.size_bytes},
                              {"decision", "selected"},
                              {"selectionReason", source.reason},
                              {"path", source.path},
                              {"score", source.score},
                              {"pinned", source.pinned}});
    if (source.pinned) pinned_refs.push_back(source.ref);

    ContextDocument document;
    document.id = fmt::format("{}-source-{:03}-{}", manifest_id, i + 1, source.content_hash.substr(7, 13));
    document.uri = "artifact://" + request.run_id + "/" + document.id;
    document.ref = source.ref;
    document.path = source.path;
    document.body = ContextDocumentBody(document.id, request.run_id, source.path, source.ref, source.content_hash,
                                        source.size_bytes, source.content);
    derived_refs.push_back(document.uri);
    result.documents.push_back(std::move(document));
  }
  Json summaries = Json::array();
  for (const auto& [reason, count] : exclusions) {
    if (count > 0) summaries.push_back(Json{{"reason", reason}, {"count", count}});
  }
  Json& manifest = result.manifest;
  manifest = Json::object();
  manifest["schemaVersion"] = "1.0";
  manifest["id"] = manifest_id;
  manifest["runId"] = request.run_id;
  manifest["repositoryFingerprint"] =
      Json{{"headCommit", fingerprint.head_commit ? Json(*fingerprint.head_commit) : Json(nullptr)},
           {"dirtyWorktreeHash", fingerprint.dirty_worktree_hash}};
  manifest["pinnedRefs"] = std::move(pinned_refs);
  manifest["candidates"] = std::move(candidates);
  manifest["derivedRefs"] = std::move(derived_refs);
  manifest["excludedCandidateSummaries"] = std::move(summaries);
  manifest["inventorySource"] = inventory.source;
  manifest["warnings"] = warnings;
  manifest["budget"] = ManifestBudget(budget, candidate_files, static_cast<int64_t>(selection.selected.size()),
                                      selection.selected_bytes);
  return result;
}

Json ReportOnlyManifest(std::string_view run_id) {
  std::string id(run_id.substr(0, std::min<size_t>(12, run_id.size())));
  Json manifest = Json::object();
  manifest["schemaVersion"] = "1.0";
  manifest["id"] = "context-report-only-" + id;
  manifest["runId"] = std::string(run_id);
  manifest["repositoryFingerprint"] = Json{{"headCommit", nullptr}, {"dirtyWorktreeHash", Sha256Ref("")}};
  manifest["pinnedRefs"] = Json::array();
  manifest["candidates"] = Json::array();
  manifest["derivedRefs"] = Json::array();
  manifest["excludedCandidateSummaries"] = Json::array();
  manifest["inventorySource"] = "filesystem";
  manifest["warnings"] = Json::array({"report_only mode intentionally skipped new repository discovery."});
  manifest["budget"] = ManifestBudget(GroundingBudget{1, 1, 1, 1}, 0, 0, 0);
  return manifest;
}

}  // namespace telic::grounding
