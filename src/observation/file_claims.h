// Item 1 of issue 38: a FileChange a host claims, judged against what telic
// observed. Pure: the facts come from a WorkTreeObserver (observer.h).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/canonical_json.h"
#include "base/status.h"
#include "observation/observer.h"

namespace telic::observation {

// What the run was grounded on: the HEAD commit and the digest (sha256:… or
// kAbsent) of every path that differed from it at grounding. A path not in
// `dirty` held its blob at `head_commit` (or nothing). Stored in the run
// record's controller state (ToJson) when the run is grounded.
struct Baseline {
  std::optional<std::string> head_commit;
  std::map<std::string, std::string> dirty;
  // False when the work tree had more than kMaxChangedPaths changed paths at
  // grounding: the grounded content of a path outside `dirty` is then unknown.
  bool complete = true;

  [[nodiscard]] Json ToJson() const;
  // kDataLoss when `json` is not a Baseline's form.
  [[nodiscard]] static Result<Baseline> FromJson(const Json& json);
};

// One element of a body's filesChanged.
struct ClaimedChange {
  std::string pointer;      // JSON pointer of the element, e.g. /filesChanged/0
  std::string path;
  std::string change_type;  // created | modified | deleted
  std::optional<std::string> before_hash;
  std::optional<std::string> after_hash;

  // kInvalidArgument (pointer: the element) when `element` is not a FileChange's shape.
  [[nodiscard]] static Result<ClaimedChange> FromJson(const Json& element, std::string pointer);
};

// The error code of an observation that contradicts a claim.
inline constexpr std::string_view kObservationMismatch = "observation_mismatch";

// Checks one claim against `expected_before` (the digest the path held
// before this change: the grounded content, or the previous accepted change's
// afterHash; kAbsent for no file) and `now` (the path as it is now):
//   created:  nothing before, a file now, afterHash = its digest;
//   modified: beforeHash = expected_before, afterHash = the digest now;
//   deleted:  beforeHash = expected_before, no file now.
// A mismatch is kInvalidArgument with one Issue (claim.pointer + the field,
// code kObservationMismatch) whose message names the path and both hashes.
[[nodiscard]] Status CheckFileClaim(const ClaimedChange& claim, const std::string& expected_before, const FileState& now);

}  // namespace telic::observation
