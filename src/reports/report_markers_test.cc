// Explicit empty-list markers (D54): "- none", "- N/A.", "(none)", "no
// blockers", ... as the only items of a list field mean an empty list, in
// every list field of every report format, text and JSON alike; a marker
// mixed with real items is rejected; an item that merely contains the word
// stays an item.
#include <functional>

#include <gtest/gtest.h>

#include "reports/report.h"

namespace telic::reports {
namespace {

// One list field of one report format.
struct ListField {
  std::string kind;      // "upward_report" | "execution" | "review"
  std::string key;       // as written in the text form
  std::string json_key;  // the JSON form's key
  std::string phrase;    // the field's own "no ..." phrase
  std::string real;      // a valid real item (VERIFICATION: command plus result line)
};

const std::vector<ListField>& AllListFields() {
  static const std::vector<ListField> fields = {
      {"upward_report", "blockers", "blockers", "no blockers", "src/a.cc:3 type error"},
      {"upward_report", "evidence-anchors", "evidenceAnchors", "no evidence anchors", "src/a.cc:10"},
      {"upward_report", "planned-actions-pending-approval", "plannedActionsPendingApproval", "no planned actions",
       "delete file src/old.cc"},
      {"execution", "READ_PATHS", "readPaths", "no read paths", "src/a.h"},
      {"execution", "CHANGED_PATHS", "changedPaths", "no changed paths", "src/a.cc"},
      {"execution", "VERIFICATION", "verification", "no verification", "command: ctest\n  result: 3 passed"},
      {"execution", "EVIDENCE", "evidence", "no evidence", "ctest output"},
      {"execution", "REVIEW_SCOPE", "reviewScope", "no review scope", "src/reports/"},
      {"execution", "CONCERNS", "concerns", "no concerns", "slow on big input"},
      {"review", "SCOPE_REVIEWED", "scopeReviewed", "no scope reviewed", "src/reports/"},
      {"review", "EVIDENCE_REVIEWED", "evidenceReviewed", "no evidence reviewed", "ctest output"},
      {"review", "FINDINGS", "findings", "no findings", "src/a.cc:42 - handle the empty list"},
      {"review", "BLOCKERS", "blockers", "no blockers", "cannot run the tests"},
  };
  return fields;
}

// "KEY:" with an optional inline value, then "- item" lines.
std::string ListText(const std::string& indent, const std::string& key, const std::string& inline_value,
                     const std::vector<std::string>& items) {
  std::string text = indent + key + ":" + (inline_value.empty() ? "" : " " + inline_value) + "\n";
  for (const auto& item : items) text += indent + (indent.empty() ? "" : "  ") + "- " + item + "\n";
  return text;
}

// A valid report of the field's format in which `field` is written as
// `body` (a ListText). `with_items` picks a status that accepts the field
// non-empty (and the other fields it then needs); otherwise one that
// accepts it empty.
std::string Build(const ListField& field, bool with_items, const std::string& body) {
  auto part = [&](const std::string& key, const std::string& text) { return field.key == key ? body : text; };
  if (field.kind == "upward_report") {
    return "Done.\n\nupward-report:\n  status: completed\n  confidence: 0.9\n" + part("blockers", "  blockers: []\n") +
           "  escalation-required: false\n" + part("evidence-anchors", "  evidence-anchors:\n    - src/a.cc:1\n") +
           part("planned-actions-pending-approval", "  planned-actions-pending-approval: []\n");
  }
  if (field.kind == "execution") {
    // DONE needs a VERIFICATION entry; DONE_WITH_CONCERNS needs CONCERNS.
    bool concerns_status = field.key == "VERIFICATION" || (field.key == "CONCERNS" && with_items);
    return std::string("STATUS: ") + (concerns_status ? "DONE_WITH_CONCERNS" : "DONE") + "\nTASK: add the parser\n" +
           part("READ_PATHS", "READ_PATHS:\n- src/a.h\n") + part("CHANGED_PATHS", "CHANGED_PATHS:\n- src/a.cc\n") +
           part("VERIFICATION", "VERIFICATION:\n- command: ctest\n  result: ok\n") +
           part("EVIDENCE", "EVIDENCE:\n- out\n") + part("REVIEW_SCOPE", "REVIEW_SCOPE:\n- src/\n") +
           part("CONCERNS", concerns_status ? "CONCERNS:\n- slow\n" : "CONCERNS: []\n") + "NEXT_OWNER: invoking agent\n";
  }
  std::string status = "PASS";
  if (with_items && field.key == "FINDINGS") status = "NEEDS_WORK";
  if (with_items && field.key == "BLOCKERS") status = "BLOCKED";
  return "REVIEW_STATUS: " + status + "\n" + part("SCOPE_REVIEWED", "SCOPE_REVIEWED:\n- src/\n") +
         part("EVIDENCE_REVIEWED", "EVIDENCE_REVIEWED:\n- out\n") + part("FINDINGS", "FINDINGS: []\n") +
         part("BLOCKERS", "BLOCKERS: []\n") + "NEXT_OWNER: developer\n";
}

std::string Indent(const ListField& field) { return field.kind == "upward_report" ? "  " : ""; }

Result<Json> ParsedField(const ListField& field, bool with_items, const std::string& inline_value,
                         const std::vector<std::string>& items) {
  TELIC_ASSIGN_OR_RETURN(Report report,
                         ParseReportText(Build(field, with_items, ListText(Indent(field), field.key, inline_value, items))));
  return ReportToJson(report)[field.json_key];
}

const std::vector<std::string>& ItemMarkers() {
  static const std::vector<std::string> markers = {"none",   "None",   "NONE",   "none.", "None.",  "(none)",
                                                   "(None.)", "(none).", "( none )", "n/a",  "N/A",   "N/A.",
                                                   "(n/a)",  "na",     "NA",     "nil",   "Nil.",   "nothing",
                                                   "Nothing."};
  return markers;
}

// covers RPT-004, RPT-007, RPT-008, RPT-042, RPT-043, RPT-044, RPT-045, RPT-046, RPT-047, RPT-051, RPT-052, RPT-053, RPT-054
TEST(ReportEmptyListMarkers, EveryMarkerEmptiesEveryListFieldOfEveryTextFormat) {
  for (const ListField& field : AllListFields()) {
    std::vector<std::string> markers = ItemMarkers();
    markers.push_back(field.phrase);
    markers.push_back("(" + field.phrase + ")");
    markers.push_back(field.phrase + ".");
    for (const std::string& marker : markers) {
      auto listed = ParsedField(field, false, "", {marker});
      ASSERT_TRUE(listed) << field.key << " '- " << marker << "': " << listed.error().message();
      EXPECT_EQ(*listed, Json::array()) << field.key << " '- " << marker << "'";
      auto inline_form = ParsedField(field, false, marker, {});
      ASSERT_TRUE(inline_form) << field.key << ": " << marker << ": " << inline_form.error().message();
      EXPECT_EQ(*inline_form, Json::array()) << field.key << ": " << marker;
    }
    auto two = ParsedField(field, false, "", {"none", "N/A"});
    ASSERT_TRUE(two) << field.key << ": " << two.error().message();
    EXPECT_EQ(*two, Json::array()) << field.key;
  }
}

// D54: a marker beside real items is ambiguous (no seed rule says which wins).
TEST(ReportEmptyListMarkers, MarkerMixedWithRealItemsIsRejectedInEveryTextField) {
  for (const ListField& field : AllListFields()) {
    for (const auto& [inline_value, items] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"", {"none", field.real}}, {"", {field.real, "N/A."}}, {"none", {field.real}}, {"", {"(none)", field.real}}}) {
      auto r = ParsedField(field, true, inline_value, items);
      ASSERT_FALSE(r) << field.key << " accepted a marker mixed with '" << field.real << "'";
      EXPECT_NE(r.error().message().find(field.key + " mixes the empty-list marker"), std::string::npos)
          << r.error().message();
      EXPECT_NE(r.error().message().find("line "), std::string::npos) << r.error().message();
    }
    // Without the marker the same real item is accepted: the error above is the mix.
    auto real = ParsedField(field, true, "", {field.real});
    ASSERT_TRUE(real) << field.key << ": " << real.error().message();
    EXPECT_EQ(real->size(), 1u) << field.key;
  }
}

