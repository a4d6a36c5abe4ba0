#include "cli/validate_command.h"

#include "base/canonical_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace telic::cli {
namespace {

std::string Fixture(const std::string& name) {
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "tests" / "fixtures" / "artifacts" / name).string();
}

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome Validate(const std::string& path, const std::string& type = "", bool json = false) {
  std::ostringstream out, err;
  int code = RunValidateCommand(path, type, json, out, err);
  return {code, out.str(), err.str()};
}

std::string Temp(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("telic-validate-" + std::to_string(std::hash<std::string>{}(text)) + ".json");
  std::ofstream(path) << text;
  return path.string();
}

// covers TEL-257: valid fixtures pass with exit 0.
TEST(ValidateCommandTest, ValidFixturePasses) {
  Outcome r = Validate(Fixture("valid/WorkPlan-1.json"), "WorkPlan");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "valid WorkPlan\n");
}

// covers TEL-018: every violation is listed with its pointer, not just the first.
TEST(ValidateCommandTest, InvalidBodyListsEveryViolation) {
  Outcome r = Validate(Temp(R"({"schemaVersion":"2.0","id":"x","runId":"r","extra":1})"), "Evidence", true);
  EXPECT_EQ(r.code, 1);
  Json result = Json::parse(r.out);
  EXPECT_FALSE(result["valid"].get<bool>());
  EXPECT_GT(result["issues"].size(), 2u) << r.out;
  bool has_extra = false;
  for (const Json& issue : result["issues"]) has_extra = has_extra || issue["code"] == "unrecognized_keys";
  EXPECT_TRUE(has_extra) << r.out;
}

TEST(ValidateCommandTest, StoredArtifactCarriesItsType) {
  Outcome r = Validate(Temp(R"({"type":"UserMessage","body":{"schemaVersion":"1.0","id":"m","runId":"r","content":"hi"}})"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST(ValidateCommandTest, UsageErrors) {
  EXPECT_EQ(Validate(Temp(R"({"id":"x"})")).code, 2);
  EXPECT_EQ(Validate(Temp(R"({"id":"x"})"), "NoSuchType").code, 2);
  EXPECT_EQ(Validate("/nonexistent/file.json", "Evidence").code, 1);
  EXPECT_EQ(Validate(Temp("{not json"), "Evidence").code, 1);
}

TEST(SchemaCommandTest, ListsAndPrints) {
  std::ostringstream out, err;
  EXPECT_EQ(RunSchemaCommand("", true, out, err), 0);
  EXPECT_NE(out.str().find("QualityReview\n"), std::string::npos);
  std::ostringstream schema;
  EXPECT_EQ(RunSchemaCommand("WorkPlan", false, schema, err), 0);
  Json parsed = Json::parse(schema.str());
  EXPECT_EQ(parsed["title"], "WorkPlan");
  EXPECT_FALSE(parsed["additionalProperties"].get<bool>());
  EXPECT_EQ(RunSchemaCommand("Nope", false, schema, err), 2);
}

}  // namespace
}  // namespace telic::cli

namespace telic::cli {
namespace {

// covers TEL-252 TEL-257: the seed's analyze_and_fix example as a complete run of canonical artifacts
// (tests/fixtures/runs/analyze_and_fix, recorded from `telic demo`) validates file by file.
TEST(ValidateCommandTest, RecordedAnalyzeAndFixRunValidates) {
  auto dir = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "tests" / "fixtures" / "runs" /
             "analyze_and_fix";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    Outcome r = Validate(entry.path().string());
    EXPECT_EQ(r.code, 0) << entry.path() << ": " << r.out << r.err;
    ++files;
  }
  EXPECT_EQ(files, 20);
}

}  // namespace
}  // namespace telic::cli
