#include "store/pg_store.h"

#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "store/pg_connection.h"
#include "store/pg_schema.h"
#include "store/record_codec.h"
#include "store/store_rules.h"

namespace telic::store {
namespace {

// The reads of a run's state, shared by the single reads and the pipelined
// one: the run by id ($1), and its artifacts after a seq ($1, $2) in order.
const std::string& RunByIdSql() {
  static const std::string sql = fmt::format("SELECT {} FROM runs WHERE run_id = $1", RunColumns());
  return sql;
}
const std::string& ArtifactsAfterSql() {
  static const std::string sql =
      fmt::format("SELECT {}, seq FROM artifacts WHERE run_id = $1 AND seq > $2 ORDER BY seq", ArtifactColumns());
  return sql;
}
// An artifact ($1, $2) with its body after its columns.
const std::string& ArtifactWithBodySql() {
  static const std::string sql = [] {
    std::string columns;
    for (size_t at = 0, end = 0; at < ArtifactColumns().size(); at = end + 2) {
      end = std::min(ArtifactColumns().find(", ", at), ArtifactColumns().size());
      columns += (columns.empty() ? "a." : ", a.") + ArtifactColumns().substr(at, end - at);
    }
    return fmt::format("SELECT {}, b.body FROM artifacts a LEFT JOIN blobs b ON b.sha256 = a.sha256 "
                       "WHERE a.run_id = $1 AND a.artifact_id = $2",
                       columns);
  }();
  return sql;
}

// The rows of ArtifactsAfterSql(), with their seq.
Result<std::vector<ArtifactMeta>> ReadArtifactList(const PGresult* rows) {
  std::vector<ArtifactMeta> list;
  for (int i = 0; i < pq::ntuples(rows); ++i) {
    PgRow row(rows, i);
    TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, DecodeArtifactMeta(row));
    TELIC_ASSIGN_OR_RETURN(meta.seq,
                           DecodeIntColumn(row, kArtifactColumnCount, "artifacts", meta.run_id + "/" + meta.id, "seq"));
    list.push_back(std::move(meta));
  }
  return list;
}

// The statements of a run write, with what telic needs to read their failures.
struct WriteStatements {
  std::vector<std::pair<std::string, Params>> list;
  size_t first_artifact = 0;  // list[first_artifact + i] inserts change.artifacts[i]
  size_t artifact_count = 0;
};

// The run row locked, then what the checks read of an existing run: its
// artifact count and its last trace event (statements 1-3; 0 is BEGIN).
std::vector<std::pair<std::string, Params>> LockAndReadStatements(const std::string& id, bool created) {
  std::vector<std::pair<std::string, Params>> list;
  list.emplace_back("BEGIN", Params());
  list.emplace_back("SELECT version FROM runs WHERE run_id = $1 FOR UPDATE", Params().Add(id));
  if (!created) {
    list.emplace_back("SELECT count(*) FROM artifacts WHERE run_id = $1", Params().Add(id));
    list.emplace_back("SELECT sequence, hash FROM trace_events WHERE run_id = $1 ORDER BY sequence DESC LIMIT 1",
                      Params().Add(id));
  }
  return list;
}


// The checks on what LockAndReadStatements read (CheckChange); the run's
// stored trace state on success. A run created by this transaction has no
// artifacts or events yet.
std::expected<StoredRunState, Abort> CheckLockedRun(const std::vector<ResultPtr>& read, const std::string& id,
                                                    std::optional<int64_t> expected_version, const Change& change) {
  StoredRunState stored;
  if (pq::ntuples(read[1].get()) > 0) stored.version = Int(read[1].get(), 0, 0);
  if (expected_version && stored.version) {
    stored.artifacts = Int(read[2].get(), 0, 0);
    if (pq::ntuples(read[3].get()) > 0) {
      stored.trace_length = Int(read[3].get(), 0, 0);
      stored.trace_hash = Text(read[3].get(), 0, 1);
    }
  }
  if (Status checked = CheckChange(id, expected_version, stored, change); !checked) {
    return std::unexpected(Because(checked.error()));
  }
  return stored;
}

// "$first, $first+1, ..." for `count` parameters.
std::string Placeholders(int first, int count) {
  std::string out;
  for (int k = 0; k < count; ++k) out += fmt::format("{}${}", k == 0 ? "" : ", ", first + k);
  return out;
}

// Appends the run's INSERT (created) or UPDATE. The UPDATE divides by the
// number of rows it changed, so a version that moved (impossible while the
// row lock holds, and checked before) fails the statement and with it the
// COMMIT behind it: a pipelined write can never commit without its run row.
void AddRunStatement(WriteStatements& out, const std::string& id, std::optional<int64_t> expected_version,
                     const Change& change) {
  static const std::string insert =
      fmt::format("INSERT INTO runs ({}) VALUES ({})", RunColumns(), Placeholders(1, kRunColumnCount));
  static const std::string update = fmt::format(
      "WITH changed AS (UPDATE runs SET ({}) = ROW({}) WHERE run_id = ${} AND version = ${} RETURNING 1) "
      "SELECT 1 / count(*) FROM changed",
      RunColumns(), Placeholders(1, kRunColumnCount), kRunColumnCount + 1, kRunColumnCount + 2);
  Params p;
  ParamsWriter row(p);
  EncodeRun(change.run, row);
  if (!expected_version) {
    out.list.emplace_back(insert, std::move(p));
    return;
  }
  p.Add(id).Add(*expected_version);
  out.list.emplace_back(update, std::move(p));
}

// Appends the trace events, sealed onto the stored trace (SealEvents), in
// multi-row INSERTs of up to 500 rows (kEventColumnCount parameters each; a
// statement takes at most 65,535).
Attempt AddEventStatements(WriteStatements& out, const std::string& id, const StoredRunState& stored,
                           const Change& change) {
  auto sealed = SealEvents(id, change.events, stored.trace_length, stored.trace_hash);
  if (!sealed) return std::unexpected(Because(sealed.error()));
  constexpr size_t kRowsPerInsert = 500;
  for (size_t first = 0; first < sealed->size(); first += kRowsPerInsert) {
    Params p;
    ParamsWriter row(p);
    std::string values;
    int n = 0;
    for (size_t i = first; i < std::min(sealed->size(), first + kRowsPerInsert); ++i, ++n) {
      EncodeEvent((*sealed)[i], row);
      values += fmt::format("{}({})", values.empty() ? "" : ", ", Placeholders(n * kEventColumnCount + 1, kEventColumnCount));
    }
    out.list.emplace_back(fmt::format("INSERT INTO trace_events ({}) VALUES {}", EventColumns(), values), std::move(p));
  }
  return {};
}

// Every write of the change, then COMMIT, as statements for one pipeline.
WriteStatements WriteAndCommitStatements(const std::string& id, std::optional<int64_t> expected_version,
                                         const Change& change) {
  WriteStatements out;
  AddRunStatement(out, id, expected_version, change);
  // Blobs first, in digest order: concurrent writers sharing bodies then take
  // their row locks in the same order and cannot deadlock on each other.
  std::vector<const StoredArtifact*> by_digest;
  for (const StoredArtifact& a : change.artifacts) by_digest.push_back(&a);
  std::sort(by_digest.begin(), by_digest.end(),
            [](const StoredArtifact* a, const StoredArtifact* b) { return a->meta.sha256 < b->meta.sha256; });
  for (const StoredArtifact* a : by_digest) {
    out.list.emplace_back("INSERT INTO blobs (sha256, body) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING",
                          Params().Add(a->meta.sha256).Add(a->canonical_body));
  }
  // A taken artifact id is the unique violation of its INSERT.
  out.first_artifact = out.list.size();
  out.artifact_count = change.artifacts.size();
  static const std::string insert_artifact =
      fmt::format("INSERT INTO artifacts ({}) VALUES ({})", ArtifactColumns(), Placeholders(1, kArtifactColumnCount));
  for (const StoredArtifact& a : change.artifacts) {
    Params p;
    ParamsWriter row(p);
    EncodeArtifactMeta(a.meta, row);
    out.list.emplace_back(insert_artifact, std::move(p));
  }
  return out;
}

// What a failed write-and-commit pipeline means. A statement before COMMIT
// failed with its own result: COMMIT was aborted with it, the outcome is
// known (nothing written), and a unique violation names what was taken.
// COMMIT's own failure, or a connection that broke before every result came
// back, leaves the outcome unknown.
Abort WritePipelineFailure(const PgFailure& failure, const WriteStatements& writes, const std::string& id,
                           const Change& change, PGconn* conn) {
  const size_t commit = writes.list.size() - 1;
  if (failure.statement >= commit || pq::status(conn) == CONNECTION_BAD) {
    return Abort{std::nullopt, failure, /*commit_sent=*/true};
  }
  if (failure.sqlstate == "23505" && failure.statement == 0) {
    // Another creator committed the same run id first (the insert waited for it).
    return Because(RunAlreadyExists(id));
  }
  if (failure.sqlstate == "22012" && failure.statement == 0) {
    return Because(RunVersionConflict());
  }
  if (failure.sqlstate == "23505" && failure.statement >= writes.first_artifact &&
      failure.statement < writes.first_artifact + writes.artifact_count) {
    return Because(ArtifactAlreadyExists(change.artifacts[failure.statement - writes.first_artifact].meta.id));
  }
  return Abort{std::nullopt, failure};
}

// One run write in two round trips (libpq pipeline mode): BEGIN with the row
// lock and the reads the checks need; then, the checks passed, every write
// and COMMIT. The transaction is left open (or failed) for the caller to roll
// back when this fails.
Attempt WriteRunPipelined(PGconn* conn, std::string_view run_id, std::optional<int64_t> expected_version,
                          const Change& change) {
  const std::string id(run_id);
  auto read = RunPipelined(conn, LockAndReadStatements(id, !expected_version));
  if (!read) return std::unexpected(Abort{std::nullopt, read.error()});
  auto stored = CheckLockedRun(*read, id, expected_version, change);
  if (!stored) return std::unexpected(stored.error());
  WriteStatements writes = WriteAndCommitStatements(id, expected_version, change);
  if (!change.events.empty()) {
    if (auto added = AddEventStatements(writes, id, *stored, change); !added) return std::unexpected(added.error());
  }
  writes.list.emplace_back("COMMIT", Params());
  auto written = RunPipelined(conn, writes.list);
  if (!written) return std::unexpected(WritePipelineFailure(written.error(), writes, id, change, conn));
  return {};
}

}  // namespace

