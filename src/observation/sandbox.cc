#include "observation/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "base/sha256.h"

namespace telic::observation {
namespace {

int64_t MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Keeps the last `capacity` bytes of a stream in at most 2 * capacity memory.
class TailBuffer {
 public:
  explicit TailBuffer(size_t capacity) : capacity_(capacity) {}
  void Append(std::string_view bytes) {
    if (bytes.size() >= capacity_) {
      data_.assign(bytes.substr(bytes.size() - capacity_));
      return;
    }
    data_.append(bytes);
    if (data_.size() > 2 * capacity_) data_.erase(0, data_.size() - capacity_);
  }
  std::string Take() {
    if (data_.size() > capacity_) data_.erase(0, data_.size() - capacity_);
    return std::move(data_);
  }

 private:
  size_t capacity_;
  std::string data_;
};

}  // namespace

Result<std::string> MakeFreshDirectory(const std::string& prefix, uint64_t first) {
  std::string dir;
  for (uint64_t n = first; n < first + 64; ++n) {
    dir = prefix + std::to_string(n);
    if (::mkdir(dir.c_str(), 0700) == 0) return dir;
    if (errno != EEXIST) break;
    // Taken: a stale empty one is removed and its name used; a live one is kept.
    if (::rmdir(dir.c_str()) == 0 && ::mkdir(dir.c_str(), 0700) == 0) return dir;
  }
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("{}: {}", dir, std::strerror(errno)));
}

