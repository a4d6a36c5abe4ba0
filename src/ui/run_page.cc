#include <set>

#include <fmt/format.h>

#include "base/json_parse.h"
#include "controller/observe_work.h"
#include "controller/phases.h"
#include "controller/verify.h"
#include "controller/views.h"
#include "ui/dag_layout.h"
#include "ui/html.h"
#include "ui/pages.h"
#include "ui/phase_diagram.h"

namespace telic::ui {
namespace {

// The run's artifact:// references inside `value` (every string), in order.
void CollectRefs(const Json& value, const std::string& prefix, std::vector<std::string>& out) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.starts_with(prefix)) out.push_back(text.substr(prefix.size()));
  } else if (value.is_array() || value.is_object()) {
    for (const auto& item : value) CollectRefs(item, prefix, out);
  }
}

// Artifacts as nodes (title id, subtitle type), an edge from each artifact
// to every artifact of the run it references (source refs and references
// in its body); each node links to the artifact's page.
DagGraph ArtifactGraph(store::Store& store, const store::RunRecord& run, const std::vector<store::ArtifactMeta>& artifacts) {
  DagGraph graph;
  std::set<std::string> ids;
  for (const auto& meta : artifacts) ids.insert(meta.id);
  const std::string prefix = "artifact://" + run.run_id + "/";
  for (const auto& meta : artifacts) {
    std::string type(domain::Name(meta.type));
    graph.nodes.push_back({meta.id, meta.id, type, "artifact type-" + type, ArtifactPath(run.run_id, meta.id),
                           type + " " + meta.id + " by " + meta.producer});
    std::vector<std::string> refs;
    for (const auto& ref : meta.source_refs) {
      if (ref.starts_with(prefix)) refs.push_back(ref.substr(prefix.size()));
    }
    if (auto artifact = store.GetArtifact(run.run_id, meta.id)) {
      Json body = ParseStoredJson(artifact->canonical_body).value_or(Json(Json::value_t::discarded));
      if (!body.is_discarded()) CollectRefs(body, prefix, refs);
    }
    std::set<std::string> seen;
    for (auto& ref : refs) {
      ref = ref.substr(0, ref.find('#'));
      if (ref == meta.id || !ids.contains(ref) || !seen.insert(ref).second) continue;
      // The referenced artifact above the one that cites it.
      graph.edges.push_back({ref, meta.id, "", "ref"});
    }
  }
  return graph;
}

// The latest UserReport's body, or nullopt.
std::optional<Json> LatestUserReport(store::Store& store, const store::RunRecord& run,
                                     const std::vector<store::ArtifactMeta>& artifacts) {
  for (auto it = artifacts.rbegin(); it != artifacts.rend(); ++it) {
    if (it->type != domain::ArtifactType::kUserReport) continue;
    auto artifact = store.GetArtifact(run.run_id, it->id);
    if (!artifact) return std::nullopt;
    Json body = Json::parse(artifact->canonical_body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) return std::nullopt;
    body["__id"] = it->id;
    return body;
  }
  return std::nullopt;
}

bool IsDenial(const store::TraceEventRecord& event) {
  return event.permission_decision && event.permission_decision->is_object() &&
         event.permission_decision->value("decision", "") == "deny";
}

