#include "reports/report.h"

#include <array>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace telic::reports {
namespace {

constexpr size_t kMaxItems = 256;
constexpr size_t kMaxItemBytes = 4096;

std::unexpected<Error> Invalid(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

bool IsOneOf(std::string_view value, std::initializer_list<std::string_view> allowed) {
  for (auto a : allowed)
    if (value == a) return true;
  return false;
}

Status CheckItems(std::string_view field, const std::vector<std::string>& items) {
  if (items.size() > kMaxItems) return Invalid(fmt::format("{} has {} items; at most {} are allowed", field, items.size(), kMaxItems));
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (item.empty()) return Invalid(fmt::format("{} item {} is empty", field, i + 1));
    if (item.size() > kMaxItemBytes) return Invalid(fmt::format("{} item {} exceeds {} bytes", field, i + 1, kMaxItemBytes));
    if (item.find_first_of("\r\n") != std::string::npos) return Invalid(fmt::format("{} item {} spans several lines", field, i + 1));
  }
  return Ok();
}

Status CheckText(std::string_view field, const std::string& value) {
  if (value.size() > kMaxItemBytes) return Invalid(fmt::format("{} exceeds {} bytes", field, kMaxItemBytes));
  if (value.find_first_of("\r\n") != std::string::npos) return Invalid(fmt::format("{} must be one line", field));
  return Ok();
}

Status ValidateUpward(const UpwardReport& r) {
  if (!std::isfinite(r.confidence) || r.confidence < 0.0 || r.confidence > 1.0) {
    return Invalid(fmt::format("confidence {} is outside 0.0-1.0", r.confidence_text.empty() ? FormatJsNumber(r.confidence) : r.confidence_text));
  }
  TELIC_RETURN_IF_ERROR(CheckItems("blockers", r.blockers));
  TELIC_RETURN_IF_ERROR(CheckItems("evidence-anchors", r.evidence_anchors));
  TELIC_RETURN_IF_ERROR(CheckItems("planned-actions-pending-approval", r.planned_actions_pending_approval));
  bool has_reason = r.escalation_reason && !r.escalation_reason->empty();
  if (r.escalation_required && !has_reason) {
    return Invalid("escalation-required is true but escalation-reason is missing");
  }
  if (!r.escalation_required && has_reason) {
    return Invalid("escalation-reason is given but escalation-required is false");
  }
  if (has_reason) TELIC_RETURN_IF_ERROR(CheckText("escalation-reason", *r.escalation_reason));
  if (r.notes) TELIC_RETURN_IF_ERROR(CheckText("notes", *r.notes));
  return Ok();
}

Status ValidateExecution(const ExecutionEnvelope& e) {
  if (e.task.empty()) return Invalid("TASK is empty");
  TELIC_RETURN_IF_ERROR(CheckText("TASK", e.task));
  TELIC_RETURN_IF_ERROR(CheckItems("READ_PATHS", e.read_paths));
  TELIC_RETURN_IF_ERROR(CheckItems("CHANGED_PATHS", e.changed_paths));
  TELIC_RETURN_IF_ERROR(CheckItems("EVIDENCE", e.evidence));
  TELIC_RETURN_IF_ERROR(CheckItems("REVIEW_SCOPE", e.review_scope));
  TELIC_RETURN_IF_ERROR(CheckItems("CONCERNS", e.concerns));
  if (e.verification.size() > kMaxItems) return Invalid("VERIFICATION has too many entries");
  for (size_t i = 0; i < e.verification.size(); ++i) {
    if (e.verification[i].command.empty()) return Invalid(fmt::format("VERIFICATION entry {} has no command", i + 1));
    if (e.verification[i].result.empty()) return Invalid(fmt::format("VERIFICATION entry {} has no result", i + 1));
    TELIC_RETURN_IF_ERROR(CheckText("VERIFICATION command", e.verification[i].command));
    TELIC_RETURN_IF_ERROR(CheckText("VERIFICATION result", e.verification[i].result));
  }
  if (!IsOneOf(e.next_owner, {"invoking agent", "coordinator"})) {
    return Invalid(fmt::format("NEXT_OWNER '{}' is not one of: invoking agent, coordinator", e.next_owner));
  }
  switch (e.status) {
    case ExecutionStatus::kDone:
      if (e.verification.empty()) return Invalid("STATUS DONE requires at least one VERIFICATION entry (command and result)");
      break;
    case ExecutionStatus::kDoneWithConcerns:
      if (e.concerns.empty()) return Invalid("STATUS DONE_WITH_CONCERNS requires at least one CONCERNS item");
      break;
    case ExecutionStatus::kNeedsContext:
      if (e.concerns.empty()) return Invalid("STATUS NEEDS_CONTEXT requires the missing context listed in CONCERNS");
      break;
    case ExecutionStatus::kBlocked:
      if (e.concerns.empty()) return Invalid("STATUS BLOCKED requires the blocker listed in CONCERNS");
      break;
  }
  return Ok();
}

Status ValidateReview(const ReviewEnvelope& e) {
  TELIC_RETURN_IF_ERROR(CheckItems("SCOPE_REVIEWED", e.scope_reviewed));
  TELIC_RETURN_IF_ERROR(CheckItems("EVIDENCE_REVIEWED", e.evidence_reviewed));
  TELIC_RETURN_IF_ERROR(CheckItems("BLOCKERS", e.blockers));
  if (e.findings.size() > kMaxItems) return Invalid("FINDINGS has too many entries");
  for (size_t i = 0; i < e.findings.size(); ++i) {
    TELIC_RETURN_IF_ERROR(CheckText("FINDINGS entry", e.findings[i].text));
    if (!ParseFinding(e.findings[i].text)) {
      return Invalid(fmt::format("FINDINGS entry {} '{}' is not of the form file:line - required fix", i + 1, e.findings[i].text));
    }
  }
  if (!IsOneOf(e.next_owner, {"invoking agent", "developer", "coordinator"})) {
    return Invalid(fmt::format("NEXT_OWNER '{}' is not one of: invoking agent, developer, coordinator", e.next_owner));
  }
  switch (e.status) {
    case ReviewStatus::kPass:
      if (!e.findings.empty()) return Invalid("REVIEW_STATUS PASS must carry no FINDINGS (a required fix means NEEDS_WORK)");
      if (!e.blockers.empty()) return Invalid("REVIEW_STATUS PASS must carry no BLOCKERS");
      break;
    case ReviewStatus::kNeedsWork:
      if (e.findings.empty()) return Invalid("REVIEW_STATUS NEEDS_WORK requires at least one FINDINGS entry to route");
      break;
    case ReviewStatus::kNeedsContext:
      if (e.blockers.empty()) return Invalid("REVIEW_STATUS NEEDS_CONTEXT requires the missing context listed in BLOCKERS");
      break;
    case ReviewStatus::kBlocked:
      if (e.blockers.empty()) return Invalid("REVIEW_STATUS BLOCKED requires at least one BLOCKERS item");
      break;
  }
  return Ok();
}

// ---- JSON ----

class JsonReader {
 public:
  explicit JsonReader(const Json& json) : json_(json) {}

