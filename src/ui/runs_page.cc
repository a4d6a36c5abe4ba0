#include <fmt/format.h>

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
  out.Open("form", {{"class", "filters"}, {"method", "get"}, {"action", RunsPath()}});
  std::vector<std::string> statuses(store::kRunStatuses.begin(), store::kRunStatuses.end());
  Select(out, "status", "status", statuses, filter.status);
  Select(out, "mode", "mode", policy::Modes(), filter.mode);
  Select(out, "topology", "topology", {"micro", "standard", "forensic"}, filter.topology);
  out.Open("label").Text("request contains");
  out.Open("input", {{"type", "search"}, {"name", "q"}, {"value", filter.text.value_or("")}, {"size", "32"}});
  out.Close("label");
  out.Raw("<button type=\"submit\">Filter</button>");
  out.Link(RunsPath(), "clear");
  out.Close("form");
}

// The runs page URL with the same filters, starting after `cursor`.
std::string PageUrl(const RunsFilter& filter, const std::string& cursor) {
  std::string url = RunsPath() + "?";
  auto add = [&](const char* key, const std::optional<std::string>& value) {
    if (value) url += fmt::format("{}={}&", key, EncodeComponent(*value));
  };
  add("status", filter.status);
  add("mode", filter.mode);
  add("topology", filter.topology);
  add("q", filter.text);
  if (filter.limit != 50) url += fmt::format("limit={}&", filter.limit);
  return url + "before=" + EncodeComponent(cursor);
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

std::string Duration(const store::RunRecord& run) {
  auto start = ParseIsoMillis(run.created_at), end = ParseIsoMillis(run.updated_at);
  return start && end ? FormatDuration(*end - *start) : "";
}

}  // namespace

Result<std::string> RunsPage(Sources& sources, const RunsFilter& filter) {
  store::RunQuery query;
  query.limit = filter.limit;
  query.before = filter.before;
  query.status = filter.status;
  query.mode = filter.mode;
  query.topology = filter.topology;
  query.request_contains = filter.text;
  TELIC_ASSIGN_OR_RETURN(store::RunPage page, sources.runs.QueryRuns(query));
  Html out;
  out.Element("h1", {}, "Runs");
  FilterForm(out, filter);
  out.Open("div", {{"class", "scroll"}}).Open("table", {{"id", "runs"}});
  out.Raw("<thead><tr><th>request</th><th>mode</th><th>topology</th><th>status</th><th>phase</th><th>version</th>"
          "<th>updated</th><th>duration</th></tr></thead><tbody>");
  size_t shown = 0;
  for (const auto& run : page.runs) {
    std::string masked = RequestText(sources.runs, run);
    if (filter.text && !AsciiLowerContains(masked, *filter.text)) continue;  // matched only inside a masked secret
    ++shown;
    out.Open("tr", {{"class", "run"}, {"data-run-id", run.run_id}});
    std::string request = FirstLine(masked, 110);
    out.Open("td", {{"class", "wrap"}}).Link(RunPath(run.run_id), request.empty() ? run.run_id : request, {{"class", "run-link"}});
    out.Element("div", {{"class", "muted mono"}}, run.run_id).Close("td");
    out.Element("td", {}, run.requested_mode).Element("td", {}, run.topology);
    out.Open("td").Element("span", {{"class", "badge " + run.status}}, run.status).Close("td");
    out.Element("td", {}, run.IsTerminal() ? "—" : run.phase);
    out.Element("td", {}, std::to_string(run.version));
    out.Element("td", {{"class", "mono"}}, run.updated_at);
    out.Element("td", {}, Duration(run));
    out.Close("tr");
  }
  out.Raw("</tbody></table></div>");
  if (shown == 0) out.Element("p", {{"class", "muted"}, {"id", "no-runs"}}, "No run matches.");
  out.Open("div", {{"class", "pager"}});
  if (filter.before) out.Link(RunsPath(), "newest");
  if (page.next) out.Link(PageUrl(filter, *page.next), "next page", {{"id", "next-page"}, {"rel", "next"}});
  out.Close("div");
  return PageShell("Runs", out.Take());
}

}  // namespace telic::ui
