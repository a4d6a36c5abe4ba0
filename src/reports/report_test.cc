// Report parsers: the UpwardReport block and the Execution/Review envelopes
// from raw text, and the structured JSON form.
#include "reports/report.h"

#include <gtest/gtest.h>

namespace telic::reports {
namespace {

std::string Upward(const std::string& status = "completed", const std::string& confidence = "0.85",
                   const std::string& extra = "") {
  return "I finished the change.\n\nupward-report:\n"
         "  status: " + status + "\n"
         "  confidence: " + confidence + "\n"
         "  blockers:\n"
         "    - src/a.cc:12 undefined symbol\n"
         "  escalation-required: false\n"
         "  evidence-anchors:\n"
         "    - src/a.cc:10\n"
         "    - test:ParserTest.Works\n"
         "  planned-actions-pending-approval: []\n" + extra;
}

std::string Execution(const std::string& status, const std::string& concerns = "CONCERNS: []\n",
                      const std::string& owner = "invoking agent") {
  return "STATUS: " + status + "\n"
         "TASK: add the report parser\n"
         "READ_PATHS:\n- src/reports/report.h\n"
         "CHANGED_PATHS:\n- src/reports/report.cc\n"
         "VERIFICATION:\n- command: ctest -R report\n  result: 12 passed\n"
         "EVIDENCE:\n- ctest output\n"
         "REVIEW_SCOPE:\n- src/reports/\n" +
         concerns + "NEXT_OWNER: " + owner + "\n";
}

std::string Review(const std::string& status, const std::string& findings = "FINDINGS: []\n",
                   const std::string& blockers = "BLOCKERS: []\n", const std::string& owner = "developer") {
  return "REVIEW_STATUS: " + status + "\n"
         "SCOPE_REVIEWED:\n- src/reports/\n"
         "EVIDENCE_REVIEWED:\n- ctest output\n" +
         findings + blockers + "NEXT_OWNER: " + owner + "\n";
}

std::string ErrorOf(const std::string& text) {
  auto r = ParseReportText(text);
  EXPECT_FALSE(r.has_value()) << text;
  return r ? "" : r.error().message();
}

// covers RPT-001, RPT-002, RPT-003, RPT-004, RPT-005, RPT-007, RPT-008, RPT-010
TEST(UpwardReportText, ParsesEveryField) {
  auto r = ParseReportText(Upward() + "  notes: a single line\n");
  ASSERT_TRUE(r) << r.error().message();
  const auto& u = std::get<UpwardReport>(*r);
  EXPECT_EQ(u.status, UpwardStatus::kCompleted);
  EXPECT_DOUBLE_EQ(u.confidence, 0.85);
  EXPECT_EQ(u.blockers, std::vector<std::string>{"src/a.cc:12 undefined symbol"});
  EXPECT_FALSE(u.escalation_required);
  EXPECT_EQ(u.evidence_anchors.size(), 2u);
  EXPECT_TRUE(u.planned_actions_pending_approval.empty());
  EXPECT_EQ(u.notes, "a single line");
}

// covers RPT-002
TEST(UpwardReportText, EveryStatusAndUnknownStatus) {
  for (const char* s : {"completed", "failed", "blocked", "denied-by-authority"}) {
    auto r = ParseReportText(Upward(s));
    ASSERT_TRUE(r) << s << ": " << r.error().message();
    EXPECT_EQ(UpwardStatusName(std::get<UpwardReport>(*r).status), s);
  }
  EXPECT_NE(ErrorOf(Upward("done")).find("unknown upward-report status 'done'"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward("Completed")).find("unknown upward-report status"), std::string::npos);
}

// covers RPT-003
TEST(UpwardReportText, ConfidenceRange) {
  for (const char* ok : {"0", "0.0", "0.7", "1", "1.0", "0.999"}) EXPECT_TRUE(ParseReportText(Upward("completed", ok))) << ok;
  EXPECT_NE(ErrorOf(Upward("completed", "1.01")).find("outside 0.0-1.0"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward("completed", "7")).find("outside 0.0-1.0"), std::string::npos);
  for (const char* bad : {"-0.1", "85%", "high", ".5", "0.5.1", "1e-1", "NaN"}) {
    EXPECT_NE(ErrorOf(Upward("completed", bad)).find("confidence"), std::string::npos) << bad;
  }
}

// covers RPT-005, RPT-006
TEST(UpwardReportText, EscalationReasonRules) {
  std::string text = Upward();
  std::string yes = text;
  yes.replace(yes.find("escalation-required: false"), 26, "escalation-required: true");
  EXPECT_NE(ErrorOf(yes).find("escalation-reason is missing"), std::string::npos);
  auto r = ParseReportText(yes + "  escalation-reason: the API owner must decide\n");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(std::get<UpwardReport>(*r).escalation_reason, "the API owner must decide");
  EXPECT_NE(ErrorOf(text + "  escalation-reason: why\n").find("escalation-required is false"), std::string::npos);
  std::string maybe = text;
  maybe.replace(maybe.find("escalation-required: false"), 26, "escalation-required: maybe");
  EXPECT_NE(ErrorOf(maybe).find("must be true or false"), std::string::npos);
}

// covers RPT-005, RPT-006: issue 21 item 2's class of defect in a single-line
// field. "escalation-reason: none" says there is no reason: accepted when no
// escalation is required, and no reason at all when one is (D54).
TEST(UpwardReportText, EscalationReasonNoneMeansNoReason) {
  for (const char* marker : {"none", "None.", "n/a", "(none)"}) {
    auto r = ParseReportText(Upward() + "  escalation-reason: " + marker + "\n");
    ASSERT_TRUE(r) << marker << ": " << r.error().message();
    EXPECT_FALSE(std::get<UpwardReport>(*r).escalation_reason) << marker;
    std::string required = Upward();
    required.replace(required.find("escalation-required: false"), 26, "escalation-required: true");
    EXPECT_NE(ErrorOf(required + "  escalation-reason: " + marker + "\n").find("escalation-reason is missing"),
              std::string::npos)
        << marker;
  }
  EXPECT_NE(ErrorOf(Upward() + "  escalation-reason: none yet, but soon\n").find("escalation-required is false"),
            std::string::npos);
}

TEST(StructuredReports, EscalationReasonNoneMeansNoReason) {  // covers RPT-005, RPT-006
  Json u = ReportToJson(*ParseReportText(Upward()));
  u["escalationReason"] = "N/A";
  auto parsed = ReportFromJson(u);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_FALSE(std::get<UpwardReport>(*parsed).escalation_reason);
  EXPECT_FALSE(ReportToJson(*parsed).contains("escalationReason"));
  u["escalationRequired"] = true;
  EXPECT_NE(ReportFromJson(u).error().message().find("escalation-reason is missing"), std::string::npos);
}

// covers RPT-001, RPT-009, RPT-010
TEST(UpwardReportText, MalformedBlocksAreRejectedPrecisely) {
  EXPECT_NE(ErrorOf("All done, trust me.").find("no report found"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + "Thanks for reading!\n").find("content after the upward-report block"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + Upward()).find("found 2 reports"), std::string::npos);
  std::string missing = Upward();
  missing.erase(missing.find("  escalation-required: false\n"), 28);
  EXPECT_NE(ErrorOf(missing).find("missing the field 'escalation-required'"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + "  status: failed\n").find("duplicate field 'status'"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + "  mood: great\n").find("unknown field 'mood'"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + "  notes: one\n    two\n").find("unexpected continuation"), std::string::npos);
  std::string inline_list = Upward();
  inline_list.replace(inline_list.find("planned-actions-pending-approval: []"), 36,
                      "planned-actions-pending-approval: delete x");
  EXPECT_NE(ErrorOf(inline_list).find("must be a list"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + "  notes:\n    - item\n").find("list item outside a list field"), std::string::npos);
}

// covers RPT-001
TEST(UpwardReportText, FencedBlockAndTrailingBlankLinesAreTheLastContent) {
  auto fenced = ParseReportText("Summary.\n```yaml\n" + Upward().substr(Upward().find("upward-report:")) + "```\n\n");
  ASSERT_TRUE(fenced) << fenced.error().message();
  EXPECT_NE(ErrorOf(Upward() + "```\n").find("content after the report"), std::string::npos);
}

// covers RPT-032, RPT-039, RPT-040, RPT-041, RPT-042, RPT-043, RPT-044, RPT-045, RPT-046, RPT-047, RPT-048, RPT-064
TEST(ExecutionEnvelopeText, ParsesEveryField) {
  auto r = ParseReportText("Here is my report.\n\n" + Execution("DONE"));
  ASSERT_TRUE(r) << r.error().message();
  const auto& e = std::get<ExecutionEnvelope>(*r);
  EXPECT_EQ(e.status, ExecutionStatus::kDone);
  EXPECT_EQ(e.task, "add the report parser");
  EXPECT_EQ(e.read_paths, std::vector<std::string>{"src/reports/report.h"});
  EXPECT_EQ(e.changed_paths, std::vector<std::string>{"src/reports/report.cc"});
  ASSERT_EQ(e.verification.size(), 1u);
  EXPECT_EQ(e.verification[0].command, "ctest -R report");
  EXPECT_EQ(e.verification[0].result, "12 passed");
  EXPECT_EQ(e.evidence, std::vector<std::string>{"ctest output"});
  EXPECT_EQ(e.review_scope, std::vector<std::string>{"src/reports/"});
  EXPECT_TRUE(e.concerns.empty());
  EXPECT_EQ(e.next_owner, "invoking agent");
}

// covers RPT-040, RPT-056, RPT-057, RPT-035, RPT-061
TEST(ExecutionEnvelopeText, EveryStatus) {
  EXPECT_TRUE(ParseReportText(Execution("DONE")));
  EXPECT_TRUE(ParseReportText(Execution("DONE_WITH_CONCERNS", "CONCERNS:\n- slow on big input\n")));
  EXPECT_TRUE(ParseReportText(Execution("NEEDS_CONTEXT", "CONCERNS:\n- which schema version applies?\n")));
  EXPECT_TRUE(ParseReportText(Execution("BLOCKED", "CONCERNS:\n- the build server is down\n")));
  EXPECT_NE(ErrorOf(Execution("FINISHED")).find("unknown STATUS 'FINISHED'"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("DONE_WITH_CONCERNS")).find("requires at least one CONCERNS"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("NEEDS_CONTEXT")).find("missing context listed in CONCERNS"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("BLOCKED")).find("blocker listed in CONCERNS"), std::string::npos);
}

// covers RPT-056 (Open: DONE needs a VERIFICATION entry, D14)
TEST(ExecutionEnvelopeText, DoneWithoutVerificationIsRejected) {
  std::string text = Execution("DONE");
  const std::string entry = "VERIFICATION:\n- command: ctest -R report\n  result: 12 passed\n";
  text.replace(text.find(entry), entry.size(), "VERIFICATION: []\n");
  EXPECT_NE(ErrorOf(text).find("DONE requires at least one VERIFICATION"), std::string::npos);
}

// covers RPT-044, RPT-048, RPT-038
TEST(ExecutionEnvelopeText, MalformedFields) {
  EXPECT_NE(ErrorOf(Execution("DONE", "CONCERNS: []\n", "developer")).find("NEXT_OWNER 'developer'"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("DONE", "CONCERNS: []\n", "project-critic")).find("NEXT_OWNER"), std::string::npos);
  std::string no_result = Execution("DONE");
  no_result.erase(no_result.find("  result: 12 passed\n"), 20);
  EXPECT_NE(ErrorOf(no_result).find("has no 'result:' line"), std::string::npos);
  std::string missing = Execution("DONE");
  missing.erase(missing.find("REVIEW_SCOPE:\n- src/reports/\n"), 29);
  EXPECT_NE(ErrorOf(missing).find("missing the field 'REVIEW_SCOPE'"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("DONE") + "Let me know!\n").find("content after the Execution envelope"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("DONE") + "\n" + Execution("DONE")).find("found 2 reports"), std::string::npos);
  EXPECT_NE(ErrorOf(Execution("DONE") + "TASK: again\n").find("duplicate field 'TASK'"), std::string::npos);
}

// covers RPT-032
TEST(Envelopes, ExactlyOneEnvelopeOrReport) {
  EXPECT_NE(ErrorOf(Execution("DONE") + Review("PASS")).find("found 2 reports"), std::string::npos);
  EXPECT_NE(ErrorOf(Upward() + Execution("DONE")).find("found 2 reports"), std::string::npos);
}

// covers RPT-049, RPT-050, RPT-051, RPT-052, RPT-053, RPT-054, RPT-055, RPT-058, RPT-059, RPT-060, RPT-061
TEST(ReviewEnvelopeText, EveryStatus) {
  auto pass = ParseReportText(Review("PASS"));
  ASSERT_TRUE(pass) << pass.error().message();
  EXPECT_EQ(std::get<ReviewEnvelope>(*pass).scope_reviewed, std::vector<std::string>{"src/reports/"});
  auto work = ParseReportText(Review("NEEDS_WORK", "FINDINGS:\n- src/a.cc:42 - handle the empty list\n"));
  ASSERT_TRUE(work) << work.error().message();
  const auto& f = std::get<ReviewEnvelope>(*work).findings;
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].path, "src/a.cc");
  EXPECT_EQ(f[0].line, 42);
  EXPECT_EQ(f[0].fix, "handle the empty list");
  EXPECT_TRUE(ParseReportText(Review("NEEDS_CONTEXT", "FINDINGS: []\n", "BLOCKERS:\n- the spec for X\n")));
  EXPECT_TRUE(ParseReportText(Review("BLOCKED", "FINDINGS: []\n", "BLOCKERS:\n- cannot run tests\n", "coordinator")));
  EXPECT_TRUE(ParseReportText(Review("PASS", "FINDINGS: []\n", "BLOCKERS: []\n", "invoking agent")));
  EXPECT_NE(ErrorOf(Review("LGTM")).find("unknown REVIEW_STATUS 'LGTM'"), std::string::npos);
  EXPECT_NE(ErrorOf(Review("PASS", "FINDINGS:\n- src/a.cc:1 - fix\n")).find("PASS must carry no FINDINGS"), std::string::npos);
  EXPECT_NE(ErrorOf(Review("NEEDS_WORK")).find("requires at least one FINDINGS"), std::string::npos);
  EXPECT_NE(ErrorOf(Review("NEEDS_CONTEXT")).find("missing context listed in BLOCKERS"), std::string::npos);
  EXPECT_NE(ErrorOf(Review("BLOCKED")).find("requires at least one BLOCKERS"), std::string::npos);
  EXPECT_NE(ErrorOf(Review("PASS", "FINDINGS: []\n", "BLOCKERS: []\n", "me")).find("NEXT_OWNER 'me'"), std::string::npos);
}

