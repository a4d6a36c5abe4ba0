// The artifact body schemas (schemas/artifacts/*.json + schemas/common.json)
// against golden bodies from the reference (packages/protocol/test,
// test/fixtures/protocol, docs/EXAMPLE_RUN.md) and invalid variants, all read
// from tests/fixtures/artifacts at test time:
//   valid/<Type>-<n>.json      complete bodies: no issues, unchanged by validation
//   invalid/<Type>-<what>.json {"body", "expect": [{"pointer", "code"}]}: exactly these issues
//   defaults/<Type>-<what>.json {"body", "defaults": [{"pointer", "value"}], "expected"}:
//                              valid; the Zod defaults are written into the body,
//                              which then equals `expected` (the reference's parse output)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/json_parse.h"
#include "schema/bundle.h"
#include "schema/registry.h"
#include "schema/validator.h"

namespace telic::schema {
namespace {

namespace fs = std::filesystem;

using Found = std::vector<std::pair<std::string, std::string>>;  // (pointer, code), sorted

// Every artifact type with a schema: the 16 protocol types and the two
// ledger-internal ones.
const std::vector<std::string>& ArtifactTypes() {
  static const std::vector<std::string> types = {
      "RunEnvelope",   "UserMessage",  "ContextDocument", "ContextManifest", "ClarificationRequest", "ProblemFrame",
      "ScenarioSpec",  "TaskContract", "PromptReview",    "WorkPlan",        "WorkResult",           "Evidence",
      "QualityReview", "ReleaseAudit", "ReceiptAudit",    "UserReport",      "TraceEvent",           "NextAction",
  };
  return types;
}

std::string SchemaPath(const std::string& type) { return "artifacts/" + type + ".json"; }

fs::path FixtureDir() {
  // src/schema/<this file> -> repository root.
  return fs::path(__FILE__).parent_path().parent_path().parent_path() / "tests" / "fixtures" / "artifacts";
}

Json ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseJsonStrict(text.str());
  EXPECT_TRUE(parsed.has_value()) << path << ": " << (parsed ? "" : parsed.error().message());
  return parsed ? std::move(*parsed) : Json();
}

struct Fixture {
  std::string type;  // the file name up to its first '-'
  std::string name;  // the file name without ".json"
  Json document;
};

// The fixtures of one folder, sorted by name.
std::vector<Fixture> Fixtures(std::string_view folder) {
  std::vector<Fixture> out;
  fs::path dir = FixtureDir() / folder;
  EXPECT_TRUE(fs::is_directory(dir)) << dir;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::string name = entry.path().stem().string();
    out.push_back({name.substr(0, name.find('-')), name, ReadJson(entry.path())});
  }
  std::sort(out.begin(), out.end(), [](const Fixture& a, const Fixture& b) { return a.name < b.name; });
  return out;
}

const Validator& ValidatorFor(const std::string& type) {
  auto validator = Registry::Default().Find(SchemaPath(type));
  if (!validator) ADD_FAILURE() << type << ": " << validator.error().message();
  static const Validator reject_all = *Validator::Compile(Json(false));
  return validator ? **validator : reject_all;
}

Found Where(const std::vector<Issue>& issues) {
  Found out;
  for (const Issue& issue : issues) out.emplace_back(issue.pointer, issue.code);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Describe(const std::vector<Issue>& issues) {
  std::string out;
  for (const Issue& issue : issues) out += "\n  " + issue.pointer + " " + issue.code + ": " + issue.message;
  return out;
}

bool IsKnownType(const std::string& type) {
  const auto& types = ArtifactTypes();
  return std::find(types.begin(), types.end(), type) != types.end();
}

// Calls `visit(schema, pointer)` for every subschema of `node`, skipping
// keyword values that are data (const, enum, default, examples).
void WalkSchemas(const Json& node, const std::string& pointer,
                 const std::function<void(const Json&, const std::string&)>& visit) {
  if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) WalkSchemas(node[i], pointer + "/" + std::to_string(i), visit);
    return;
  }
  if (!node.is_object()) return;
  visit(node, pointer);
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == "const" || it.key() == "enum" || it.key() == "default" || it.key() == "examples") continue;
    if (it.key() == "properties" || it.key() == "$defs") {
      for (auto member = it->begin(); member != it->end(); ++member) {
        WalkSchemas(*member, pointer + "/" + it.key() + "/" + EscapePointerToken(member.key()), visit);
      }
      continue;
    }
    WalkSchemas(*it, pointer + "/" + EscapePointerToken(it.key()), visit);
  }
}

