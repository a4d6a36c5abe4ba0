// Sub-agent return reports: the UpwardReport block and the Execution and
// Review envelopes, as typed values. A Report is only ever built by the
// parsers (text or JSON), which reject anything malformed, so a Report in
// hand always satisfies the rules of upward-report.md and
// subagent-return-protocol.md (RPT-002..010, RPT-040..055).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::reports {

// upward-report `status` (RPT-002).
enum class UpwardStatus { kCompleted, kFailed, kBlocked, kDeniedByAuthority };

struct UpwardReport {
  UpwardStatus status = UpwardStatus::kCompleted;
  double confidence = 0;                   // 0.0..1.0 inclusive (RPT-003)
  std::string confidence_text;             // as written, e.g. "0.70"
  std::vector<std::string> blockers;       // RPT-004
  bool escalation_required = false;        // RPT-005
  std::optional<std::string> escalation_reason;  // required when escalation_required (RPT-006)
  std::vector<std::string> evidence_anchors;      // RPT-007
  std::vector<std::string> planned_actions_pending_approval;  // RPT-008
  std::optional<std::string> notes;        // one line, optional (RPT-009)
};

// Execution envelope STATUS (RPT-040).
enum class ExecutionStatus { kDone, kDoneWithConcerns, kNeedsContext, kBlocked };

struct VerificationEntry {
  std::string command;
  std::string result;
};

struct ExecutionEnvelope {
  ExecutionStatus status = ExecutionStatus::kDone;
  std::string task;
  std::vector<std::string> read_paths;
  std::vector<std::string> changed_paths;
  std::vector<VerificationEntry> verification;
  std::vector<std::string> evidence;
  std::vector<std::string> review_scope;
  std::vector<std::string> concerns;
  std::string next_owner;  // "invoking agent" | "coordinator" (RPT-048)
};

// Review envelope REVIEW_STATUS (RPT-050).
enum class ReviewStatus { kPass, kNeedsWork, kNeedsContext, kBlocked };

// One FINDINGS entry, `file:line - required fix` (RPT-053).
struct Finding {
  std::string path;
  int64_t line = 0;
  std::string fix;
  std::string text;  // the entry as written
};

struct ReviewEnvelope {
  ReviewStatus status = ReviewStatus::kPass;
  std::vector<std::string> scope_reviewed;
  std::vector<std::string> evidence_reviewed;
  std::vector<Finding> findings;
  std::vector<std::string> blockers;
  std::string next_owner;  // "invoking agent" | "developer" | "coordinator" (RPT-055)
};

using Report = std::variant<UpwardReport, ExecutionEnvelope, ReviewEnvelope>;

std::string_view UpwardStatusName(UpwardStatus status);
std::string_view ExecutionStatusName(ExecutionStatus status);
std::string_view ReviewStatusName(ReviewStatus status);

// Exact-match status parsing; an unknown value is kInvalidArgument naming
// the accepted values (RPT-002, RPT-040, RPT-050).
Result<UpwardStatus> UpwardStatusFrom(std::string_view value);
Result<ExecutionStatus> ExecutionStatusFrom(std::string_view value);
Result<ReviewStatus> ReviewStatusFrom(std::string_view value);

// "upward_report" | "execution" | "review".
std::string_view ReportKind(const Report& report);

// Parses the raw text a sub-agent returned. The report must be the last
// content of the text (RPT-001), and there must be exactly one report: one
// upward-report block or one envelope (RPT-032). An empty list field is
// the bare key, `KEY: []`, or only empty-list markers, as items (`- none`)
// or inline (`KEY: none`). Errors are kInvalidArgument with a message
// naming the line and the rule broken.
Result<Report> ParseReportText(std::string_view text);

// The structured form: {"kind": "upward_report" | "execution" | "review",
// ...camelCase fields}. Unknown keys, wrong types and every rule the text
// parser checks are rejected the same way; a list of only empty-list
// markers (["none"]) is an empty list here too (ResolveEmptyListMarkers).
Result<Report> ReportFromJson(const Json& json);

// The structured form of a report (the inverse of ReportFromJson).
Json ReportToJson(const Report& report);

// Parses `file:line - required fix`; nullopt when the entry has another shape.
std::optional<Finding> ParseFinding(std::string_view text);

// Whether a list item is an explicit "this list is empty" marker (D54): the
// whole item, ignoring ASCII case, surrounding blanks, one trailing period
// and one pair of surrounding parentheses, is `none`, `n/a`, `na`, `nil`,
// `nothing` or the field's own "no ..." phrase ("no blockers" in BLOCKERS,
// "no findings" in FINDINGS, ...). `field` may be written in any of the
// report forms ("BLOCKERS", "evidence-anchors", "readPaths"). An item that
// merely contains such a word ("none of the tests fail") is not a marker.
bool IsEmptyListMarker(std::string_view field, std::string_view item);

// The one rule every list field of every report format (text and JSON)
// goes through: `items` unchanged when no item is a marker, an empty list
// when every item is one, and kInvalidArgument naming the field when
// markers and real items are mixed (ambiguous: empty or not?).
Result<std::vector<std::string>> ResolveEmptyListMarkers(std::string_view field, std::vector<std::string> items);

// Checks the cross-field rules shared by both parsers (statuses already
// known): escalation reason, per-status required lists, NEXT_OWNER values.
Status ValidateReport(const Report& report);

}  // namespace telic::reports