// covers RPT-044, RPT-053
TEST(ReportEmptyListMarkers, NearMissesAreOrdinaryItems) {
  std::vector<std::string> near_misses = {"none of the tests fail", "none yet", "None found in src/a.cc", "n/a - see notes",
                                          "nothing to report",      "no",       "nones",  "(none",  "none)", "none..",
                                          "((none))",               "none!",    "not applicable", "no problems"};
  for (const ListField& field : AllListFields()) {
    std::vector<std::string> items = near_misses;
    // Another field's phrase is an item here.
    items.push_back(field.phrase == "no blockers" ? "no concerns" : "no blockers");
    for (const std::string& item : items) {
      auto r = ParsedField(field, true, "", {item});
      if (field.key == "FINDINGS") {
        ASSERT_FALSE(r) << item;
        EXPECT_NE(r.error().message().find("'" + item + "' is not of the form file:line - required fix"), std::string::npos)
            << r.error().message();
      } else if (field.key == "VERIFICATION") {
        ASSERT_FALSE(r) << item;
        EXPECT_NE(r.error().message().find("must start with '- command: ...'"), std::string::npos) << r.error().message();
      } else {
        ASSERT_TRUE(r) << field.key << " '" << item << "': " << r.error().message();
        EXPECT_EQ(*r, Json::array({item})) << field.key;
      }
    }
    // Inline, a near miss is still not a list.
    auto r = ParsedField(field, true, "none of the tests fail", {});
    ASSERT_FALSE(r) << field.key;
    EXPECT_NE(r.error().message().find("must be a list of '- item' lines"), std::string::npos) << r.error().message();
  }
}