bool IsPostgresUrl(std::string_view text) {
  return text.starts_with("postgresql://") || text.starts_with("postgres://");
}

std::string RedactPostgresUrl(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "postgresql://…";
  std::string_view rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('?'));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  return std::string(url.substr(0, scheme_end + 3)) + std::string(rest);
}

Result<PgStore::Lease> PgStore::Acquire() {
  if (PGconn* idle = pool_.Acquire()) return Lease(this, idle);
  // A free slot: open a connection in it. Defaults first, so that the URL
  // (expanded in place of dbname) overrides them; client_encoding last, so
  // it is always UTF8.
  const char* keys[] = {"connect_timeout", "fallback_application_name", "dbname", "client_encoding", nullptr};
  const char* values[] = {"10", "telic", url_.c_str(), "UTF8", nullptr};
  PGconn* conn = pq::connectdbParams(keys, values, 1);
  if (conn != nullptr) ForgetPreparedStatements(conn);  // a closed connection's address, maybe
  std::string failure;
  if (!conn || pq::status(conn) != CONNECTION_OK) {
    failure = conn ? pq::errorMessage(conn) : "out of memory";
  } else if (auto set = RunScript(conn,
                                  "SET client_min_messages = warning; SET statement_timeout = 30000; SET lock_timeout = 15000; "
                                  "SET idle_in_transaction_session_timeout = 60000; "
                                  "SET default_transaction_isolation = 'read committed'");
             !set) {
    failure = set.error().message;
  }
  if (!failure.empty()) {
    ForgetPreparedStatements(conn);
    pq::finish(conn);
    pool_.Discard();  // the next caller in line tries again
    while (!failure.empty() && (failure.back() == '\n' || failure.back() == ' ')) failure.pop_back();
    return Fail(ErrorCode::kUnavailable, fmt::format("cannot connect to PostgreSQL {}: {}", RedactPostgresUrl(url_), failure));
  }
  return Lease(this, conn);
}

