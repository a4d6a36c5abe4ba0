#include "store/sqlite_checkpointer.h"

#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>

namespace telic::store {

std::unique_ptr<Checkpointer> Checkpointer::Install(const std::string& path, sqlite3* writer, int cycle_pages) {
  auto checkpointer = std::unique_ptr<Checkpointer>(new Checkpointer(path, writer, cycle_pages));
  sqlite3_wal_hook(writer, &Checkpointer::OnCommit, checkpointer.get());  // replaces the automatic checkpoint
  return checkpointer;
}

Checkpointer::~Checkpointer() {
  sqlite3_wal_autocheckpoint(writer_, kCheckpointPages);  // removes OnCommit
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  sqlite3_close(db_);
}

bool Checkpointer::Start() {
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK ||
      sqlite3_exec(db_, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close(db_);
    db_ = nullptr;
    return false;
  }
  sqlite3_busy_timeout(db_, 5000);
  // The thread starts with every signal blocked (it inherits the mask), so
  // a SIGTERM meant for the server's signal thread is never delivered here.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] { Run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return true;
}

int Checkpointer::OnCommit(void* self, sqlite3* writer, const char* schema, int wal_pages) {
  auto* checkpointer = static_cast<Checkpointer*>(self);
  checkpointer->AfterCommit(writer, schema, wal_pages);
  return SQLITE_OK;
}

void Checkpointer::AfterCommit(sqlite3* writer, const char* schema, int wal_pages) {
  bool pass_pending = false;
  int copied = 0;
  {
    std::lock_guard lock(mutex_);
    pass_pending = due_ || passing_;
    copied = copied_;
  }
  switch (cycle_.AfterCommit(wal_pages, pass_pending, copied)) {
    case CheckpointCycle::Step::kNone:
      return;
    case CheckpointCycle::Step::kStartCycle:
      if (!thread_.joinable() && !failed_ && !Start()) failed_ = true;
      if (failed_) {
        // What SQLite's own automatic checkpoint (a WAL hook too) does, in
        // the commit, at this hook's threshold: all of it, here.
        sqlite3_wal_checkpoint_v2(writer, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        cycle_.TailCopied(true);
        return;
      }
      {
        std::lock_guard lock(mutex_);
        copied_ = 0;  // nothing of this cycle is known copied before its first pass
      }
      RequestPass();
      return;
    case CheckpointCycle::Step::kAskForPass:
      RequestPass();
      return;
    case CheckpointCycle::Step::kCopyTail: {
      int log = 0;
      int rc = sqlite3_wal_checkpoint_v2(writer, schema, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
      // Every frame in the database file: the next write transaction that
      // no reader of an older snapshot holds back reuses the WAL. Else a
      // reader still uses frames the tail could not copy (or another
      // process's checkpoint held the lock): the next commit tries again.
      cycle_.TailCopied(rc == SQLITE_OK && copied == log);
      if (rc == SQLITE_OK && copied != log) {
        std::lock_guard lock(mutex_);
        copied_ = copied;
      }
      return;
    }
  }
}

void Checkpointer::RequestPass() {
  {
    std::lock_guard lock(mutex_);
    due_ = true;
  }
  wake_.notify_one();
}

void Checkpointer::Run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || due_; });
    if (stop_) return;
    due_ = false;
    passing_ = true;
    lock.unlock();
    int log = 0, copied = 0;
    int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
    runs_.fetch_add(1);
    lock.lock();
    passing_ = false;
    if (rc == SQLITE_OK) copied_ = copied;
  }
}

}  // namespace telic::store