// What happened, in one card: the outcome (or the live state), the final
// report's summary, the denials and clarifications, how long it took.
void OutcomeCard(Html& out, Sources& sources, const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace,
                 const std::vector<store::ArtifactMeta>& artifacts, size_t refused,
                 const std::vector<store::ContextCost>& costs) {
  std::optional<Json> report = LatestUserReport(sources.runs, run, artifacts);
  std::string outcome(domain::Name(run.status));
  if (report && report->value("terminalStatus", "") == "failed_verification") outcome = "failed_verification";
  auto created = ParseIsoMillis(run.created_at), updated = ParseIsoMillis(run.updated_at);
  int64_t now = sources.Now();
  bool idle = !run.IsTerminal() && updated && now - *updated >= sources.idle_after_ms;
  size_t denials = std::count_if(trace.begin(), trace.end(), IsDenial);
  size_t clarifications = std::count_if(trace.begin(), trace.end(), [](const auto& e) { return e.event_type == "clarification_requested"; });

  out.Open("section", {{"class", "card outcome outcome-" + outcome}, {"id", "outcome"}, {"aria-label", "outcome"}});
  out.Open("div", {{"class", "outcome-head"}});
  out.Element("span", {{"class", "badge big " + outcome}, {"id", "outcome-status"}}, outcome);
  if (idle) out.Raw(" ").Element("span", {{"class", "badge idle"}, {"id", "outcome-idle"}}, "idle since " + FormatAgo(now - *updated));
  out.Element("span", {{"class", "outcome-request"}}, FirstLine(RequestText(sources.runs, run), 140));
  out.Close("div");
  if (report) {
    out.Open("p", {{"id", "outcome-summary"}});
    out.Link(ArtifactPath(run.run_id, report->value("__id", "")), "UserReport", {{"class", "artifact-link"}}).Text(": ");
    out.Text(FirstLine(report->value("summary", ""), 400));
    out.Close("p");
  } else if (run.IsTerminal()) {
    out.Element("p", {{"id", "outcome-summary"}, {"class", "muted"}}, "Ended without a UserReport (cancelled).");
  } else {
    out.Element("p", {{"id", "outcome-summary"}, {"class", "muted"}},
                "In progress: next " + controller::ProtocolPhaseName(run.phase) + ".");
  }
  out.Open("dl", {{"class", "facts"}});
  out.Element("dt", {}, "denials").Element("dd", {{"id", "outcome-denials"}, {"class", denials ? "bad" : ""}}, std::to_string(denials));
  out.Element("dt", {}, "refused calls").Element("dd", {{"id", "outcome-refused"}, {"class", refused ? "bad" : ""}}, std::to_string(refused));
  out.Element("dt", {}, "clarifications").Element("dd", {{"id", "outcome-clarifications"}}, std::to_string(clarifications));
  std::string took = created && updated ? FormatDuration((run.IsTerminal() ? *updated : now) - *created) : "";
  out.Element("dt", {}, run.IsTerminal() ? "took" : "running for").Element("dd", {{"id", "outcome-duration"}}, took);
  out.Element("dt", {}, "events").Element("dd", {}, std::to_string(trace.size()));
  out.Element("dt", {}, "artifacts").Element("dd", {}, std::to_string(artifacts.size()));
  out.Element("dt", {}, "context cost").Element("dd", {{"id", "outcome-context"}}, controller::ContextCostSummary(costs));
  out.Close("dl");
  out.Close("section");
}

// The states the run passed through as a row of steps (wraps, never overlaps).
void PathSteps(Html& out, const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace) {
  std::vector<std::string> path = PathTaken(run, trace);
  out.Open("ol", {{"class", "path-steps"}, {"id", "path"}, {"aria-label", "the path this run took"}});
  for (size_t i = 0; i < path.size(); ++i) {
    bool last = i + 1 == path.size();
    std::string name = controller::ProtocolPhaseName(path[i]);
    std::string cls = "step" + std::string(last ? " last " + path[i] : "");
    out.Element("li", {{"class", cls}, {"title", path[i]}}, name);
  }
  out.Close("ol");
}

