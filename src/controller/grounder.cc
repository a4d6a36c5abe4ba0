#include "controller/grounder.h"

#include <fmt/format.h>

#include "grounding/ground.h"
#include "policy/path_scope.h"

namespace telic::controller {
namespace {

std::optional<int64_t> BudgetValue(const Json& budget, const char* key) {
  if (!budget.is_object() || !budget.contains(key)) return std::nullopt;
  return budget[key].get<int64_t>();
}

// A predicate true for paths some repository.read scope matches. Each scope
// is compiled once; an invalid scope matches nothing, "**" everything.
std::function<bool(std::string_view)> ReadablePaths(const Json& permissions) {
  std::vector<std::string> scopes;
  if (permissions.is_object()) {
    scopes = permissions.value("/repository/read"_json_pointer, std::vector<std::string>{});
  }
  bool everything = false;
  std::vector<policy::Glob> globs;
  for (const std::string& scope : scopes) {
    if (scope == "**") {
      everything = true;
    } else if (auto glob = policy::Glob::Compile(scope)) {
      globs.push_back(std::move(*glob));
    }
  }
  if (everything) return [](std::string_view) { return true; };
  return [globs = std::move(globs)](std::string_view path) {
    for (const policy::Glob& glob : globs) {
      if (glob.Matches(path)) return true;
    }
    return false;
  };
}

}  // namespace

Grounder MakeRepositoryGrounder(std::vector<std::string> excluded_roots) {
  return [excluded_roots](const GroundingInput& input) -> Result<GroundingOutput> {
    grounding::GroundingRequest request;
    request.run_id = input.run_id;
    request.repository_root = input.repository_root;
    request.request_text = input.request_text;
    request.active_paths = input.active_paths;
    request.budget = {BudgetValue(input.budget, "max_files"), BudgetValue(input.budget, "max_file_bytes"),
                      BudgetValue(input.budget, "max_total_bytes"), BudgetValue(input.budget, "max_inventory_files")};
    request.excluded_roots = excluded_roots;
    request.may_read = ReadablePaths(input.effective_permissions);
    request.cancelled = input.control.cancelled;
    if (input.control.progress) {
      request.progress = [&input](const grounding::GroundingProgress& step) {
        input.control.progress(step.total > 0 ? fmt::format("{}: {} of {}", step.stage, step.done, step.total)
                                      : fmt::format("{}: {} paths found", step.stage, step.done));
      };
    }
    TELIC_ASSIGN_OR_RETURN(grounding::GroundingResult result, grounding::GroundRepository(request));
    GroundingOutput output;
    output.manifest = std::move(result.manifest);
    for (auto& document : result.documents) {
      Json body = std::move(document.body);
      if (!body.contains("id")) body["id"] = document.id;
      output.documents.push_back(std::move(body));
    }
    return output;
  };
}

}  // namespace telic::controller