  Status CheckKeys(std::initializer_list<std::string_view> allowed) {
    for (auto it = json_.begin(); it != json_.end(); ++it) {
      bool known = false;
      for (auto a : allowed) known = known || it.key() == a;
      if (!known) return Invalid(fmt::format("unknown key '{}' in {} report", it.key(), kind()));
    }
    return Ok();
  }
  Result<std::string> String(const char* key) {
    if (!json_.contains(key)) return Invalid(fmt::format("{} report is missing '{}'", kind(), key));
    if (!json_[key].is_string()) return Invalid(fmt::format("'{}' must be a string", key));
    return json_[key].get<std::string>();
  }
  Result<std::optional<std::string>> OptString(const char* key) {
    if (!json_.contains(key)) return std::optional<std::string>();
    if (!json_[key].is_string()) return Invalid(fmt::format("'{}' must be a string", key));
    return std::optional<std::string>(json_[key].get<std::string>());
  }
  Result<std::vector<std::string>> Strings(const char* key) {
    if (!json_.contains(key)) return Invalid(fmt::format("{} report is missing '{}'", kind(), key));
    const Json& v = json_[key];
    if (!v.is_array()) return Invalid(fmt::format("'{}' must be an array of strings", key));
    if (v.size() > kMaxItems) return Invalid(fmt::format("'{}' has more than {} items", key, kMaxItems));
    std::vector<std::string> out;
    for (const Json& item : v) {
      if (!item.is_string()) return Invalid(fmt::format("'{}' must be an array of strings", key));
      out.push_back(item.get<std::string>());
    }
    return ResolveEmptyListMarkers(key, std::move(out));
  }
  std::string kind() const { return json_.value("kind", std::string("a")); }
  const Json& json() const { return json_; }

