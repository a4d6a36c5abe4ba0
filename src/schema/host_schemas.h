// The artifact schemas served to hosts, built and serialised once.
//
// Every NextAction carries one to three of these (~5 KB each); building and
// serialising them per call was the largest cost of a read (issue 18). Each
// is BundleForStockValidators of its artifact type, kept with its compact
// text and its pretty text per indentation depth, so a response writer can
// copy the bytes instead of walking the tree.
#pragma once

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

 private:
  Json json_;
  std::string compact_;
  static constexpr int kDepths = 8;
  mutable std::string pretty_[kDepths];
  mutable std::once_flag pretty_once_[kDepths];
};

// The served schema of artifact `type` (e.g. "WorkPlan"); built on first use.
Result<const HostSchema*> ArtifactHostSchema(std::string_view type);

}  // namespace telic::schema
