#include "store/pg_connection.h"

#include <charconv>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "base/ids.h"

namespace telic::store {
namespace {

// Which statements each connection has prepared (issue 18, D-P15). A
// statement with parameters runs as a named prepared statement, so the
// server parses and plans its text once per connection instead of on every
// call (the unnamed statement of PQexecParams is parsed and planned each
// time). Prepared statements are session state the server keeps until the
// connection closes, whatever happens to the transaction that prepared them.
//
// Names are unique to one connection of one process ("telic_<random>_<conn>_
// <n>"), so a server session reached through a pooler in transaction mode,
// which moves the client between sessions, can never hold a name of ours
// that means another text: it answers 26000 (no such statement) or, were a
// name already there, 42P05. Either makes that connection prepare nothing
// again and run every statement unnamed. Only modest texts are prepared (at
// most kMaxParams parameters and kMaxTextBytes bytes: a bulk insert of many
// trace events, whose text varies with the batch, runs unnamed), at most
// kMaxNamesPerConnection per connection.
class PreparedStatements {
 public:
  static PreparedStatements& Instance() {
    static PreparedStatements* instance = new PreparedStatements();  // never destroyed: used until exit
    return *instance;
  }
  // The name to run `sql` (with `params` parameters) under on `conn`, and
  // whether it must be prepared first; an empty name: run it unnamed.
  std::pair<std::string, bool> Lookup(PGconn* conn, const std::string& sql, int params) {
    if (params == 0 || params > kMaxParams || sql.size() > kMaxTextBytes) return {"", false};
    std::lock_guard lock(mutex_);
    auto [state, opened] = connections_.try_emplace(conn);
    if (opened) state->second.serial = ++serials_;
    Connection& connection = state->second;
    if (connection.unnamed_only) return {"", false};
    if (auto found = connection.names.find(sql); found != connection.names.end()) {
      return {found->second.name, !found->second.prepared};
    }
    if (connection.names.size() >= kMaxNamesPerConnection) return {"", false};
    std::string name = fmt::format("telic_{}_{}_{}", process_tag_, connection.serial, connection.names.size() + 1);
    connection.names.emplace(sql, Statement{name, false});
    return {name, true};
  }
  // `sql`'s preparation on `conn` succeeded.
  void Prepared(PGconn* conn, const std::string& sql) {
    std::lock_guard lock(mutex_);
    auto state = connections_.find(conn);
    if (state == connections_.end()) return;
    if (auto found = state->second.names.find(sql); found != state->second.names.end()) found->second.prepared = true;
  }
  // After 26000 or 42P05 on `conn`: run everything unnamed there from now on.
  void StopPreparing(PGconn* conn) {
    std::lock_guard lock(mutex_);
    Connection& connection = connections_[conn];
    connection.names.clear();
    connection.unnamed_only = true;
  }
  // Before `conn` is closed, and when a connection is opened (its address
  // may be a closed one's).
  void Forget(PGconn* conn) {
    std::lock_guard lock(mutex_);
    connections_.erase(conn);
  }

 private:
  static constexpr int kMaxParams = 64;
  static constexpr size_t kMaxTextBytes = 8192;
  static constexpr size_t kMaxNamesPerConnection = 256;
  struct Statement {
    std::string name;
    bool prepared;
  };
  struct Connection {
    unsigned long long serial = 0;
    bool unnamed_only = false;
    std::unordered_map<std::string, Statement> names;  // by statement text
  };
  PreparedStatements() : process_tag_(RandomHex(4)) {}