 private:
  const Json& json_;
};

template <typename E>
Result<E> EnumFrom(std::string_view value, std::initializer_list<std::pair<std::string_view, E>> table,
                   std::string_view field) {
  std::string names;
  for (const auto& [name, e] : table) {
    if (value == name) return e;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  return Invalid(fmt::format("unknown {} '{}'; expected one of: {}", field, value, names));
}

// A field name in any report form, lower-cased without '-' and '_':
// "READ_PATHS", "readPaths" and "read-paths" all give "readpaths".
std::string FieldKey(std::string_view field) {
  std::string key;
  for (char c : field) {
    if (c == '-' || c == '_') continue;
    key += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return key;
}

// The "no ..." phrases each list field accepts as its empty-list marker,
// keyed by FieldKey. A phrase names the field's own content, so "no
// blockers" empties BLOCKERS but is an ordinary item anywhere else.
struct FieldPhrases {
  std::string_view field;
  std::array<std::string_view, 4> phrases;  // unused slots are empty
};

constexpr FieldPhrases kFieldPhrases[] = {
    {"blockers", {"no blockers"}},
    {"evidenceanchors", {"no evidence anchors", "no evidence"}},
    {"plannedactionspendingapproval", {"no planned actions", "no pending actions", "no actions",
                                       "no planned actions pending approval"}},
    {"readpaths", {"no read paths", "no paths"}},
    {"changedpaths", {"no changed paths", "no paths", "no changes"}},
    {"verification", {"no verification"}},
    {"evidence", {"no evidence"}},
    {"reviewscope", {"no review scope", "no scope"}},
    {"concerns", {"no concerns"}},
    {"scopereviewed", {"no scope reviewed", "no scope"}},
    {"evidencereviewed", {"no evidence reviewed", "no evidence"}},
    {"findings", {"no findings"}},
};

constexpr std::string_view kGenericMarkers[] = {"none", "n/a", "na", "nil", "nothing"};

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// The item as compared with the markers: blanks trimmed, one trailing
// period and one pair of surrounding parentheses removed ("(none)", "None.",
// "(none.)", "(none)."), ASCII lower case, inner blank runs as one space.
std::string MarkerForm(std::string_view item) {
  std::string_view s = TrimBlanks(item);
  bool period = s.ends_with('.');
  if (period) s = TrimBlanks(s.substr(0, s.size() - 1));
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
    s = TrimBlanks(s.substr(1, s.size() - 2));
    if (!period && s.ends_with('.')) s = TrimBlanks(s.substr(0, s.size() - 1));
  }
  std::string out;
  for (char c : s) {
    if (IsBlank(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace

bool IsEmptyListMarker(std::string_view field, std::string_view item) {
  std::string form = MarkerForm(item);
  if (form.empty()) return false;
  for (std::string_view marker : kGenericMarkers)
    if (form == marker) return true;
  std::string key = FieldKey(field);
  for (const FieldPhrases& entry : kFieldPhrases) {
    if (entry.field != key) continue;
    for (std::string_view phrase : entry.phrases)
      if (!phrase.empty() && form == phrase) return true;
  }
  return false;
}

Result<std::vector<std::string>> ResolveEmptyListMarkers(std::string_view field, std::vector<std::string> items) {
  std::optional<size_t> marker, real;
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<size_t>& slot = IsEmptyListMarker(field, items[i]) ? marker : real;
    if (!slot) slot = i;
  }
  if (!marker) return items;
  if (real) {
    return Invalid(fmt::format("{} mixes the empty-list marker '{}' (item {}) with a real item '{}' (item {}); list only "
                               "the items, or only the marker when the list is empty",
                               field, items[*marker].substr(0, 40), *marker + 1, items[*real].substr(0, 80), *real + 1));
  }
  return std::vector<std::string>{};
}

std::string_view UpwardStatusName(UpwardStatus s) {
  switch (s) {
    case UpwardStatus::kCompleted: return "completed";
    case UpwardStatus::kFailed: return "failed";
    case UpwardStatus::kBlocked: return "blocked";
    case UpwardStatus::kDeniedByAuthority: return "denied-by-authority";
  }
  return "";
}

std::string_view ExecutionStatusName(ExecutionStatus s) {
  switch (s) {
    case ExecutionStatus::kDone: return "DONE";
    case ExecutionStatus::kDoneWithConcerns: return "DONE_WITH_CONCERNS";
    case ExecutionStatus::kNeedsContext: return "NEEDS_CONTEXT";
    case ExecutionStatus::kBlocked: return "BLOCKED";
  }
  return "";
}

std::string_view ReviewStatusName(ReviewStatus s) {
  switch (s) {
    case ReviewStatus::kPass: return "PASS";
    case ReviewStatus::kNeedsWork: return "NEEDS_WORK";
    case ReviewStatus::kNeedsContext: return "NEEDS_CONTEXT";
    case ReviewStatus::kBlocked: return "BLOCKED";
  }
  return "";
}

Result<UpwardStatus> UpwardStatusFrom(std::string_view value) {
  return EnumFrom<UpwardStatus>(value,
                                {{"completed", UpwardStatus::kCompleted},
                                 {"failed", UpwardStatus::kFailed},
                                 {"blocked", UpwardStatus::kBlocked},
                                 {"denied-by-authority", UpwardStatus::kDeniedByAuthority}},
                                "upward-report status");
}

Result<ExecutionStatus> ExecutionStatusFrom(std::string_view value) {
  return EnumFrom<ExecutionStatus>(value,
                                   {{"DONE", ExecutionStatus::kDone},
                                    {"DONE_WITH_CONCERNS", ExecutionStatus::kDoneWithConcerns},
                                    {"NEEDS_CONTEXT", ExecutionStatus::kNeedsContext},
                                    {"BLOCKED", ExecutionStatus::kBlocked}},
                                   "STATUS");
}

Result<ReviewStatus> ReviewStatusFrom(std::string_view value) {
  return EnumFrom<ReviewStatus>(value,
                                {{"PASS", ReviewStatus::kPass},
                                 {"NEEDS_WORK", ReviewStatus::kNeedsWork},
                                 {"NEEDS_CONTEXT", ReviewStatus::kNeedsContext},
                                 {"BLOCKED", ReviewStatus::kBlocked}},
                                "REVIEW_STATUS");
}

std::string_view ReportKind(const Report& report) {
  switch (report.index()) {
    case 0: return "upward_report";
    case 1: return "execution";
    default: return "review";
  }
}

std::optional<Finding> ParseFinding(std::string_view text) {
  size_t sep = text.find(" - ");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view location = text.substr(0, sep);
  std::string_view fix = text.substr(sep + 3);
  while (!fix.empty() && fix.front() == ' ') fix.remove_prefix(1);
  size_t colon = location.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || fix.empty()) return std::nullopt;
  std::string_view path = location.substr(0, colon);
  std::string_view digits = location.substr(colon + 1);
  if (digits.empty() || digits.size() > 9 || path.find_first_of(" \t") == 0) return std::nullopt;
  int64_t line = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    line = line * 10 + (c - '0');
  }
  if (line < 1) return std::nullopt;
  return Finding{std::string(path), line, std::string(fix), std::string(text)};
}

Status ValidateReport(const Report& report) {
  if (auto* u = std::get_if<UpwardReport>(&report)) return ValidateUpward(*u);
  if (auto* e = std::get_if<ExecutionEnvelope>(&report)) return ValidateExecution(*e);
  return ValidateReview(std::get<ReviewEnvelope>(report));
}

namespace {

Result<UpwardReport> UpwardFromJson(const Json& json, JsonReader& r) {
  TELIC_RETURN_IF_ERROR(r.CheckKeys({"kind", "status", "confidence", "blockers", "escalationRequired", "escalationReason",
                                     "evidenceAnchors", "plannedActionsPendingApproval", "notes"}));
  UpwardReport u;
  TELIC_ASSIGN_OR_RETURN(std::string status, r.String("status"));
  TELIC_ASSIGN_OR_RETURN(u.status, UpwardStatusFrom(status));
  if (!json.contains("confidence")) return Invalid("upward_report report is missing 'confidence'");
  if (!json["confidence"].is_number()) return Invalid("'confidence' must be a number from 0.0 to 1.0");
  u.confidence = json["confidence"].get<double>();
  u.confidence_text = FormatJsNumber(u.confidence);
  TELIC_ASSIGN_OR_RETURN(u.blockers, r.Strings("blockers"));
  if (!json.contains("escalationRequired")) return Invalid("upward_report report is missing 'escalationRequired'");
  if (!json["escalationRequired"].is_boolean()) return Invalid("'escalationRequired' must be a boolean");
  u.escalation_required = json["escalationRequired"].get<bool>();
  TELIC_ASSIGN_OR_RETURN(u.escalation_reason, r.OptString("escalationReason"));
  // "none" states that there is no reason, as in the text form (D54).
  if (u.escalation_reason && IsEmptyListMarker("escalationReason", *u.escalation_reason)) u.escalation_reason.reset();
  TELIC_ASSIGN_OR_RETURN(u.evidence_anchors, r.Strings("evidenceAnchors"));
  TELIC_ASSIGN_OR_RETURN(u.planned_actions_pending_approval, r.Strings("plannedActionsPendingApproval"));
  TELIC_ASSIGN_OR_RETURN(u.notes, r.OptString("notes"));
  return u;
}

// The execution envelope's "verification": {command, result} entries, or
// one empty-list marker string. Each entry is checked for markers as the
// text form sees it: a marker string stays as written, a {command, result}
// entry becomes "command: ..." (never a marker).
Result<std::vector<VerificationEntry>> VerificationFromJson(const Json& json) {
  if (!json.contains("verification") || !json["verification"].is_array()) {
    return Invalid("'verification' must be an array of {command, result}");
  }
  if (json["verification"].size() > kMaxItems) return Invalid("'verification' has too many entries");
  std::vector<VerificationEntry> entries;
  std::vector<std::string> as_items;
  for (const Json& v : json["verification"]) {
    if (v.is_string() && IsEmptyListMarker("verification", v.get<std::string>())) {
      as_items.push_back(v.get<std::string>());
      continue;
    }
    if (!v.is_object() || v.size() != 2 || !v.contains("command") || !v.contains("result") ||
        !v["command"].is_string() || !v["result"].is_string()) {
      return Invalid("each 'verification' entry must be exactly {\"command\": string, \"result\": string}");
    }
    entries.push_back({v["command"].get<std::string>(), v["result"].get<std::string>()});
    as_items.push_back("command: " + entries.back().command);
  }
  TELIC_RETURN_IF_ERROR(ResolveEmptyListMarkers("verification", std::move(as_items)));
  return entries;
}

Result<ExecutionEnvelope> ExecutionFromJson(const Json& json, JsonReader& r) {
  TELIC_RETURN_IF_ERROR(r.CheckKeys({"kind", "status", "task", "readPaths", "changedPaths", "verification", "evidence",
                                     "reviewScope", "concerns", "nextOwner"}));
  ExecutionEnvelope e;
  TELIC_ASSIGN_OR_RETURN(std::string status, r.String("status"));
  TELIC_ASSIGN_OR_RETURN(e.status, ExecutionStatusFrom(status));
  TELIC_ASSIGN_OR_RETURN(e.task, r.String("task"));
  TELIC_ASSIGN_OR_RETURN(e.read_paths, r.Strings("readPaths"));
  TELIC_ASSIGN_OR_RETURN(e.changed_paths, r.Strings("changedPaths"));
  TELIC_ASSIGN_OR_RETURN(e.verification, VerificationFromJson(json));
  TELIC_ASSIGN_OR_RETURN(e.evidence, r.Strings("evidence"));
  TELIC_ASSIGN_OR_RETURN(e.review_scope, r.Strings("reviewScope"));
  TELIC_ASSIGN_OR_RETURN(e.concerns, r.Strings("concerns"));
  TELIC_ASSIGN_OR_RETURN(e.next_owner, r.String("nextOwner"));
  return e;
}

Result<ReviewEnvelope> ReviewFromJson(JsonReader& r) {
  TELIC_RETURN_IF_ERROR(
      r.CheckKeys({"kind", "status", "scopeReviewed", "evidenceReviewed", "findings", "blockers", "nextOwner"}));
  ReviewEnvelope e;
  TELIC_ASSIGN_OR_RETURN(std::string status, r.String("status"));
  TELIC_ASSIGN_OR_RETURN(e.status, ReviewStatusFrom(status));
  TELIC_ASSIGN_OR_RETURN(e.scope_reviewed, r.Strings("scopeReviewed"));
  TELIC_ASSIGN_OR_RETURN(e.evidence_reviewed, r.Strings("evidenceReviewed"));
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> findings, r.Strings("findings"));
  for (const std::string& text : findings) {
    auto finding = ParseFinding(text);
    if (!finding) {
      return Invalid(fmt::format("findings entry '{}' is not of the form file:line - required fix (no findings: [] "
                                 "or [\"none\"])",
                                 text));
    }
    e.findings.push_back(*finding);
  }
  TELIC_ASSIGN_OR_RETURN(e.blockers, r.Strings("blockers"));
  TELIC_ASSIGN_OR_RETURN(e.next_owner, r.String("nextOwner"));
  return e;
}

}  // namespace

Result<Report> ReportFromJson(const Json& json) {
  if (!json.is_object()) return Invalid("a structured report must be a JSON object");
  if (!json.contains("kind") || !json["kind"].is_string()) {
    return Invalid("a structured report needs \"kind\": \"upward_report\", \"execution\" or \"review\"");
  }
  const std::string kind = json["kind"].get<std::string>();
  JsonReader r(json);
  Report report;
  if (kind == "upward_report") {
    TELIC_ASSIGN_OR_RETURN(report, UpwardFromJson(json, r));
  } else if (kind == "execution") {
    TELIC_ASSIGN_OR_RETURN(report, ExecutionFromJson(json, r));
  } else if (kind == "review") {
    TELIC_ASSIGN_OR_RETURN(report, ReviewFromJson(r));
  } else {
    return Invalid(fmt::format("unknown report kind '{}'; expected upward_report, execution or review", kind));
  }
  TELIC_RETURN_IF_ERROR(ValidateReport(report));
  return report;
}

Json ReportToJson(const Report& report) {
  if (auto* u = std::get_if<UpwardReport>(&report)) {
    Json j = {{"kind", "upward_report"},
              {"status", UpwardStatusName(u->status)},
              {"confidence", u->confidence},
              {"blockers", u->blockers},
              {"escalationRequired", u->escalation_required},
              {"evidenceAnchors", u->evidence_anchors},
              {"plannedActionsPendingApproval", u->planned_actions_pending_approval}};
    if (u->escalation_reason && !u->escalation_reason->empty()) j["escalationReason"] = *u->escalation_reason;
    if (u->notes && !u->notes->empty()) j["notes"] = *u->notes;
    return j;
  }
  if (auto* e = std::get_if<ExecutionEnvelope>(&report)) {
    Json verification = Json::array();
    for (const auto& v : e->verification) verification.push_back({{"command", v.command}, {"result", v.result}});
    return {{"kind", "execution"},   {"status", ExecutionStatusName(e->status)},
            {"task", e->task},       {"readPaths", e->read_paths},
            {"changedPaths", e->changed_paths}, {"verification", verification},
            {"evidence", e->evidence}, {"reviewScope", e->review_scope},
            {"concerns", e->concerns}, {"nextOwner", e->next_owner}};
  }
  const auto& e = std::get<ReviewEnvelope>(report);
  Json findings = Json::array();
  for (const auto& f : e.findings) findings.push_back(f.text);
  return {{"kind", "review"},
          {"status", ReviewStatusName(e.status)},
          {"scopeReviewed", e.scope_reviewed},
          {"evidenceReviewed", e.evidence_reviewed},
          {"findings", findings},
          {"blockers", e.blockers},
          {"nextOwner", e.next_owner}};
}

}  // namespace telic::reports