void Header(Html& out, Sources& sources, const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace,
            size_t artifact_count) {
  out.Open("h1").Text("Run ").Element("span", {{"class", "mono"}, {"id", "run-id"}}, run.run_id).Close("h1");
  out.Open("div", {{"class", "grid"}});
  out.Open("section", {{"class", "card"}}).Element("h2", {}, "Request");
  out.Element("pre", {{"class", "request"}, {"id", "request"}}, RequestText(sources.runs, run));
  out.Close("section");
  out.Open("section", {{"class", "card"}}).Element("h2", {}, "State");
  out.Open("dl", {{"class", "kv"}});
  out.Element("dt", {}, "mode").Element("dd", {{"id", "run-mode"}}, std::string(domain::Name(run.requested_mode)));
  out.Element("dt", {}, "topology").Element("dd", {{"id", "run-topology"}},
                                            std::string(domain::Name(run.topology)) + (run.escalation_count ? fmt::format(" (escalated {}×)", run.escalation_count) : ""));
  out.Element("dt", {}, "status").Open("dd").Element("span", {{"class", "badge " + std::string(domain::Name(run.status))}, {"id", "run-status"}}, std::string(domain::Name(run.status))).Close("dd");
  out.Element("dt", {}, "phase").Element("dd", {{"id", "run-phase"}}, controller::ProtocolPhaseName(run.phase));
  out.Element("dt", {}, "version").Element("dd", {{"id", "run-version"}}, std::to_string(run.version));
  out.Element("dt", {}, "created").Element("dd", {{"class", "mono"}}, run.created_at);
  out.Element("dt", {}, "updated").Element("dd", {{"class", "mono"}}, run.updated_at);
  out.Element("dt", {}, "repository").Element("dd", {{"class", "mono"}}, run.repository_root);
  if (run.prior_run_id) out.Element("dt", {}, "prior run").Open("dd").Link(RunPath(*run.prior_run_id), *run.prior_run_id).Close("dd");
  out.Close("dl");
  out.Open("p").Link(TasksPath(run.run_id), "Task graph of this run", {{"id", "tasks-link"}}).Close("p");
  out.Close("section");
  bool clarified = std::any_of(trace.begin(), trace.end(), [](const auto& e) { return e.event_type == "clarification_requested"; });
  out.Open("section", {{"class", "card"}, {"id", "budgets"}}).Element("h2", {}, "Budgets left");
  out.Open("dl", {{"class", "kv"}});
  out.Element("dt", {}, "prompt revisions").Element("dd", {{"id", "budget-prompt"}}, std::to_string(run.prompt_revisions_remaining));
  out.Element("dt", {}, "remediations").Element("dd", {{"id", "budget-remediation"}}, std::to_string(run.remediations_remaining));
  out.Element("dt", {}, "clarifications").Element("dd", {{"id", "budget-clarification"}}, clarified ? "0 of 1" : "1 of 1");
  out.Element("dt", {}, "trace events").Element("dd", {}, fmt::format("{} of {}", store::kMaxTraceEventsPerRun - static_cast<int64_t>(trace.size()), store::kMaxTraceEventsPerRun));
  out.Element("dt", {}, "artifacts").Element("dd", {}, fmt::format("{} of {}", store::kMaxArtifactsPerRun - artifact_count, store::kMaxArtifactsPerRun));
  out.Close("dl").Close("section");
  out.Close("div");
}

