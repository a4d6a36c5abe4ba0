#include "grounding/ground.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <memory>
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

namespace {

Status CheckRequestLimits(const GroundingRequest& request) {
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
  return Ok();
}

bool CodeUnitLess(std::string_view a, std::string_view b) { return Utf16Before(a, b); }

// What one grounding works with once the request is resolved, and what it
// accumulates on the way (warnings and exclusion counts, in stage order).
struct Grounding {
  explicit Grounding(const GroundingRequest& r) : request(r) {}
  const GroundingRequest& request;
  GroundingBudget budget;
  RepositoryRoot repository;
  ExcludedRoots excluded;
  std::function<bool(std::string_view)> may_read;
  PathPredicate should_exclude;
  std::vector<std::string> active_paths;
  std::vector<std::string> warnings;
  ExclusionCounts exclusions;

  const std::string& root() const { return repository.path; }
  bool Readable(const std::string& path) const { return !may_read || may_read(path); }
};

Result<std::unique_ptr<Grounding>> ResolveGrounding(const GroundingRequest& request) {
  TELIC_RETURN_IF_ERROR(CheckRequestLimits(request));
  auto g = std::make_unique<Grounding>(request);
  TELIC_ASSIGN_OR_RETURN(g->budget, ResolveBudget(request.budget));
  TELIC_ASSIGN_OR_RETURN(g->repository, ResolveRepositoryRoot(request.repository_root));
  TELIC_ASSIGN_OR_RETURN(g->excluded, ResolveExcludedRoots(g->root(), request.excluded_roots));
  g->may_read = ReadableFromGroundedRoot(request, g->root());
  g->should_exclude = [excluded = &g->excluded](std::string_view path) { return excluded->Excludes(path); };
  for (const std::string& value : request.active_paths) {
    TELIC_ASSIGN_OR_RETURN(std::string normalized, ValidateActivePath(g->root(), value));
    g->active_paths.push_back(std::move(normalized));
  }
  return g;
}

// PROTOCOL §16.2 inventory: the walk, its exclusions and warnings.
Inventory TakeInventory(Grounding& g) {
  InventoryRequest inventory_request;
  inventory_request.root = g.root();
  inventory_request.early_index = &g.repository.early_index;
  inventory_request.max_walk_paths = static_cast<size_t>(g.budget.max_inventory_files) + 1;
  inventory_request.is_excluded = g.should_exclude;
  inventory_request.may_read = g.may_read;
  inventory_request.cancelled = g.request.cancelled;
  if (g.request.progress) {
    inventory_request.progress = [&request = g.request](int64_t found) { Report(request, "inventory", found, 0); };
  }
  Inventory inventory = DiscoverRepositoryFiles(inventory_request);
  g.warnings = inventory.warnings;
  if (inventory.excluded_path_count > 0) g.exclusions["excluded_directory"] += inventory.excluded_path_count;
  if (inventory.invalid_path_count > 0) g.exclusions["invalid_path"] += inventory.invalid_path_count;
  const int64_t skipped = inventory.permission_skipped;
  if (skipped > 0) {
    g.warnings.push_back(fmt::format("{} repository {} outside the run's read permissions {} not inventoried.",
                                     skipped, skipped == 1 ? "path" : "paths", skipped == 1 ? "was" : "were"));
  }
  return inventory;
}

// Default instruction files that exist as regular files, and the active
// paths, that are not in the inventory: sorted, distinct. Those the run may
// not read are left out (a denied file in the inventory was counted there).
std::vector<std::string> PathsBesideInventory(const Grounding& g, const std::vector<std::string_view>& inventory) {
  auto in_inventory = [&inventory](const std::string& path) {
    return std::binary_search(inventory.begin(), inventory.end(), std::string_view(path), CodeUnitLess);
  };
  std::vector<std::string> extras;
  for (std::string_view pinned : kDefaultPinnedPaths) {
    std::string path(pinned);
    if (g.should_exclude(path) || in_inventory(path) || !IsRegularFile(g.root() + "/" + path) || !g.Readable(path)) {
      continue;
    }
    extras.push_back(std::move(path));
  }
  for (const std::string& path : g.active_paths) {
    if (g.should_exclude(path) || in_inventory(path) || !g.Readable(path)) continue;
    extras.push_back(path);
  }
  std::sort(extras.begin(), extras.end(), CodeUnitLess);
  extras.erase(std::unique(extras.begin(), extras.end()), extras.end());
  return extras;
}

// The candidates within the budget: instruction and active paths first,
// then code-unit order. Both inputs are sorted, so this is a partition and
// a merge that stops at the budget. Views into the inputs.
struct Candidates {
  std::vector<std::string_view> sorted;
  size_t required_count = 0;  // sorted[0, required_count) and the rest are each in order
  int64_t total = 0;          // before the budget cut
};

Candidates CandidatesInBudget(Grounding& g, const std::vector<std::string_view>& inventory,
                              const std::vector<std::string>& extras) {
  const std::unordered_set<std::string_view> active_set(g.active_paths.begin(), g.active_paths.end());
  auto required = [&active_set](std::string_view path) { return IsInstructionPath(path) || active_set.contains(path); };
  Candidates c;
  c.total = static_cast<int64_t>(inventory.size() + extras.size());
  const auto budget_files = static_cast<size_t>(std::max<int64_t>(g.budget.max_inventory_files, 0));
  c.sorted.reserve(std::min(budget_files, static_cast<size_t>(c.total)));
  for (std::string_view path : inventory) {
    if (required(path)) c.sorted.push_back(path);
  }
  for (const std::string& path : extras) {
    if (required(path)) c.sorted.push_back(path);
  }
  std::sort(c.sorted.begin(), c.sorted.end(), CodeUnitLess);
  if (c.sorted.size() > budget_files) c.sorted.resize(budget_files);
  c.required_count = c.sorted.size();
  auto inventory_it = inventory.begin();
  auto extras_it = extras.begin();
  while (c.sorted.size() < budget_files) {
    while (inventory_it != inventory.end() && required(*inventory_it)) ++inventory_it;
    while (extras_it != extras.end() && required(*extras_it)) ++extras_it;
    const bool inventory_left = inventory_it != inventory.end();
    const bool extras_left = extras_it != extras.end();
    if (!inventory_left && !extras_left) break;
    if (extras_left && (!inventory_left || CodeUnitLess(*extras_it, *inventory_it))) {
      c.sorted.push_back(*extras_it++);
    } else {
      c.sorted.push_back(*inventory_it++);
    }
  }
  if (c.total > g.budget.max_inventory_files) {
    g.exclusions["inventory_budget"] += c.total - g.budget.max_inventory_files;
    g.warnings.push_back(
        "Repository inventory exceeded the configured candidate limit and was deterministically truncated.");
  }
  return c;
}

// The candidates that are neither under an excluded directory nor
// secret-like, in one code-unit order (so ranking keeps ties in input
// order). Classified in parallel, counted in order.
std::vector<std::string_view> EligibleCandidates(Grounding& g, const Candidates& c) {
  enum class Kind : uint8_t { kEligible, kExcludedDirectory, kSecretLike };
  std::vector<Kind> kinds(c.sorted.size());
  ParallelFor(c.sorted.size(), 2048, [&](size_t begin, size_t end) {
    std::string lower;  // each path lower-cased once for both checks
    for (size_t i = begin; i < end; ++i) {
      lower.clear();
      AppendJsLowerCase(c.sorted[i], lower);
      kinds[i] = IsExcludedDirectoryLowerPath(lower) ? Kind::kExcludedDirectory
                 : IsSecretLikeLowerPath(lower)      ? Kind::kSecretLike
                                                     : Kind::kEligible;
    }
  });
  std::vector<std::string_view> eligible;
  eligible.reserve(c.sorted.size());
  size_t eligible_required = 0;
  for (size_t i = 0; i < c.sorted.size(); ++i) {
    if (i == c.required_count) eligible_required = eligible.size();
    if (kinds[i] == Kind::kExcludedDirectory) {
      ++g.exclusions["excluded_directory"];
    } else if (kinds[i] == Kind::kSecretLike) {
      ++g.exclusions["secret_like_file"];
    } else {
      eligible.push_back(c.sorted[i]);
    }
  }
  if (c.required_count == c.sorted.size()) eligible_required = eligible.size();
  std::inplace_merge(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(eligible_required),
                     eligible.end(), CodeUnitLess);
  return eligible;
}

// PROTOCOL §16.4 ranking and selection.
Result<Selection> RankAndSelect(Grounding& g, std::vector<std::string_view> eligible) {
  const GroundingRequest& request = g.request;
  const auto eligible_count = static_cast<int64_t>(eligible.size());
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  Report(request, "rank", 0, eligible_count);
  std::vector<RankedCandidate> ranked = RankCandidates(eligible, request.request_text, g.active_paths);
  eligible.clear();
  Report(request, "rank", eligible_count, eligible_count);
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  SelectionLimits limits{g.budget.max_files, g.budget.max_file_bytes, g.budget.max_total_bytes,
                         kMaxDocumentBodyBytes, request.run_id};
  Selection selection =
      SelectCandidates(g.root(), ranked, limits, g.excluded.absolute, g.exclusions,
                       [&request](int64_t done, int64_t total) { Report(request, "read", done, total); });
  if (g.exclusions.contains("low_relevance")) {
    g.warnings.push_back(
        fmt::format("Unpinned zero-relevance context was capped at {} files.", kMaxZeroScoreFallbackFiles));
  }
  return selection;
}

Json CandidateEntry(size_t index, const SelectedSource& source) {
  return Json{{"id", fmt::format("candidate-{:04}", index + 1)},
              {"ref", source.ref},
              {"locations", Json::array({source.path})},
              {"contentHash", source.content_hash},
              {"byteSize", source.size_bytes},
              {"decision", "selected"},
              {"selectionReason", source.reason},
              {"path", source.path},
              {"score", source.score},
              {"pinned", source.pinned}};
}

// PROTOCOL §16.5 outputs: the ContextManifest and one ContextDocument per
// selected source.
GroundingResult GroundingOutputs(Grounding& g, const Inventory& inventory, const Selection& selection,
                                 const Fingerprint& fingerprint, int64_t candidate_files) {
  const std::string& run_id = g.request.run_id;
  const std::string manifest_id =
      "context-" + Sha256Hex(ManifestProjection(run_id, fingerprint, selection.selected, g.budget)).substr(0, 16);
  GroundingResult result;
  result.repository_root = g.root();
  result.inventory_source = inventory.source;
  Json candidates = Json::array();
  Json pinned_refs = Json::array();
  Json derived_refs = Json::array();
  for (size_t i = 0; i < selection.selected.size(); ++i) {
    const SelectedSource& source = selection.selected[i];
    candidates.push_back(CandidateEntry(i, source));
    if (source.pinned) pinned_refs.push_back(source.ref);
    ContextDocument document;
    document.id = fmt::format("{}-source-{:03}-{}", manifest_id, i + 1, source.content_hash.substr(7, 13));
    document.uri = "artifact://" + run_id + "/" + document.id;
    document.ref = source.ref;
    document.path = source.path;
    document.body = ContextDocumentBody(document.id, run_id, source.path, source.ref, source.content_hash,
                                        source.size_bytes, source.content);
    derived_refs.push_back(document.uri);
    result.documents.push_back(std::move(document));
  }
  Json summaries = Json::array();
  for (const auto& [reason, count] : g.exclusions) {
    if (count > 0) summaries.push_back(Json{{"reason", reason}, {"count", count}});
  }
  Json& manifest = result.manifest;
  manifest = Json::object();
  manifest["schemaVersion"] = "1.0";
  manifest["id"] = manifest_id;
  manifest["runId"] = run_id;
  manifest["repositoryFingerprint"] =
      Json{{"headCommit", fingerprint.head_commit ? Json(*fingerprint.head_commit) : Json(nullptr)},
           {"dirtyWorktreeHash", fingerprint.dirty_worktree_hash}};
  manifest["pinnedRefs"] = std::move(pinned_refs);
  manifest["candidates"] = std::move(candidates);
  manifest["derivedRefs"] = std::move(derived_refs);
  manifest["excludedCandidateSummaries"] = std::move(summaries);
  manifest["inventorySource"] = inventory.source;
  manifest["warnings"] = g.warnings;
  manifest["budget"] = ManifestBudget(g.budget, candidate_files, static_cast<int64_t>(selection.selected.size()),
                                      selection.selected_bytes);
  return result;
}

}  // namespace

Result<GroundingResult> GroundRepository(const GroundingRequest& request) {
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<Grounding> g, ResolveGrounding(request));
  Inventory inventory = TakeInventory(*g);
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  const std::vector<std::string> extras = PathsBesideInventory(*g, inventory.paths);
  const Candidates candidates = CandidatesInBudget(*g, inventory.paths, extras);
  Report(request, "inventory", candidates.total, candidates.total);
  TELIC_ASSIGN_OR_RETURN(Selection selection, RankAndSelect(*g, EligibleCandidates(*g, candidates)));
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  Fingerprint fingerprint = FingerprintRepository(g->root(), inventory, candidates.sorted, selection.read_hashes,
                                                  g->may_read, g->should_exclude);
  g->warnings.insert(g->warnings.end(), fingerprint.warnings.begin(), fingerprint.warnings.end());
  TELIC_RETURN_IF_ERROR(CheckNotCancelled(request));
  return GroundingOutputs(*g, inventory, selection, fingerprint, candidates.total);
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