  const std::string process_tag_;  // 8 hex digits, per process
  std::mutex mutex_;
  unsigned long long serials_ = 0;
  std::unordered_map<PGconn*, Connection> connections_;
};

// 26000 (no such prepared statement) or 42P05 (the name is taken): the server
// session is not the one telic prepared on; the connection runs unnamed.
bool LostPreparedStatement(PGconn* conn, const PgFailure& failure) {
  if (failure.sqlstate != "26000" && failure.sqlstate != "42P05") return false;
  PreparedStatements::Instance().StopPreparing(conn);
  return true;
}

}  // namespace

void ForgetPreparedStatements(PGconn* conn) { PreparedStatements::Instance().Forget(conn); }

// A failed statement, mapped to a telic error. 40001/40P01 are retryable.
Error ToError(const PgFailure& f, std::string_view what) {
  ErrorCode code = ErrorCode::kInternal;
  const std::string& s = f.sqlstate;
  if (s.empty() || s.starts_with("08") || s == "57P01" || s == "57P02" || s == "57P03" || s == "57014" ||
      s == "55P03" || s == "40001" || s == "40P01" || s.starts_with("53")) {
    code = ErrorCode::kUnavailable;
  } else if (s == "23505") {
    code = ErrorCode::kAlreadyExists;
  }
  std::string message = f.message;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return Error(code, fmt::format("PostgreSQL {} failed: {}", what, message));
}

// Serialization failures and deadlocks; and 26000 / 42P05, a server session
// that is not the one telic prepared on, after which the connection runs
// statements unnamed (PreparedStatements::StopPreparing).
bool Retryable(const PgFailure& f) {
  return f.sqlstate == "40001" || f.sqlstate == "40P01" || f.sqlstate == "26000" || f.sqlstate == "42P05";
}

// The failure a statement's result (or its absence) reports.
PgFailure FailureOf(PGconn* conn, const PGresult* result) {
  PgFailure failure;
  if (result) {
    const char* state = pq::resultErrorField(result, PG_DIAG_SQLSTATE);
    if (state) failure.sqlstate = state;
    failure.message = pq::resultErrorMessage(result);
  }
  if (failure.message.empty()) failure.message = pq::errorMessage(conn);
  return failure;
}

namespace {

// Runs one statement; the rows on success, the failure otherwise.
std::expected<ResultPtr, PgFailure> RunOnce(PGconn* conn, const std::string& sql, const Params& params) {
  auto values = params.Pointers();
  auto lengths = params.Lengths();
  auto [name, prepare] = PreparedStatements::Instance().Lookup(conn, sql, params.size());
  if (prepare) {
    ResultPtr prepared(pq::prepare(conn, name.c_str(), sql.c_str(), params.size(), nullptr), &pq::clear);
    if (!prepared || pq::resultStatus(prepared.get()) != PGRES_COMMAND_OK) {
      return std::unexpected(FailureOf(conn, prepared.get()));
    }
    PreparedStatements::Instance().Prepared(conn, sql);
  }
  ResultPtr result(name.empty() ? pq::execParams(conn, sql.c_str(), params.size(), nullptr, values.data(),
                                                 lengths.data(), nullptr, 0)
                                : pq::execPrepared(conn, name.c_str(), params.size(), values.data(), lengths.data(),
                                                   nullptr, 0),
                   &pq::clear);
  ExecStatusType status = result ? pq::resultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return std::unexpected(FailureOf(conn, result.get()));
}

}  // namespace

// RunOnce, again unnamed when the session lost a prepared statement (outside
// a transaction: inside one, the failure aborted it and the caller's retry
// decides).
std::expected<ResultPtr, PgFailure> Run(PGconn* conn, const std::string& sql, const Params& params) {
  auto result = RunOnce(conn, sql, params);
  if (!result && LostPreparedStatement(conn, result.error()) && pq::transactionStatus(conn) == PQTRANS_IDLE) {
    return RunOnce(conn, sql, params);
  }
  return result;
}

namespace {

// What a pipeline queued, in order: a statement (its index) or the
// preparation of one (its text), each of which answers with one result.
struct Queued {
  size_t statement;
  std::string prepared;  // non-empty: the preparation of this text
};

// Sends `statements` (each preparing its text first when the connection has
// not) into the pipeline, recording in `queued` what answers; the failure
// that stopped the sending, if any.
std::optional<PgFailure> SendPipeline(PGconn* conn, const std::vector<std::pair<std::string, Params>>& statements,
                                      std::vector<Queued>& queued) {
  queued.reserve(statements.size() * 2);
  std::set<std::string, std::less<>> preparing;  // in this pipeline: a text repeated is prepared once
  for (size_t i = 0; i < statements.size(); ++i) {
    const auto& [sql, params] = statements[i];
    auto values = params.Pointers();
    auto lengths = params.Lengths();
    auto [name, prepare] = PreparedStatements::Instance().Lookup(conn, sql, params.size());
    if (prepare && preparing.insert(name).second) {
      if (pq::sendPrepare(conn, name.c_str(), sql.c_str(), params.size(), nullptr) != 1) {
        PgFailure sent = FailureOf(conn, nullptr);
        sent.statement = i;
        return sent;
      }
      queued.push_back(Queued{i, sql});
    }
    const int sent = name.empty() ? pq::sendQueryParams(conn, sql.c_str(), params.size(), nullptr, values.data(),
                                                        lengths.data(), nullptr, 0)
                                  : pq::sendQueryPrepared(conn, name.c_str(), params.size(), values.data(),
                                                          lengths.data(), nullptr, 0);
    if (sent != 1) {
      PgFailure unsent = FailureOf(conn, nullptr);
      unsent.statement = i;
      return unsent;
    }
    queued.push_back(Queued{i, ""});
  }
  return std::nullopt;
}

// Reads the answer of everything `queued` and the sync, then leaves pipeline
// mode (unless the connection broke): the statements' results in order, and
// the first failure in `failure` when none was set before. Each queued item
// yields its result, then a null; the sync yields PGRES_PIPELINE_SYNC.
// Everything is read, even after a failure, so the connection can leave
// pipeline mode. A preparation that succeeded holds on the server whatever
// follows it.
std::vector<ResultPtr> ReadPipeline(PGconn* conn, const std::vector<Queued>& queued,
                                    std::optional<PgFailure>& failure) {
  std::vector<ResultPtr> results;
  for (const Queued& item : queued) {
    ResultPtr result(pq::getResult(conn), &pq::clear);
    ExecStatusType status = result ? pq::resultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && !failure) {
      failure = FailureOf(conn, result.get());
      failure->statement = item.statement;
    }
    if (!item.prepared.empty()) {
      if (status == PGRES_COMMAND_OK) PreparedStatements::Instance().Prepared(conn, item.prepared);
    } else {
      results.push_back(std::move(result));
    }
    while (PGresult* extra = pq::getResult(conn)) pq::clear(extra);
    if (pq::status(conn) == CONNECTION_BAD) break;
  }
  if (pq::status(conn) != CONNECTION_BAD) {
    while (PGresult* rest = pq::getResult(conn)) {
      bool synced = pq::resultStatus(rest) == PGRES_PIPELINE_SYNC;
      pq::clear(rest);
      if (synced) break;
    }
    (void)pq::exitPipelineMode(conn);
  }
  return results;
}

}  // namespace

