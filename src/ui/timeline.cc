#include <algorithm>

#include <fmt/format.h>

#include "base/redact.h"
#include "base/text.h"

#include "base/json_parse.h"
#include "controller/phases.h"
#include "store/records.h"
#include "ui/html.h"
#include "ui/pages.h"

namespace telic::ui {
namespace {

constexpr int kTracePage = 1000;

// The artifact's parsed body, or nullopt when it cannot be read.
std::optional<Json> BodyOf(store::Store& store, const std::string& run_id, const std::string& uri) {
  auto ref = ParseArtifactUri(uri);
  if (!ref || ref->run_id != run_id) return std::nullopt;
  auto artifact = store.GetArtifact(run_id, ref->artifact_id);
  if (!artifact) return std::nullopt;
  auto body = ParseStoredJson(artifact->canonical_body);
  if (!body) return std::nullopt;
  return std::move(*body);
}

std::string StringField(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
  return object[key].get<std::string>();
}

void DecisionBox(const Json& decision, const std::string& run_id, Html& out) {
  std::string verdict = StringField(decision, "decision");
  out.Open("dl", {{"class", "decision-box"}});
  out.Element("dt", {}, "capability").Element("dd", {{"class", "capability"}}, StringField(decision, "capability"));
  out.Element("dt", {}, "target").Element("dd", {{"class", "target mono"}}, StringField(decision, "scope"));
  out.Element("dt", {}, "decision").Open("dd").Element("span", {{"class", "badge " + verdict}, {"data-decision", verdict}}, verdict).Close("dd");
  // The stored decision names the policies that decided (the run envelope,
  // the task contract, the plan node): those are its layers.
  std::string layer = StringField(decision, "decidingLayer");
  out.Element("dt", {}, "layer").Open("dd", {{"class", "layer"}});
  if (!layer.empty()) out.Text(layer).Raw(" ");
  if (decision.contains("policyRefs") && decision["policyRefs"].is_array()) {
    bool first = true;
    for (const Json& ref : decision["policyRefs"]) {
      if (!ref.is_string()) continue;
      if (!first) out.Raw(", ");
      out.TextWithLinks(ref.get<std::string>(), run_id);
      first = false;
    }
  }
  out.Close("dd");
  std::string rule = StringField(decision, "rule");
  if (rule.empty()) rule = StringField(decision, "rationaleSummary");
  out.Element("dt", {}, "rule").Element("dd", {{"class", "rule"}}, rule);
  out.Close("dl");
}

// The answer to the clarification at `request_uri`: the UserMessage citing it.
std::string AnswerTo(store::Store& store, const std::string& run_id, const std::vector<store::ArtifactMeta>& artifacts,
                     const std::string& request_uri) {
  for (const auto& meta : artifacts) {
    if (meta.type != domain::ArtifactType::kUserMessage) continue;
    if (std::find(meta.source_refs.begin(), meta.source_refs.end(), request_uri) == meta.source_refs.end()) continue;
    auto body = BodyOf(store, run_id, store::ArtifactUri(run_id, meta.id));
    if (body) return RedactedText(StringField(*body, "content"));
  }
  return "";
}

void ClarificationBox(store::Store& store, const std::string& run_id, const std::vector<store::ArtifactMeta>& artifacts,
                      const std::string& uri, Html& out) {
  auto stored = BodyOf(store, run_id, uri);
  if (!stored) return;
  const Json shown = store::RedactedJson(*stored);  // likely credentials masked, as the answer is
  const Json* body = &shown;
  std::string answer = AnswerTo(store, run_id, artifacts, uri);
  out.Open("div", {{"class", "clarification"}});
  out.Open("p").Element("strong", {}, "Question: ").Element("span", {{"class", "question"}}, StringField(*body, "question")).Close("p");
  out.Open("ol", {{"class", "choices"}});
  if (body->contains("responseChoices") && (*body)["responseChoices"].is_array()) {
    for (const Json& choice : (*body)["responseChoices"]) {
      std::string id = StringField(choice, "id");
      bool chosen = !answer.empty() && TrimJs(answer) == id;
      out.Open("li", {{"class", chosen ? "choice chosen" : "choice"}, {"data-choice", id}});
      out.Element("code", {}, id).Raw(" ").Text(StringField(choice, "label"));
      out.Element("span", {{"class", "muted"}}, " — " + StringField(choice, "consequence") + " (" + StringField(choice, "runEffect") + ")");
      out.Close("li");
    }
  }
  out.Close("ol");
  out.Open("p").Element("strong", {}, "Answer: ");
  if (answer.empty()) {
    out.Element("span", {{"class", "answer muted"}}, "not answered yet");
  } else {
    out.Element("span", {{"class", "answer"}}, answer);
  }
  out.Close("p").Close("div");
}

void RefList(const char* label, const std::vector<std::string>& refs, const std::string& run_id, Html& out) {
  if (refs.empty()) return;
  out.Open("div", {{"class", "refs muted"}}).Text(label).Raw(" ");
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i) out.Raw(", ");
    out.TextWithLinks(refs[i], run_id);
  }
  out.Close("div");
}