// ----- the schema documents -----

TEST(ArtifactSchemaTest, EveryTypeHasACompiledSchemaWithItsHeader) {
  const Registry& registry = Registry::Default();  // aborts on a schema that fails to compile
  std::set<std::string> expected;
  for (const std::string& type : ArtifactTypes()) {
    expected.insert(SchemaPath(type));
    SCOPED_TRACE(type);
    ASSERT_TRUE(registry.Find(SchemaPath(type)).has_value());
    const Json* schema = registry.Document(SchemaPath(type));
    ASSERT_NE(schema, nullptr);
    EXPECT_EQ(schema->value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
    EXPECT_EQ(schema->value("$id", ""), SchemaPath(type));
    EXPECT_EQ(schema->value("title", ""), type);
    ASSERT_TRUE(schema->contains("description") && schema->at("description").is_string());
    EXPECT_FALSE(schema->at("description").get<std::string>().empty());
    EXPECT_EQ(schema->at("description").get<std::string>().find('\n'), std::string::npos);
    EXPECT_EQ(schema->value("type", ""), "object");
  }
  std::set<std::string> registered;
  for (const std::string& path : registry.Paths()) {
    if (path.rfind("artifacts/", 0) == 0) registered.insert(path);
  }
  EXPECT_EQ(registered, expected);
}

// covers TEL-009 (no object accepts an undeclared member such as a reasoning
// trace) and the strict-at-every-depth rule of PROTOCOL §13.1
TEST(ArtifactSchemaTest, EveryObjectIsStrictAndRequiresEveryField) {
  for (const std::string& type : ArtifactTypes()) {
    SCOPED_TRACE(type);
    auto bundle = BundleForHost(Registry::Default(), SchemaPath(type));
    ASSERT_TRUE(bundle.has_value()) << bundle.error().message();
    int objects = 0;
    WalkSchemas(*bundle, "", [&](const Json& schema, const std::string& pointer) {
      if (schema.contains("properties")) {
        ++objects;
        EXPECT_EQ(schema.value("type", ""), "object") << pointer;
        EXPECT_EQ(schema.value("additionalProperties", Json(true)), Json(false)) << pointer;
        // Every field is required; fields with a default are listed too.
        std::set<std::string> properties, required;
        for (auto it = schema.at("properties").begin(); it != schema.at("properties").end(); ++it) {
          properties.insert(it.key());
        }
        for (const Json& name : schema.value("required", Json::array())) required.insert(name.get<std::string>());
        EXPECT_EQ(required, properties) << pointer;
      } else if (schema.value("type", "") == "object") {
        // Without declared properties an object must be a union or a record
        // whose members have an explicit schema.
        EXPECT_TRUE(schema.contains("oneOf") || schema.contains("additionalProperties")) << pointer;
      }
    });
    EXPECT_GT(objects, 0);
  }
}

// ----- golden bodies -----

// covers TEL-082, TEL-089, TEL-095, TEL-105, TEL-123, TEL-137, TEL-147,
// TEL-163, TEL-173, TEL-183, TEL-188 (the field sets of ProblemFrame,
// ScenarioSpec, TaskContract, PromptReview, WorkPlan, WorkResult,
// QualityReview, ReleaseAudit, UserReport, TraceEvent and NextAction, together
// with EveryObjectIsStrictAndRequiresEveryField)
TEST(ArtifactSchemaTest, GoldenBodiesValidateUnchanged) {
  std::map<std::string, int> per_type;
  for (Fixture& fixture : Fixtures("valid")) {
    SCOPED_TRACE(fixture.name);
    ASSERT_TRUE(IsKnownType(fixture.type));
    ++per_type[fixture.type];
    Json body = fixture.document;
    std::vector<Issue> issues = ValidatorFor(fixture.type).Validate(body);
    EXPECT_TRUE(issues.empty()) << Describe(issues);
    EXPECT_EQ(body, fixture.document) << "a complete golden body gained members";
  }
  for (const std::string& type : ArtifactTypes()) EXPECT_GE(per_type[type], 1) << type;
}

// ----- invalid variants -----

// covers TEL-009 (*-reasoning-top, *-chain-of-thought, PromptReview-hidden-chain-of-thought:
// an extra reasoning field is rejected like any unknown member), TEL-252
// (*-schema-version-*: a missing or different schemaVersion is rejected),
// TEL-124 (WorkPlan-parallel: only serial plans)
TEST(ArtifactSchemaTest, InvalidBodiesReportExactlyTheExpectedIssues) {
  std::map<std::string, int> per_type;
  for (Fixture& fixture : Fixtures("invalid")) {
    SCOPED_TRACE(fixture.name);
    ASSERT_TRUE(IsKnownType(fixture.type));
    ASSERT_TRUE(fixture.document.contains("body") && fixture.document.contains("expect"));
    ++per_type[fixture.type];
    Found expected;
    for (const Json& issue : fixture.document.at("expect")) {
      expected.emplace_back(issue.at("pointer").get<std::string>(), issue.at("code").get<std::string>());
    }
    std::sort(expected.begin(), expected.end());
    ASSERT_FALSE(expected.empty());
    Json body = fixture.document.at("body");
    std::vector<Issue> issues = ValidatorFor(fixture.type).Validate(body);
    EXPECT_EQ(Where(issues), expected) << Describe(issues);
  }
  for (const std::string& type : ArtifactTypes()) EXPECT_GE(per_type[type], 3) << type;
}

// covers TEL-009: a reasoning field is rejected at the top level and nested,
// for every artifact type (NextAction is a union: its branches reject it)
TEST(ArtifactSchemaTest, ReasoningFieldsAreRejectedAtEveryLevel) {
  for (const Fixture& fixture : Fixtures("valid")) {
    if (!fixture.name.ends_with("-1")) continue;
    SCOPED_TRACE(fixture.name);
    Json body = fixture.document;
    body["chainOfThought"] = "step 1: ...";
    EXPECT_FALSE(ValidatorFor(fixture.type).Validate(body).empty());
  }
  // Nested: every object member of a golden body, one at a time.
  for (const Fixture& fixture : Fixtures("valid")) {
    SCOPED_TRACE(fixture.name);
    std::vector<Json::json_pointer> objects;
    std::function<void(const Json&, const Json::json_pointer&)> collect = [&](const Json& value,
                                                                               const Json::json_pointer& at) {
      if (value.is_object()) {
        objects.push_back(at);
        for (auto it = value.begin(); it != value.end(); ++it) collect(*it, at / it.key());
      } else if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i) collect(value[i], at / i);
      }
    };
    collect(fixture.document, Json::json_pointer());
    for (const Json::json_pointer& at : objects) {
      // Records of schemas carry arbitrary members by design.
      std::string text = at.to_string();
      if (text.find("/requiredOutputSchema") == 0 || text.find("/additionalOutputSchemas") == 0) continue;
      Json body = fixture.document;
      body[at]["reasoning"] = "hidden";
      std::vector<Issue> issues = ValidatorFor(fixture.type).Validate(body);
      EXPECT_FALSE(issues.empty()) << text;
    }
  }
}