namespace {

// A child cgroup of the pids controller holding one run (root only).
class PidsCgroup {
 public:
  // Creates <parent>/telic-check-<pid>-<n> with pids.max = `max_processes`.
  static Result<PidsCgroup> Create(const std::string& parent, int64_t max_processes) {
    static std::atomic<uint64_t> counter{0};
    auto made = MakeFreshDirectory(fmt::format("{}/telic-check-{}-", parent, ::getpid()), counter.fetch_add(64));
    if (!made) {
      return Fail(ErrorCode::kFailedPrecondition, "cannot create the pids cgroup " + made.error().message());
    }
    const std::string& dir = *made;
    PidsCgroup cgroup(dir);
    std::ofstream max(dir + "/pids.max");
    max << max_processes;
    max.flush();
    if (!max) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot set {}/pids.max", dir));
    }
    return cgroup;
  }
  PidsCgroup(PidsCgroup&& other) noexcept : dir_(std::move(other.dir_)) { other.dir_.clear(); }
  PidsCgroup& operator=(PidsCgroup&&) = delete;
  // Kills whatever is left in it and removes it.
  ~PidsCgroup() {
    if (dir_.empty()) return;
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::ifstream procs(dir_ + "/cgroup.procs");
      pid_t pid;
      while (procs >> pid) ::kill(pid, SIGKILL);
      if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // Where the child writes its pid before it executes bwrap.
  std::string procs_file() const { return dir_ + "/cgroup.procs"; }

 private:
  explicit PidsCgroup(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// The process's own cgroup of the pids controller: v1 "N:pids:/path" under
// /sys/fs/cgroup/pids, or v2 "0::/path" under /sys/fs/cgroup when the v2
// hierarchy offers pids. nullopt when there is none.
std::optional<std::string> OwnPidsCgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::optional<std::string> v2;
  while (std::getline(in, line)) {
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    std::stringstream list(controllers);
    std::string name;
    while (std::getline(list, name, ',')) {
      if (name == "pids" && std::filesystem::is_directory("/sys/fs/cgroup/pids" + path)) {
        return "/sys/fs/cgroup/pids" + (path == "/" ? std::string() : path);
      }
    }
    if (controllers.empty() && line.rfind("0::", 0) == 0) v2 = "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
  }
  if (v2) {
    std::ifstream available("/sys/fs/cgroup/cgroup.controllers");
    std::string word;
    while (available >> word) {
      if (word == "pids") return v2;
    }
  }
  return std::nullopt;
}

// Writes `pid` as decimal to `fd`, with async-signal-safe calls only.
void WritePid(int fd, pid_t pid) {
  char digits[24];
  int n = 0;
  do {
    digits[sizeof digits - 1 - n++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0 && n < 20);
  [[maybe_unused]] ssize_t w = ::write(fd, digits + sizeof digits - n, static_cast<size_t>(n));
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// What the forked child does before it executes, prepared before fork: the
// child may only make async-signal-safe calls.
struct ChildPlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string chdir_to;      // unsandboxed only
  int64_t rlimit_nproc = 0;  // > 0: set before exec (unsandboxed, non-root)
  int cgroup_procs_fd = -1;  // >= 0: the child writes its pid into it first
};

[[noreturn]] void RunChild(ChildPlan& plan, std::vector<char*>& argv, std::vector<char*>& env, int output_fd,
                           int report_fd) {
  ::setsid();  // its own process group, the unit killed on a limit or a cancel
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and it dies with telic
  if (plan.cgroup_procs_fd >= 0) {
    WritePid(plan.cgroup_procs_fd, ::getpid());
    ::close(plan.cgroup_procs_fd);
  }
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(output_fd, 1) < 0 || ::dup2(output_fd, 2) < 0 ||
      ::dup2(report_fd, 3) < 0) {
    _exit(126);
  }
  ::fcntl(3, F_SETFD, FD_CLOEXEC);
  ::close_range(4, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  if (!plan.chdir_to.empty() && ::chdir(plan.chdir_to.c_str()) != 0) {
    int error = errno;
    [[maybe_unused]] ssize_t w = ::write(3, &error, sizeof error);
    _exit(127);
  }
  if (plan.rlimit_nproc > 0) {
    rlimit limit{static_cast<rlim_t>(plan.rlimit_nproc), static_cast<rlim_t>(plan.rlimit_nproc)};
    ::setrlimit(RLIMIT_NPROC, &limit);
  }
  ::execve(argv[0], argv.data(), env.data());
  int error = errno;
  [[maybe_unused]] ssize_t w = ::write(3, &error, sizeof error);
  _exit(127);
}

struct Started {
  pid_t pid = -1;
  int output_fd = -1;
};

// Forks and executes `plan`; fails when the exec itself fails.
Result<Started> Start(ChildPlan& plan) {
  int output[2];
  int report[2];
  if (::pipe2(output, O_CLOEXEC) != 0) return Fail(ErrorCode::kInternal, "cannot create the output pipe");
  if (::pipe2(report, O_CLOEXEC) != 0) {
    ::close(output[0]);
    ::close(output[1]);
    return Fail(ErrorCode::kInternal, "cannot create the exec report pipe");
  }
  // A larger pipe: fewer wake-ups for a command that prints a lot (best effort).
  ::fcntl(output[0], F_SETPIPE_SZ, 1024 * 1024);
  std::vector<char*> argv = CStrings(plan.argv);
  std::vector<char*> env = CStrings(plan.env);
  pid_t pid = ::fork();
  if (pid == 0) RunChild(plan, argv, env, output[1], report[1]);
  ::close(output[1]);
  ::close(report[1]);
  if (pid < 0) {
    ::close(output[0]);
    ::close(report[0]);
    return Fail(ErrorCode::kUnavailable, fmt::format("cannot fork: {}", std::strerror(errno)));
  }
  int error = 0;
  ssize_t got;
  do {
    got = ::read(report[0], &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == sizeof error) {
    ::close(output[0]);
    int status;
    ::waitpid(pid, &status, 0);
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("cannot execute {}: {}", plan.argv.empty() ? "" : plan.argv[0], std::strerror(error)));
  }
  return Started{pid, output[0]};
}

void KillAll(pid_t pid) {
  ::kill(-pid, SIGKILL);  // the process group (setsid in the child)
  ::kill(pid, SIGKILL);   // bwrap itself: its PID namespace dies with it (--die-with-parent)
}

// The child's output as it is read: its digest, its byte count and its
// last `tail_bytes` bytes.
class OutputCollector {
 public:
  explicit OutputCollector(uint64_t tail_bytes) : tail_(tail_bytes), buffer_(256 * 1024, '\0') {}

  // Waits up to 50 ms for output on `fd` and takes what is there; true at
  // the end of the output (or a read error).
  bool ReadSome(int fd) {
    pollfd poll_fd{fd, POLLIN, 0};
    if (::poll(&poll_fd, 1, 50) <= 0) return false;
    ssize_t got = ::read(fd, buffer_.data(), buffer_.size());
    if (got > 0) {
      std::string_view bytes(buffer_.data(), static_cast<size_t>(got));
      digest_.Update(bytes);
      tail_.Append(bytes);
      bytes_ += static_cast<uint64_t>(got);
      return false;
    }
    return got == 0 || (errno != EINTR && errno != EAGAIN);
  }

  uint64_t bytes() const { return bytes_; }

  void MoveInto(SandboxOutcome& outcome, uint64_t tail_bytes) {
    outcome.output_bytes = bytes_;
    outcome.output_sha256 = digest_.HexDigest();
    outcome.output_truncated = bytes_ > tail_bytes;
    outcome.output_tail = tail_.Take();
  }

 private:
  Sha256Stream digest_;
  TailBuffer tail_;
  std::string buffer_;
  uint64_t bytes_ = 0;
};

// Reads the output until the child is reaped and the pipe is closed,
// enforcing the wall time and the cancellation.
SandboxOutcome Supervise(const Started& started, const SandboxLimits& limits, const RunControl& control) {
  SandboxOutcome outcome;
  const int64_t start = MonotonicMs();
  const int64_t deadline = start + limits.wall_time_ms;
  int64_t next_progress = start + control.progress_interval_ms;
  int64_t eof_grace_end = -1;  // after a kill or the reap: how long to wait for the pipe to close
  OutputCollector output(limits.output_tail_bytes);
  bool eof = false;
  bool reaped = false;
  bool killed = false;
  int status = 0;
  while (!(eof && reaped)) {
    const int64_t now = MonotonicMs();
    if (!killed && now >= deadline) {
      outcome.timed_out = true;
    } else if (!killed && control.cancelled && control.cancelled()) {
      outcome.cancelled = true;
    }
    if (!killed && (outcome.timed_out || outcome.cancelled)) {
      KillAll(started.pid);
      killed = true;
      eof_grace_end = now + 2000;
    }
    if (eof_grace_end >= 0 && now >= eof_grace_end && !eof) eof = true;  // a holder outside the group: stop reading
    if (control.progress && now >= next_progress) {
      control.progress({now - start, output.bytes()});
      next_progress = now + control.progress_interval_ms;
    }
    if (!eof) {
      eof = output.ReadSome(started.output_fd);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!reaped && ::waitpid(started.pid, &status, WNOHANG) == started.pid) {
      reaped = true;
      ::kill(-started.pid, SIGKILL);  // leftovers of its group (unsandboxed runs)
      if (eof_grace_end < 0) eof_grace_end = MonotonicMs() + 1000;
    }
  }
  ::close(started.output_fd);
  outcome.duration_ms = MonotonicMs() - start;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  if (killed && outcome.signal == 0) outcome.signal = SIGKILL;
  output.MoveInto(outcome, limits.output_tail_bytes);
  return outcome;
}

// Runs bwrap with `args` (no command) and returns its exit status and output.
Result<std::pair<int, std::string>> RunQuietly(std::vector<std::string> args) {
  ChildPlan plan;
  plan.argv = std::move(args);
  plan.env = ScrubbedEnvironment();
  TELIC_ASSIGN_OR_RETURN(Started started, Start(plan));
  SandboxLimits limits;
  limits.wall_time_ms = 10'000;
  limits.output_tail_bytes = 4096;
  SandboxOutcome outcome = Supervise(started, limits, {});
  return std::make_pair(outcome.exit_code, outcome.output_tail);
}

// argv[0] looked up as the sandbox's PATH would (unsandboxed runs).
Result<std::string> FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  for (const char* dir : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    std::string candidate = std::string(dir) + "/" + name;
    if (IsExecutable(candidate)) return candidate;
  }
  return Fail(ErrorCode::kFailedPrecondition, fmt::format("{} is not found in the check's PATH", name));
}

std::string FirstLine(std::string_view text) {
  size_t end = text.find('\n');
  return std::string(text.substr(0, end));
}

Status CheckCommandShape(const SandboxCommand& command) {
  if (command.argv.empty() || command.argv.front().empty()) {
    return Fail(ErrorCode::kInvalidArgument, "the command has no program");
  }
  for (const std::string& word : command.argv) {
    if (word.find('\0') != std::string::npos) return Fail(ErrorCode::kInvalidArgument, "a command word holds NUL");
  }
  auto absolute = [](const std::string& p) { return !p.empty() && p.front() == '/'; };
  if (!absolute(command.work_tree) || !absolute(command.cwd)) {
    return Fail(ErrorCode::kInvalidArgument, "the work tree and the working directory must be absolute");
  }
  std::string prefix = command.work_tree == "/" ? "/" : command.work_tree + "/";
  if (command.cwd != command.work_tree && command.cwd.rfind(prefix, 0) != 0) {
    return Fail(ErrorCode::kPermissionDenied, "the working directory is outside the work tree");
  }
  return Ok();
}

}  // namespace

std::string_view ProcessLimitMechanismName(ProcessLimitMechanism mechanism) {
  return mechanism == ProcessLimitMechanism::kCgroupPids ? "cgroup-pids" : "rlimit-nproc";
}

Status ValidateLimits(const SandboxLimits& limits) {
  if (limits.wall_time_ms < 1 || limits.wall_time_ms > kMaxWallTimeMs) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the wall-time limit must be 1..{} ms", kMaxWallTimeMs));
  }
  if (limits.output_tail_bytes < 1 || limits.output_tail_bytes > kMaxOutputTailBytes) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the output tail limit must be 1..{} bytes", kMaxOutputTailBytes));
  }
  if (limits.max_processes < 1 || limits.max_processes > kMaxProcesses) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the process limit must be 1..{}", kMaxProcesses));
  }
  return Ok();
}

