// The compact shape of a served schema (issue 39): what the lean profile
// sends a model instead of the JSON Schema.
#include "schema/compact_shape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "schema/host_schemas.h"
#include "schema/registry.h"

namespace telic::schema {
namespace {

TEST(CompactShapeTest, WritesTypesEnumsRequiredMarkersAndLimits) {
  Json schema = Json::parse(R"({
    "description": "A note.",
    "type": "object", "additionalProperties": false,
    "required": ["id", "kind", "tags"],
    "properties": {
      "id": {"$ref": "#/$defs/Identifier"},
      "kind": {"enum": ["a", "b's"]},
      "tags": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string", "maxLength": 64}},
      "score": {"type": "integer", "minimum": 0, "maximum": 100, "default": 50},
      "ratio": {"type": ["number", "null"]},
      "extra": {"type": "object", "additionalProperties": {"type": "boolean"}},
      "open": {"type": "object"},
      "either": {"oneOf": [{"const": true}, {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}, "additionalProperties": false}]}
    },
    "$defs": {"Identifier": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[a-z]+$"}}
  })");
  EXPECT_EQ(CompactShape("Note", schema),
            "Note (A note.): {either?: true | {x: string}, extra?: {string: bool}, id: Identifier, kind: 'a'|'b\\'s', "
            "open?: {...}, ratio?: number | null, score?: int(0..100) = 50, tags: [string(..64)](1..8)}\n"
            "where\n  Identifier = string(1..128) /^[a-z]+$/");
}

TEST(CompactShapeTest, EveryArtifactTypeHasAShapeNamingItsRequiredMembers) {
  for (const char* type : {"ProblemFrame", "TaskContract", "PromptReview", "WorkPlan", "WorkResult", "QualityReview",
                           "Evidence", "ReleaseAudit", "UserReport", "ClarificationRequest", "ScenarioSpec"}) {
    SCOPED_TRACE(type);
    auto shape = ArtifactCompactShape(type);
    ASSERT_TRUE(shape.has_value());
    auto schema = ArtifactHostSchema(type);
    ASSERT_TRUE(schema.has_value());
    for (const Json& name : (*schema)->json()["required"]) {
      EXPECT_NE((*shape)->find(name.get<std::string>() + ": "), std::string::npos) << name;
    }
    EXPECT_LT((*shape)->size(), (*schema)->compact().size());  // smaller than the schema it stands for
    EXPECT_EQ(*ArtifactCompactShape(type), *shape);             // built once
  }
  EXPECT_FALSE(ArtifactCompactShape("NoSuchType").has_value());
}

// covers issue 39: the definitions shared by the shapes of two or more
// model-written types are in the glossary once; a shape beside it lists only
// its own, and says everything the self-contained one says.
TEST(CompactShapeTest, TheGlossaryHoldsTheSharedDefinitionsOnce) {
  const ShapeGlossary& glossary = ArtifactShapeGlossary();
  EXPECT_TRUE(glossary.names.contains("Identifier"));
  EXPECT_TRUE(glossary.names.contains("PermissionSet"));
  EXPECT_FALSE(glossary.names.contains("WorkAction"));  // WorkResult's alone
  size_t lines = 0;
  for (const std::string& name : glossary.names) {
    EXPECT_NE(glossary.text.find(name + " = "), std::string::npos) << name;
    ++lines;
  }
  EXPECT_EQ(static_cast<size_t>(std::count(glossary.text.begin(), glossary.text.end(), '\n')) + 1, lines);
  for (const std::string& type : ModelWrittenArtifactTypes()) {
    SCOPED_TRACE(type);
    const std::string& alone = **ArtifactCompactShape(type);
    const std::string& beside = **ArtifactCompactShape(type, ShapeDefinitions::kBeyondGlossary);
    EXPECT_EQ(alone.substr(0, alone.find('\n')), beside.substr(0, beside.find('\n')));  // the same type line
    for (const std::string& name : glossary.names) {
      EXPECT_EQ(beside.find("\n  " + name + " = "), std::string::npos) << name;  // not repeated
    }
    // every definition the shape uses is under its `where` or in the glossary
    std::string defined = glossary.text + "\n" + beside;
    for (size_t at = alone.find("\n  "); at != std::string::npos; at = alone.find("\n  ", at + 1)) {
      std::string name = alone.substr(at + 3, alone.find(" = ", at) - at - 3);
      EXPECT_NE(defined.find(name + " = "), std::string::npos) << name;
    }
  }
}

// The types the glossary is built over are the ones telic_submit_artifact takes.
TEST(CompactShapeTest, TheModelWrittenTypesAreTheSubmittableOnes) {
  const Json* tool = Registry::Default().Document("tools/telic_submit_artifact.json");
  ASSERT_NE(tool, nullptr);
  EXPECT_EQ(Json(ModelWrittenArtifactTypes()), tool->at("properties").at("artifact_type").at("enum"));
}

// A glossary is closed: what its definitions refer to is in it.
TEST(CompactShapeTest, TheGlossaryIsClosed) {
  const ShapeGlossary& glossary = ArtifactShapeGlossary();
  for (const std::string& line : {glossary.text}) {
    for (size_t start = 0; start < line.size();) {
      size_t end = line.find('\n', start);
      std::string definition = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
      std::string body = definition.substr(definition.find(" = ") + 3);
      for (size_t i = 0; i < body.size(); ++i) {  // every capitalised word outside quotes names a definition
        if (body[i] == '\'') {  // a constant
          i = body.find('\'', i + 1);
          continue;
        }
        if (body[i] == '/' && i > 0 && body[i - 1] == ' ') {  // a pattern: up to the '/' that ends it
          size_t end_of_pattern = body.find_first_of(",}", body.find('/', i + 1));
          i = (end_of_pattern == std::string::npos ? body.size() : end_of_pattern) - 1;
          continue;
        }
        if (!std::isupper(static_cast<unsigned char>(body[i])) || (i > 0 && std::isalnum(static_cast<unsigned char>(body[i - 1])))) continue;
        size_t j = i;
        while (j < body.size() && std::isalnum(static_cast<unsigned char>(body[j]))) ++j;
        EXPECT_TRUE(glossary.names.contains(body.substr(i, j - i))) << definition;
        i = j;
      }
      start = end == std::string::npos ? line.size() : end + 1;
    }
  }
}

// A long pattern with no literal start is told by the schema's own words.
TEST(CompactShapeTest, ALongPatternWithoutALiteralStartIsToldByItsNote) {
  Json schema = Json::parse(R"({"type": "object", "required": ["at"], "additionalProperties": false,
    "properties": {"at": {"$ref": "#/$defs/Timestamp"}},
    "$defs": {"Timestamp": {"$comment": "An RFC 3339 date-time.", "type": "string",
                            "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T[0-9:.]+Z$"}}})");
  EXPECT_EQ(CompactShape("T", schema), "T: {at: Timestamp}\nwhere\n  Timestamp = string (An RFC 3339 date-time.)");
}

}  // namespace
}  // namespace telic::schema
