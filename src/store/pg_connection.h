// The PostgreSQL plumbing shared by the PostgreSQL run and task stores and
// their schema: statements (prepared per connection, pipelined), failures
// mapped to telic errors, transactions retried on serialization failures,
// reads retried once on a dead connection, and the row adapters of the
// record codec.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/libpq.h"
#include "store/record_codec.h"

namespace telic::store {

// Serialization failures and deadlocks are retried this many times.
inline constexpr int kPgMaxAttempts = 8;

using ResultPtr = std::unique_ptr<PGresult, decltype(&pq::clear)>;

// Why a statement failed, with the SQLSTATE when the server sent one.
struct PgFailure {
  std::string sqlstate;
  std::string message;
  // In a pipeline (RunPipelined): the index of the statement that failed,
  // or of the first one without a result when the connection broke.
  size_t statement = 0;
};

// A failed statement, mapped to a telic error. 40001/40P01 are retryable.
Error ToError(const PgFailure& f, std::string_view what);

// Serialization failures and deadlocks; and 26000 / 42P05, a server session
// that is not the one telic prepared on, after which the connection runs
// statements unnamed (PreparedStatements::StopPreparing).
bool Retryable(const PgFailure& f);

// Parameters of one statement as text (nullopt is SQL NULL).
class Params {
 public:
  Params& Add(std::string_view v) {
    values_.emplace_back(std::string(v));
    return *this;
  }
  Params& Add(const std::string& v) { return Add(std::string_view(v)); }
  Params& Add(const char* v) { return Add(std::string_view(v)); }
  Params& Add(int64_t v) {
    values_.emplace_back(std::to_string(v));
    return *this;
  }
  Params& Add(const std::optional<std::string>& v) {
    values_.push_back(v);
    return *this;
  }
  std::vector<const char*> Pointers() const {
    std::vector<const char*> out;
    for (const auto& v : values_) out.push_back(v ? v->c_str() : nullptr);
    return out;
  }
  std::vector<int> Lengths() const {
    std::vector<int> out;
    for (const auto& v : values_) out.push_back(v ? static_cast<int>(v->size()) : 0);
    return out;
  }
  int size() const { return static_cast<int>(values_.size()); }

 private:
  std::vector<std::optional<std::string>> values_;
};

// The failure a statement's result (or its absence) reports.
PgFailure FailureOf(PGconn* conn, const PGresult* result);

// Forgets what was prepared on `conn`: before it is closed, and when a
// connection is opened (its address may be a closed one's).
void ForgetPreparedStatements(PGconn* conn);

// RunOnce, again unnamed when the session lost a prepared statement (outside
// a transaction: inside one, the failure aborted it and the caller's retry
// decides).
std::expected<ResultPtr, PgFailure> Run(PGconn* conn, const std::string& sql, const Params& params = Params());

// Runs `statements` in order in one round trip (libpq pipeline mode: every
// statement is sent, then one sync, then the results are read); the rows of
// each on success, else the first failure. Without a BEGIN among them, the
// statements run in one implicit transaction; either way a failure aborts
// the ones after it (PGRES_PIPELINE_ABORTED), COMMIT included. The connection
// leaves pipeline mode before this returns, unless it broke.
std::expected<std::vector<ResultPtr>, PgFailure> RunPipelined(
    PGconn* conn, const std::vector<std::pair<std::string, Params>>& statements);

// Runs a script of several statements (simple query protocol, no parameters).
std::expected<void, PgFailure> RunScript(PGconn* conn, const char* sql);

// A column of a result row as text ("" for NULL), or nullopt for NULL.
std::string Text(const PGresult* r, int row, int col);
std::optional<std::string> OptText(const PGresult* r, int row, int col);
// An integer column (PostgreSQL sends its text as a decimal number); 0 when
// the text is not one. For columns the server computes or declares NOT NULL
// integer; rows of the ledger decode through PgRow, which reports kDataLoss.
int64_t Int(const PGresult* r, int row, int col);

// One row of a result, for the record codec.
class PgRow final : public RowReader {
 public:
  PgRow(const PGresult* result, int row) : result_(result), row_(row) {}
  bool IsNull(int column) const override;
  std::string Text(int column) const override;
  std::optional<int64_t> Int(int column) const override;