void Checks(Html& out, const Json& verify, const Result<Json>& replay) {
  out.Open("section", {{"class", "card"}, {"id", "checks"}}).Element("h2", {}, "Verify and replay (on this read)");
  bool ok = verify.value("ok", false);
  out.Open("p", {{"id", "verify"}});
  out.Element("span", {{"class", ok ? "check-ok" : "check-bad"}, {"data-ok", ok ? "true" : "false"}}, ok ? "✔ verified" : "✘ verify found problems");
  out.Text(fmt::format(": {} of {} artifact digests match, {} trace events hash-chained", verify.value("artifactsVerified", 0),
                       verify.value("artifacts", 0), verify.value("traceEvents", 0)));
  out.Close("p");
  if (verify.contains("problems")) {
    out.Open("ul");
    for (const Json& problem : verify["problems"]) out.Element("li", {{"class", "check-bad"}}, problem.get<std::string>());
    out.Close("ul");
  }
  out.Open("p", {{"id", "replay"}});
  if (!replay) {
    out.Element("span", {{"class", "check-bad"}, {"data-ok", "false"}}, "✘ replay failed").Text(": " + replay.error().message());
    out.Close("p").Close("section");
    return;
  }
  bool consistent = (*replay)["stateCheck"].value("consistent", false);
  size_t digests_ok = 0, steps = (*replay)["steps"].size();
  for (const Json& step : (*replay)["steps"]) digests_ok += step.value("digestStatus", "") == "ok";
  out.Element("span", {{"class", consistent ? "check-ok" : "check-bad"}, {"data-ok", consistent ? "true" : "false"}},
              consistent ? "✔ replay consistent" : "✘ replay differs");
  out.Text(fmt::format(": the stored run equals the state re-derived from its artifacts and events; {} of {} replay steps' digests ok",
                       digests_ok, steps));
  if ((*replay).value("degraded", false)) out.Text(" (micro topology: no per-step replay)");
  out.Close("p");
  const Json& differences = (*replay)["stateCheck"]["differences"];
  if (!differences.empty()) {
    out.Open("ul");
    for (const Json& d : differences) out.Element("li", {{"class", "check-bad"}}, d.get<std::string>());
    out.Close("ul");
  }
  for (const Json& highlight : (*replay)["traceHighlights"]) out.Element("p", {{"class", "muted"}}, "highlight: " + highlight.get<std::string>());
  out.Close("section");
}

// The budget counters of every event where one changed (budget_snapshot).
void BudgetUse(Html& out, const std::vector<store::TraceEventRecord>& trace) {
  out.Element("h2", {}, "Budget use over the run");
  out.Open("table", {{"id", "budget-use"}});
  out.Raw("<thead><tr><th>event</th><th>phase</th><th>prompt revisions left</th><th>remediations left</th><th>trace used</th></tr></thead><tbody>");
  Json last;
  for (const auto& event : trace) {
    if (event.budget_snapshot == last && &event != &trace.back()) continue;
    last = event.budget_snapshot;
    out.Open("tr");
    out.Open("td").Raw(fmt::format("<a href=\"#event-{0}\">#{0}</a> ", event.sequence)).Element("code", {}, event.event_type).Close("td");
    out.Element("td", {}, controller::ProtocolPhaseName(event.phase));
    for (const char* key : {"promptRevisionsRemaining", "postExecutionRemediationsRemaining"}) {
      std::string value = event.budget_snapshot.contains(key) ? event.budget_snapshot[key].dump() : "—";
      out.Element("td", {}, value);
    }
    out.Element("td", {}, fmt::format("{} / {}", event.sequence, store::kMaxTraceEventsPerRun));
    out.Close("tr");
  }
  out.Raw("</tbody></table>");
}

// What the run's tool results cost the host's model (issue 39): per tool,
// the calls and bytes telic returned, with the total in estimated tokens.
void ContextCostTable(Html& out, const std::vector<store::ContextCost>& costs) {
  out.Element("h2", {}, "Context cost of the tool results");
  out.Element("p", {{"class", "muted"}, {"id", "context-cost-total"}}, controller::ContextCostSummary(costs));
  out.Open("table", {{"id", "context-cost"}});
  out.Raw("<thead><tr><th>tool</th><th>calls</th><th>bytes</th><th>~tokens</th></tr></thead><tbody>");
  for (const store::ContextCost& cost : costs) {
    out.Open("tr").Open("td").Element("code", {}, cost.tool).Close("td");
    out.Element("td", {}, std::to_string(cost.calls));
    out.Element("td", {}, std::to_string(cost.bytes));
    out.Element("td", {}, std::to_string(cost.bytes / 4));
    out.Close("tr");
  }
  out.Raw("</tbody></table>");
}

// "observed" | "claimed" of an Evidence, "" for other artifacts.
std::string ProvenanceText(const store::ArtifactMeta& meta) {
  auto provenance = store::ProvenanceOf(meta);
  return provenance ? std::string(store::ProvenanceName(*provenance)) : "";
}

