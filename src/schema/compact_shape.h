// The compact, readable form of a served artifact schema (issue 39): what a
// model needs to write a valid artifact in a fraction of the schema's tokens.
//
// One line per type: `Name: <shape>`, then `where` and one line per
// definition the shape refers to. The notation:
//   {a: T, b?: T}     an object; `?` marks an optional member; an object
//                     admits no other member unless it ends in `, ...`
//   {string: T}       an object mapping any name to T
//   [T]               an array of T;  `(1..256)` after it: item count
//   string(1..128)    a string and its length (characters); a `/re/` after
//                     it is the pattern it must match, `starting x` the
//                     literal start of a longer one, `(words)` the schema's
//                     description or $comment for a longer one without
//   Counts of 256 items or more and lengths of 1024 or more are left out
//   (bounds against abuse; refused with pointer and reason all the same).
//   int(0..100), number(0..1), bool, null, 'text' (a constant), A | B, A & B
//   Name              a definition, listed after `where`
//   = default         the value taken when the member is left out
// Every rule the shape cannot say (for example that an id is unique) is
// still checked on submission, and a refusal names the JSON pointer and the
// reason; the full schema is the one `telic schema NAME` prints.
//
// The shape glossary: the definitions that the shapes of two or more of the
// artifact types a model writes share, identically, one `Name = <shape>` a
// line. A shape written beside the glossary lists under `where` only the
// definitions that are not in it, so a host that is given the glossary once
// reads each common definition once (the lean profile, docs/API.md).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::schema {

// The compact form of `schema` (a self-contained bundle: refs are
// "#/$defs/X"), named `name`. The definitions named in `omitted` are used by
// name but not listed (nor are those only they refer to).
std::string CompactShape(std::string_view name, const Json& schema, const std::set<std::string>& omitted = {});

// The artifact types a model writes: telic_submit_artifact's `artifact_type`.
const std::vector<std::string>& ModelWrittenArtifactTypes();

struct ShapeGlossary {
  std::set<std::string> names;  // the definitions it holds
  std::string text;             // one `Name = <shape>` a line, by name
};
// The glossary of the shapes of ModelWrittenArtifactTypes(), built once per
// process. It is closed: a definition in it refers only to definitions in it.
const ShapeGlossary& ArtifactShapeGlossary();

// Which definitions a shape lists under `where`.
enum class ShapeDefinitions {
  kAll,             // every one it uses: the shape reads alone
  kBeyondGlossary,  // those not in ArtifactShapeGlossary()
};
// The compact form of artifact `type`'s served schema, built once per
// process and form; fails as ArtifactHostSchema does.
Result<const std::string*> ArtifactCompactShape(std::string_view type,
                                                ShapeDefinitions definitions = ShapeDefinitions::kAll);

}  // namespace telic::schema
