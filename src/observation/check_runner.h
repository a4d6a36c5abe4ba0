// One verification command run by telic in its sandbox (observation/sandbox.h)
// inside a repository, and the record of what it did: the input side
// (command words, working directory) is checked here; whether the run's
// contract allows the command is the permission engine's question, asked by
// the controller before RunCheck.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/canonical_json.h"
#include "base/status.h"
#include "observation/sandbox.h"

namespace telic::observation {

// A command as the contract names it: `text` is the exact shell.execute
// string (words joined by single spaces), `argv` its words.
struct CheckCommand {
  std::string text;
  std::vector<std::string> argv;
};

// The `command` argument: a string that passes policy::CheckExactCommand
// (no shell metacharacters, quoting, expansions or assignments; single
// spaces), split at its spaces; or an argv array of 1..64 non-empty words
// without spaces whose join passes the same check. kPermissionDenied with
// the reason for a command a shell would interpret; kInvalidArgument for a
// malformed value.
[[nodiscard]] Result<CheckCommand> ParseCheckCommand(const Json& command);

// The working directory `cwd` (repository-relative, "" or "." for the root)
// resolved as the permission engine resolves paths (policy::ResolveRepoPath:
// no `..`, no escape through symlinks), which must be an existing directory.
// Returns the absolute, symlink-free directory. kPermissionDenied for an
// escape, kInvalidArgument when it is not a directory.
[[nodiscard]] Result<std::string> ResolveCheckDirectory(const std::string& repository_root, std::string_view cwd);

struct CheckRequest {
  CheckCommand command;
  std::string repository_root;  // absolute
  std::string cwd;              // repository-relative; "" for the root
  // Absolute paths mounted read-only inside the work tree when they exist
  // there (the caller adds telic's state directory; .git is always added).
  std::vector<std::string> protected_paths;
};

struct CheckRecord {
  CheckCommand command;
  std::string cwd;  // repository-relative, "." for the root
  SandboxLimits limits;
  SandboxOutcome outcome;  // output_tail raw, as captured
  std::string redacted_tail;  // valid UTF-8, secrets redacted
  std::vector<std::string> redactions;  // one category per redacted value

  // Exit status 0, within its limits, not cancelled.
  bool passed() const;
};

// Resolves the directory, then runs the command in the sandbox. Errors are
// refusals (nothing ran); a command that ran, whatever its end, is a record.
[[nodiscard]] Result<CheckRecord> RunCheck(const CheckRequest& request, const SandboxLimits& limits,
                                           const SandboxConfig& config, const RunControl& control = {});

// {command, argv, cwd, passed, exitStatus, signal?, timedOut, cancelled,
//  durationMs, output: {bytes, sha256 ("sha256:<hex>"), tailBytes, truncated},
//  limits: {wallTimeMs, outputTailBytes, maxProcesses, processLimit},
//  sandbox: "bubblewrap" | "none"} — the record without its output tail.
Json CheckRecordToJson(const CheckRecord& record);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string RepairUtf8(std::string_view text);

}  // namespace telic::observation
