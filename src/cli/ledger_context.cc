#include "cli/ledger_context.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "base/file_read.h"
#include "base/text.h"
#include "controller/grounder.h"
#include "store/open_store.h"
#include "store/pg_store.h"

namespace telic::cli {

void AddLedgerFlags(CLI::App& command, LedgerFlags& flags, bool json) {
  command.add_option("--repo", flags.repo, "repository root (default: $TELIC_REPOSITORY_ROOT or the current directory)");
  command.add_option("--db", flags.db,
                     "SQLite ledger file to use instead of the state directory's, or a postgresql:// URL (shared store)");
  if (json) command.add_flag("--json", flags.json, "machine-readable JSON output");
}

std::string ShellWord(const std::string& value) {
  bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("._:/=@+-").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return value;
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string LocationArguments(const LedgerFlags& flags) {
  std::string out;
  if (!flags.repo.empty()) out += " --repo " + ShellWord(flags.repo);
  if (!flags.db.empty()) {
    out += " --db " + ShellWord(store::IsPostgresUrl(flags.db) ? store::RedactPostgresUrl(flags.db) : flags.db);
  }
  return out;
}

std::string CurrentDirectory() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

Result<store::StateLocation> Locate(const LedgerFlags& flags) {
  store::Environment env = store::CurrentEnvironment();
  if (!flags.repo.empty()) env["TELIC_REPOSITORY_ROOT"] = flags.repo;
  TELIC_ASSIGN_OR_RETURN(store::StateLocation location, store::ResolveStateLocation(env, CurrentDirectory()));
  if (store::IsPostgresUrl(flags.db)) {
    location.ledger_path = flags.db;  // the state dir stays the default (excluded from grounding)
  } else if (!flags.db.empty()) {
    location.ledger_path = std::filesystem::absolute(flags.db).lexically_normal().string();
    location.state_dir = std::filesystem::path(location.ledger_path).parent_path().string();
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(location.repository_root, ec)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the repository root {} is not a directory", location.repository_root));
  }
  if (!store::IsPostgresUrl(location.ledger_path)) {
    std::string why = NonRegularFileReason(location.ledger_path);
    if (!why.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("the ledger {} cannot be used: {}", location.ledger_path, why));
  }
  return location;
}

bool LedgerExists(const store::StateLocation& location) {
  std::error_code ec;
  return store::IsPostgresUrl(location.ledger_path) || std::filesystem::exists(location.ledger_path, ec);
}

Status WireContext(Context& context, bool serving) {
  context.service = std::make_unique<controller::RunService>(*context.store, context.clock, context.ids,
                                                             context.location.repository_root);
  context.service->set_grounder(controller::MakeRepositoryGrounder({context.location.state_dir}));
  // The task graph lives beside the runs: the same SQLite ledger, or the same
  // PostgreSQL database shared by every instance (docs/DECISIONS.md D43).
  TELIC_ASSIGN_OR_RETURN(context.graph,
                         OpenGraph(context.location.ledger_path, *context.store, context.clock, context.ids, serving));
  // Accepted WorkPlans and WorkResults drive the task graph (issue 7): every
  // committed change of a run is mirrored, serially within this process.
  context.service->set_change_listener(
      [tasks = context.graph->service.get(), mutex = std::make_shared<std::mutex>()](const std::string& run_id) {
        std::lock_guard lock(*mutex);
        // The run's change is committed: nothing here may turn it into a
        // failure, so errors (and exceptions) are logged, never thrown.
        try {
          auto synced = tasks->SyncRun(run_id);
          if (!synced) {
            std::cerr << "telic: the task graph of run " << run_id
                      << " is behind (repaired on the next change): " << CleanMessage(synced.error().message()) << "\n";
          } else {
            for (const auto& skipped : synced->skipped_plans) {
              std::cerr << "telic: run " << run_id << ": WorkPlan not mirrored in the task graph: " << skipped << "\n";
            }
          }
        } catch (const std::exception& ex) {
          std::cerr << "telic: the task graph of run " << run_id << " could not be synced: " << ex.what() << "\n";
        }
      });
  return Ok();
}

Result<std::unique_ptr<Context>> LocateContext(const LedgerFlags& flags, bool create) {
  auto context = std::make_unique<Context>();
  TELIC_ASSIGN_OR_RETURN(context->location, Locate(flags));
  if (!create && !LedgerExists(context->location)) {
    return Fail(ErrorCode::kNotFound, fmt::format("No Telic ledger exists at {}", context->location.ledger_path));
  }
  if (flags.db.empty()) TELIC_RETURN_IF_ERROR(store::PrepareStateDir(context->location));
  // Scratch left by a killed import or verify is removed at the next start;
  // failing to clean it does not stop the command.
  (void)store::CleanStaleScratch(context->location.state_dir);
  return context;
}

Result<std::unique_ptr<Context>> OpenContext(const LedgerFlags& flags, bool create, bool serving) {
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, LocateContext(flags, create));
  TELIC_ASSIGN_OR_RETURN(context->store, store::OpenStore(context->location.ledger_path));
  TELIC_RETURN_IF_ERROR(WireContext(*context, serving));
  return context;
}

}  // namespace telic::cli
