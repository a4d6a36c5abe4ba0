// Every test here is a real run in bubblewrap (scripts/setup installs it);
// none fakes the sandbox.
#include "observation/sandbox.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "testing/temp_dir.h"

namespace telic::observation {
namespace {

namespace fs = std::filesystem;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_tree_ = fs::canonical(dir_.path()).string() + "/tree";
    fs::create_directories(work_tree_ + "/.git");
  }

  Result<SandboxOutcome> Run(std::vector<std::string> argv, SandboxLimits limits = {}, const RunControl& control = {}) {
    SandboxCommand command;
    command.argv = std::move(argv);
    command.work_tree = work_tree_;
    command.cwd = work_tree_;
    command.read_only_paths = {work_tree_ + "/.git"};
    return RunSandboxed(command, limits, config_, control);
  }

  testing::TempDir dir_;
  std::string work_tree_;
  SandboxConfig config_;
};

int64_t PeakRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

TEST_F(SandboxTest, RunsTheCommandInTheWorkTreeAndReportsItsExit) {
  auto outcome = Run({"sh", "-c", "pwd; echo to-stderr >&2; exit 3"});
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->exit_code, 3);
  EXPECT_EQ(outcome->signal, 0);
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_EQ(outcome->output_tail, work_tree_ + "\nto-stderr\n");
  EXPECT_EQ(outcome->output_sha256, Sha256Hex(work_tree_ + "\nto-stderr\n"));
  EXPECT_EQ(outcome->mode, SandboxMode::kBubblewrap);
}

// covers issue 38: a check that tries the network
TEST_F(SandboxTest, NetworkIsUnreachableEvenOnLoopback) {
  // A listener on the host's loopback: outside the sandbox's network namespace.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  int port = ntohs(address.sin_port);
  std::string script = "import socket\ntry:\n socket.create_connection(('127.0.0.1', " + std::to_string(port) +
                       "), timeout=3)\n print('connected')\nexcept OSError as e:\n print('refused', e.errno)\n"
                       "try:\n socket.create_connection(('1.1.1.1', 80), timeout=3)\n print('connected')\n"
                       "except OSError as e:\n print('refused', e.errno)\n";
  auto outcome = Run({"python3", "-c", script});
  ::close(listener);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->exit_code, 0) << outcome->output_tail;
  EXPECT_EQ(outcome->output_tail.find("connected"), std::string::npos) << outcome->output_tail;
  EXPECT_NE(outcome->output_tail.find("refused"), std::string::npos) << outcome->output_tail;
}

// covers issue 38: a check that writes outside the work tree
TEST_F(SandboxTest, OnlyTheWorkTreeAndAPrivateTmpAreWritable) {
  std::string outside = fs::canonical(dir_.path()).string() + "/outside.txt";  // beside the tree, under /tmp
  std::string script = "touch inside.txt && echo inside-ok; "
                       "touch " + outside + " && echo private-tmp-ok; "
                       "touch /etc/telic-sandbox-probe 2>/dev/null || echo etc-refused; "
                       "touch /usr/telic-sandbox-probe 2>/dev/null || echo usr-refused; "
                       "touch .git/hooks-probe 2>/dev/null || echo git-refused";
  auto outcome = Run({"sh", "-c", script});
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->output_tail, "inside-ok\nprivate-tmp-ok\netc-refused\nusr-refused\ngit-refused\n");
  EXPECT_TRUE(fs::exists(work_tree_ + "/inside.txt"));
  EXPECT_FALSE(fs::exists(outside));  // written to the sandbox's own /tmp, gone with it
  EXPECT_FALSE(fs::exists("/etc/telic-sandbox-probe"));
  EXPECT_FALSE(fs::exists(work_tree_ + "/.git/hooks-probe"));
}

// covers issue 38: a check that hangs
TEST_F(SandboxTest, AHangIsKilledAtTheWallTimeWithEverythingItStarted) {
  SandboxLimits limits;
  limits.wall_time_ms = 700;
  // A grandchild that leaves the process group and would write after 2 s.
  auto started = std::chrono::steady_clock::now();
  auto outcome = Run({"sh", "-c", "setsid sh -c 'sleep 2; touch escaped.txt' & echo waiting; sleep 60"}, limits);
  auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_EQ(outcome->signal, SIGKILL);
  EXPECT_EQ(outcome->exit_code, -1);
  EXPECT_EQ(outcome->output_tail, "waiting\n");
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EXPECT_GE(outcome->duration_ms, 700);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(fs::exists(work_tree_ + "/escaped.txt"));
}

