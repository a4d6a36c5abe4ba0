// ParseReportText: the line grammar of the upward-report block and the two
// envelopes. Deliberately small and strict: every field once, known keys
// only, list items as "- text", empty lists as a bare key, "[]" or only
// empty-list markers ("- none", or "KEY: none" inline; ResolveEmptyListMarkers).
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "reports/report.h"

namespace telic::reports {
namespace {

constexpr size_t kMaxReportBytes = 1 << 20;

std::unexpected<Error> Invalid(std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); }

struct Line {
  size_t number;  // 1-based
  size_t indent;  // leading spaces/tabs
  std::string_view text;  // without indentation and trailing whitespace
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t start = 0, number = 1;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(start, end - start);
    while (!raw.empty() && (raw.back() == '\r' || raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
    size_t indent = 0;
    while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) ++indent;
    lines.push_back({number++, indent, raw.substr(indent)});
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsFence(std::string_view text) { return text.starts_with("```") || text.starts_with("~~~"); }

enum class HeaderKind { kNone, kUpward, kExecution, kReview };

HeaderKind HeaderOf(const Line& line) {
  if (line.text == "upward-report:") return HeaderKind::kUpward;
  if (line.text.starts_with("STATUS:")) return HeaderKind::kExecution;
  if (line.text.starts_with("REVIEW_STATUS:")) return HeaderKind::kReview;
  return HeaderKind::kNone;
}

// Splits "key: value" (or "key:"); nullopt when the line has no key shape.
std::optional<std::pair<std::string_view, std::string_view>> SplitField(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view key = text.substr(0, colon);
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return std::nullopt;
  }
  std::string_view value = text.substr(colon + 1);
  if (!value.empty() && value.front() != ' ' && value.front() != '\t') return std::nullopt;
  return std::make_pair(key, Trim(value));
}

// One parsed field: a scalar value or list items (each an item line).
struct Field {
  size_t line = 0;
  std::string value;
  bool has_items = false;
  bool bracket_empty = false;  // written "KEY: []"; no item may follow
  // Every item as written (an inline marker first). For VERIFICATION the
  // entries' "command: ..." lines and markers, so mixing them is caught.
  std::vector<std::string> items;
  std::vector<std::pair<std::string, std::string>> pairs;  // VERIFICATION entries
};

struct FieldSpec {
  std::string_view key;
  bool list = false;
  bool verification = false;
};

using Fields = std::map<std::string, Field, std::less<>>;

// Reads a block's lines one at a time into fields (see ParseFields). Each
// Add* step handles one kind of line and fails with the line number.
class FieldReader {
 public:
  FieldReader(const std::vector<FieldSpec>& specs, std::string_view what) : specs_(specs), what_(what) {}

  Status Add(const Line& line, size_t field_indent) {
    const bool is_item = line.text == "-" || line.text.starts_with("- ");
    if (is_item && line.indent >= field_indent) return AddItem(line);
    if (current_ && current_->verification && item_indent_ != std::string::npos && line.indent > item_indent_ &&
        !current_field_->pairs.empty()) {
      return AddVerificationResult(line);
    }
    if (line.indent != field_indent) {
      if (line.indent < field_indent) return ContentAfter(line);
      return Invalid(fmt::format("line {}: unexpected continuation line in the {}", line.number, what_));
    }
    return StartField(line);
  }

  // Every VERIFICATION command has its result line.
  Result<Fields> Finish() {
    for (const auto& [key, field] : fields_) {
      for (const auto& [command, result] : field.pairs) {
        if (result.empty()) return Invalid(fmt::format("VERIFICATION entry '{}' has no 'result:' line", command));
      }
    }
    return std::move(fields_);
  }

  std::unexpected<Error> ContentAfter(const Line& line) const {
    return Invalid(
        fmt::format("line {}: content after the {} (the report must be the last content)", line.number, what_));
  }

 private:
  Status AddItem(const Line& line) {
    if (!current_ || !current_->list) {
      return Invalid(fmt::format("line {}: list item outside a list field of the {}", line.number, what_));
    }
    if (!current_field_->value.empty()) {
      return Invalid(fmt::format("line {}: {} has an inline value and list items", line.number, current_->key));
    }
    if (current_field_->bracket_empty) {
      return Invalid(fmt::format("line {}: {} is written as [] (an empty list) but has list items", line.number,
                                 current_->key));
    }
    std::string_view item = Trim(line.text.substr(1));
    if (item.empty()) return Invalid(fmt::format("line {}: empty list item in {}", line.number, current_->key));
    current_field_->has_items = true;
    if (current_->verification && !IsEmptyListMarker(current_->key, item)) return AddVerificationCommand(line, item);
    if (current_->verification) item_indent_ = std::string::npos;  // a marker has no result line
    current_field_->items.emplace_back(item);
    return Ok();
  }