// covers RPT-004, RPT-007, RPT-008, RPT-042, RPT-043, RPT-044, RPT-045, RPT-046, RPT-047, RPT-051, RPT-052, RPT-053, RPT-054
TEST(ReportEmptyListMarkers, JsonArraysOfMarkersAreEmptyListsToo) {
  for (const ListField& field : AllListFields()) {
    auto empty = ParseReportText(Build(field, false, ListText(Indent(field), field.key, "[]", {})));
    ASSERT_TRUE(empty) << field.key << ": " << empty.error().message();
    Json base = ReportToJson(*empty);
    for (const Json& markers : {Json::array({"none"}), Json::array({"N/A."}), Json::array({"(none)", "nil"}),
                                Json::array({field.phrase})}) {
      Json j = base;
      j[field.json_key] = markers;
      auto r = ReportFromJson(j);
      ASSERT_TRUE(r) << field.json_key << " " << markers.dump() << ": " << r.error().message();
      EXPECT_EQ(ReportToJson(*r), base) << field.json_key << " " << markers.dump();
    }
    // Mixed: take the report with a real item and add a marker to it.
    auto with_item = ParseReportText(
        Build(field, true, ListText(Indent(field), field.key, "", {field.real})));
    ASSERT_TRUE(with_item) << field.key << ": " << with_item.error().message();
    Json full = ReportToJson(*with_item);
    Json mixed = full;
    mixed[field.json_key].push_back("none");
    auto r = ReportFromJson(mixed);
    ASSERT_FALSE(r) << field.json_key;
    EXPECT_NE(r.error().message().find(field.json_key + " mixes the empty-list marker 'none'"), std::string::npos)
        << r.error().message();
    ASSERT_TRUE(ReportFromJson(full)) << field.json_key;
  }
  // A near miss in JSON stays an item.
  auto text = ParseReportText(Build(AllListFields()[8], true, "CONCERNS:\n- slow\n"));
  ASSERT_TRUE(text);
  Json j = ReportToJson(*text);
  j["concerns"] = Json::array({"none of the tests fail"});
  auto r = ReportFromJson(j);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(std::get<ExecutionEnvelope>(*r).concerns, std::vector<std::string>{"none of the tests fail"});
}

// The three inputs of issue 21 item 2, each rejected or misread before D54.

// covers RPT-054, RPT-058
TEST(ReportEmptyListMarkers, Issue21PassWithBlockersNoneIsAccepted) {
  auto r = ParseReportText(
      "REVIEW_STATUS: PASS\nSCOPE_REVIEWED:\n- src/reports/\nEVIDENCE_REVIEWED:\n- ctest output\nFINDINGS: []\n"
      "BLOCKERS:\n- none\nNEXT_OWNER: invoking agent\n");
  ASSERT_TRUE(r) << r.error().message();  // was "REVIEW_STATUS PASS must carry no BLOCKERS"
  EXPECT_TRUE(std::get<ReviewEnvelope>(*r).blockers.empty());
}

// covers RPT-053, RPT-058
TEST(ReportEmptyListMarkers, Issue21PassWithFindingsNoneIsAccepted) {
  auto r = ParseReportText(
      "REVIEW_STATUS: PASS\nSCOPE_REVIEWED:\n- src/reports/\nEVIDENCE_REVIEWED:\n- ctest output\nFINDINGS:\n- none\n"
      "BLOCKERS: []\nNEXT_OWNER: invoking agent\n");
  ASSERT_TRUE(r) << r.error().message();  // was "'none' is not of the form file:line - required fix"
  EXPECT_TRUE(std::get<ReviewEnvelope>(*r).findings.empty());
}

// covers RPT-047, RPT-057
TEST(ReportEmptyListMarkers, Issue21ExecutionConcernsNoneIsNoConcern) {
  const std::string text =
      "STATUS: DONE\nTASK: add the parser\nREAD_PATHS:\n- src/a.h\nCHANGED_PATHS:\n- src/a.cc\nVERIFICATION:\n"
      "- command: ctest\n  result: ok\nEVIDENCE:\n- out\nREVIEW_SCOPE:\n- src/\nCONCERNS:\n- none\n"
      "NEXT_OWNER: invoking agent\n";
  auto r = ParseReportText(text);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(std::get<ExecutionEnvelope>(*r).concerns.empty());  // was one concern named "none"
  // And "- none" does not satisfy a status that needs a concern listed.
  std::string concerns = text;
  concerns.replace(concerns.find("STATUS: DONE"), 12, "STATUS: DONE_WITH_CONCERNS");
  auto rejected = ParseReportText(concerns);
  ASSERT_FALSE(rejected);
  EXPECT_NE(rejected.error().message().find("DONE_WITH_CONCERNS requires at least one CONCERNS item"), std::string::npos)
      << rejected.error().message();
}

