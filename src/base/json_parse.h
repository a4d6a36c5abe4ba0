// Strict JSON parsing for untrusted input.
#pragma once

#include <string_view>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic {

struct ParseLimits {
  size_t max_bytes = 8 * 1024 * 1024;
  size_t max_depth = 64;
};

// Parses one JSON document. Stricter than RFC 8259 allows: duplicate object
// keys, nesting deeper than `max_depth`, input longer than `max_bytes`,
// invalid UTF-8, lone surrogate escapes, a byte order mark, raw NUL bytes and
// trailing content are all rejected with ErrorCode::kInvalidArgument and a
// bounded message "invalid JSON at byte N: <reason>" (duplicate keys and depth
// also name the JSON pointer of the object).
Result<Json> ParseJsonStrict(std::string_view text, const ParseLimits& limits = {});

}  // namespace telic
