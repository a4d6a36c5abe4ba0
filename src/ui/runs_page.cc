#include <fmt/format.h>

#include "controller/phases.h"
#include "policy/permission_set.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::ui {
namespace {

void Select(Html& out, std::string_view name, std::string_view label, const std::vector<std::string>& values,
            const std::optional<std::string>& chosen) {
  out.Open("label").Text(label);
  out.Open("select", {{"name", std::string(name)}});
  out.Element("option", {{"value", ""}}, "any");
  for (const auto& value : values) {
    Attrs attrs = {{"value", value}};
    if (chosen == value) attrs.push_back({"selected", "selected"});
    out.Element("option", attrs, value);
  }
  out.Close("select").Close("label");
}

void FilterForm(Html& out, const RunsFilter& filter) {
  out.Open("form", {{"class", "filters"}, {"method", "get"}, {"action", RunsPath()}, {"role", "search"}});
  out.Open("label").Text("search: run id prefix or request text");
  out.Open("input", {{"type", "search"},
                     {"name", "q"},
                     {"id", "search"},
                     {"value", filter.text.value_or("")},
                     {"size", "32"},
                     {"placeholder", "press / to search"},
                     {"aria-keyshortcuts", "/"}});
  out.Close("label");
  std::vector<std::string> statuses;
  for (domain::RunStatus status : domain::AllRunStatuses()) statuses.emplace_back(domain::Name(status));
  Select(out, "status", "status", statuses, filter.status);
  Select(out, "mode", "mode", policy::Modes(), filter.mode);
  Select(out, "topology", "topology", {"micro", "standard", "forensic"}, filter.topology);
  out.Raw("<button type=\"submit\">Filter</button>");
  out.Link(RunsPath(), "clear");
  out.Close("form");
}

// The runs page URL with the same filters, at cursor `before` ("" = the
// first page), with `back` as the pages before it.
std::string PageUrl(const RunsFilter& filter, const std::string& before, const std::vector<std::string>& back) {
  std::string url = RunsPath() + "?";
  auto add = [&](const char* key, const std::optional<std::string>& value) {
    if (value) url += fmt::format("{}={}&", key, EncodeComponent(*value));
  };
  add("status", filter.status);
  add("mode", filter.mode);
  add("topology", filter.topology);
  add("q", filter.text);
  if (filter.limit != 50) url += fmt::format("limit={}&", filter.limit);
  if (!back.empty()) {
    std::string joined;
    for (const auto& cursor : back) joined += (joined.empty() ? "" : ",") + (cursor.empty() ? std::string("-") : cursor);
    url += "back=" + EncodeComponent(joined) + "&";
  }
  if (!before.empty()) url += "before=" + EncodeComponent(before);
  if (url.back() == '&' || url.back() == '?') url.pop_back();
  return url;
}

// Whether `text` contains `needle`, ASCII letters compared case-insensitively
// (as the store's request filter compares them).
bool AsciiLowerContains(std::string_view text, std::string_view needle) {
  auto lower = [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  std::string folded_text, folded_needle;
  for (unsigned char c : text) folded_text += lower(c);
  for (unsigned char c : needle) folded_needle += lower(c);
  return folded_text.find(folded_needle) != std::string::npos;
}

// Whether `text` starts with `prefix`, ASCII letters compared case-insensitively.
bool AsciiLowerStartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && AsciiLowerContains(text.substr(0, prefix.size()), prefix);
}

std::string Duration(const store::RunRecord& run) {
  auto start = ParseIsoMillis(run.created_at), end = ParseIsoMillis(run.updated_at);
  return start && end ? FormatDuration(*end - *start) : "";
}

// How long a live run has been without a change, when that is longer than
// the idle threshold; nullopt otherwise.
std::optional<int64_t> IdleFor(const Sources& sources, const store::RunRecord& run) {
  if (run.IsTerminal()) return std::nullopt;
  auto updated = ParseIsoMillis(run.updated_at);
  if (!updated) return std::nullopt;
  int64_t idle = sources.Now() - *updated;
  if (idle < sources.idle_after_ms) return std::nullopt;
  return idle;
}

void StatusCell(Html& out, const Sources& sources, const store::RunRecord& run) {
  out.Open("td").Element("span", {{"class", "badge " + std::string(domain::Name(run.status))}}, std::string(domain::Name(run.status)));
  if (auto idle = IdleFor(sources, run)) {
    out.Raw(" ").Element("span", {{"class", "badge idle"}, {"title", "no change for " + FormatDuration(*idle)}},
                         "idle since " + FormatAgo(*idle));
  }
  out.Close("td");
}

// `request`: the run's request as shown (masked, RequestText).
void RunRow(Html& out, Sources& sources, const store::RunRecord& run, const std::string& request_text) {
  out.Open("tr", {{"class", "run row-link"}, {"data-run-id", run.run_id}, {"data-href", RunPath(run.run_id)}});
  std::string request = FirstLine(request_text, 110);
  out.Open("td", {{"class", "wrap"}}).Link(RunPath(run.run_id), request.empty() ? run.run_id : request, {{"class", "run-link"}});
  out.Element("div", {{"class", "muted mono"}, {"title", run.run_id}}, ShortId(run.run_id)).Close("td");
  out.Element("td", {}, std::string(domain::Name(run.requested_mode))).Element("td", {}, std::string(domain::Name(run.topology)));
  StatusCell(out, sources, run);
  // A cancelled run keeps the phase it was cancelled in; other ended runs
  // ended in their report.
  bool show_phase = !run.IsTerminal() || run.status == domain::RunStatus::kCancelled;
  out.Element("td", {}, show_phase ? controller::ProtocolPhaseName(run.phase) : "\xE2\x80\x94");
  out.Element("td", {}, std::to_string(run.version));
  auto updated = ParseIsoMillis(run.updated_at);
  out.Element("td", {{"title", run.updated_at}}, updated ? FormatAgo(sources.Now() - *updated) : run.updated_at);
  out.Element("td", {}, Duration(run));
  out.Close("tr");
}

// Previous / next links and "runs 51-100 of 230". The trail `back` holds one
// cursor per earlier page, so this page's position is back.size() pages in;
// a cursor without a trail (an old link) has no known position.
void Pager(Html& out, const RunsFilter& filter, const store::RunPage& page) {
  bool position_known = !filter.before || !filter.back.empty();
  size_t first = filter.back.size() * static_cast<size_t>(filter.limit);
  out.Open("div", {{"class", "pager"}, {"id", "pager"}});
  if (filter.before) {
    std::vector<std::string> back = filter.back;
    std::string previous = back.empty() ? "" : back.back();
    if (!back.empty()) back.pop_back();
    out.Link(PageUrl(filter, previous, back), "\xE2\x86\x90 previous page", {{"id", "previous-page"}, {"rel", "prev"}});
  }
  std::string range = page.runs.empty()  ? "no runs"
                      : position_known   ? fmt::format("runs {}\xE2\x80\x93{}", first + 1, first + page.runs.size())
                                         : fmt::format("{} runs", page.runs.size());
  if (page.total) range += fmt::format(" of {}", *page.total);
  out.Element("span", {{"id", "page-range"}, {"class", "muted"}}, range);
  if (page.next) {
    std::vector<std::string> back = filter.back;
    back.push_back(filter.before.value_or(""));
    if (back.size() > kMaxBackCursors) back.erase(back.begin());
    out.Link(PageUrl(filter, *page.next, back), "next page \xE2\x86\x92", {{"id", "next-page"}, {"rel", "next"}});
  }
  out.Close("div");
}

}  // namespace

