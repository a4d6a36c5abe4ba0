// `telic ground`: preview the ContextManifest of a repository without a run
// (issue 6). Nothing is stored.
#pragma once

#include <iosfwd>
#include <string>

namespace telic::cli {

// Grounds `repo` (empty: $TELIC_REPOSITORY_ROOT, else the current directory)
// for `request` under run id "preview", excluding the repository's state
// directory, and prints the manifest: canonical JSON with `json`, else a
// table of the selected candidates (path, score, bytes, reason), the
// exclusion summaries and the warnings. A progress bar goes to stderr for
// inventories over 2,000 files when stderr is a terminal.
// Returns 0, or 1 with "telic: <message>" on stderr.
int RunGroundCommand(const std::string& repo, const std::string& request, bool json);

// The same with explicit streams; `progress_bar` forces the bar on or off.
int RunGroundCommand(const std::string& repo, const std::string& request, bool json, std::ostream& out,
                     std::ostream& err, bool progress_bar);

}  // namespace telic::cli
