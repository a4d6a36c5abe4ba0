// Exact shell commands for shell.execute and the typed shell.inspect targets
// (docs/PERMISSIONS.md, "Shell").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::policy {

// Whether `command` is one simple command whose words a POSIX shell (or bash
// or zsh) would pass through unchanged: printable ASCII only; single spaces
// between words, none leading or trailing; no operator (; & && | || < > <<
// ( ) and process substitution), no expansion ($, ${, $(, backticks, globs
// * ? [ ], braces { }, ~ at a word start or after = or :, ! history, = at a
// word start), no quoting or escaping (' " \), no comment (# at a word
// start), no leading VAR=value assignment, not a shell keyword or a builtin
// that runs its arguments as code (eval, exec, source, .), at most 2048
// bytes, and not the placeholders "authorized" or "**". Fails with
// kPermissionDenied and the reason.
Status CheckExactCommand(std::string_view command);

// CheckExactCommand passes and `command` equals an allowlist entry byte for
// byte. Entries are never patterns.
bool CommandAllowed(std::string_view command, const std::vector<std::string>& allowlist);

// The six typed shell.inspect targets, in the wire order: git.status,
// git.diff, git.log, network.listen, process.list, runtime.logs.
const std::vector<std::string>& ShellInspectTargets();
bool IsShellInspectTarget(std::string_view target);
// Fails with the reason when `target` is not exactly one of the six.
Status CheckShellInspectTarget(std::string_view target);

}  // namespace telic::policy
