#include "cli/ground_command.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "base/canonical_json.h"
#include "base/text.h"
#include "cli/format.h"
#include "grounding/ground.h"
#include "store/state_dir.h"

namespace telic::cli {
namespace {

constexpr int64_t kProgressThreshold = 2000;
constexpr int kBarWidth = 30;

// Draws "\r<stage> [#####-----] done/total" on `err` once the inventory is
// known to exceed kProgressThreshold files; redraws only when the bar moves.
class ProgressBar {
 public:
  explicit ProgressBar(std::ostream& err) : err_(err) {}
  ~ProgressBar() { Finish(); }

  void Update(const grounding::GroundingProgress& progress) {
    if (!active_) {
      if (progress.stage != "inventory" || progress.done <= kProgressThreshold) return;
      active_ = true;
    }
    int cells = progress.total > 0 ? static_cast<int>(progress.done * kBarWidth / progress.total) : 0;
    if (progress.stage == stage_ && cells == cells_ && progress.done != progress.total &&
        (progress.total > 0 || progress.done - done_ < 4096)) {
      return;
    }
    stage_ = std::string(progress.stage);
    cells_ = cells;
    done_ = progress.done;
    std::string line = fmt::format("\r{:<9} ", stage_);
    if (progress.total > 0) {
      line += "[" + std::string(static_cast<size_t>(cells), '#') + std::string(static_cast<size_t>(kBarWidth - cells), '-') +
              "] " + fmt::format("{}/{}", progress.done, progress.total);
    } else {
      line += fmt::format("{} files", progress.done);
    }
    err_ << line << "\x1b[K" << std::flush;
  }

  void Finish() {
    if (active_) err_ << "\r\x1b[K" << std::flush;
    active_ = false;
  }

 private:
  std::ostream& err_;
  bool active_ = false;
  std::string stage_;
  int cells_ = -1;
  int64_t done_ = 0;
};

std::string CurrentDirectory() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

void PrintTable(const grounding::GroundingResult& result, std::ostream& out) {
  const Json& manifest = result.manifest;
  const Json& budget = manifest["budget"];
  const Json& fingerprint = manifest["repositoryFingerprint"];
  out << fmt::format("manifest   {}\n", manifest["id"].get<std::string>());
  out << fmt::format("repository {}\n", result.repository_root);
  out << fmt::format("inventory  {} ({} candidate files)\n", manifest["inventorySource"].get<std::string>(),
                     budget["candidateFiles"].get<int64_t>());
  out << fmt::format("head       {}\n",
                     fingerprint["headCommit"].is_null() ? std::string("(none)") : fingerprint["headCommit"].get<std::string>());
  out << fmt::format("worktree   {}\n", fingerprint["dirtyWorktreeHash"].get<std::string>());
  out << fmt::format("selected   {} of at most {} files, {} of at most {} bytes (~{} tokens)\n\n",
                     budget["selectedFiles"].get<int64_t>(), budget["maximumFiles"].get<int64_t>(),
                     budget["selectedBytes"].get<int64_t>(), budget["maximumTotalBytes"].get<int64_t>(),
                     budget["estimatedTokens"].get<int64_t>());
  std::vector<std::vector<std::string>> rows;
  for (const Json& candidate : manifest["candidates"]) {
    rows.push_back({candidate["path"].get<std::string>() + (candidate["pinned"].get<bool>() ? " (pinned)" : ""),
                    std::to_string(candidate["score"].get<int64_t>()),
                    std::to_string(candidate["byteSize"].get<int64_t>()),
                    candidate["selectionReason"].get<std::string>()});
  }
  out << FormatTable({"PATH", "SCORE", "BYTES", "REASON"}, rows, 0);
  if (!manifest["excludedCandidateSummaries"].empty()) {
    std::vector<std::vector<std::string>> excluded;
    for (const Json& summary : manifest["excludedCandidateSummaries"]) {
      excluded.push_back({summary["reason"].get<std::string>(), std::to_string(summary["count"].get<int64_t>())});
    }
    out << "\n" << FormatTable({"EXCLUDED", "COUNT"}, excluded, 0);
  }
  if (!manifest["warnings"].empty()) {
    out << "\nwarnings:\n";
    for (const Json& warning : manifest["warnings"]) out << "  - " << warning.get<std::string>() << "\n";
  }
}

}  // namespace

int RunGroundCommand(const std::string& repo, const std::string& request, bool json, std::ostream& out,
                     std::ostream& err, bool progress_bar) {
  store::Environment env = store::CurrentEnvironment();
  if (!repo.empty()) env["TELIC_REPOSITORY_ROOT"] = repo;
  const std::string cwd = CurrentDirectory();
  std::string root = repo;
  if (root.empty()) {
    auto it = env.find("TELIC_REPOSITORY_ROOT");
    root = it != env.end() && !it->second.empty() ? it->second : cwd;
  }

  grounding::GroundingRequest grounding_request;
  grounding_request.run_id = "preview";
  grounding_request.repository_root = root;
  grounding_request.request_text = request;
  // The state directory is never context, wherever it lives.
  if (auto location = store::ResolveStateLocation(env, cwd)) {
    if (!location->state_dir.empty() && location->state_dir.front() == '/') {
      grounding_request.excluded_roots.push_back(location->state_dir);
    }
  }
  ProgressBar bar(err);
  if (progress_bar) {
    grounding_request.progress = [&bar](const grounding::GroundingProgress& progress) { bar.Update(progress); };
  }
  auto result = grounding::GroundRepository(grounding_request);
  bar.Finish();
  if (!result) {
    err << "telic: " << CleanMessage(result.error().message()) << "\n";
    return 1;
  }
  if (json) {
    out << CanonicalJson(result->manifest) << "\n";
  } else {
    PrintTable(*result, out);
  }
  return 0;
}

int RunGroundCommand(const std::string& repo, const std::string& request, bool json) {
  return RunGroundCommand(repo, request, json, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}

}  // namespace telic::cli