const std::vector<std::string>& ScrubbedEnvironment() {
  static const std::vector<std::string> kEnvironment = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "HOME=/tmp",
      "TMPDIR=/tmp",
      "LANG=C.UTF-8",
      "LC_ALL=C.UTF-8",
      "TZ=UTC",
      "CI=true",
  };
  return kEnvironment;
}

std::vector<std::string> BubblewrapCommandLine(const SandboxCommand& command, const SandboxConfig& config,
                                               ProcessLimitMechanism mechanism, int64_t max_processes) {
  std::vector<std::string> args = {config.bwrap_path, "--die-with-parent", "--new-session", "--unshare-net",
                                   "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"};
  if (mechanism == ProcessLimitMechanism::kRlimitNproc) args.push_back("--unshare-user");
  for (const char* arg : {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}) {
    args.push_back(arg);
  }
  for (const std::string& arg : {std::string("--bind"), command.work_tree, command.work_tree}) args.push_back(arg);
  for (const std::string& path : command.read_only_paths) {
    for (const std::string& arg : {std::string("--ro-bind"), path, path}) args.push_back(arg);
  }
  for (const std::string& arg : {std::string("--chdir"), command.cwd, std::string("--")}) args.push_back(arg);
  if (mechanism == ProcessLimitMechanism::kRlimitNproc) {
    args.push_back(config.prlimit_path);
    args.push_back(fmt::format("--nproc={}:{}", max_processes, max_processes));
    args.push_back("--");
  }
  args.insert(args.end(), command.argv.begin(), command.argv.end());
  return args;
}

