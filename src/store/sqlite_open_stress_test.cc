// Many processes opening one SQLite ledger at the same moment (issue 21
// item 4): every one of them must open it, read and write. Before the fix,
// about one open in a few hundred on a fresh ledger failed at once with
// "database is locked": `PRAGMA journal_mode=WAL` upgrades the read lock it
// already holds, and SQLite never calls the busy handler for that upgrade.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/ids.h"
#include "store/sqlite_store.h"
#include "testing/store_changes.h"
#include "testing/temp_dir.h"

namespace telic::store {
namespace {

constexpr int kProcesses = 16;
// 50 rounds; TELIC_OPEN_STRESS_ROUNDS (1-1000) sets another number, which the
// sanitizer stage of scripts/test uses to run a short form.
int Rounds() {
  const char* text = std::getenv("TELIC_OPEN_STRESS_ROUNDS");
  int rounds = text == nullptr ? 50 : std::atoi(text);
  return rounds >= 1 && rounds <= 1000 ? rounds : 50;
}

// A directory for the ledgers: on tmpfs when there is one (the race is about
// locks, not disks, and fsyncs on a disk would make 1,600 opens take
// minutes), else the usual temporary directory. Removed on scope exit.
class LedgerDir {
 public:
  LedgerDir() {
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) {
      path_ = std::filesystem::path("/dev/shm") / ("telic-open-stress-" + RandomHex(8));
      std::filesystem::create_directories(path_, ec);
      if (!ec) return;
    }
    path_ = fallback_.path();
  }
  ~LedgerDir() {
    std::error_code ec;
    if (path_ != fallback_.path()) std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  testing::TempDir fallback_;
  std::filesystem::path path_;
};

// The body of one child: open, one read, one write. Returns "" or the error.
std::string OpenReadWrite(const std::string& path, const std::string& run_id) {
  auto store = SqliteStore::Open(path);
  if (!store) return "open: " + store.error().message();
  if (auto runs = (*store)->ListRuns(1); !runs) return "read: " + runs.error().message();
  if (auto created = (*store)->CreateRun(testing::MinimalRunChange(run_id)); !created) {
    return "write: " + created.error().message();
  }
  return "";
}

// Forks kProcesses children that wait on one pipe and then all open `path`
// at once; returns the failures they reported (empty when all succeeded).
std::vector<std::string> OpenFromManyProcesses(const std::string& path, const std::string& tag) {
  int start[2], report[2];
  if (::pipe(start) != 0 || ::pipe(report) != 0) return {"pipe failed"};
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t child = ::fork();
    if (child < 0) return {"fork failed"};
    if (child == 0) {
      ::close(start[1]);
      ::close(report[0]);
      char byte;
      (void)::read(start[0], &byte, 1);  // returns 0 when the parent closes its end: the start signal
      std::string error = OpenReadWrite(path, tag + "-p" + std::to_string(i));
      if (error.empty()) ::_exit(0);
      std::string line = "process " + std::to_string(i) + ": " + error.substr(0, 400) + "\n";
      (void)!::write(report[1], line.data(), line.size());  // under PIPE_BUF: one atomic line
      ::_exit(1);
    }
    children.push_back(child);
  }
  ::close(start[0]);
  ::close(report[1]);
  ::close(start[1]);  // go
  std::vector<std::string> failures;
  size_t unsuccessful = 0;
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status)) failures.push_back("a child died with signal " + std::to_string(WTERMSIG(status)));
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) ++unsuccessful;
  }
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(report[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  ::close(report[0]);
  for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
    failures.push_back(text.substr(at, end - at));
  }
  if (failures.size() < unsuccessful) failures.push_back("a child failed without a report");
  return failures;
}

// Runs ListRuns on `path` from this process; the number of runs, or -1.
int64_t CountRuns(const std::string& path) {
  auto store = SqliteStore::Open(path);
  if (!store) return -1;
  auto runs = (*store)->ListRuns(100000);
  return runs ? static_cast<int64_t>(runs->size()) : -1;
}

TEST(SqliteOpenStressTest, SixteenProcessesOpenAFreshLedgerAtOnce) {
  LedgerDir dir;
  for (int round = 0; round < Rounds(); ++round) {
    std::string path = dir.File("fresh-" + std::to_string(round) + ".sqlite3");
    auto failures = OpenFromManyProcesses(path, "r" + std::to_string(round));
    ASSERT_EQ(failures, std::vector<std::string>{}) << "round " << round;
    EXPECT_EQ(CountRuns(path), kProcesses) << "round " << round;
  }
}

TEST(SqliteOpenStressTest, SixteenProcessesOpenAnExistingLedgerAtOnce) {
  LedgerDir dir;
  std::string path = dir.File("existing.sqlite3");
  ASSERT_EQ(OpenReadWrite(path, "seed"), "");
  for (int round = 0; round < Rounds(); ++round) {
    auto failures = OpenFromManyProcesses(path, "r" + std::to_string(round));
    ASSERT_EQ(failures, std::vector<std::string>{}) << "round " << round;
  }
  EXPECT_EQ(CountRuns(path), 1 + kProcesses * Rounds());
}

}  // namespace
}  // namespace telic::store
