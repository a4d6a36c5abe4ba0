// Tool results on the wire, written straight to text (issue 18, issue 22 item 5).
//
// The text content of a result puts its short fields first, in the order the
// reference server writes them (JSON.stringify of its objects): `ok`, then
// `error`/`code`/`issues` or `run`, `artifact`, `artifacts`, `events`,
// `hasMore`, `nextAction`, `manifest`; inside `run` and `nextAction` the
// reference's member order, so `requiredOutputType` precedes the schemas.
// Every other object (artifact bodies, schemas, events) keeps bytewise key
// order as before. `structuredContent` and the JSON-RPC envelope are byte-for-
// byte what nlohmann's dump() wrote before; hashes never cover any of this
// (they are computed over canonical JSON, src/base/canonical_json.h).
// The served artifact schemas inside a NextAction are copied from their
// precomputed text (schema/host_schemas.h) when they equal it or are a
// reference to it (schema::ServedSchemaRef, controller::ActionSchemas): the
// writers here are the only ones that accept such references.
#pragma once

#include <string>
#include <string_view>

#include "base/canonical_json.h"

namespace telic::mcp {

// A tool result's JSON text, members in wire order: compact, or pretty
// (2-space indent). The text content of every result is the compact one
// (issue 39: a host that passes the text block to its model pays no
// indentation).
std::string ToolResultText(const Json& payload, bool pretty);

// The JSON-RPC response line of a tools/call result: exactly
// ResultResponse(id, {content: [{type: "text", text}], structuredContent:
// payload, isError: true when is_error}).
std::string ToolResultLine(const Json& id, const Json& payload, std::string_view text, bool is_error);

// The same line in two parts: everything after the id, which depends only on
// the result (ToolResultBody), and the line for one request's id made from it
// (ToolResultLineFromBody), so that a result can be written once and sent to
// several requests. ToolResultLine(id, p, t, e) ==
// ToolResultLineFromBody(id, ToolResultBody(p, t, e)).
std::string ToolResultBody(const Json& payload, std::string_view text, bool is_error);
// ToolResultBody(payload, ToolResultText(payload, false), is_error).
std::string ToolResultBody(const Json& payload, bool is_error);
std::string ToolResultLineFromBody(const Json& id, std::string_view body);
// The bytes of the text content of `body` (a ToolResultBody): the length of
// its structuredContent, the last member, which is the same JSON written
// compactly in another member order.
size_t ToolResultTextBytes(std::string_view body);

}  // namespace telic::mcp
