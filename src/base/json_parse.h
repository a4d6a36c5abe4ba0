// Bounded JSON parsing: every JSON document telic reads (tool arguments,
// bundles, configs, artifact bodies, stored rows, replies of other servers)
// goes through one of these functions, so no recursive walk over a parsed
// value (canonicalisation, comparison, destruction) ever sees nesting deeper
// than kMaxJsonDepth.
#pragma once

#include <string_view>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic {

using OrderedJson = nlohmann::ordered_json;

// The one nesting bound: no JSON document telic reads may open more than 128
// arrays or objects inside each other. A JSON-RPC line is one document, so a
// value that arrived inside one (an artifact body, a run's extra) is at most
// 125 deep and still parses when it is stored and read back on its own.
inline constexpr size_t kMaxJsonDepth = 128;
// The default size bound of one document (entry points with their own limit,
// such as bundles and JSON-RPC lines, pass it in ParseLimits).
inline constexpr size_t kMaxJsonBytes = size_t{8} * 1024 * 1024;
// The size bound of one value telic stored itself (a ledger column, a body).
inline constexpr size_t kMaxStoredJsonBytes = size_t{64} * 1024 * 1024;

struct ParseLimits {
  size_t max_bytes = kMaxJsonBytes;
  size_t max_depth = kMaxJsonDepth;
};

// Parses one JSON document. Stricter than RFC 8259 allows: duplicate object
// keys, nesting deeper than `max_depth`, input longer than `max_bytes`,
// invalid UTF-8, lone surrogate escapes, a byte order mark, raw NUL bytes and
// trailing content are all rejected with ErrorCode::kInvalidArgument and a
// bounded message "invalid JSON at byte N: <reason>" (duplicate keys and depth
// also name the JSON pointer of the object). The depth is checked while
// parsing, before the container is built: a deeper value never exists.
[[nodiscard]] Result<Json> ParseJsonStrict(std::string_view text, const ParseLimits& limits = {});

// Parses bytes telic stored itself (ledger columns, canonical bodies) with
// the same checks, depth bound and kMaxStoredJsonBytes; a failure is
// ErrorCode::kDataLoss (the bytes were valid when they were written).
[[nodiscard]] Result<Json> ParseStoredJson(std::string_view text);

// The same for a stored value whose readers have no error path (row decoders
// whose callers catch exceptions): throws std::runtime_error with the message.
Json StoredJsonOrThrow(std::string_view text);

// Scans `text` once, without building anything, and fails (kInvalidArgument,
// "invalid JSON at byte N: nesting exceeds depth D") at the first array or
// object opened deeper than `max_depth`. Brackets inside strings do not count,
// nor, with `comments`, inside // and /* */ comments. Malformed text is not
// reported here: it is left to the parser that runs next.
[[nodiscard]] Status CheckJsonDepth(std::string_view text, size_t max_depth = kMaxJsonDepth, bool comments = false);

// Parses key-order-preserving JSON (config files telic edits in place) within
// `limits`; `comments` also accepts // and /* */ comments. Duplicate keys are
// not rejected here (the caller's format decides). kInvalidArgument with the
// byte offset when the text is too large, too deep or not JSON.
[[nodiscard]] Result<OrderedJson> ParseOrderedJson(std::string_view text, const ParseLimits& limits = {},
                                                   bool comments = false);

}  // namespace telic