// One refused call as a timeline row.
void RefusedRow(const store::RefusedCall& call, TimelineClock& clock, Html& out) {
  out.Open("tr", {{"class", "attempt rejected"}, {"id", fmt::format("refused-{}", call.seq)}, {"data-event-type", "refused"}});
  out.Element("td", {{"class", "seq"}, {"title", "refused call " + std::to_string(call.seq) + " (not in the trace)"}},
              "\xE2\x9C\x98" + std::to_string(call.seq));
  auto at = ParseIsoMillis(call.at);
  out.Element("td", {{"class", "mono when"}, {"title", call.at}}, at && clock.start_ms ? FormatOffset(*at - *clock.start_ms) : call.at);
  out.Element("td", {{"class", "mono gap"}}, at && clock.previous_ms ? FormatDuration(*at - *clock.previous_ms) : "");
  if (at) clock.previous_ms = at;
  out.Element("td", {}, "host");
  out.Element("td", {{"class", "muted"}}, fmt::format("at v{}", call.run_version));
  out.Open("td").Element("code", {}, "refused").Raw(" ").Element("span", {{"class", "tool"}}, call.tool).Close("td");
  out.Open("td", {{"class", "wrap"}});
  out.Open("div", {{"class", "summary"}}).Element("span", {{"class", "badge deny code"}}, call.code).Raw(" ");
  out.Element("span", {{"class", "refusal"}}, call.error).Close("div");
  if (call.issues.is_array() && !call.issues.empty()) {
    out.Open("ul", {{"class", "issues"}});
    for (const Json& issue : call.issues) {
      std::string pointer = StringField(issue, "pointer");
      out.Open("li").Element("code", {{"class", "pointer"}}, pointer.empty() ? "/" : pointer).Raw(" ");
      out.Text(StringField(issue, "message")).Close("li");
    }
    out.Close("ul");
  }
  out.Close("td").Close("tr");
}

}  // namespace

Result<std::vector<store::RefusedCall>> ReadRefusedCalls(store::Store& store, const std::string& run_id, int64_t after) {
  std::vector<store::RefusedCall> calls;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(std::vector<store::RefusedCall> page, store.ListRefusedCalls(run_id, after, kTracePage));
    if (page.empty()) return calls;
    after = page.back().seq;
    for (auto& call : page) calls.push_back(std::move(call));
    if (page.size() < static_cast<size_t>(kTracePage)) return calls;
  }
}

Result<std::vector<store::TraceEventRecord>> ReadWholeTrace(store::Store& store, const std::string& run_id) {
  std::vector<store::TraceEventRecord> events;
  int64_t after = 0;
  while (true) {
    TELIC_ASSIGN_OR_RETURN(store::TracePage page, store.GetTrace(run_id, after, kTracePage));
    for (auto& event : page.events) {
      after = event.sequence;
      events.push_back(std::move(event));
    }
    if (!page.has_more) return events;
  }
}

std::string RequestText(store::Store& store, const store::RunRecord& run) {
  auto envelope = BodyOf(store, run.run_id, store::ArtifactUri(run.run_id, run.run_id));
  if (!envelope) return "";
  auto request = BodyOf(store, run.run_id, StringField(*envelope, "originalRequestRef"));
  return request ? RedactedText(StringField(*request, "content")) : "";
}

Result<std::string> TimelineRows(store::Store& store, const std::string& run_id,
                                 const std::vector<store::TraceEventRecord>& events,
                                 const std::vector<store::RefusedCall>& refused, TimelineClock clock) {
  std::vector<store::ArtifactMeta> artifacts;
  bool clarifications = std::any_of(events.begin(), events.end(), [](const auto& e) {
    return e.event_type == "clarification_requested";
  });
  if (clarifications) {
    TELIC_ASSIGN_OR_RETURN(artifacts, store.ListArtifacts(run_id));
  }
  Html out;
  size_t next_refused = 0;
  for (const auto& event : events) {
    // Refused calls before this event (ISO-8601 UTC text orders by time).
    while (next_refused < refused.size() && refused[next_refused].at < event.timestamp) {
      RefusedRow(refused[next_refused++], clock, out);
    }
    bool deny = event.permission_decision && event.permission_decision->is_object() &&
                StringField(*event.permission_decision, "decision") == "deny";
    bool clarify = event.event_type == "clarification_requested" || event.event_type == "clarification_answered";
    std::string cls = "event " + event.event_type + (deny ? " deny" : "") + (clarify ? " clarify" : "");
    out.Open("tr", {{"class", cls}, {"id", fmt::format("event-{}", event.sequence)}, {"data-event-type", event.event_type}});
    out.Element("td", {{"class", "seq"}}, std::to_string(event.sequence));
    auto at = ParseIsoMillis(event.timestamp);
    std::string when = at && clock.start_ms ? FormatOffset(*at - *clock.start_ms) : event.timestamp;
    out.Element("td", {{"class", "mono when"}, {"title", event.timestamp}}, when);
    std::string gap = at && clock.previous_ms ? FormatDuration(*at - *clock.previous_ms) : "";
    out.Element("td", {{"class", "mono gap"}}, gap);
    if (at) clock.previous_ms = at;
    out.Element("td", {}, event.actor);
    out.Open("td").Text(controller::ProtocolPhaseName(event.phase)).Close("td");
    out.Open("td").Element("code", {}, event.event_type).Close("td");
    out.Open("td", {{"class", "wrap"}});
    out.Element("div", {{"class", "summary"}}, event.summary);
    if (event.permission_decision && event.permission_decision->is_object()) DecisionBox(*event.permission_decision, run_id, out);
    if (event.event_type == "clarification_requested" && !event.output_refs.empty()) {
      ClarificationBox(store, run_id, artifacts, event.output_refs.front(), out);
    }
    RefList("in:", event.input_refs, run_id, out);
    RefList("out:", event.output_refs, run_id, out);
    if (event.redactions.is_array() && !event.redactions.empty()) {
      out.Element("div", {{"class", "muted"}}, fmt::format("{} value(s) redacted before storage", event.redactions.size()));
    }
    out.Close("td").Close("tr");
  }
  while (next_refused < refused.size()) RefusedRow(refused[next_refused++], clock, out);
  return out.Take();
}

}  // namespace telic::ui
