// The artifact schemas served to hosts, built and serialised once.
//
// Every NextAction carries one to three of these (~5 KB each); building and
// serialising them per call was the largest cost of a read (issue 18). Each
// is BundleForStockValidators of its artifact type, kept with its compact
// text and its pretty text per indentation depth, so a response writer can
// copy the bytes instead of walking the tree.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "base/canonical_json.h"
#include "base/status.h"

namespace telic::schema {

class HostSchema {
 public:
  explicit HostSchema(Json json);
  const Json& json() const { return json_; }
  // Exactly json().dump(-1, ' ', false, replace).
  const std::string& compact() const { return compact_; }
  // Exactly what json().dump(2) would write for this value `depth` levels
  // deep inside a pretty (2-space) document: nested lines indented by
  // 2 * depth more spaces. Cached per depth; thread-safe.
  std::string_view pretty(int depth) const;
  // pretty(depth) as the inside of a JSON string literal: what
  // WriteJsonString(pretty(depth)) writes between its quotes, for a writer
  // that puts the pretty text inside a string (a tool result's text
  // content). Cached per depth like pretty(); thread-safe.
  std::string_view pretty_escaped(int depth) const;

 private:
  Json json_;
  std::string compact_;
  static constexpr int kDepths = 8;
  mutable std::string pretty_[kDepths];
  mutable std::once_flag pretty_once_[kDepths];
  mutable std::string pretty_escaped_[kDepths];
  mutable std::once_flag pretty_escaped_once_[kDepths];
};

// The served schema of artifact `type` (e.g. "WorkPlan"); built on first use.
Result<const HostSchema*> ArtifactHostSchema(std::string_view type);

// A reference to a served schema, for a NextAction on its way to a response
// writer that copies the schema's precomputed text (mcp/result_writer.h):
// a JSON binary value of subtype kServedSchemaRefSubtype whose bytes are the
// artifact type. Parsed JSON never holds a binary value, so nothing a caller
// sends can pass for one. Anything that serialises or inspects the value
// other than that writer must call ExpandServedSchemaRefs first (nlohmann's
// dump() would write the binary value as an object of bytes).
inline constexpr std::uint8_t kServedSchemaRefSubtype = 0x5e;

// The reference to ArtifactHostSchema(type); fails as that does.
Result<Json> ServedSchemaRef(std::string_view type);
// The schema `value` refers to, or nullptr when it is not a reference.
const HostSchema* ReferencedServedSchema(const Json& value);
// Replaces every reference inside `value` (at any depth) by a copy of the
// schema it names.
void ExpandServedSchemaRefs(Json& value);

}  // namespace telic::schema