void PgStore::Release(PGconn* conn) {
  if (pq::status(conn) == CONNECTION_OK && pq::transactionStatus(conn) == PQTRANS_IDLE) {
    pool_.Release(conn);
    return;
  }
  ForgetPreparedStatements(conn);
  pq::finish(conn);
  pool_.Discard();
}

PgStore::~PgStore() {
  (void)FlushContextCosts();  // a statistic: a failed write loses only these counts
  for (PGconn* conn : pool_.TakeIdle()) {
    ForgetPreparedStatements(conn);
    pq::finish(conn);
  }
}

Result<std::unique_ptr<PgStore>> PgStore::Open(const std::string& url, int pool_size) {
  TELIC_RETURN_IF_ERROR(pq::Load());
  std::unique_ptr<PgStore> store(new PgStore(url, std::max(1, pool_size)));
  TELIC_RETURN_IF_ERROR(store->Migrate());
  return store;
}

Status PgStore::Migrate() {
  TELIC_ASSIGN_OR_RETURN(Lease lease, Acquire());
  return MigratePgSchema(lease.get());
}

Status PgStore::WriteChange(std::string_view run_id, std::optional<int64_t> expected_version, const Change& change) {
  return RetryTransaction([this] { return Acquire(); },
                          [&](PGconn* conn) { return WriteRunPipelined(conn, run_id, expected_version, change); });
}