Result<std::string> RunsPage(Sources& sources, const RunsFilter& filter) {
  store::RunQuery query;
  query.limit = filter.limit;
  query.before = filter.before;
  if (filter.status) {
    TELIC_ASSIGN_OR_RETURN(query.status, domain::ParseRunStatus(*filter.status, "status"));
  }
  if (filter.mode) {
    TELIC_ASSIGN_OR_RETURN(query.mode, domain::ParseMode(*filter.mode, "mode"));
  }
  if (filter.topology) {
    TELIC_ASSIGN_OR_RETURN(query.topology, domain::ParseTopology(*filter.topology, "topology"));
  }
  query.search = filter.text;
  query.with_total = true;
  TELIC_ASSIGN_OR_RETURN(store::RunPage page, sources.runs.QueryRuns(query));
  Html out;
  out.Element("h1", {}, "Runs");
  FilterForm(out, filter);
  out.Open("div", {{"class", "scroll"}}).Open("table", {{"id", "runs"}, {"class", "nav-rows"}});
  out.Raw("<thead><tr><th>request</th><th>mode</th><th>topology</th><th>status</th><th>phase</th><th>version</th>"
          "<th>updated</th><th>duration</th></tr></thead><tbody>");
  size_t shown = 0;
  for (const auto& run : page.runs) {
    std::string masked = RequestText(sources.runs, run);
    // A match only inside a masked secret is no match: searching cannot probe a secret.
    if (filter.text && !AsciiLowerStartsWith(run.run_id, *filter.text) && !AsciiLowerContains(masked, *filter.text)) continue;
    ++shown;
    RunRow(out, sources, run, masked);
  }
  out.Raw("</tbody></table></div>");
  if (shown < page.runs.size()) page.total.reset();  // the count would include the hidden matches
  if (shown == 0) {
    bool filtered = filter.status || filter.mode || filter.topology || filter.text;
    out.Element("p", {{"class", "muted empty"}, {"id", "no-runs"}},
                filtered ? "No run matches these filters." : "No runs yet. Start one from your agent, or run `telic demo`.");
  }
  Pager(out, filter, page);
  out.Element("p", {{"class", "muted keys"}}, "Keys: j / k move, Enter opens, / searches.");
  return PageShell("Runs", out.Take());
}

}  // namespace telic::ui