// ----- defaults -----

TEST(ArtifactSchemaTest, DefaultsAreWrittenIntoTheBody) {
  int count = 0;
  for (Fixture& fixture : Fixtures("defaults")) {
    SCOPED_TRACE(fixture.name);
    ASSERT_TRUE(IsKnownType(fixture.type));
    ++count;
    Json body = fixture.document.at("body");
    for (const Json& entry : fixture.document.at("defaults")) {
      EXPECT_FALSE(body.contains(Json::json_pointer(entry.at("pointer").get<std::string>()))) << entry.dump();
    }
    std::vector<Issue> issues = ValidatorFor(fixture.type).Validate(body);
    EXPECT_TRUE(issues.empty()) << Describe(issues);
    for (const Json& entry : fixture.document.at("defaults")) {
      Json::json_pointer at(entry.at("pointer").get<std::string>());
      ASSERT_TRUE(body.contains(at)) << entry.dump();
      EXPECT_EQ(body.at(at), entry.at("value")) << entry.dump();
    }
    EXPECT_EQ(body, fixture.document.at("expected"));
  }
  EXPECT_GE(count, 4);
}

TEST(ArtifactSchemaTest, DefaultsNeverOverwriteGivenValues) {
  Json review = ReadJson(FixtureDir() / "valid" / "QualityReview-4.json");
  ASSERT_EQ(review.at("reviewKind"), "evidence_reverify");
  Json body = review;
  EXPECT_TRUE(ValidatorFor("QualityReview").Validate(body).empty());
  EXPECT_EQ(body, review);

  Json envelope = ReadJson(FixtureDir() / "valid" / "RunEnvelope-3.json");
  ASSERT_EQ(envelope.at("topology"), "micro");
  body = envelope;
  EXPECT_TRUE(ValidatorFor("RunEnvelope").Validate(body).empty());
  EXPECT_EQ(body.at("topology"), "micro");
}

