// Self-contained schemas for hosts.
#pragma once

#include <string_view>

#include "base/status.h"
#include "schema/registry.h"

namespace telic::schema {

// The embedded schema at `path` with every cross-document $ref
// ("common.json#/$defs/X") rewritten to a local "#/$defs/X" and the referenced
// definitions (transitively) copied into its own $defs, so it can be used
// alone. Telic's extension keywords (x-maxUtf8Bytes, x-nonBlank) and formats
// are kept: this is the form telic's own validator compiles.
Result<Json> BundleForHost(const Registry& registry, std::string_view path);

// What hosts are served (NextAction output schemas, tools/list inputSchema,
// `telic schema`): BundleForHost rewritten into the standard JSON Schema
// 2020-12 vocabulary that a stock validator accepts with its defaults (Ajv2020
// strict mode, no format plugins) - see docs/DECISIONS.md D-P1:
//   x-maxUtf8Bytes N  -> dropped; "$comment" states the UTF-8 byte cap
//   x-nonBlank true   -> dropped; "$comment" states the rule
//   format date-time  -> "pattern" of the wire's date-time shape; "$comment"
//                        says the calendar date is checked by telic
//   format uuid       -> "pattern" of a UUID (8-4-4-4-12 hex digits)
// telic keeps enforcing every one of these on submission; the served schema
// is never stricter than telic and only looser where its $comment says so.
Result<Json> BundleForStockValidators(const Registry& registry, std::string_view path);

// The embedded schema at `path` as one self-contained document for hosts:
// every $ref into another embedded document (a whole document, or one of its
// "#/$defs/X") is replaced by a local "#/$defs/K" and the target copied into
// the root's $defs under K (X, or the document's file name without .json),
// recursively; the refs inside a copied document are resolved relative to that
// document. Then rewritten as BundleForStockValidators does. kInternal when two
// different targets would share one K or a ref points elsewhere than a whole
// document or a "#/$defs/X" (a build defect, caught by the unit tests).
Result<Json> BundleAllForStockValidators(const Registry& registry, std::string_view path);

// A tool's outputSchema as tools/list serves it: the results/ document
// bundled for stock validators, less its annotations (title, description,
// $comment), which no host shows a model, and its "$schema": the documents
// are JSON Schema 2020-12, MCP's default dialect (2025-11-25). Validation is
// unchanged.
Result<Json> BundleToolOutputForListing(const Registry& registry, std::string_view path);

// A tool's inputSchema as tools/list serves it: BundleForHost less what a
// model does not need to call the tool right and pays tokens for in every
// context (issue 39): the root's "$schema", every "pattern", every bound
// (minLength, maxLength, minItems, maxItems, minimum, maximum), every
// "additionalProperties": false and every empty default, and each
// definition that is then only a type is written where it is referred to.
// Telic still validates the arguments against the embedded schema (patterns
// and caps included) and names a violation by JSON pointer with its reason.
Result<Json> BundleToolInputForListing(const Registry& registry, std::string_view path);

// The rewrite of BundleForStockValidators applied to any schema (in place).
Status ToStockVocabulary(Json& schema);

}  // namespace telic::schema