void ProvenanceBadge(Html& out, const std::string& provenance) {
  if (provenance.empty()) return;
  out.Element("span", {{"class", "provenance " + provenance}, {"data-provenance", provenance},
                       {"title", provenance == "observed" ? "captured by telic itself" : "submitted by the host, as told"}},
              provenance);
}

// Issue 38: what telic saw of the work itself, at a glance: the run's policy,
// whether it shares the work tree, and how much evidence is its own.
void Observation(Html& out, const store::RunRecord& run, const std::vector<store::ArtifactMeta>& artifacts) {
  controller::RunObservation observed = controller::RunObservationOf(run);
  size_t own = 0, claimed = 0;
  for (const auto& meta : artifacts) {
    std::string provenance = ProvenanceText(meta);
    own += provenance == "observed";
    claimed += provenance == "claimed";
  }
  out.Open("section", {{"class", "card"}, {"id", "observation"}}).Element("h2", {}, "Observed or claimed");
  out.Open("dl", {{"class", "kv"}});
  out.Element("dt", {}, "work tree")
      .Element("dd", {{"id", "observation-worktree"}},
               observed.shared ? "shared: telic checks the files, diffs them and finds undeclared changes"
                               : observed.unobserved_reason);
  out.Element("dt", {}, "policy").Element("dd", {{"id", "observation-policy"}}, std::string(controller::ObservationPolicyName(observed.policy)));
  out.Element("dt", {}, "evidence").Open("dd", {{"id", "observation-counts"}});
  out.Element("span", {{"class", "provenance observed"}, {"id", "observed-count"}}, std::to_string(own));
  out.Text(" observed by telic, ");
  out.Element("span", {{"class", "provenance claimed"}, {"id", "claimed-count"}}, std::to_string(claimed));
  out.Text(" claimed by the host").Close("dd");
  out.Close("dl").Close("section");
}

// Each completion claim of the run's UserReport with the provenance of every
// piece of evidence it cites: a claim is "observed" only when all of it is.
void ReportClaims(Html& out, store::Store& store, const store::RunRecord& run, const std::vector<store::ArtifactMeta>& artifacts) {
  auto report = std::find_if(artifacts.rbegin(), artifacts.rend(), [](const auto& m) { return m.type == domain::ArtifactType::kUserReport; });
  if (report == artifacts.rend()) return;
  auto stored = store.GetArtifact(run.run_id, report->id);
  if (!stored) return;
  Json body = Json::parse(stored->canonical_body, nullptr, false);
  if (body.is_discarded()) return;
  const std::string prefix = "artifact://" + run.run_id + "/";
  out.Element("h2", {}, "Report claims and their evidence");
  out.Open("ul", {{"id", "report-claims"}});
  for (const Json& claim : body.value("completionClaims", Json::array())) {
    std::string overall;
    Html refs;
    for (const Json& ref : claim.value("evidenceRefs", Json::array())) {
      std::string text = ref.is_string() ? ref.get<std::string>() : "";
      std::string provenance;
      if (text.starts_with(prefix)) {
        std::string id = text.substr(prefix.size());
        auto meta = std::find_if(artifacts.begin(), artifacts.end(), [&](const auto& m) { return m.id == id; });
        if (meta != artifacts.end()) provenance = ProvenanceText(*meta);
      }
      std::string shown = provenance.empty() ? "not evidence" : provenance;
      overall = overall.empty() || overall == shown ? shown : "mixed";
      refs.Open("li").Element("code", {}, text).Text(" ");
      ProvenanceBadge(refs, provenance.empty() ? "claimed" : provenance);
      refs.Close("li");
    }
    if (overall.empty() || overall == "not evidence") overall = "claimed";
    if (overall == "mixed") overall = "claimed";  // observed only when every piece is telic's own
    out.Open("li", {{"class", "report-claim"}, {"data-provenance", overall}});
    ProvenanceBadge(out, overall);
    out.Text(" " + claim.value("text", "")).Open("ul").Raw(refs.Take()).Close("ul").Close("li");
  }
  out.Close("ul");
}