Status ProbeSandbox(const SandboxConfig& config) {
  if (config.mode == SandboxMode::kUnsandboxed) return Ok();
  if (!IsExecutable(config.bwrap_path)) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the check sandbox cannot start: {} is missing (install Debian's bubblewrap); checks never "
                            "run unsandboxed unless the server's config opts out",
                            config.bwrap_path));
  }
  std::vector<std::string> args = {config.bwrap_path, "--die-with-parent", "--unshare-net", "--unshare-pid",
                                   "--ro-bind", "/", "/", "--", "true"};
  if (::geteuid() != 0) args.insert(args.begin() + 1, "--unshare-user");
  TELIC_ASSIGN_OR_RETURN(auto result, RunQuietly(std::move(args)));
  if (result.first != 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the check sandbox cannot start ({}); checks never run unsandboxed unless the server's "
                            "config opts out",
                            result.second.empty() ? fmt::format("bwrap exited with {}", result.first)
                                                  : FirstLine(result.second)));
  }
  return Ok();
}

Result<SandboxOutcome> RunSandboxed(const SandboxCommand& command, const SandboxLimits& limits,
                                    const SandboxConfig& config, const RunControl& control) {
  TELIC_RETURN_IF_ERROR(ValidateLimits(limits));
  TELIC_RETURN_IF_ERROR(CheckCommandShape(command));
  bool root = ::geteuid() == 0;
  ProcessLimitMechanism mechanism = root ? ProcessLimitMechanism::kCgroupPids : ProcessLimitMechanism::kRlimitNproc;
  std::optional<PidsCgroup> cgroup;
  if (mechanism == ProcessLimitMechanism::kCgroupPids) {
    std::optional<std::string> parent =
        config.pids_cgroup_parent.empty() ? OwnPidsCgroup() : std::optional(config.pids_cgroup_parent);
    if (!parent) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the check's process limit cannot be enforced: telic runs as root (RLIMIT_NPROC does not bind "
                  "root) and no pids cgroup is available");
    }
    TELIC_ASSIGN_OR_RETURN(PidsCgroup created, PidsCgroup::Create(*parent, limits.max_processes));
    cgroup.emplace(std::move(created));
  }
  ChildPlan plan;
  plan.env = ScrubbedEnvironment();
  if (config.mode == SandboxMode::kBubblewrap) {
    TELIC_RETURN_IF_ERROR(ProbeSandbox(config));
    if (mechanism == ProcessLimitMechanism::kRlimitNproc && !IsExecutable(config.prlimit_path)) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("the check's process limit cannot be enforced: {} is missing", config.prlimit_path));
    }
    plan.argv = BubblewrapCommandLine(command, config, mechanism, limits.max_processes);
  } else {
    plan.argv = command.argv;
    TELIC_ASSIGN_OR_RETURN(plan.argv[0], FindProgram(command.argv[0]));
    plan.chdir_to = command.cwd;
    if (mechanism == ProcessLimitMechanism::kRlimitNproc) plan.rlimit_nproc = limits.max_processes;
  }
  if (cgroup) {
    plan.cgroup_procs_fd = ::open(cgroup->procs_file().c_str(), O_WRONLY | O_CLOEXEC);
    if (plan.cgroup_procs_fd < 0) {
      return Fail(ErrorCode::kFailedPrecondition, fmt::format("cannot open {}", cgroup->procs_file()));
    }
  }
  auto started = Start(plan);
  if (plan.cgroup_procs_fd >= 0) ::close(plan.cgroup_procs_fd);
  if (!started) return std::unexpected(started.error());
  SandboxOutcome outcome = Supervise(*started, limits, control);
  outcome.mode = config.mode;
  outcome.process_limit = mechanism;
  return outcome;
}

}  // namespace telic::observation
