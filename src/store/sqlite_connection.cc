#include "store/sqlite_connection.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include <fmt/format.h>

namespace telic::store {

Error SqlError(sqlite3* db, std::string_view what) {
  int rc = sqlite3_extended_errcode(db);
  ErrorCode code = (rc & 0xFF) == SQLITE_BUSY || (rc & 0xFF) == SQLITE_LOCKED ? ErrorCode::kUnavailable
                                                                               : ErrorCode::kInternal;
  return Error(code, fmt::format("SQLite {} failed: {}", what, sqlite3_errmsg(db)));
}

Status Exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return std::unexpected(SqlError(db, "statement"));
  return Ok();
}

// The wait is ours, not the busy handler's: converting a rollback-journal
// file upgrades the read lock the pragma already holds, and SQLite answers
// SQLITE_BUSY at once for such an upgrade rather than call the busy handler
// (two upgraders waiting on each other would deadlock). So concurrent first
// opens of a fresh ledger collide here; each retries with a growing,
// jittered pause until one has converted it and the rest find it in WAL.
Status EnableWal(sqlite3* db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSqliteBusyTimeoutMs);
  std::minstd_rand jitter(static_cast<unsigned>(::getpid()) ^ static_cast<unsigned>(reinterpret_cast<uintptr_t>(db)));
  std::string mode;
  for (int attempt = 0;; ++attempt) {
    {
      Stmt s(db, "PRAGMA journal_mode=WAL");
      if (!s.ok()) return std::unexpected(SqlError(db, "journal_mode=WAL"));
      int rc = s.Step();
      if (rc == SQLITE_ROW) {
        mode = s.Text(0);  // the mode in force afterwards: "wal", or the old one if it could not change
        if (mode == "wal") return Ok();
      } else if ((rc & 0xFF) != SQLITE_BUSY && (rc & 0xFF) != SQLITE_LOCKED) {
        return std::unexpected(SqlError(db, "journal_mode=WAL"));
      }
    }  // the statement is finalised: this connection holds no lock while it waits
    if (std::chrono::steady_clock::now() >= deadline) {
      return Fail(ErrorCode::kUnavailable,
                  mode.empty() ? fmt::format("SQLite journal_mode=WAL failed: the ledger stayed locked for {} ms",
                                             kSqliteBusyTimeoutMs)
                               : fmt::format("SQLite journal_mode=WAL failed: the journal mode stayed {}", mode));
    }
    int pause_ms = std::min(1 << std::min(attempt, 5), 32);
    std::this_thread::sleep_for(std::chrono::microseconds(pause_ms * 1000 + static_cast<int>(jitter() % 1000)));
  }
}


namespace {

Result<int64_t> StepInt(Stmt& s, sqlite3* db, std::string_view arg) {
  if (!s.ok()) return std::unexpected(SqlError(db, "prepare"));
  s.Bind(1, arg);
  int rc = s.Step();
  if (rc == SQLITE_ROW) return s.Int(0);
  if (rc == SQLITE_DONE) return int64_t{-1};
  return std::unexpected(SqlError(db, "query"));
}

}  // namespace

Result<int64_t> QueryInt(StmtCache& cache, const char* sql, std::string_view arg) {
  Stmt s(cache, sql);
  return StepInt(s, cache.db(), arg);
}

Result<int64_t> QueryInt(sqlite3* db, const char* sql, std::string_view arg) {
  Stmt s(db, sql);
  return StepInt(s, db, arg);
}

}  // namespace telic::store