// Runs `statements` in order in one round trip (libpq pipeline mode: every
// statement is sent, then one sync, then the results are read); the rows of
// each on success, else the first failure. Without a BEGIN among them, the
// statements run in one implicit transaction; either way a failure aborts
// the ones after it (PGRES_PIPELINE_ABORTED), COMMIT included. The connection
// leaves pipeline mode before this returns, unless it broke.
std::expected<std::vector<ResultPtr>, PgFailure> RunPipelined(
    PGconn* conn, const std::vector<std::pair<std::string, Params>>& statements) {
  if (pq::enterPipelineMode(conn) != 1) return std::unexpected(FailureOf(conn, nullptr));
  std::vector<Queued> queued;
  std::optional<PgFailure> failure = SendPipeline(conn, statements, queued);
  if (pq::pipelineSync(conn) != 1) {
    PgFailure broken = failure.value_or(FailureOf(conn, nullptr));
    (void)pq::exitPipelineMode(conn);
    return std::unexpected(broken);
  }
  std::vector<ResultPtr> results = ReadPipeline(conn, queued, failure);
  if (failure) {
    LostPreparedStatement(conn, *failure);
    return std::unexpected(*failure);
  }
  if (results.size() != statements.size()) {
    PgFailure broken = FailureOf(conn, nullptr);
    broken.statement = results.size();
    return std::unexpected(broken);
  }
  return results;
}

// Runs a script of several statements (simple query protocol, no parameters).
std::expected<void, PgFailure> RunScript(PGconn* conn, const char* sql) {
  ResultPtr result(pq::exec(conn, sql), &pq::clear);
  ExecStatusType status = result ? pq::resultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return {};
  PgFailure failure;
  if (result) {
    const char* state = pq::resultErrorField(result.get(), PG_DIAG_SQLSTATE);
    if (state) failure.sqlstate = state;
    failure.message = pq::resultErrorMessage(result.get());
  }
  if (failure.message.empty()) failure.message = pq::errorMessage(conn);
  return std::unexpected(failure);
}

std::string Text(const PGresult* r, int row, int col) {
  return std::string(pq::getvalue(r, row, col), static_cast<size_t>(pq::getlength(r, row, col)));
}

std::optional<std::string> OptText(const PGresult* r, int row, int col) {
  if (pq::getisnull(r, row, col)) return std::nullopt;
  return Text(r, row, col);
}

namespace {

std::optional<int64_t> ParseInt(const PGresult* r, int row, int col) {
  const char* text = pq::getvalue(r, row, col);
  const char* end = text + pq::getlength(r, row, col);
  int64_t value = 0;
  auto [stop, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || stop != end || text == end) return std::nullopt;
  return value;
}

}  // namespace

int64_t Int(const PGresult* r, int row, int col) { return ParseInt(r, row, col).value_or(0); }

bool PgRow::IsNull(int column) const { return pq::getisnull(result_, row_, column); }

std::string PgRow::Text(int column) const { return store::Text(result_, row_, column); }

std::optional<int64_t> PgRow::Int(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ParseInt(result_, row_, column);
}

}  // namespace telic::store