Status PgStore::CreateRun(const Change& change) { return WriteChange(change.run.run_id, std::nullopt, change); }

Status PgStore::ApplyChange(std::string_view run_id, int64_t expected_version, const Change& change) {
  if (change.run.run_id != run_id) return Fail(ErrorCode::kInternal, "change targets another run");
  return WriteChange(run_id, expected_version, change);
}

Result<RunRecord> PgStore::GetRun(std::string_view run_id) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "run read", RunByIdSql(), Params().Add(run_id));
  if (!rows) return std::unexpected(rows.error());
  if (pq::ntuples(rows->get()) == 0) return std::unexpected(RunNotFound(run_id));
  return DecodeRun(PgRow(rows->get(), 0));
}

Result<std::vector<RunRecord>> PgStore::ListRuns(int limit) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "run list",
                                fmt::format("SELECT {} FROM runs ORDER BY updated_at DESC, run_id ASC LIMIT $1", RunColumns()),
                                Params().Add(int64_t{limit}));
  if (!rows) return std::unexpected(rows.error());
  std::vector<RunRecord> runs;
  for (int i = 0; i < pq::ntuples(rows->get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(RunRecord run, DecodeRun(PgRow(rows->get(), i)));
    runs.push_back(std::move(run));
  }
  return runs;
}

namespace {

// The WHERE conditions of QueryRuns' filters (status, mode, topology, text,
// search), each " AND ...", with their values appended to `params`.
std::string RunFilterSql(const RunQuery& query, Params& params) {
  auto next_param = [&] { return fmt::format("${}", params.size() + 1); };
  // lower() of ASCII letters only on both sides, as SQLite's.
  auto lower = [](const std::string& sql) {
    return fmt::format("translate({}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')", sql);
  };
  auto request_has = [&](const std::string& term) {
    return fmt::format(
        "EXISTS (SELECT 1 FROM artifacts a JOIN blobs b ON b.sha256 = a.sha256 WHERE a.run_id = runs.run_id"
        " AND a.type = 'UserMessage' AND a.source_refs_json = '[]' AND strpos({}, {}) > 0)",
        lower("(b.body::jsonb)->>'content'"), lower(term));
  };
  std::string where;
  auto equals = [&](const char* column, const std::optional<std::string>& value) {
    if (!value) return;
    where += fmt::format(" AND {} = {}", column, next_param());
    params.Add(*value);
  };
  equals("status", OptionalName(query.status));
  equals("requested_mode", OptionalName(query.mode));
  equals("topology", OptionalName(query.topology));
  if (query.request_contains) {
    where += " AND " + request_has(next_param());
    params.Add(*query.request_contains);
  }
  if (query.search) {
    std::string term = next_param();
    where += fmt::format(" AND ({} = {} OR {})", lower("left(run_id, length(" + term + "))"), lower(term), request_has(term));
    params.Add(*query.search);
  }
  return where;
}

}  // namespace

Result<RunPage> PgStore::QueryRuns(const RunQuery& query) {
  TELIC_RETURN_IF_ERROR(CheckRunQuery(query));
  std::string where;
  Params params;
  auto next_param = [&] { return fmt::format("${}", params.size() + 1); };
  if (query.before) {
    TELIC_ASSIGN_OR_RETURN(auto cursor, ReadWithReconnect([this] { return Acquire(); }, "run cursor read",
                                                          "SELECT created_at FROM runs WHERE run_id = $1",
                                                          Params().Add(*query.before)));
    if (pq::ntuples(cursor.get()) == 0) return std::unexpected(UnknownRunCursor(*query.before));
    // A range on created_at (walks the index from the cursor), then the run_id tie-break.
    std::string at = next_param();
    params.Add(Text(cursor.get(), 0, 0));
    std::string id = next_param();
    params.Add(*query.before);
    where += fmt::format(" AND created_at COLLATE \"C\" <= {0} AND (created_at COLLATE \"C\" < {0} OR run_id > {1})",
                         at, id);
  }
  where += RunFilterSql(query, params);
  std::string limit = next_param();
  params.Add(int64_t{query.limit} + 1);
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "run query",
                                                      fmt::format("SELECT {} FROM runs WHERE true{} ORDER BY created_at "
                                                                  "COLLATE \"C\" DESC, run_id ASC LIMIT {}",
                                                                  RunColumns(), where, limit),
                                                      params));
  RunPage page;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(RunRecord run, DecodeRun(PgRow(rows.get(), i)));
    page.runs.push_back(std::move(run));
  }
  if (page.runs.size() > static_cast<size_t>(query.limit)) {
    page.runs.pop_back();
    page.next = page.runs.back().run_id;
  }
  if (query.with_total) {
    TELIC_ASSIGN_OR_RETURN(page.total, CountRuns(query));
  }
  return page;
}

