// A writer process killed by SIGKILL at a chosen moment (tests only): the
// crash-durability tests fork a child that writes and reports each write it
// had acknowledged, kill it, then check the ledger against those reports.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace telic::testing {

// What the parent saw of a killed writer.
struct KilledWriter {
  bool started = false;           // the child acknowledged at least `acks_before_kill` writes
  int64_t last_acknowledged = -1; // the last value the child reported before it died
  bool killed = false;            // it died of the SIGKILL (not an early exit)
  int exit_code = 0;              // when it exited on its own: its code
};

// Forks a child that runs `child(report)` and never returns from it (it
// writes until killed; it calls _exit with a nonzero code when a write
// fails). `report(v)` tells the parent that the write `v` was acknowledged;
// it returns false when the parent is gone. The parent waits for
// `acks_before_kill` reports, then `delay`, then kills the child and reads
// every report it made before it died.
inline KilledWriter RunAndKillWriter(const std::function<void(const std::function<bool(int64_t)>&)>& child,
                                     int acks_before_kill, std::chrono::microseconds delay) {
  KilledWriter seen;
  int fds[2];
  if (::pipe(fds) != 0) return seen;
  pid_t pid = ::fork();
  if (pid < 0) return seen;
  if (pid == 0) {
    ::close(fds[0]);
    child([&](int64_t value) { return ::write(fds[1], &value, sizeof value) == sizeof value; });
    ::_exit(7);  // the child's loop is endless: reaching here is an early exit
  }
  ::close(fds[1]);
  int64_t value = 0;
  int read = 0;
  while (read < acks_before_kill && ::read(fds[0], &value, sizeof value) == static_cast<ssize_t>(sizeof value)) {
    seen.last_acknowledged = value;
    ++read;
  }
  seen.started = read == acks_before_kill;
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  while (::read(fds[0], &value, sizeof value) == static_cast<ssize_t>(sizeof value)) seen.last_acknowledged = value;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  seen.killed = WIFSIGNALED(status);
  seen.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  return seen;
}

}  // namespace telic::testing
