// The SQLite connection plumbing shared by the SQLite run and task stores:
// prepared statements (cached per connection or one-off), transactions,
// error mapping, the switch to WAL, and the row adapters of the record codec.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/record_codec.h"

namespace telic::store {

// How long any step waits for another connection's lock before giving up.
inline constexpr int kSqliteBusyTimeoutMs = 5000;

// A connection's prepared statements, kept for its lifetime (issue 18: the
// hot paths ran the SQL parser on every call). Used only under the store's
// mutex, like the connection itself.
class StmtCache {
 public:
  explicit StmtCache(sqlite3* db) : db_(db) {}
  ~StmtCache() {
    for (auto& [sql, entry] : entries_) sqlite3_finalize(entry.stmt);
  }
  StmtCache(const StmtCache&) = delete;
  StmtCache& operator=(const StmtCache&) = delete;

  sqlite3* db() const { return db_; }
  // The cached statement for `sql`, reset and marked busy; nullptr (with
  // *rc set) when it does not prepare, or when it is already busy (a nested
  // use of the same SQL: the caller prepares its own).
  sqlite3_stmt* Acquire(const std::string& sql, int* rc) {
    auto it = entries_.find(sql);
    if (it == entries_.end()) {
      sqlite3_stmt* stmt = nullptr;
      *rc = sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
      if (*rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return nullptr;
      }
      it = entries_.emplace(sql, Entry{stmt, false}).first;
    }
    *rc = SQLITE_OK;
    if (it->second.busy) return nullptr;
    it->second.busy = true;
    return it->second.stmt;
  }
  // Resets a statement from Acquire (ending any read it holds) for the next use.
  void Release(sqlite3_stmt* stmt) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (auto& [sql, entry] : entries_) {
      if (entry.stmt == stmt) {
        entry.busy = false;
        return;
      }
    }
  }

 private:
  struct Entry {
    sqlite3_stmt* stmt;
    bool busy;
  };
  sqlite3* db_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// The WAL checkpointer: the write connection's automatic checkpoint (which
// runs inside the COMMIT that crosses 1,000 WAL pages, with two fsyncs and
// the copy of every page) is replaced by PASSIVE checkpoints on a thread
// with its own connection, started when a commit leaves kCheckpointPages
// more frames in the WAL. A checkpoint only copies committed pages into the
// database file; durability of a commit is its WAL fsync, unchanged.
//
// A checkpoint cycle ends with the WAL complete, so that it is reused from
// its start (D-P16). SQLite reuses the WAL only when a write transaction
// begins with every frame already copied; a background pass never leaves it
// so while commits keep arriving (they append during the pass), and the WAL
// would grow by every commit's pages for the life of the process. So the
// cycle goes on after its first pass: further background passes while the

// A prepared statement: finalised on scope exit, or, when it came from a
// StmtCache, reset and returned to it.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  Stmt(StmtCache& cache, const std::string& sql) : db_(cache.db()) {
    stmt_ = cache.Acquire(sql, &rc_);
    if (stmt_) {
      cache_ = &cache;
    } else if (rc_ == SQLITE_OK) {
      rc_ = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr);  // busy in an outer scope
    }
  }
  ~Stmt() {
    if (cache_) {
      cache_->Release(stmt_);
    } else {
      sqlite3_finalize(stmt_);
    }
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::optional<std::string>& v) {
    if (v) return Bind(i, std::string_view(*v));
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  // Ends the statement's current use and clears its bindings, to run it again.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string Text(int col) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  std::optional<std::string> OptText(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return Text(col);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  bool IsInt(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_INTEGER; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  StmtCache* cache_ = nullptr;
  int rc_;
};

// A failed step on `db` as a telic error: kUnavailable for a busy or locked
// database, kInternal otherwise; the message names `what`.
Error SqlError(sqlite3* db, std::string_view what);

// Runs `sql` (one or more statements without parameters).
[[nodiscard]] Status Exec(sqlite3* db, const char* sql);

// Switches the ledger to WAL (a no-op when it already is), waiting up to
// kSqliteBusyTimeoutMs for other connections (see the .cc for why the wait
// is not the busy handler's).
[[nodiscard]] Status EnableWal(sqlite3* db);

// Rolls back an open transaction unless Commit() was reached.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status BeginImmediate() {
    TELIC_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
    open_ = true;
    return Ok();
  }
  Status Commit() {
    TELIC_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
    open_ = false;
    return Ok();
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};


// The first column of the first row of `sql` with `arg` bound to ?1; -1 when
// there is no row. On the cached statement, or prepared for this call only
// (rare paths such as run deletion that do not hold a statement cache).
[[nodiscard]] Result<int64_t> QueryInt(StmtCache& cache, const char* sql, std::string_view arg);
[[nodiscard]] Result<int64_t> QueryInt(sqlite3* db, const char* sql, std::string_view arg);

// The current row of a statement, for the record codec.
class SqliteRow final : public RowReader {
 public:
  explicit SqliteRow(const Stmt& stmt) : stmt_(stmt) {}
  bool IsNull(int column) const override { return stmt_.IsNull(column); }
  std::string Text(int column) const override { return stmt_.Text(column); }
  std::optional<int64_t> Int(int column) const override {
    if (!stmt_.IsInt(column)) return std::nullopt;
    return stmt_.Int(column);
  }

 private:
  const Stmt& stmt_;
};

// Binds a record's columns to a statement's parameters, from `first` on.
class SqliteBinder final : public RowWriter {
 public:
  explicit SqliteBinder(Stmt& stmt, int first = 1) : stmt_(stmt), next_(first) {}
  void Text(std::string_view value) override { stmt_.Bind(next_++, value); }
  void Null() override { stmt_.Bind(next_++, std::optional<std::string>()); }
  void Int(int64_t value) override { stmt_.Bind(next_++, value); }

 private:
  Stmt& stmt_;
  int next_;
};

}  // namespace telic::store