// covers issue 38: a check that prints 1 GB
TEST_F(SandboxTest, OneGigabyteOfOutputKeepsOnlyTheTailAndDigestsTheWholeStream) {
  constexpr uint64_t kGiB = 1024ull * 1024 * 1024;
  SandboxLimits limits;
  limits.output_tail_bytes = 4096;
  int64_t rss_before = PeakRssKb();
  auto outcome = Run({"sh", "-c", "head -c 1073741824 /dev/zero; echo end"}, limits);
  int64_t rss_after = PeakRssKb();
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->exit_code, 0);
  EXPECT_EQ(outcome->output_bytes, kGiB + 4);
  EXPECT_TRUE(outcome->output_truncated);
  ASSERT_EQ(outcome->output_tail.size(), 4096u);
  EXPECT_EQ(outcome->output_tail, std::string(4092, '\0') + "end\n");
  // `(head -c 1073741824 /dev/zero; echo end) | sha256sum`
  EXPECT_EQ(outcome->output_sha256, "37e2ebc94e8c945160c0089321e17acead3e13ef2a89752832f7f39b52ca836e");
  EXPECT_LT(rss_after - rss_before, 16 * 1024) << "peak RSS grew by " << (rss_after - rss_before) << " KiB";
}

// covers issue 38: a check that forks without end
TEST_F(SandboxTest, TheProcessCountIsBounded) {
  SandboxLimits limits;
  limits.max_processes = 24;
  std::string script =
      "import os, time\nn = 0\nfor i in range(200):\n try:\n  pid = os.fork()\n except OSError:\n  break\n"
      " if pid == 0:\n  time.sleep(2)\n  os._exit(0)\n n += 1\nprint('started', n)\n";
  auto outcome = Run({"python3", "-c", script}, limits);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->exit_code, 0) << outcome->output_tail;
  ASSERT_EQ(outcome->output_tail.rfind("started ", 0), 0u) << outcome->output_tail;
  int started = std::stoi(outcome->output_tail.substr(8));
  EXPECT_GT(started, 0);
  EXPECT_LT(started, 24);

  // A real fork bomb ends at the wall time, and the host can still fork. The
  // shell becomes the sleep (exec, no fork): with the process limit reached,
  // forking a `sleep` could fail and end the check early instead.
  limits.wall_time_ms = 1500;
  auto bomb = Run({"sh", "-c", "f() { f | f & }; f; exec sleep 60"}, limits);
  ASSERT_TRUE(bomb) << bomb.error().message();
  EXPECT_TRUE(bomb->timed_out);
  auto after = Run({"true"});
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_EQ(after->exit_code, 0);
}