  Status AddVerificationCommand(const Line& line, std::string_view item) {
    auto kv = SplitField(item);
    if (!kv || kv->first != "command") {
      return Invalid(fmt::format("line {}: VERIFICATION entry must start with '- command: ...'", line.number));
    }
    if (kv->second.empty()) return Invalid(fmt::format("line {}: VERIFICATION entry has an empty command", line.number));
    current_field_->pairs.emplace_back(std::string(kv->second), "");
    current_field_->items.emplace_back(item);
    item_indent_ = line.indent;
    return Ok();
  }

  Status AddVerificationResult(const Line& line) {
    auto kv = SplitField(line.text);
    if (!kv || kv->first != "result") {
      return Invalid(fmt::format("line {}: expected 'result: ...' under a VERIFICATION command", line.number));
    }
    if (!current_field_->pairs.back().second.empty()) {
      return Invalid(fmt::format("line {}: VERIFICATION entry has two results", line.number));
    }
    if (kv->second.empty()) return Invalid(fmt::format("line {}: VERIFICATION entry has an empty result", line.number));
    current_field_->pairs.back().second = std::string(kv->second);
    return Ok();
  }

  Status StartField(const Line& line) {
    auto kv = SplitField(line.text);
    if (!kv) {
      return Invalid(fmt::format("line {}: content after the {} (the report must be the last content): '{}'",
                                 line.number, what_, std::string(line.text.substr(0, 80))));
    }
    const FieldSpec* spec = nullptr;
    for (const auto& s : specs_)
      if (s.key == kv->first) spec = &s;
    if (!spec) return Invalid(fmt::format("line {}: unknown field '{}' in the {}", line.number, kv->first, what_));
    if (fields_.contains(kv->first)) {
      return Invalid(fmt::format("line {}: duplicate field '{}' in the {}", line.number, kv->first, what_));
    }
    Field field;
    field.line = line.number;
    if (spec->list && kv->second == "[]") {
      field.has_items = true;
      field.bracket_empty = true;
    } else if (spec->list && IsEmptyListMarker(kv->first, kv->second)) {
      field.has_items = true;
      field.items.emplace_back(kv->second);
    } else if (spec->list && !kv->second.empty()) {
      return Invalid(fmt::format("line {}: {} must be a list of '- item' lines (or [] or none when empty)",
                                 line.number, kv->first));
    } else {
      field.value = std::string(kv->second);
    }
    current_ = spec;
    current_field_ = &fields_.emplace(std::string(kv->first), std::move(field)).first->second;
    item_indent_ = std::string::npos;
    return Ok();
  }

