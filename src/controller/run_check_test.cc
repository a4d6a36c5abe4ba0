// The Evidence a check leaves: always a valid Evidence body within the wire
// bounds, whatever the command printed.
#include "controller/run_check.h"

#include <gtest/gtest.h>

namespace telic::controller {
namespace {

observation::CheckRecord Record(std::string tail, int exit_code = 0) {
  observation::CheckRecord record;
  record.command = {"npm test", {"npm", "test"}};
  record.cwd = ".";
  record.outcome.exit_code = exit_code;
  record.outcome.duration_ms = 1234;
  record.outcome.output_bytes = tail.size();
  record.outcome.output_sha256 = std::string(64, 'a');
  record.outcome.output_tail = tail;
  record.redacted_tail = std::move(tail);
  return record;
}

CheckRunRequest NodeRequest() {
  CheckRunRequest request;
  request.run_id = "run-1";
  request.node_id = "micro-execute";
  return request;
}

TEST(CheckEvidenceTest, TheBodyIsValidEvidenceAndStatesWhatRan) {
  Json body = CheckEvidenceBody("run-1", "check-1", "2026-12-07T10:00:00.000Z", Record("42 passing\n"), NodeRequest());
  ASSERT_TRUE(ValidateArtifactBody("Evidence", body));
  EXPECT_EQ(body["kind"], "test");
  EXPECT_EQ(body["summary"], "telic ran `npm test` for node micro-execute: exit status 0 after 1234 ms (passed).");
  Json content = Json::parse(body["content"].get<std::string>());
  EXPECT_EQ(content["outputTail"], "42 passing\n");
  EXPECT_EQ(content["binding"]["nodeId"], "micro-execute");
  EXPECT_EQ(content["output"]["sha256"], "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(content["limits"]["wallTimeMs"], 120000);
}

TEST(CheckEvidenceTest, AnEscapeHeavyTailIsCutToTheEvidenceBound) {
  // 16 KiB of control bytes: each is six bytes once escaped in JSON.
  std::string tail(16384, '\x01');
  tail += "the end\n";
  Json body = CheckEvidenceBody("run-1", "check-1", "2026-12-07T10:00:00.000Z", Record(tail, 1), NodeRequest());
  auto valid = ValidateArtifactBody("Evidence", body);
  ASSERT_TRUE(valid) << valid.error().message();
  EXPECT_LE(body["content"].get<std::string>().size(), 32768u);
  Json content = Json::parse(body["content"].get<std::string>());
  std::string kept = content["outputTail"];
  EXPECT_LT(kept.size(), tail.size());
  EXPECT_TRUE(kept.ends_with("the end\n"));  // the end of the output is what is kept
  EXPECT_EQ(content["output"]["storedTailBytes"], kept.size());
  EXPECT_NE(body["summary"].get<std::string>().find("(failed)"), std::string::npos);
}

TEST(CheckEvidenceTest, ATailTheScannerStillFlagsIsWithheld) {
  std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n";
  Json body = CheckEvidenceBody("run-1", "check-1", "2026-12-07T10:00:00.000Z", Record(key), NodeRequest());
  Json content = Json::parse(body["content"].get<std::string>());
  EXPECT_EQ(content["outputTail"], "[withheld: the output tail holds a likely credential]");
}

}  // namespace
}  // namespace telic::controller