// covers issue 38: the environment is scrubbed to the allowlist
TEST_F(SandboxTest, TheEnvironmentIsExactlyTheAllowlist) {
  ::setenv("TELIC_SANDBOX_TEST_TOKEN", "ghp_notareal0token0but0secret0shaped000", 1);
  ::setenv("TERM", "xterm-256color", 1);
  auto outcome = Run({"env"});
  ::unsetenv("TELIC_SANDBOX_TEST_TOKEN");
  ASSERT_TRUE(outcome) << outcome.error().message();
  std::vector<std::string> lines;
  std::stringstream in(outcome->output_tail);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::string> expected = ScrubbedEnvironment();
  expected.push_back("PWD=" + work_tree_);  // bwrap --chdir sets it
  std::sort(lines.begin(), lines.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(lines, expected);
}

TEST_F(SandboxTest, CancellationKillsTheSandboxPromptly) {
  std::atomic<bool> cancel{false};
  int progress_calls = 0;
  RunControl control;
  control.cancelled = [&] { return cancel.load(); };
  control.progress = [&](const RunProgress&) {
    if (++progress_calls == 3) cancel = true;
  };
  control.progress_interval_ms = 100;
  auto started = std::chrono::steady_clock::now();
  auto outcome = Run({"sleep", "60"}, {}, control);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_TRUE(outcome->cancelled);
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_EQ(outcome->signal, SIGKILL);
  EXPECT_GE(progress_calls, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// covers issue 38: where the sandbox cannot start, nothing runs
TEST_F(SandboxTest, AMissingOrBrokenBwrapIsAClearRefusal) {
  config_.bwrap_path = "/nonexistent/bwrap";
  auto missing = Run({"touch", "ran.txt"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(missing.error().message().find("bubblewrap"), std::string::npos) << missing.error().message();
  EXPECT_NE(missing.error().message().find("never run unsandboxed"), std::string::npos);

  // A bwrap that cannot create its namespaces fails its probe the same way.
  config_.bwrap_path = "/bin/false";
  auto broken = Run({"touch", "ran.txt"});
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(broken.error().message().find("cannot start"), std::string::npos) << broken.error().message();
  EXPECT_FALSE(fs::exists(work_tree_ + "/ran.txt"));
}

TEST_F(SandboxTest, TheOperatorsOptOutRunsWithoutBwrapButWithTheSameEnvironmentAndLimits) {
  config_.mode = SandboxMode::kUnsandboxed;
  config_.bwrap_path = "/nonexistent/bwrap";
  SandboxLimits limits;
  limits.wall_time_ms = 500;
  auto outcome = Run({"sh", "-c", "echo $HOME; sleep 30"}, limits);
  ASSERT_TRUE(outcome) << outcome.error().message();
  EXPECT_EQ(outcome->mode, SandboxMode::kUnsandboxed);
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_EQ(outcome->output_tail, "/tmp\n");
}

TEST_F(SandboxTest, LimitsAndShapesOutsideTheirBoundsAreRefused) {
  SandboxLimits limits;
  limits.wall_time_ms = 0;
  EXPECT_EQ(Run({"true"}, limits).error().code(), ErrorCode::kInvalidArgument);
  limits = {};
  limits.max_processes = kMaxProcesses + 1;
  EXPECT_EQ(Run({"true"}, limits).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Run({}).error().code(), ErrorCode::kInvalidArgument);
  SandboxCommand command;
  command.argv = {"true"};
  command.work_tree = work_tree_;
  command.cwd = "/etc";
  auto outside = RunSandboxed(command, {}, config_);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), ErrorCode::kPermissionDenied);
}

TEST(SandboxCommandLineTest, NamesEveryIsolation) {
  SandboxCommand command{{"make", "test"}, "/repo", "/repo/sub", {"/repo/.git"}};
  SandboxConfig config;
  std::vector<std::string> line = BubblewrapCommandLine(command, config, ProcessLimitMechanism::kRlimitNproc, 64);
  std::string joined;
  for (const auto& word : line) joined += word + " ";
  EXPECT_EQ(joined,
            "/usr/bin/bwrap --die-with-parent --new-session --unshare-net --unshare-pid --unshare-ipc --unshare-uts "
            "--unshare-cgroup-try --unshare-user --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp "
            "--bind /repo /repo --ro-bind /repo/.git /repo/.git --chdir /repo/sub -- /usr/bin/prlimit --nproc=64:64 -- "
            "make test ");
}

// A process killed inside a check leaves its cgroup behind, and a later
// process with the same pid must still get one: a stale (empty) name is
// taken over, a live (non-empty) one is skipped, never removed.
TEST(MakeFreshDirectoryTest, TakesOverAStaleEmptyNameAndSkipsALiveOne) {
  testing::TempDir dir;
  const std::string prefix = (dir.path() / "telic-check-7-").string();
  fs::create_directory(prefix + "0");  // left by a dead process
  fs::create_directory(prefix + "1");
  std::ofstream(prefix + "1/cgroup.procs") << "4242\n";  // a live one
  auto first = MakeFreshDirectory(prefix, 0);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(*first, prefix + "0");
  auto second = MakeFreshDirectory(prefix, 1);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(*second, prefix + "2");
  EXPECT_TRUE(fs::exists(prefix + "1/cgroup.procs")) << "a live directory is never removed";
  auto nowhere = MakeFreshDirectory((dir.path() / "missing/x-").string(), 0);
  ASSERT_FALSE(nowhere);
  EXPECT_NE(nowhere.error().message().find("missing/x-0"), std::string::npos) << nowhere.error().message();
}

}  // namespace
}  // namespace telic::observation
