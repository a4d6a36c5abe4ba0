// Self-contained schemas for hosts.
#pragma once

#include <string_view>

#include "base/status.h"
#include "schema/registry.h"

namespace telic::schema {

// The embedded schema at `path` with every cross-document $ref
// ("common.json#/$defs/X") rewritten to a local "#/$defs/X" and the referenced
// definitions (transitively) copied into its own $defs, so a host can use it
// alone. Telic's "x-" extension keywords are kept: JSON Schema validators
// of hosts ignore unknown keywords (telic's own validator enforces them).
Result<Json> BundleForHost(const Registry& registry, std::string_view path);

}  // namespace telic::schema
