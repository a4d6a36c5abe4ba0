// The state directory's config file, <state_dir>/config.json (issue 22):
// settings that belong to a ledger rather than to one command line.
//
//   {"retention": {"olderThan": "30d", "statuses": ["completed", ...], "keep": 20},
//    "checks": {"sandbox": "bubblewrap"}}
//
// Every key is optional except retention.olderThan; unknown keys, wrong
// types and malformed durations are refused with a JSON pointer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::store {

// What `telic runs prune` deletes: runs in one of `statuses` whose last change
// (updated_at) is older than `older_than_ms`, except the `keep` newest-created
// runs of the ledger.
struct RetentionPolicy {
  int64_t older_than_ms = 0;
  std::vector<std::string> statuses;  // each a terminal status; empty: every terminal status
  int keep = 0;
};

// The terminal statuses: the only ones prune selects (a live run is deleted
// only by `telic runs delete --force`, which cancels it first).
inline constexpr std::string_view kTerminalStatuses[] = {"completed", "partial", "blocked", "cancelled"};

// "<N><unit>" with N in 1..999999 and unit s, m, h, d or w, in milliseconds.
// kInvalidArgument otherwise.
Result<int64_t> ParseDuration(std::string_view text);

// kInvalidArgument unless every status is terminal (names the first that is not).
Status CheckPruneStatuses(const std::vector<std::string>& statuses);

// The retention policy of <state_dir>/config.json; nullopt when the file is
// missing or has no "retention" key. kInvalidArgument (with the file name and
// a JSON pointer) for a malformed file.
Result<std::optional<RetentionPolicy>> ReadRetentionPolicy(const std::string& state_dir);

// The same from the file's text (`origin` names it in messages).
Result<std::optional<RetentionPolicy>> ParseRetentionPolicy(std::string_view text, const std::string& origin);

// How telic_run_check runs commands: in bubblewrap (the default), or, only
// when the operator writes "checks": {"sandbox": "none"}, without a sandbox
// (argv, working directory, environment and limits still apply).
struct CheckConfig {
  bool unsandboxed = false;
};

// The "checks" settings of <state_dir>/config.json (defaults when the file
// or the key is missing); kInvalidArgument with the file name and a JSON
// pointer for a malformed value.
Result<CheckConfig> ReadCheckConfig(const std::string& state_dir);
Result<CheckConfig> ParseCheckConfig(std::string_view text, const std::string& origin);

}  // namespace telic::store
