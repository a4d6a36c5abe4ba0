// The web UI's pages, rendered on the server from the stores (read-only:
// nothing here writes). Every stored value reaches the markup through
// ui::Html (escaped); links are built only from this UI's own paths.
// docs/UI.md says what each page shows and where its data comes from.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "controller/run_service.h"
#include "store/store.h"
#include "store/task_store.h"

namespace telic::ui {

// What the pages read: the run store, the task graph beside it (null: no
// task graph pages) and a RunService over the same store for replay and verify.
struct Sources {
  Sources(store::Store& runs_in, store::TaskStore* tasks_in, controller::RunService& service_in)
      : runs(runs_in), tasks(tasks_in), service(service_in) {}
  store::Store& runs;
  store::TaskStore* tasks = nullptr;
  controller::RunService& service;
  // A running run whose last change is older than this is shown as idle.
  int64_t idle_after_ms = 15 * 60 * 1000;
  // Milliseconds since the epoch; null means the system clock (tests set it).
  std::function<int64_t()> now_ms;
  int64_t Now() const;
};

// The page frame: <head> with the embedded stylesheet and script, the top
// navigation, then `body` (markup this UI built).
std::string PageShell(std::string_view title, const std::string& body);

// A small page for an error (`status` 404, 400, 500): the message escaped.
std::string ErrorPage(int status, std::string_view message);

// The runs page's query (?status=&mode=&topology=&q=&before=&back=&limit=).
// `text` matches a run id prefix or the request's text; `back` holds the
// cursors of the pages before this one ("" for the first), oldest first, so
// the page can link to the previous one.
struct RunsFilter {
  std::optional<std::string> status, mode, topology, text, before;
  std::vector<std::string> back;
  int limit = 50;
};
inline constexpr size_t kMaxBackCursors = 64;
inline constexpr int kMaxRunsPerPage = 200;

// Every run of the store, newest created first, one page (QueryRuns), with
// the filter form and a link to the next page. The request shown, and the
// text filter, are over the masked request (RequestText): a masked secret
// cannot be probed by filtering for it. kInvalidArgument for a bad
// filter value or cursor.
Result<std::string> RunsPage(Sources& sources, const RunsFilter& filter);

// One run: header (request, mode, topology, status, budgets left), verify
// and replay, the phase diagram with the path taken, the trace timeline
// (live), the artifact reference graph and list, budget use. kNotFound for
// an unknown run.
Result<std::string> RunPage(Sources& sources, const std::string& run_id);

// One artifact: its canonical body pretty-printed with artifact:// links
// (likely credentials masked, store::RedactedJson, and a note saying so),
// its metadata and sha256, whether it verified on this read (a body whose
// digest does not match is shown as such, not as an error).
Result<std::string> ArtifactPage(Sources& sources, const std::string& run_id, const std::string& artifact_id);

// A run's task graph (or the standalone graph for nullopt) as a DAG, with
// each task's state, dependencies, verdicts and approvals, and the stories.
Result<std::string> TasksPage(Sources& sources, const std::optional<std::string>& run_id);

// The live update of an open run page: the timeline rows of the events
// after `after` (escaped markup), {"rows", "after", "status", "phase",
// "version", "ended"}; the page stops asking once "ended" is true.
// Refused calls after `refused_after` come with them ("refused": the last one's seq).
Result<Json> LiveUpdate(Sources& sources, const std::string& run_id, int64_t after, int64_t refused_after = 0);

// Every refused call of a run, oldest first.
Result<std::vector<store::RefusedCall>> ReadRefusedCalls(store::Store& store, const std::string& run_id, int64_t after = 0);

// --- pieces shared by the pages (timeline.cc) ---

// Timeline rows (<tr>…</tr>) of `events`: seq, time, actor, phase, event,
// summary; permission decisions with capability, target, decision, deciding
// layer and rule (denials class "deny"); clarifications with their question,
// choices and the answer, read from the run's artifacts.
// Times in the rows are shown relative to `start_ms` (the run's creation);
// each row's "after" is the time since the event before it (`previous_ms`
// for the first row, when the events continue an earlier list).
struct TimelineClock {
  std::optional<int64_t> start_ms;
  std::optional<int64_t> previous_ms;
};
// `refused` (the run's refused calls) are placed among the events by time,
// as rows of class "rejected" with the tool, the code, the reason and each
// issue's JSON pointer.
Result<std::string> TimelineRows(store::Store& store, const std::string& run_id,
                                 const std::vector<store::TraceEventRecord>& events,
                                 const std::vector<store::RefusedCall>& refused, TimelineClock clock);

// Every event of a run, in sequence order.
Result<std::vector<store::TraceEventRecord>> ReadWholeTrace(store::Store& store, const std::string& run_id);

// The run's original request text (its first UserMessage's content) with
// likely credentials masked (RedactedText), or "". The stored bytes are kept.
std::string RequestText(store::Store& store, const store::RunRecord& run);

}  // namespace telic::ui