void ArtifactTable(Html& out, const store::RunRecord& run, const std::vector<store::ArtifactMeta>& artifacts) {
  out.Open("table", {{"id", "artifacts"}});
  out.Raw("<thead><tr><th>artifact</th><th>type</th><th>producer</th><th>provenance</th><th>sha256</th><th>created</th></tr></thead><tbody>");
  for (const auto& meta : artifacts) {
    out.Open("tr").Open("td").Link(ArtifactPath(run.run_id, meta.id), meta.id, {{"class", "artifact-link"}}).Close("td");
    out.Element("td", {}, std::string(domain::Name(meta.type))).Element("td", {}, meta.producer);
    out.Open("td");
    ProvenanceBadge(out, ProvenanceText(meta));
    out.Close("td");
    out.Element("td", {{"class", "mono"}, {"title", meta.sha256}}, meta.sha256.substr(0, 23) + "…");
    out.Element("td", {{"class", "mono"}}, meta.created_at).Close("tr");
  }
  out.Raw("</tbody></table>");
}

// The whole phase state machine, folded, with the run's path on it.
void StateMachine(Html& out, const store::RunRecord& run, const std::vector<store::TraceEventRecord>& trace) {
  out.Open("details", {{"class", "card"}, {"id", "machine"}});
  out.Element("summary", {}, "The whole state machine");
  DagOptions phase_options;
  phase_options.id_prefix = "phases";
  phase_options.aria_label = "phase state diagram";
  phase_options.node_width = 206;
  phase_options.edge_labels = false;
  out.Open("div", {{"class", "scroll"}, {"id", "phase-diagram"}}).Raw(RenderDagSvg(PhaseDiagram(run, trace), phase_options)).Close("div");
  out.Element("p", {{"class", "muted"}}, "Blue: the path taken; orange: where the run is now. Hover an arrow for its condition.");
  out.Close("details");
}

// The trace timeline: its live-update cursor, the problems-only toggle and
// every event's row.
Status Timeline(Html& out, Sources& sources, const std::string& run_id, const store::RunRecord& run,
                const std::vector<store::TraceEventRecord>& trace, const std::vector<store::RefusedCall>& refused) {
  out.Open("h2").Text("Trace timeline ").Element("span", {{"class", "muted"}}, "(").Element("span", {{"id", "event-count"}}, std::to_string(trace.size()));
  out.Element("span", {{"class", "muted"}}, " events) ").Close("h2");
  int64_t last = trace.empty() ? 0 : trace.back().sequence;
  bool ended = run.IsTerminal();
  out.Open("div", {{"class", "timeline-tools"}});
  out.Element("p", {{"class", ended ? "live ended" : "live"}, {"id", "live"}, {"data-live-url", LivePath(run_id)},
                    {"data-after", std::to_string(last)}, {"data-version", std::to_string(run.version)},
                    {"data-refused", std::to_string(refused.empty() ? 0 : refused.back().seq)},
                    {"data-ended", ended ? "true" : "false"}},
              ended ? "this run has ended" : "live: new events appear here as they are committed");
  out.Open("label", {{"class", "toggle"}});
  out.Open("input", {{"type", "checkbox"}, {"id", "only-problems"}});
  out.Text(" only errors and denials").Close("label");
  out.Close("div");
  out.Open("div", {{"class", "scroll"}}).Open("table", {{"id", "timeline"}, {"class", "nav-rows"}});
  out.Raw("<thead><tr><th>#</th><th>when</th><th>after</th><th>actor</th><th>phase</th><th>event</th><th>summary and decision</th></tr></thead>");
  TELIC_ASSIGN_OR_RETURN(std::string rows,
                         TimelineRows(sources.runs, run_id, trace, refused, TimelineClock{ParseIsoMillis(run.created_at), std::nullopt}));
  out.Raw("<tbody id=\"timeline-body\">").Raw(rows).Raw("</tbody></table></div>");
  return Ok();
}

