// Edits JSON-with-comments text (JSONC: // and /* */ comments, trailing
// commas) in place: every byte outside the span an edit inserts, replaces or
// removes stays as the user wrote it (docs/HOSTS.md, "JSONC files").
//
// A removal takes out exactly what the matching insertion put in, so
// InsertMember/AppendItem followed by RemoveMember/RemoveItem returns the
// original bytes (an empty container written `{}` / `[]`; `{ }` comes back
// as `{}`).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/install_hosts.h"

namespace telic::cli::jsonc {

struct Span {
  size_t begin = 0;
  size_t end = 0;  // one past the value's last byte
};

// The text with each comment blanked (spaces; line breaks kept) and each
// trailing comma blanked: same length, same offsets, parseable as JSON when
// the input is valid JSONC. An error for an unterminated string or comment.
Result<std::string> Mask(const std::string& text);

// Parses JSONC into a DOM (comments and trailing commas ignored).
Result<OrderedJson> Parse(const std::string& text);

// Whether the text is JSONC but not strict JSON (has comments or trailing commas).
bool IsJsoncOnly(const std::string& text);

// The span of the value at `keys` (objects all the way), if present.
Result<std::optional<Span>> Find(const std::string& text, const std::vector<std::string>& keys);

// Sets the value at `keys`: replaces the value span when the member exists,
// else inserts the member (and the objects missing above it) after the last
// member of the deepest existing object, indented like its siblings.
Result<std::string> SetValue(const std::string& text, const std::vector<std::string>& keys, const OrderedJson& value);

// Appends `item` to the array at `keys` (which must exist and be an array).
Result<std::string> AppendItem(const std::string& text, const std::vector<std::string>& keys, const OrderedJson& item);

// Replaces item `index` of the array at `keys`.
Result<std::string> ReplaceItem(const std::string& text, const std::vector<std::string>& keys, size_t index,
                                const OrderedJson& item);

// Removes the member at `keys` with its separating comma.
Result<std::string> RemoveMember(const std::string& text, const std::vector<std::string>& keys);

// Removes item `index` of the array at `keys` with its separating comma.
Result<std::string> RemoveItem(const std::string& text, const std::vector<std::string>& keys, size_t index);

}  // namespace telic::cli::jsonc