Result<int64_t> PgStore::CountRuns(const RunQuery& query) {
  Params params;
  std::string where = RunFilterSql(query, params);
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "run count",
                                                      "SELECT count(*) FROM runs WHERE true" + where, params));
  std::string text = Text(rows.get(), 0, 0);
  int64_t count = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Fail(ErrorCode::kDataLoss, "run count: not a number: " + text);
  }
  return count;
}

Result<std::vector<ArtifactMeta>> PgStore::ListArtifactsAfter(std::string_view run_id, int64_t after_seq) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "artifact list", ArtifactsAfterSql(),
                                Params().Add(run_id).Add(after_seq));
  if (!rows) return std::unexpected(rows.error());
  return ReadArtifactList(rows->get());
}

Result<Store::RunAndArtifacts> PgStore::GetRunAndArtifactsAfter(std::string_view run_id, int64_t after_seq) {
  const std::vector<std::pair<std::string, Params>> statements = {
      {RunByIdSql(), Params().Add(run_id)}, {ArtifactsAfterSql(), Params().Add(run_id).Add(after_seq)}};
  for (int attempt = 1;; ++attempt) {
    TELIC_ASSIGN_OR_RETURN(auto lease, Acquire());
    auto results = RunPipelined(lease.get(), statements);
    if (!results && (results.error().sqlstate == "26000" || results.error().sqlstate == "42P05")) {
      results = RunPipelined(lease.get(), statements);  // the same connection, unnamed now (PreparedStatements)
    }
    if (!results) {
      if (attempt == 1 && pq::status(lease.get()) == CONNECTION_BAD) continue;  // as ReadWithReconnect
      return std::unexpected(ToError(results.error(), "run and artifact read"));
    }
    const PGresult* run_rows = (*results)[0].get();
    const PGresult* artifact_rows = (*results)[1].get();
    if (pq::ntuples(run_rows) == 0) return std::unexpected(RunNotFound(run_id));
    TELIC_ASSIGN_OR_RETURN(RunRecord run, DecodeRun(PgRow(run_rows, 0)));
    TELIC_ASSIGN_OR_RETURN(std::vector<ArtifactMeta> artifacts, ReadArtifactList(artifact_rows));
    return RunAndArtifacts{std::move(run), std::move(artifacts)};
  }
}

Result<std::string> PgStore::QueryOnPooledConnection(const std::string& sql) {
  TELIC_ASSIGN_OR_RETURN(auto lease, Acquire());
  auto rows = Run(lease.get(), sql);
  if (!rows) return std::unexpected(ToError(rows.error(), "query"));
  if (pq::ntuples(rows->get()) == 0) return std::string();
  return std::string(pq::getvalue(rows->get(), 0, 0));
}

Result<StoredArtifact> PgStore::GetArtifact(std::string_view run_id, std::string_view artifact_id) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "artifact read",
                  ArtifactWithBodySql(),
                  Params().Add(run_id).Add(artifact_id));
  if (!rows) return std::unexpected(rows.error());
  if (pq::ntuples(rows->get()) == 0) return std::unexpected(ArtifactNotFound(artifact_id));
  TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, DecodeArtifactMeta(PgRow(rows->get(), 0)));
  return VerifiedArtifact(StoredArtifact{std::move(meta), Text(rows->get(), 0, kArtifactColumnCount)});
}

Result<TracePage> PgStore::GetTrace(std::string_view run_id, int64_t after_sequence, int limit) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "trace read",
                  fmt::format("SELECT {} FROM trace_events WHERE run_id = $1 AND sequence > $2 ORDER BY sequence "
                              "LIMIT $3",
                              EventColumns()),
                  Params().Add(run_id).Add(after_sequence).Add(int64_t{limit} + 1));
  if (!rows) return std::unexpected(rows.error());
  TracePage page;
  for (int i = 0; i < pq::ntuples(rows->get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(TraceEventRecord event, DecodeEvent(PgRow(rows->get(), i)));
    page.events.push_back(std::move(event));
  }
  if (page.events.size() > static_cast<size_t>(limit)) {
    page.has_more = true;
    page.events.pop_back();
  }
  return page;
}

Status PgStore::Ping() {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "ping", "SELECT 1");
  if (!rows) return std::unexpected(rows.error());
  return Ok();
}

}  // namespace telic::store