// The graph of the run's artifacts and the references between them.
void ArtifactGraphCard(Html& out, Sources& sources, const store::RunRecord& run,
                       const std::vector<store::ArtifactMeta>& artifacts) {
  out.Element("h2", {}, "Artifacts and their references");
  DagOptions artifact_options;
  artifact_options.id_prefix = "artifacts";
  artifact_options.aria_label = "artifact reference graph";
  artifact_options.node_width = 190;
  out.Open("div", {{"class", "card scroll"}, {"id", "artifact-graph"}})
      .Raw(RenderDagSvg(ArtifactGraph(sources.runs, run, artifacts), artifact_options))
      .Close("div");
}

}  // namespace

Result<std::string> RunPage(Sources& sources, const std::string& run_id) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, sources.runs.GetRun(run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::TraceEventRecord> trace, ReadWholeTrace(sources.runs, run_id));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::ArtifactMeta> artifacts, sources.runs.ListArtifacts(run_id));
  TELIC_ASSIGN_OR_RETURN(Json verify, controller::VerifyRun(sources.service, run_id));
  Result<Json> replay = sources.service.ReplayRun(run_id);
  TELIC_ASSIGN_OR_RETURN(std::vector<store::RefusedCall> refused, ReadRefusedCalls(sources.runs, run_id));

  TELIC_ASSIGN_OR_RETURN(std::vector<store::ContextCost> costs, sources.runs.GetContextCost(run_id));

  Html out;
  OutcomeCard(out, sources, run, trace, artifacts, refused.size(), costs);
  Observation(out, run, artifacts);
  out.Element("h2", {}, "The path this run took");
  PathSteps(out, run, trace);
  StateMachine(out, run, trace);

  TELIC_RETURN_IF_ERROR(Timeline(out, sources, run_id, run, trace, refused));

  Header(out, sources, run, trace, artifacts.size());
  Checks(out, verify, replay);

  ArtifactGraphCard(out, sources, run, artifacts);
  ArtifactTable(out, run, artifacts);
  ReportClaims(out, sources.runs, run, artifacts);
  BudgetUse(out, trace);
  ContextCostTable(out, costs);
  return PageShell("Run " + run_id, out.Take());
}

Result<Json> LiveUpdate(Sources& sources, const std::string& run_id, int64_t after, int64_t refused_after) {
  TELIC_ASSIGN_OR_RETURN(store::RunRecord run, sources.runs.GetRun(run_id));
  // One event before the cursor as well: the first new row's "after" column.
  int64_t from = after > 0 ? after - 1 : 0;
  TELIC_ASSIGN_OR_RETURN(store::TracePage page, sources.runs.GetTrace(run_id, from, 201));
  TELIC_ASSIGN_OR_RETURN(std::vector<store::RefusedCall> refused,
                         sources.runs.ListRefusedCalls(run_id, refused_after, 200));
  TimelineClock clock{ParseIsoMillis(run.created_at), std::nullopt};
  if (!page.events.empty() && page.events.front().sequence == after) {
    clock.previous_ms = ParseIsoMillis(page.events.front().timestamp);
    page.events.erase(page.events.begin());
  }
  TELIC_ASSIGN_OR_RETURN(std::string rows, TimelineRows(sources.runs, run_id, page.events, refused, clock));
  int64_t last = page.events.empty() ? after : page.events.back().sequence;
  int64_t last_refused = refused.empty() ? refused_after : refused.back().seq;
  return Json{{"rows", rows},         {"after", last},          {"refused", last_refused}, {"status", run.status},
              {"phase", controller::ProtocolPhaseName(run.phase)},   {"version", run.version}, {"ended", run.IsTerminal()}};
}

}  // namespace telic::ui
