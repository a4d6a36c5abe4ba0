// Compiles a JSON Schema into nodes (schema/compiled_node.h): each keyword
// decoded once by its handler, $refs resolved (local pointers, or other
// documents through the resolver) and memoised, $ref cycles that consume no
// input rejected. Unknown keywords and malformed values are errors naming
// the schema pointer (schema/validator.h lists the keywords).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "schema/compiled_node.h"
#include "schema/validator.h"

namespace telic::schema::internal {

// The compiled form of `schema` (copied into it), or the first compile error.
[[nodiscard]] Result<std::shared_ptr<CompiledSchema>> CompileSchema(const Json& schema, SchemaResolver resolver);

// RFC 6901: unescapes "~0" and "~1" in one reference token.
std::string UnescapePointerToken(std::string_view token);

}  // namespace telic::schema::internal