// covers RPT-058
TEST(ReportEmptyListMarkers, PassWithARealFindingOrBlockerIsStillRejected) {
  const std::string head = "REVIEW_STATUS: PASS\nSCOPE_REVIEWED:\n- src/\nEVIDENCE_REVIEWED:\n- out\n";
  auto finding = ParseReportText(head + "FINDINGS:\n- src/a.cc:1 - fix it\nBLOCKERS:\n- none\nNEXT_OWNER: developer\n");
  ASSERT_FALSE(finding);
  EXPECT_NE(finding.error().message().find("PASS must carry no FINDINGS"), std::string::npos) << finding.error().message();
  auto blocker = ParseReportText(head + "FINDINGS:\n- None.\nBLOCKERS:\n- cannot run tests\nNEXT_OWNER: developer\n");
  ASSERT_FALSE(blocker);
  EXPECT_NE(blocker.error().message().find("PASS must carry no BLOCKERS"), std::string::npos) << blocker.error().message();
  auto near_miss = ParseReportText(head + "FINDINGS: []\nBLOCKERS:\n- none of the tests could run\nNEXT_OWNER: developer\n");
  ASSERT_FALSE(near_miss);
  EXPECT_NE(near_miss.error().message().find("PASS must carry no BLOCKERS"), std::string::npos)
      << near_miss.error().message();
  Json json = {{"kind", "review"},
               {"status", "PASS"},
               {"scopeReviewed", Json::array({"src/"})},
               {"evidenceReviewed", Json::array()},
               {"findings", Json::array({"a.cc:3 - fix"})},
               {"blockers", Json::array({"none"})},
               {"nextOwner", "developer"}};
  auto from_json = ReportFromJson(json);
  ASSERT_FALSE(from_json);
  EXPECT_NE(from_json.error().message().find("PASS must carry no FINDINGS"), std::string::npos)
      << from_json.error().message();
}

// D54: "[]" says empty, so items after it are as ambiguous as a marker's.
TEST(ReportEmptyListMarkers, BracketEmptyListFollowedByItemsIsRejected) {
  auto r = ParseReportText(
      "REVIEW_STATUS: BLOCKED\nSCOPE_REVIEWED:\n- src/\nEVIDENCE_REVIEWED: []\nFINDINGS: []\nBLOCKERS: []\n"
      "- cannot run tests\nNEXT_OWNER: developer\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("BLOCKERS is written as [] (an empty list) but has list items"), std::string::npos)
      << r.error().message();
}

// covers RPT-044, RPT-056
TEST(ReportEmptyListMarkers, VerificationMarkerHasNoResultLineAndDoneStillNeedsAnEntry) {
  const ListField& verification = AllListFields()[5];
  ASSERT_EQ(verification.key, "VERIFICATION");
  auto result_under_marker = ParsedField(verification, false, "", {"none\n  result: ok"});
  ASSERT_FALSE(result_under_marker);
  EXPECT_NE(result_under_marker.error().message().find("unexpected continuation"), std::string::npos)
      << result_under_marker.error().message();
  std::string done = Build(verification, false, "VERIFICATION:\n- none\n");
  done.replace(done.find("STATUS: DONE_WITH_CONCERNS"), 26, "STATUS: DONE");
  auto r = ParseReportText(done);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("DONE requires at least one VERIFICATION entry"), std::string::npos)
      << r.error().message();
}

TEST(ReportEmptyListMarkers, IsEmptyListMarkerMatchesTheFieldInEveryNamingForm) {
  for (const char* field : {"READ_PATHS", "readPaths", "read-paths"}) EXPECT_TRUE(IsEmptyListMarker(field, "No read paths."));
  EXPECT_TRUE(IsEmptyListMarker("planned-actions-pending-approval", "(no planned actions)"));
  EXPECT_TRUE(IsEmptyListMarker("plannedActionsPendingApproval", "no  pending   actions"));
  EXPECT_FALSE(IsEmptyListMarker("CONCERNS", "no findings"));
  EXPECT_FALSE(IsEmptyListMarker("CONCERNS", ""));
  EXPECT_FALSE(IsEmptyListMarker("CONCERNS", "()"));
  EXPECT_FALSE(IsEmptyListMarker("CONCERNS", "."));
  EXPECT_FALSE(IsEmptyListMarker("CONCERNS", "-"));
}

}  // namespace
}  // namespace telic::reports
