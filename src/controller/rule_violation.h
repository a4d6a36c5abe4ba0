// The error of a violated cross-artifact rule (PROTOCOL §14, PROTOCOL §15).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace telic::controller {

// kInvalidArgument with one issue (code "rule_violation") naming the offending
// member by an RFC 6901 JSON pointer relative to the artifact body ("" for the
// body itself, and for a reference in the call's source_refs, which is
// outside the body).
inline std::unexpected<Error> RuleViolation(std::string pointer, std::string message) {
  Issue issue{std::move(pointer), "rule_violation", message};
  return Fail(ErrorCode::kInvalidArgument, std::move(message), {std::move(issue)});
}

// "/<key>/<index>" or "/<key>/<index>/<field>" (keys here never need escaping).
inline std::string PointerAt(std::string_view key, size_t index, std::string_view field = {}) {
  std::string out = "/" + std::string(key) + "/" + std::to_string(index);
  if (!field.empty()) out += "/" + std::string(field);
  return out;
}

}  // namespace telic::controller