 private:
  const PGresult* result_;
  int row_;
};

// Appends a record's columns to a statement's parameters.
class ParamsWriter final : public RowWriter {
 public:
  explicit ParamsWriter(Params& params) : params_(params) {}
  void Text(std::string_view value) override { params_.Add(value); }
  void Null() override { params_.Add(std::optional<std::string>()); }
  void Int(int64_t value) override { params_.Add(value); }

 private:
  Params& params_;
};

// The outcome of one transaction attempt: a telic error, or a statement
// failure (retried when it is a serialization failure or deadlock).
struct Abort {
  std::optional<Error> error;
  PgFailure failure;
  // COMMIT was sent and may have taken effect: never retried.
  bool commit_sent = false;
};
using Attempt = std::expected<void, Abort>;

inline Abort Because(Error error) { return Abort{std::move(error), {}}; }

#define PG_TRY(var, expr)                                                      \
  auto var##_r = (expr);                                                       \
  if (!var##_r) return std::unexpected(Abort{std::nullopt, var##_r.error()}); \
  auto& var = *var##_r
#define PG_DO(expr)                                                                    \
  do {                                                                                 \
    auto pg_do_r = (expr);                                                             \
    if (!pg_do_r) return std::unexpected(Abort{std::nullopt, pg_do_r.error()});        \
  } while (0)

// Runs one read statement on a pooled connection; a connection found dead
// (the server restarted, or an idle connection was cut) is replaced once.
template <typename AcquireFn>
Result<ResultPtr> ReadWithReconnect(AcquireFn acquire, std::string_view what, const std::string& sql,
                                    const Params& params = Params()) {
  for (int attempt = 1;; ++attempt) {
    TELIC_ASSIGN_OR_RETURN(auto lease, acquire());
    auto rows = Run(lease.get(), sql, params);
    if (rows) return std::move(*rows);
    if (attempt == 1 && pq::status(lease.get()) == CONNECTION_BAD) continue;
    return std::unexpected(ToError(rows.error(), what));
  }
}

// Runs `attempt_once(conn)`, one whole transaction (BEGIN to COMMIT), on a
// pooled connection until it commits. Serialization failures and deadlocks
// are retried (kPgMaxAttempts); a connection that died before COMMIT was sent
// took its transaction with it, so the change is retried once on a fresh
// one; a COMMIT that was sent and failed, or whose answer was lost, has an
// unknown outcome and is never retried.
template <typename AcquireFn, typename AttemptFn>
Status RetryTransaction(AcquireFn acquire, AttemptFn attempt_once) {
  for (int attempt = 1;; ++attempt) {
    TELIC_ASSIGN_OR_RETURN(auto lease, acquire());
    PGconn* conn = lease.get();
    auto done = attempt_once(conn);
    if (done) return Ok();
    const Abort& abort = done.error();
    if (pq::status(conn) != CONNECTION_BAD && pq::transactionStatus(conn) != PQTRANS_IDLE) {
      (void)RunScript(conn, "ROLLBACK");
    }
    if (abort.error) return std::unexpected(*abort.error);
    if (abort.commit_sent) return std::unexpected(ToError(abort.failure, "commit"));
    if (pq::status(conn) == CONNECTION_BAD && attempt == 1) continue;
    if (!Retryable(abort.failure) || attempt >= kPgMaxAttempts) return std::unexpected(ToError(abort.failure, "write"));
    std::this_thread::sleep_for(std::chrono::milliseconds(attempt * 2));
  }
}

// Runs `body` between BEGIN and COMMIT (RetryTransaction's rules).
template <typename AcquireFn, typename BodyFn>
Status InTransaction(AcquireFn acquire, BodyFn body) {
  return RetryTransaction(acquire, [&](PGconn* conn) -> Attempt {
    if (auto begun = RunScript(conn, "BEGIN"); !begun) return std::unexpected(Abort{std::nullopt, begun.error()});
    if (auto written = body(conn); !written) return written;
    if (auto committed = RunScript(conn, "COMMIT"); !committed) {
      return std::unexpected(Abort{std::nullopt, committed.error(), /*commit_sent=*/true});
    }
    return {};
  });
}

}  // namespace telic::store
