// The compact shape of a served schema (issue 39): what the lean profile
// sends a model instead of the JSON Schema.
#include "schema/compact_shape.h"

#include <gtest/gtest.h>

#include "schema/host_schemas.h"

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

}  // namespace
}  // namespace telic::schema