  const std::vector<FieldSpec>& specs_;
  std::string_view what_;
  Fields fields_;
  const FieldSpec* current_ = nullptr;
  Field* current_field_ = nullptr;
  size_t item_indent_ = std::string::npos;  // indent of the current VERIFICATION entry
};

// Parses the lines of a block into fields. Fields sit at `field_indent`
// (the first line's indent when 0 is passed as nullopt); list items are
// "- text" lines at an indent >= the field indent.
Result<Fields> ParseFields(const std::vector<Line>& lines, size_t begin, size_t end, std::optional<size_t> field_indent,
                           size_t min_indent, const std::vector<FieldSpec>& specs, std::string_view what) {
  FieldReader reader(specs, what);
  for (size_t i = begin; i < end; ++i) {
    const Line& line = lines[i];
    if (line.text.empty()) continue;
    if (line.indent < min_indent) return reader.ContentAfter(line);
    if (!field_indent) field_indent = line.indent;
    TELIC_RETURN_IF_ERROR(reader.Add(line, *field_indent));
  }
  return reader.Finish();
}

Result<std::string> Required(const std::map<std::string, Field, std::less<>>& fields, std::string_view key,
                             std::string_view what) {
  auto it = fields.find(key);
  if (it == fields.end()) return Invalid(fmt::format("the {} is missing the field '{}'", what, key));
  if (it->second.value.empty()) return Invalid(fmt::format("line {}: {} has no value", it->second.line, key));
  return it->second.value;
}

Result<std::vector<std::string>> RequiredList(const std::map<std::string, Field, std::less<>>& fields,
                                              std::string_view key, std::string_view what) {
  auto it = fields.find(key);
  if (it == fields.end()) return Invalid(fmt::format("the {} is missing the field '{}' (write '{}: []' when empty)", what, key, key));
  auto items = ResolveEmptyListMarkers(key, it->second.items);
  if (!items) return Invalid(fmt::format("line {}: {}", it->second.line, items.error().message()));
  return items;
}

Result<Report> ParseUpward(const std::vector<Line>& lines, size_t header, size_t end) {
  static const std::vector<FieldSpec> kSpecs = {
      {"status"}, {"confidence"}, {"blockers", true}, {"escalation-required"}, {"escalation-reason"},
      {"evidence-anchors", true}, {"planned-actions-pending-approval", true}, {"notes"}};
  constexpr std::string_view kWhat = "upward-report block";
  TELIC_ASSIGN_OR_RETURN(auto fields,
                         ParseFields(lines, header + 1, end, std::nullopt, lines[header].indent + 1, kSpecs, kWhat));
  UpwardReport r;
  TELIC_ASSIGN_OR_RETURN(std::string status, Required(fields, "status", kWhat));
  TELIC_ASSIGN_OR_RETURN(r.status, UpwardStatusFrom(status));
  TELIC_ASSIGN_OR_RETURN(r.confidence_text, Required(fields, "confidence", kWhat));
  {
    // A plain decimal: digits, optionally '.' and digits. No signs, exponents, percent.
    const std::string& t = r.confidence_text;
    size_t dot = t.find('.');
    bool ok = !t.empty() && t.size() <= 32 && t.front() != '.' && t.back() != '.' && t.find('.', dot + 1) == std::string::npos;
    for (char c : t) ok = ok && ((c >= '0' && c <= '9') || c == '.');
    if (!ok) return Invalid(fmt::format("confidence '{}' is not a number from 0.0 to 1.0", t));
    r.confidence = std::stod(t);
  }
  TELIC_ASSIGN_OR_RETURN(r.blockers, RequiredList(fields, "blockers", kWhat));
  TELIC_ASSIGN_OR_RETURN(std::string escalation, Required(fields, "escalation-required", kWhat));
  if (escalation != "true" && escalation != "false") {
    return Invalid(fmt::format("escalation-required '{}' must be true or false", escalation));
  }
  r.escalation_required = escalation == "true";
  // "escalation-reason: none" states that there is no reason (D54).
  if (auto it = fields.find("escalation-reason");
      it != fields.end() && !it->second.value.empty() && !IsEmptyListMarker("escalation-reason", it->second.value)) {
    r.escalation_reason = it->second.value;
  }
  TELIC_ASSIGN_OR_RETURN(r.evidence_anchors, RequiredList(fields, "evidence-anchors", kWhat));
  TELIC_ASSIGN_OR_RETURN(r.planned_actions_pending_approval,
                         RequiredList(fields, "planned-actions-pending-approval", kWhat));
  if (auto it = fields.find("notes"); it != fields.end() && !it->second.value.empty()) r.notes = it->second.value;
  Report report = std::move(r);
  TELIC_RETURN_IF_ERROR(ValidateReport(report));
  return report;
}

Result<Report> ParseExecution(const std::vector<Line>& lines, size_t header, size_t end) {
  static const std::vector<FieldSpec> kSpecs = {
      {"STATUS"},          {"TASK"}, {"READ_PATHS", true}, {"CHANGED_PATHS", true}, {"VERIFICATION", true, true},
      {"EVIDENCE", true}, {"REVIEW_SCOPE", true}, {"CONCERNS", true}, {"NEXT_OWNER"}};
  constexpr std::string_view kWhat = "Execution envelope";
  size_t indent = lines[header].indent;
  TELIC_ASSIGN_OR_RETURN(auto fields, ParseFields(lines, header, end, indent, indent, kSpecs, kWhat));
  ExecutionEnvelope e;
  TELIC_ASSIGN_OR_RETURN(std::string status, Required(fields, "STATUS", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.status, ExecutionStatusFrom(status));
  TELIC_ASSIGN_OR_RETURN(e.task, Required(fields, "TASK", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.read_paths, RequiredList(fields, "READ_PATHS", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.changed_paths, RequiredList(fields, "CHANGED_PATHS", kWhat));
  // Only markers: no entries; otherwise the command/result pairs.
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> verification, RequiredList(fields, "VERIFICATION", kWhat));
  if (!verification.empty()) {
    for (const auto& [command, result] : fields["VERIFICATION"].pairs) e.verification.push_back({command, result});
  }
  TELIC_ASSIGN_OR_RETURN(e.evidence, RequiredList(fields, "EVIDENCE", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.review_scope, RequiredList(fields, "REVIEW_SCOPE", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.concerns, RequiredList(fields, "CONCERNS", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.next_owner, Required(fields, "NEXT_OWNER", kWhat));
  Report report = std::move(e);
  TELIC_RETURN_IF_ERROR(ValidateReport(report));
  return report;
}

Result<Report> ParseReview(const std::vector<Line>& lines, size_t header, size_t end) {
  static const std::vector<FieldSpec> kSpecs = {{"REVIEW_STATUS"},   {"SCOPE_REVIEWED", true}, {"EVIDENCE_REVIEWED", true},
                                                {"FINDINGS", true}, {"BLOCKERS", true},       {"NEXT_OWNER"}};
  constexpr std::string_view kWhat = "Review envelope";
  size_t indent = lines[header].indent;
  TELIC_ASSIGN_OR_RETURN(auto fields, ParseFields(lines, header, end, indent, indent, kSpecs, kWhat));
  ReviewEnvelope e;
  TELIC_ASSIGN_OR_RETURN(std::string status, Required(fields, "REVIEW_STATUS", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.status, ReviewStatusFrom(status));
  TELIC_ASSIGN_OR_RETURN(e.scope_reviewed, RequiredList(fields, "SCOPE_REVIEWED", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.evidence_reviewed, RequiredList(fields, "EVIDENCE_REVIEWED", kWhat));
  TELIC_ASSIGN_OR_RETURN(std::vector<std::string> findings, RequiredList(fields, "FINDINGS", kWhat));
  size_t finding_line = fields["FINDINGS"].line;
  for (const std::string& text : findings) {
    auto finding = ParseFinding(text);
    if (!finding) {
      return Invalid(fmt::format("FINDINGS (line {}): '{}' is not of the form file:line - required fix (no findings: "
                                 "FINDINGS: [] or '- none')",
                                 finding_line, text.substr(0, 120)));
    }
    e.findings.push_back(*finding);
  }
  TELIC_ASSIGN_OR_RETURN(e.blockers, RequiredList(fields, "BLOCKERS", kWhat));
  TELIC_ASSIGN_OR_RETURN(e.next_owner, Required(fields, "NEXT_OWNER", kWhat));
  Report report = std::move(e);
  TELIC_RETURN_IF_ERROR(ValidateReport(report));
  return report;
}

}  // namespace

Result<Report> ParseReportText(std::string_view text) {
  if (text.size() > kMaxReportBytes) return Invalid(fmt::format("report text exceeds {} bytes", kMaxReportBytes));
  if (text.find('\0') != std::string_view::npos) return Invalid("report text contains a NUL byte");
  std::vector<Line> lines = SplitLines(text);
  std::vector<size_t> headers;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (HeaderOf(lines[i]) != HeaderKind::kNone) headers.push_back(i);
  }
  if (headers.empty()) {
    return Invalid("no report found: the response must end with an upward-report block or exactly one Execution "
                   "(STATUS:) or Review (REVIEW_STATUS:) envelope");
  }
  if (headers.size() > 1) {
    std::string where;
    for (size_t h : headers) where += (where.empty() ? "" : ", ") + std::to_string(lines[h].number);
    return Invalid(fmt::format("found {} reports (lines {}); return exactly one report as the final answer",
                               headers.size(), where));
  }
  size_t header = headers.front();
  // The end of the report: trailing blank lines, and one closing fence when
  // the report was opened by a fence right before its header.
  size_t end = lines.size();
  while (end > header + 1 && lines[end - 1].text.empty()) --end;
  if (end > header + 1 && IsFence(lines[end - 1].text) && lines[end - 1].text.size() == 3) {
    size_t before = header;
    while (before > 0 && lines[before - 1].text.empty()) --before;
    if (before > 0 && IsFence(lines[before - 1].text)) {
      --end;
    } else {
      return Invalid(fmt::format("line {}: content after the report (the report must be the last content)",
                                 lines[end - 1].number));
    }
  }
  switch (HeaderOf(lines[header])) {
    case HeaderKind::kUpward: return ParseUpward(lines, header, end);
    case HeaderKind::kExecution: return ParseExecution(lines, header, end);
    default: return ParseReview(lines, header, end);
  }
}

}  // namespace telic::reports