// ----- bundles for hosts -----

TEST(ArtifactSchemaTest, BundlesAreSelfContainedAndValidateLikeTheEmbeddedSchemas) {
  std::map<std::string, Validator> bundled;
  for (const std::string& type : ArtifactTypes()) {
    SCOPED_TRACE(type);
    auto bundle = BundleForHost(Registry::Default(), SchemaPath(type));
    ASSERT_TRUE(bundle.has_value()) << bundle.error().message();
    EXPECT_EQ(bundle->dump().find("common.json"), std::string::npos);
    EXPECT_FALSE(bundle->contains("$id"));
    EXPECT_EQ(bundle->value("title", ""), type);
    auto validator = Validator::Compile(*bundle);  // no resolver: every $ref must be local
    ASSERT_TRUE(validator.has_value()) << validator.error().message();
    bundled.emplace(type, std::move(*validator));
  }
  for (Fixture& fixture : Fixtures("valid")) {
    SCOPED_TRACE(fixture.name);
    Json body = fixture.document;
    EXPECT_TRUE(bundled.at(fixture.type).Validate(body).empty());
  }
  for (Fixture& fixture : Fixtures("invalid")) {
    SCOPED_TRACE(fixture.name);
    Json a = fixture.document.at("body"), b = a;
    EXPECT_EQ(Where(bundled.at(fixture.type).Validate(a)), Where(ValidatorFor(fixture.type).Validate(b)));
  }
}

// ----- shared definitions -----

TEST(ArtifactSchemaTest, SharedDefinitionsHoldTheNamedParts) {
  const Json* common = Registry::Default().Document("common.json");
  ASSERT_NE(common, nullptr);
  for (const char* name :
       {"EvidenceClaim", "Finding", "GroundedFact", "GroundedInference", "Unknown", "AcceptanceCriterion",
        "VerificationRequirement", "Assumption", "ContractCoverage", "ReadinessScores", "HardGate", "WorkNode",
        "WorkAction", "FileChange", "TestResult", "AcceptanceCoverage", "ReviewCheck", "VerificationResult",
        "RemediationWorkOrder", "CorrectionWorkOrder", "DiagnosisGate", "ClaimEvidenceEntry", "ReleaseDefect",
        "NextUserAction", "ToolTrace", "PermissionDecision", "TaskContractField", "CorrectionField", "Text", "Summary",
        "Timestamp", "PermissionSet", "Scope", "Identifier", "ReferenceUri", "ArtifactUri", "TraceUri", "Sha256",
        "RelativePath"}) {
    EXPECT_TRUE(common->at("$defs").contains(name)) << name;
  }
  EXPECT_EQ(common->at("/$defs/TaskContractField/enum"_json_pointer).size(), 21u);
  EXPECT_EQ(common->at("/$defs/CorrectionField/enum"_json_pointer).size(), 8u);
  EXPECT_EQ(common->at("/$defs/Phase/enum"_json_pointer).size(), 22u);
  EXPECT_EQ(common->at("/$defs/Capability/enum"_json_pointer).size(), 12u);
}

// The RelativePath rule: no leading '/', no ".." segment (anywhere, even
// after a line break); backslashes and dotted names are fine.
TEST(ArtifactSchemaTest, RelativePathRule) {
  auto path_schema = Validator::Compile(Json::parse(R"({"$ref": "common.json#/$defs/RelativePath"})"),
                                        [](std::string_view document) -> const Json* {
                                          return document == "common.json" ? Registry::Default().Document("common.json")
                                                                           : nullptr;
                                        });
  ASSERT_TRUE(path_schema.has_value()) << path_schema.error().message();
  for (const char* ok : {"a", "src/a.ts", "..a/b", "a/..b", "a/b..", ".../x", "a\\..\\b", "./a", ".github/x.md", "a/."}) {
    Json value = ok;
    EXPECT_TRUE(path_schema->Validate(value).empty()) << ok;
  }
  for (const char* bad : {"/a", "..", "../a", "a/..", "a/../b", "a\n/../b", "//a"}) {
    Json value = bad;
    EXPECT_EQ(Where(path_schema->Validate(value)), (Found{{"", "invalid_format"}})) << bad;
  }
}

}  // namespace
}  // namespace telic::schema
