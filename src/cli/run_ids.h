// Run ids as a person types them: the whole id, or any prefix that names
// exactly one run (as git takes a commit's abbreviated hash).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/records.h"
#include "store/store.h"

namespace telic::cli {

// At most this many candidates are listed for an ambiguous prefix.
inline constexpr size_t kListedCandidates = 10;

// The run id `typed` names: `typed` itself when a run has that id, else the
// id of the one run whose id starts with it (ASCII letters without case).
// Errors: kInvalidArgument for an empty text; kNotFound "Run not found:
// <typed>" when no run matches; kInvalidArgument "Run id prefix '<typed>' is
// ambiguous: N runs match" when several do, with one Issue per listed
// candidate (pointer: its run id; message: its status, creation time and
// request's first line), newest first, at most kListedCandidates
// (the message then says how many are listed).
Result<std::string> ResolveRunId(store::Store& store, std::string_view typed);

// The artifact id `typed` names among `artifacts` (one run's): `typed`
// itself when an artifact has that id, else the one whose id starts with it.
// Errors as ResolveRunId's ("Artifact not found: <typed>", "Artifact id
// prefix '<typed>' is ambiguous: N artifacts match" with an Issue each).
Result<std::string> ResolveArtifactId(const std::vector<store::ArtifactMeta>& artifacts, std::string_view typed);

// Prints a resolution failure: "telic: <message>" and, for an ambiguous
// prefix, one indented line per candidate (all through TerminalText);
// returns 1.
int ReportResolutionFailure(std::ostream& err, const Error& error);

}  // namespace telic::cli
