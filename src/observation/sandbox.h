// Runs one command in a sandbox: Debian's bubblewrap (`bwrap`), with the
// work tree as the only writable place besides a private /tmp, the rest of
// the system read-only, no network, its own PID namespace, a process limit,
// a wall-time limit and a bounded output tail (docs/API.md "telic_run_check",
// docs/DECISIONS.md D-R1..D-R4).
//
// The command never runs through a shell: argv is executed as given (the
// first word is looked up in the fixed PATH). Its environment is exactly
// ScrubbedEnvironment(). stdout and stderr are merged into one stream; its
// SHA-256 and byte count cover everything the command printed, but only the
// last `output_tail_bytes` are kept (memory stays bounded whatever it prints).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::observation {

// Limits of one run. The defaults are stated in every result.
struct SandboxLimits {
  int64_t wall_time_ms = 120'000;       // the process group is killed when reached
  size_t output_tail_bytes = 64 * 1024;  // bytes of output kept (the end of the stream)
  int64_t max_processes = 256;           // processes (and threads) alive at once inside the sandbox
};

// The bounds a caller may choose limits within (ValidateLimits).
inline constexpr int64_t kMaxWallTimeMs = 30 * 60 * 1000;
inline constexpr size_t kMaxOutputTailBytes = 1024 * 1024;
inline constexpr int64_t kMaxProcesses = 4096;

// kInvalidArgument naming the first limit outside [1, its maximum].
[[nodiscard]] Status ValidateLimits(const SandboxLimits& limits);

enum class SandboxMode {
  kBubblewrap,   // the default: refuse to run when the sandbox cannot start
  kUnsandboxed,  // the operator's explicit opt-out: argv, cwd, environment and limits only
};

// How the process limit is enforced: a pids cgroup (the only mechanism that
// binds root, whom RLIMIT_NPROC does not limit), or RLIMIT_NPROC set inside
// the sandbox's own user namespace (non-root).
enum class ProcessLimitMechanism { kCgroupPids, kRlimitNproc };
std::string_view ProcessLimitMechanismName(ProcessLimitMechanism mechanism);

struct SandboxConfig {
  SandboxMode mode = SandboxMode::kBubblewrap;
  std::string bwrap_path = "/usr/bin/bwrap";
  // The prlimit(1) of util-linux, run inside the sandbox to set RLIMIT_NPROC
  // in its user namespace (non-root only).
  std::string prlimit_path = "/usr/bin/prlimit";
  // A cgroup directory of the pids controller under which each run gets a
  // child cgroup; "" finds the process's own (v1 or v2) from /proc/self/cgroup.
  std::string pids_cgroup_parent;
};

struct SandboxCommand {
  std::vector<std::string> argv;  // argv[0] is looked up in the sandbox's PATH
  std::string work_tree;          // absolute, symlink-free: the only writable tree
  std::string cwd;                // absolute, symlink-free, inside work_tree
  // Existing absolute paths inside work_tree mounted read-only on top of it
  // (the repository's .git, telic's own state directory).
  std::vector<std::string> read_only_paths;
};

struct RunProgress {
  int64_t elapsed_ms = 0;
  uint64_t output_bytes = 0;
};

struct RunControl {
  // Polled about every 50 ms; true kills the whole sandbox (outcome.cancelled).
  std::function<bool()> cancelled;
  // Called about every `progress_interval_ms` while the command runs.
  std::function<void(const RunProgress&)> progress;
  int64_t progress_interval_ms = 1000;
};

struct SandboxOutcome {
  int exit_code = -1;  // the exit status when the command exited, else -1
  int signal = 0;      // the signal that ended it (SIGKILL after a limit), else 0
  bool timed_out = false;
  bool cancelled = false;
  int64_t duration_ms = 0;
  uint64_t output_bytes = 0;  // everything printed (stdout and stderr)
  std::string output_sha256;  // lowercase hex over all output_bytes
  std::string output_tail;    // the last output_tail_bytes of it, raw
  bool output_truncated = false;
  SandboxMode mode = SandboxMode::kBubblewrap;
  ProcessLimitMechanism process_limit = ProcessLimitMechanism::kRlimitNproc;
};

// The environment of every sandboxed command, "NAME=value" each: PATH fixed
// to the system directories, HOME=/tmp and TMPDIR=/tmp (the private /tmp),
// LANG and LC_ALL C.UTF-8, TZ=UTC, CI=true (bwrap adds PWD, the working
// directory). Nothing of telic's own environment passes (no TERM, no
// tokens, no proxy settings).
const std::vector<std::string>& ScrubbedEnvironment();

// The bwrap command line for `command` (argv[0] = the bwrap path), with the
// process limit set through `mechanism`. Exposed for tests and docs.
std::vector<std::string> BubblewrapCommandLine(const SandboxCommand& command, const SandboxConfig& config,
                                               ProcessLimitMechanism mechanism, int64_t max_processes);

// Makes a new directory `<prefix><n>` (mode 0700) for the first n from
// `first` whose name is free or held by an empty directory: a cgroup left
// by a process that died before removing it, whose pid a later process now
// has (rmdir removes a cgroup only when no process is in it, so a live
// one is never taken). Tries at most 64 names; returns the path made.
// Exposed for tests.
[[nodiscard]] Result<std::string> MakeFreshDirectory(const std::string& prefix, uint64_t first);

// Whether a sandbox can start here: bwrap exists and runs `true` with the
// same namespaces. kFailedPrecondition with bwrap's own message otherwise
// ("bwrap: No permissions to creating new namespace, ..."). Always OK in
// kUnsandboxed mode.
[[nodiscard]] Status ProbeSandbox(const SandboxConfig& config);

// Runs `command` to its end, a limit or a cancellation. Fails (and runs
// nothing) when the sandbox cannot start, the process limit cannot be
// enforced, or argv/cwd are malformed; a command that runs and fails is an
// outcome, not an error.
[[nodiscard]] Result<SandboxOutcome> RunSandboxed(const SandboxCommand& command, const SandboxLimits& limits,
                                                  const SandboxConfig& config, const RunControl& control = {});

}  // namespace telic::observation