// covers RPT-053, RPT-062
TEST(ReviewEnvelopeText, FindingsMustBeFileLineDashFix) {
  for (const char* bad : {"src/a.cc - fix it", "src/a.cc:x - fix", "src/a.cc:0 - fix", "src/a.cc:12 fix", "src/a.cc:12 - ",
                          ":12 - fix"}) {
    EXPECT_NE(ErrorOf(Review("NEEDS_WORK", std::string("FINDINGS:\n- ") + bad + "\n")).find("file:line - required fix"),
              std::string::npos)
        << bad;
  }
  auto ok = ParseFinding("docs/API.md:7 - document the error");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->path, "docs/API.md");
}

// covers RPT-002, RPT-003, RPT-040, RPT-050
TEST(StructuredReports, RoundTripAndStrictness) {
  for (const std::string& text : {Upward(), Execution("DONE"), Review("NEEDS_WORK", "FINDINGS:\n- a.cc:3 - fix\n")}) {
    auto parsed = ParseReportText(text);
    ASSERT_TRUE(parsed) << parsed.error().message();
    Json json = ReportToJson(*parsed);
    auto again = ReportFromJson(json);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(ReportToJson(*again), json);
  }
  Json u = ReportToJson(*ParseReportText(Upward()));
  Json extra = u;
  extra["mood"] = "great";
  EXPECT_NE(ReportFromJson(extra).error().message().find("unknown key 'mood'"), std::string::npos);
  Json high = u;
  high["confidence"] = 1.5;
  EXPECT_NE(ReportFromJson(high).error().message().find("outside 0.0-1.0"), std::string::npos);
  Json text_conf = u;
  text_conf["confidence"] = "0.9";
  EXPECT_NE(ReportFromJson(text_conf).error().message().find("must be a number"), std::string::npos);
  Json status = u;
  status["status"] = "success";
  EXPECT_NE(ReportFromJson(status).error().message().find("unknown upward-report status"), std::string::npos);
  Json missing = u;
  missing.erase("blockers");
  EXPECT_NE(ReportFromJson(missing).error().message().find("missing 'blockers'"), std::string::npos);
  EXPECT_NE(ReportFromJson(Json{{"kind", "essay"}}).error().message().find("unknown report kind"), std::string::npos);
  EXPECT_FALSE(ReportFromJson(Json::array()));
}

}  // namespace
}  // namespace telic::reports
