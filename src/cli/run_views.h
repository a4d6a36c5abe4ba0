// The commands that read runs from the ledger and print them: runs, show
// (status), trace, artifact, verify and replay. Run ids may be any unique
// prefix (run_ids.h). Human output follows the terminal (terminal.h) and
// names phases as the viewer and NextAction do (the protocol names); --json
// keeps the wire's shapes unchanged.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "cli/ledger_context.h"
#include "cli/terminal.h"
#include "store/records.h"

namespace telic::cli {

// `telic runs` flags.
struct RunsArgs {
  int limit = 20;
  std::string before;  // a cursor; "" for the first page
  bool all = false;
  std::string status, mode;  // "" for any
};

inline constexpr int kDefaultRunsLimit = 20;

// The command that lists the page after `cursor` with the same filters and
// the same --repo / --db the user gave.
std::string NextRunsCommand(const RunsArgs& args, const LedgerFlags& flags, const std::string& cursor);

// One page (or with --all every run, streamed a page at a time), newest
// created first. Table output ends with "next: <command>" when more runs
// follow; JSON output is {"nextCursor": cursor|null, "runs": [RunSummary...]}.
// No ledger at the default location yet is no error: "No runs yet".
int Runs(const LedgerFlags& flags, const RunsArgs& args, const Terminal& terminal);

// The shortest prefixes (at least 8 characters) that tell `ids` apart.
std::vector<std::string> ShortIds(const std::vector<std::string>& ids);

// `telic show RUN` (`status` is show --json).
int Show(const LedgerFlags& flags, const std::string& typed_run, const Terminal& terminal);

// How `trace` shows when an event happened.
enum class TimeStyle { kRelative, kClock, kFull };
inline constexpr std::string_view kTimeStyles[] = {"relative", "clock", "full"};
std::optional<TimeStyle> ParseTimeStyle(std::string_view text);

// `timestamp` (ISO-8601 UTC) as `style` shows it: after `start_ms` as
// "+850 ms" / "+12.4 s", the time of day "08:15:53.310", or unchanged.
// Unchanged too when it is not such a timestamp.
std::string EventTime(const std::string& timestamp, int64_t start_ms, TimeStyle style);

// `telic trace RUN`.
int Trace(const LedgerFlags& flags, const std::string& typed_run, TimeStyle style, const Terminal& terminal);

// `telic artifact REF [ARTIFACT_ID]`: REF is artifact://RUN/ID, or RUN
// with ARTIFACT_ID beside it (each may be a unique prefix).
int Artifact(const LedgerFlags& flags, const std::string& first, const std::string& second, bool reveal);

// `telic verify RUN`: exit 1 when a problem is found.
int Verify(const LedgerFlags& flags, const std::string& typed_run, const Terminal& terminal);

// The phase (internal name) of each step of a ReplayReport's `steps`: the
// phase of the last event listing its artifact, else the phase the run was
// in when the artifact was stored (the last event at or before its
// creation; the first event when none is). The report itself labels such
// steps with the run's current phase, as the reference's does.
std::vector<std::string> ReplayStepPhases(const Json& steps, const std::vector<store::TraceEventRecord>& trace,
                                          const std::vector<store::ArtifactMeta>& artifacts);

// `telic replay RUN`: exit 1 when the stored state differs from its replay.
int Replay(const LedgerFlags& flags, const std::string& typed_run, const Terminal& terminal);

}  // namespace telic::cli
