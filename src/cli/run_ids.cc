#include "cli/run_ids.h"

#include <fmt/format.h>

#include "base/text.h"
#include "cli/format.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::cli {
namespace {

// The page size of the prefix search (the store's search also matches
// request texts, which are skipped here).
constexpr int kSearchPage = 100;

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithIgnoringCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (AsciiLower(text[i]) != AsciiLower(prefix[i])) return false;
  }
  return true;
}

Issue CandidateIssue(store::Store& store, const store::RunRecord& run) {
  std::string request = ui::FirstLine(ui::RequestText(store, run), 60);
  return {run.run_id, "ambiguous", fmt::format("{}  {}  {}", run.status, run.created_at, request)};
}

std::unexpected<Error> Ambiguous(std::string what, std::string_view typed, size_t matches, std::vector<Issue> listed) {
  std::string message = fmt::format("{} id prefix '{}' is ambiguous: {} {}s match", what, typed, matches,
                                    what == "Run" ? "run" : "artifact");
  if (matches > listed.size()) message += fmt::format(" ({} listed)", listed.size());
  return Fail(ErrorCode::kInvalidArgument, std::move(message), std::move(listed));
}

}  // namespace

Result<std::string> ResolveRunId(store::Store& store, std::string_view typed) {
  if (typed.empty()) return Fail(ErrorCode::kInvalidArgument, "A run id (or a prefix of one) is needed");
  auto exact = store.GetRun(typed);
  if (exact) return exact->run_id;
  if (exact.error().code() != ErrorCode::kNotFound) return std::unexpected(exact.error());
  store::RunQuery query;
  query.limit = kSearchPage;
  query.search = std::string(typed);
  std::vector<store::RunRecord> matches;
  size_t total = 0;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::RunPage page, store.QueryRuns(query));
    for (auto& run : page.runs) {
      if (!StartsWithIgnoringCase(run.run_id, typed)) continue;  // a match inside the request text
      ++total;
      if (matches.size() < kListedCandidates) matches.push_back(std::move(run));
    }
    if (!page.next) break;
    query.before = page.next;
  }
  if (total == 0) return Fail(ErrorCode::kNotFound, fmt::format("Run not found: {}", typed));
  if (total == 1) return matches.front().run_id;
  std::vector<Issue> listed;
  for (const auto& run : matches) listed.push_back(CandidateIssue(store, run));
  return Ambiguous("Run", typed, total, std::move(listed));
}

Result<std::string> ResolveArtifactId(const std::vector<store::ArtifactMeta>& artifacts, std::string_view typed) {
  if (typed.empty()) return Fail(ErrorCode::kInvalidArgument, "An artifact id (or a prefix of one) is needed");
  std::vector<const store::ArtifactMeta*> matches;
  for (const auto& meta : artifacts) {
    if (meta.id == typed) return meta.id;
    if (StartsWithIgnoringCase(meta.id, typed)) matches.push_back(&meta);
  }
  if (matches.empty()) return Fail(ErrorCode::kNotFound, fmt::format("Artifact not found: {}", typed));
  if (matches.size() == 1) return matches.front()->id;
  std::vector<Issue> listed;
  for (const auto* meta : matches) {
    if (listed.size() == kListedCandidates) break;
    listed.push_back({meta->id, "ambiguous", fmt::format("{}  {}", meta->type, meta->created_at)});
  }
  return Ambiguous("Artifact", typed, matches.size(), std::move(listed));
}

int ReportResolutionFailure(std::ostream& err, const Error& error) {
  int code = ReportFailure(err, error);
  for (const Issue& issue : error.issues()) {
    err << "  " << TerminalText(issue.pointer) << "  " << TerminalText(CleanMessage(issue.message)) << "\n";
  }
  return code;
}

}  // namespace telic::cli
