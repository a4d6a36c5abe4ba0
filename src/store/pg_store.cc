#include "store/pg_store.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "base/ids.h"
#include "base/json_parse.h"
#include "base/sha256.h"
#include "store/libpq.h"

namespace telic::store {
namespace {

// Each entry upgrades the schema by one version; never edit a released entry.
// Text columns that are sorted or compared use the "C" collation so ordering
// is bytewise, exactly as in SQLite. JSON is kept as canonical TEXT (jsonb
// would reorder keys and change the bytes the digests cover).
const char* const kPgMigrations[] = {
    // 1: runs, content-addressed blobs, artifacts, hash-chained trace events.
    R"sql(
CREATE TABLE runs (
  run_id TEXT COLLATE "C" PRIMARY KEY,
  schema_version TEXT NOT NULL,
  repository_root TEXT NOT NULL,
  requested_mode TEXT NOT NULL,
  topology TEXT NOT NULL,
  escalation_count BIGINT NOT NULL CHECK (escalation_count >= 0),
  prior_run_id TEXT,
  status TEXT NOT NULL,
  phase TEXT NOT NULL,
  resume_phase TEXT,
  version BIGINT NOT NULL CHECK (version >= 1),
  prompt_revisions_remaining BIGINT NOT NULL CHECK (prompt_revisions_remaining >= 0),
  remediations_remaining BIGINT NOT NULL CHECK (remediations_remaining >= 0),
  outcome_hint TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  extra_json TEXT NOT NULL
);
CREATE INDEX runs_by_update ON runs (updated_at DESC, run_id);
CREATE TABLE blobs (
  sha256 TEXT COLLATE "C" PRIMARY KEY,
  body TEXT NOT NULL
);
CREATE TABLE artifacts (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
  artifact_id TEXT COLLATE "C" NOT NULL,
  type TEXT NOT NULL,
  schema_version TEXT NOT NULL,
  producer TEXT NOT NULL,
  sha256 TEXT COLLATE "C" NOT NULL REFERENCES blobs (sha256),
  source_refs_json TEXT NOT NULL,
  redaction TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, artifact_id)
);
CREATE TABLE trace_events (
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
  sequence BIGINT NOT NULL CHECK (sequence >= 1),
  event_id TEXT COLLATE "C" NOT NULL UNIQUE,
  timestamp TEXT NOT NULL,
  actor TEXT NOT NULL,
  phase TEXT NOT NULL,
  event_type TEXT NOT NULL,
  input_refs_json TEXT NOT NULL,
  output_refs_json TEXT NOT NULL,
  permission_decision_json TEXT,
  summary TEXT NOT NULL,
  budget_snapshot_json TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (run_id, sequence)
);
CREATE FUNCTION telic_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'telic: % rows are immutable and append-only', TG_TABLE_NAME;
END
$fn$;
CREATE TRIGGER blobs_append_only BEFORE UPDATE OR DELETE ON blobs
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER blobs_no_truncate BEFORE TRUNCATE ON blobs
  FOR EACH STATEMENT EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER artifacts_append_only BEFORE UPDATE OR DELETE ON artifacts
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER artifacts_no_truncate BEFORE TRUNCATE ON artifacts
  FOR EACH STATEMENT EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER trace_append_only BEFORE UPDATE OR DELETE ON trace_events
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER trace_no_truncate BEFORE TRUNCATE ON trace_events
  FOR EACH STATEMENT EXECUTE FUNCTION telic_refuse_change();
)sql",
    // 2: the task graph (graph_*), the same tables and guards as the SQLite
    // task store, so every instance on the database shares one graph.
    R"sql(
CREATE TABLE graph_tasks (
  seq BIGSERIAL PRIMARY KEY,
  task_id TEXT COLLATE "C" NOT NULL UNIQUE,
  run_id TEXT COLLATE "C",
  parent_task_id TEXT COLLATE "C",
  state TEXT NOT NULL CHECK (state IN ('pending','ready','running','completed','failed','cancelled')),
  version BIGINT NOT NULL CHECK (version >= 1),
  body_json TEXT NOT NULL
);
CREATE INDEX graph_tasks_by_run ON graph_tasks (run_id, seq);
CREATE TABLE graph_events (
  seq BIGSERIAL PRIMARY KEY,
  event_id TEXT COLLATE "C" NOT NULL UNIQUE,
  subject_id TEXT COLLATE "C" NOT NULL,
  run_id TEXT COLLATE "C",
  kind TEXT NOT NULL,
  actor TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX graph_events_by_subject ON graph_events (subject_id, seq);
CREATE TABLE graph_stories (
  seq BIGSERIAL PRIMARY KEY,
  story_id TEXT COLLATE "C" NOT NULL UNIQUE,
  run_id TEXT COLLATE "C",
  arbitration_task_id TEXT COLLATE "C" NOT NULL,
  version BIGINT NOT NULL CHECK (version >= 1),
  body_json TEXT NOT NULL
);
CREATE INDEX graph_stories_by_arbitration ON graph_stories (arbitration_task_id);
CREATE TABLE graph_approvals (
  seq BIGSERIAL PRIMARY KEY,
  approval_id TEXT COLLATE "C" NOT NULL UNIQUE,
  task_id TEXT COLLATE "C" NOT NULL,
  binding_sha256 TEXT NOT NULL,
  used_at TEXT,
  body_json TEXT NOT NULL
);
CREATE INDEX graph_approvals_by_task ON graph_approvals (task_id, seq);
CREATE FUNCTION telic_approval_use_once() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF OLD.used_at IS NOT NULL OR NEW.used_at IS NULL OR NEW.body_json IS DISTINCT FROM OLD.body_json
     OR NEW.binding_sha256 IS DISTINCT FROM OLD.binding_sha256 OR NEW.task_id IS DISTINCT FROM OLD.task_id
     OR NEW.approval_id IS DISTINCT FROM OLD.approval_id THEN
    RAISE EXCEPTION 'telic: an approval can only be marked used, once';
  END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER graph_events_append_only BEFORE UPDATE OR DELETE ON graph_events
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER graph_events_no_truncate BEFORE TRUNCATE ON graph_events
  FOR EACH STATEMENT EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER graph_approvals_single_use BEFORE UPDATE ON graph_approvals
  FOR EACH ROW EXECUTE FUNCTION telic_approval_use_once();
CREATE TRIGGER graph_approvals_append_only BEFORE DELETE ON graph_approvals
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
CREATE TRIGGER graph_tasks_kept BEFORE DELETE ON graph_tasks
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
)sql",
    // 3: a run's artifacts in insertion order (ListArtifactsAfter).
    R"sql(
CREATE INDEX artifacts_by_run_seq ON artifacts (run_id, seq);
)sql",
    // 4: what was redacted from each trace event (TraceEventRecord::redactions,
    // canonical JSON). Events stored before it read as [], and their hashes
    // never covered the field, so the chain verifies unchanged. (A constant
    // default: no table rewrite, and no row trigger fires.)
    R"sql(
ALTER TABLE trace_events ADD COLUMN redactions_json TEXT NOT NULL DEFAULT '[]';
)sql",
    // 5: QueryRuns pages in creation order, alone or within one status or
    // mode, by walking an index from the cursor (no sort, no full scan).
    // created_at has the default collation; the index and the queries order
    // it by "C", bytewise as in SQLite.
    R"sql(
CREATE INDEX runs_by_creation ON runs (created_at COLLATE "C" DESC, run_id);
CREATE INDEX runs_by_status_creation ON runs (status, created_at COLLATE "C" DESC, run_id);
CREATE INDEX runs_by_mode_creation ON runs (requested_mode, created_at COLLATE "C" DESC, run_id);
)sql",
    // 6 (issue 22, retention): tombstones of deleted runs, and the one route
    // by which a run's rows may be deleted: a row of run_deletion_marker,
    // insertable only right after that run's tombstone (Store::DeleteRun
    // inserts and removes it in its transaction; other transactions never see
    // it). Updates and TRUNCATE stay refused; an ordinary DELETE still fails.
    R"sql(
CREATE TABLE IF NOT EXISTS run_tombstones (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id TEXT COLLATE "C" NOT NULL,
  final_trace_hash TEXT NOT NULL,
  trace_events BIGINT NOT NULL,
  artifacts BIGINT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT NOT NULL,
  deleted_by TEXT NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_tombstones_by_run ON run_tombstones (run_id);
DROP TRIGGER IF EXISTS run_tombstones_append_only ON run_tombstones;
CREATE TRIGGER run_tombstones_append_only BEFORE UPDATE OR DELETE ON run_tombstones
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
DROP TRIGGER IF EXISTS run_tombstones_no_truncate ON run_tombstones;
CREATE TRIGGER run_tombstones_no_truncate BEFORE TRUNCATE ON run_tombstones
  FOR EACH STATEMENT EXECUTE FUNCTION telic_refuse_change();
CREATE TABLE IF NOT EXISTS run_deletion_marker (
  run_id TEXT COLLATE "C" PRIMARY KEY,
  tombstone_seq BIGINT NOT NULL
);
CREATE OR REPLACE FUNCTION telic_deletion_needs_tombstone() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM run_deletion_marker)
     OR NEW.tombstone_seq IS DISTINCT FROM (SELECT max(seq) FROM run_tombstones)
     OR NOT EXISTS (SELECT 1 FROM run_tombstones WHERE seq = NEW.tombstone_seq AND run_id = NEW.run_id) THEN
    RAISE EXCEPTION 'telic: a run is deleted only right after its tombstone is recorded';
  END IF;
  RETURN NEW;
END
$fn$;
DROP TRIGGER IF EXISTS run_deletion_needs_tombstone ON run_deletion_marker;
CREATE TRIGGER run_deletion_needs_tombstone BEFORE INSERT ON run_deletion_marker
  FOR EACH ROW EXECUTE FUNCTION telic_deletion_needs_tombstone();
DROP TRIGGER IF EXISTS run_deletion_marker_fixed ON run_deletion_marker;
CREATE TRIGGER run_deletion_marker_fixed BEFORE UPDATE ON run_deletion_marker
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
CREATE OR REPLACE FUNCTION telic_refuse_delete_unless_run_deletion() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  allowed boolean;
BEGIN
  IF TG_TABLE_NAME = 'blobs' THEN
    allowed := EXISTS (SELECT 1 FROM run_deletion_marker)
               AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = OLD.sha256);
  ELSIF TG_TABLE_NAME = 'graph_approvals' THEN
    allowed := EXISTS (SELECT 1 FROM run_deletion_marker m JOIN graph_tasks t ON t.run_id = m.run_id
                       WHERE t.task_id = OLD.task_id);
  ELSE
    allowed := OLD.run_id IS NOT NULL AND EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id);
  END IF;
  IF NOT allowed THEN
    RAISE EXCEPTION 'telic: % rows are immutable and append-only', TG_TABLE_NAME;
  END IF;
  RETURN OLD;
END
$fn$;
CREATE INDEX IF NOT EXISTS artifacts_by_sha256 ON artifacts (sha256);
DROP TRIGGER IF EXISTS blobs_immutable ON blobs;
CREATE TRIGGER blobs_immutable BEFORE UPDATE ON blobs FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
DROP TRIGGER IF EXISTS blobs_append_only ON blobs;
CREATE TRIGGER blobs_append_only BEFORE DELETE ON blobs
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS artifacts_immutable ON artifacts;
CREATE TRIGGER artifacts_immutable BEFORE UPDATE ON artifacts FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
DROP TRIGGER IF EXISTS artifacts_append_only ON artifacts;
CREATE TRIGGER artifacts_append_only BEFORE DELETE ON artifacts
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS trace_immutable ON trace_events;
CREATE TRIGGER trace_immutable BEFORE UPDATE ON trace_events FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
DROP TRIGGER IF EXISTS trace_append_only ON trace_events;
CREATE TRIGGER trace_append_only BEFORE DELETE ON trace_events
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS runs_kept ON runs;
CREATE TRIGGER runs_kept BEFORE DELETE ON runs
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS graph_events_immutable ON graph_events;
CREATE TRIGGER graph_events_immutable BEFORE UPDATE ON graph_events FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
DROP TRIGGER IF EXISTS graph_events_append_only ON graph_events;
CREATE TRIGGER graph_events_append_only BEFORE DELETE ON graph_events
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS graph_approvals_append_only ON graph_approvals;
CREATE TRIGGER graph_approvals_append_only BEFORE DELETE ON graph_approvals
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS graph_tasks_kept ON graph_tasks;
CREATE TRIGGER graph_tasks_kept BEFORE DELETE ON graph_tasks
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS graph_stories_kept ON graph_stories;
CREATE TRIGGER graph_stories_kept BEFORE DELETE ON graph_stories
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
)sql",
    // 7: the W3C trace context of the request that caused each trace event
    // (TraceEventRecord::traceparent/tracestate; NULL when none was sent).
    // Outside the hash, so every chain verifies unchanged. (No default: no
    // table rewrite.)
    R"sql(
ALTER TABLE trace_events ADD COLUMN traceparent TEXT;
ALTER TABLE trace_events ADD COLUMN tracestate TEXT;
)sql",
    // 8: the refused-call log beside each run (RefusedCall): outside the
    // run's version and hash chain, append-only, deleted with its run.
    R"sql(
CREATE TABLE IF NOT EXISTS refused_calls (
  run_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  at TEXT NOT NULL,
  tool TEXT NOT NULL,
  code TEXT NOT NULL,
  error TEXT NOT NULL,
  issues_json TEXT NOT NULL,
  run_version BIGINT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
DROP TRIGGER IF EXISTS refused_calls_immutable ON refused_calls;
CREATE TRIGGER refused_calls_immutable BEFORE UPDATE ON refused_calls
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_change();
DROP TRIGGER IF EXISTS refused_calls_append_only ON refused_calls;
CREATE TRIGGER refused_calls_append_only BEFORE DELETE ON refused_calls
  FOR EACH ROW EXECUTE FUNCTION telic_refuse_delete_unless_run_deletion();
DROP TRIGGER IF EXISTS refused_calls_no_truncate ON refused_calls;
CREATE TRIGGER refused_calls_no_truncate BEFORE TRUNCATE ON refused_calls
  FOR EACH STATEMENT EXECUTE FUNCTION telic_refuse_change();
)sql",
};

constexpr int kSchemaVersion = static_cast<int>(sizeof(kPgMigrations) / sizeof(kPgMigrations[0]));
// Serialises migrations of concurrently starting instances (pg_advisory_xact_lock key).
constexpr const char* kMigrationLockKey = "7310455081224577024";
// Serialization failures and deadlocks are retried this many times.
constexpr int kMaxAttempts = 8;

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

// RunOnce, again unnamed when the session lost a prepared statement (outside
// a transaction: inside one, the failure aborted it and the caller's retry
// decides).
std::expected<ResultPtr, PgFailure> Run(PGconn* conn, const std::string& sql, const Params& params = Params()) {
  auto result = RunOnce(conn, sql, params);
  if (!result && LostPreparedStatement(conn, result.error()) && pq::transactionStatus(conn) == PQTRANS_IDLE) {
    return RunOnce(conn, sql, params);
  }
  return result;
}

// Runs `statements` in order in one round trip (libpq pipeline mode: every
// statement is sent, then one sync, then the results are read); the rows of
// each on success, else the first failure. Without a BEGIN among them, the
// statements run in one implicit transaction; either way a failure aborts
// the ones after it (PGRES_PIPELINE_ABORTED), COMMIT included. The connection
// leaves pipeline mode before this returns, unless it broke.
std::expected<std::vector<ResultPtr>, PgFailure> RunPipelined(
    PGconn* conn, const std::vector<std::pair<std::string, Params>>& statements) {
  if (pq::enterPipelineMode(conn) != 1) return std::unexpected(FailureOf(conn, nullptr));
  std::optional<PgFailure> failure;
  // What was queued, in order: a statement (its index) or the preparation of
  // one (its name), each of which answers with one result.
  struct Queued {
    size_t statement;
    std::string prepared;  // non-empty: the preparation of this text
  };
  std::vector<Queued> queued;
  queued.reserve(statements.size() * 2);
  std::set<std::string, std::less<>> preparing;  // in this pipeline: a text repeated is prepared once
  for (size_t i = 0; i < statements.size(); ++i) {
    const auto& [sql, params] = statements[i];
    auto values = params.Pointers();
    auto lengths = params.Lengths();
    auto [name, prepare] = PreparedStatements::Instance().Lookup(conn, sql, params.size());
    if (prepare && preparing.insert(name).second) {
      if (pq::sendPrepare(conn, name.c_str(), sql.c_str(), params.size(), nullptr) != 1) {
        failure = FailureOf(conn, nullptr);
        failure->statement = i;
        break;
      }
      queued.push_back(Queued{i, sql});
    }
    const int sent = name.empty() ? pq::sendQueryParams(conn, sql.c_str(), params.size(), nullptr, values.data(),
                                                        lengths.data(), nullptr, 0)
                                  : pq::sendQueryPrepared(conn, name.c_str(), params.size(), values.data(),
                                                          lengths.data(), nullptr, 0);
    if (sent != 1) {
      failure = FailureOf(conn, nullptr);
      failure->statement = i;
      break;
    }
    queued.push_back(Queued{i, ""});
  }
  if (pq::pipelineSync(conn) != 1) {
    PgFailure broken = failure.value_or(FailureOf(conn, nullptr));
    (void)pq::exitPipelineMode(conn);
    return std::unexpected(broken);
  }
  std::vector<ResultPtr> results;
  // Each queued statement or preparation yields its result, then a null; the
  // sync yields PGRES_PIPELINE_SYNC. Everything is read, even after a
  // failure, so the connection can leave pipeline mode. A preparation that
  // succeeded holds on the server whatever follows it.
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
// Only for integer columns declared NOT NULL: PostgreSQL sends their text as
// a decimal number, so the conversion cannot fail on a row it returned.
int64_t Int(const PGresult* r, int row, int col) { return std::stoll(Text(r, row, col)); }

std::string ToJson(const std::vector<std::string>& items) { return CanonicalJson(Json(items)); }

const char kRunColumns[] =
    "run_id, schema_version, repository_root, requested_mode, topology, escalation_count, prior_run_id, "
    "status, phase, resume_phase, version, prompt_revisions_remaining, remediations_remaining, "
    "outcome_hint, created_at, updated_at, extra_json";
const char kRunPlaceholders[] = "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17";

Result<RunRecord> ReadRun(const PGresult* r, int row) {
  RunRecord run;
  run.run_id = Text(r, row, 0);
  run.schema_version = Text(r, row, 1);
  run.repository_root = Text(r, row, 2);
  TELIC_ASSIGN_OR_RETURN(run.requested_mode,
                         DecodeWordColumn("runs", run.run_id, "requested_mode", Text(r, row, 3), domain::ParseMode));
  TELIC_ASSIGN_OR_RETURN(run.topology, DecodeWordColumn("runs", run.run_id, "topology", Text(r, row, 4), domain::ParseTopology));
  run.escalation_count = static_cast<int>(Int(r, row, 5));
  run.prior_run_id = OptText(r, row, 6);
  TELIC_ASSIGN_OR_RETURN(run.status, DecodeWordColumn("runs", run.run_id, "status", Text(r, row, 7), domain::ParseRunStatus));
  TELIC_ASSIGN_OR_RETURN(run.phase, DecodeWordColumn("runs", run.run_id, "phase", Text(r, row, 8), domain::ParsePhase));
  if (std::optional<std::string> resume = OptText(r, row, 9)) {
    TELIC_ASSIGN_OR_RETURN(run.resume_phase,
                           DecodeWordColumn("runs", run.run_id, "resume_phase", *resume, domain::ParsePhase));
  }
  run.version = Int(r, row, 10);
  run.prompt_revisions_remaining = static_cast<int>(Int(r, row, 11));
  run.remediations_remaining = static_cast<int>(Int(r, row, 12));
  if (std::optional<std::string> hint = OptText(r, row, 13)) {
    TELIC_ASSIGN_OR_RETURN(run.outcome_hint,
                           DecodeWordColumn("runs", run.run_id, "outcome_hint", *hint, domain::ParseRunStatus));
  }
  run.created_at = Text(r, row, 14);
  run.updated_at = Text(r, row, 15);
  TELIC_ASSIGN_OR_RETURN(run.extra, DecodeJsonColumn("runs", run.run_id, "extra_json", Text(r, row, 16)));
  return run;
}

Params RunParams(const RunRecord& r) {
  Params p;
  p.Add(r.run_id).Add(r.schema_version).Add(r.repository_root).Add(domain::Name(r.requested_mode));
  p.Add(domain::Name(r.topology)).Add(int64_t{r.escalation_count}).Add(r.prior_run_id).Add(domain::Name(r.status));
  p.Add(domain::Name(r.phase)).Add(OptionalName(r.resume_phase));
  p.Add(r.version).Add(int64_t{r.prompt_revisions_remaining}).Add(int64_t{r.remediations_remaining});
  p.Add(OptionalName(r.outcome_hint)).Add(r.created_at).Add(r.updated_at).Add(CanonicalJson(r.extra));
  return p;
}

const char kArtifactColumns[] =
    "run_id, artifact_id, type, schema_version, producer, sha256, source_refs_json, redaction, created_at";

Result<ArtifactMeta> ReadArtifactMeta(const PGresult* r, int row) {
  ArtifactMeta m;
  m.run_id = Text(r, row, 0);
  m.id = Text(r, row, 1);
  TELIC_ASSIGN_OR_RETURN(m.type, DecodeWordColumn("artifacts", m.run_id + "/" + m.id, "type", Text(r, row, 2),
                                                  domain::ParseArtifactType));
  m.schema_version = Text(r, row, 3);
  m.producer = Text(r, row, 4);
  m.sha256 = Text(r, row, 5);
  TELIC_ASSIGN_OR_RETURN(m.source_refs,
                         DecodeListColumn("artifacts", m.run_id + "/" + m.id, "source_refs_json", Text(r, row, 6)));
  m.redaction = Text(r, row, 7);
  m.created_at = Text(r, row, 8);
  return m;
}

// The reads of a run's state, shared by the single reads and the pipelined
// one: the run by id ($1), and its artifacts after a seq ($1, $2) in order.
const std::string& RunByIdSql() {
  static const std::string sql = fmt::format("SELECT {} FROM runs WHERE run_id = $1", kRunColumns);
  return sql;
}
const std::string& ArtifactsAfterSql() {
  static const std::string sql =
      fmt::format("SELECT {}, seq FROM artifacts WHERE run_id = $1 AND seq > $2 ORDER BY seq", kArtifactColumns);
  return sql;
}

// The rows of ArtifactsAfterSql(), with their seq.
Result<std::vector<ArtifactMeta>> ReadArtifactList(const PGresult* rows) {
  std::vector<ArtifactMeta> list;
  for (int i = 0; i < pq::ntuples(rows); ++i) {
    TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, ReadArtifactMeta(rows, i));
    meta.seq = Int(rows, i, 9);
    list.push_back(std::move(meta));
  }
  return list;
}

const char kEventColumns[] =
    "run_id, sequence, event_id, timestamp, actor, phase, event_type, input_refs_json, output_refs_json, "
    "permission_decision_json, summary, budget_snapshot_json, redactions_json, prev_hash, hash, traceparent, "
    "tracestate";
constexpr int kEventColumnCount = 17;

Result<TraceEventRecord> ReadEvent(const PGresult* r, int row) {
  TraceEventRecord e;
  e.run_id = Text(r, row, 0);
  e.sequence = Int(r, row, 1);
  e.event_id = Text(r, row, 2);
  e.timestamp = Text(r, row, 3);
  e.actor = Text(r, row, 4);
  e.phase = Text(r, row, 5);
  e.event_type = Text(r, row, 6);
  const std::string key = fmt::format("{}/{}", e.run_id, e.sequence);
  TELIC_ASSIGN_OR_RETURN(e.input_refs, DecodeListColumn("trace_events", key, "input_refs_json", Text(r, row, 7)));
  TELIC_ASSIGN_OR_RETURN(e.output_refs, DecodeListColumn("trace_events", key, "output_refs_json", Text(r, row, 8)));
  if (auto d = OptText(r, row, 9)) {
    TELIC_ASSIGN_OR_RETURN(e.permission_decision, DecodeJsonColumn("trace_events", key, "permission_decision_json", *d));
  }
  e.summary = Text(r, row, 10);
  TELIC_ASSIGN_OR_RETURN(e.budget_snapshot, DecodeJsonColumn("trace_events", key, "budget_snapshot_json", Text(r, row, 11)));
  TELIC_ASSIGN_OR_RETURN(e.redactions, DecodeJsonColumn("trace_events", key, "redactions_json", Text(r, row, 12)));
  e.prev_hash = Text(r, row, 13);
  e.hash = Text(r, row, 14);
  e.traceparent = OptText(r, row, 15);
  e.tracestate = OptText(r, row, 16);
  return e;
}

// The outcome of one transaction attempt: a telic error, or a statement
// failure (retried when it is a serialization failure or deadlock).
struct Abort {
  std::optional<Error> error;
  PgFailure failure;
  // COMMIT was sent and may have taken effect: never retried.
  bool commit_sent = false;
};
using Attempt = std::expected<void, Abort>;

Abort Because(Error error) { return Abort{std::move(error), {}}; }

#define PG_TRY(var, expr)                                                      \
  auto var##_r = (expr);                                                       \
  if (!var##_r) return std::unexpected(Abort{std::nullopt, var##_r.error()}); \
  auto& var = *var##_r
#define PG_DO(expr)                                                                    \
  do {                                                                                 \
    auto pg_do_r = (expr);                                                             \
    if (!pg_do_r) return std::unexpected(Abort{std::nullopt, pg_do_r.error()});        \
  } while (0)

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

// The checks on what LockAndReadStatements read; the stored trace's length
// and last hash on success. A run created by this transaction has no
// artifacts or events yet.
std::expected<std::pair<int64_t, std::string>, Abort> CheckLockedRun(const std::vector<ResultPtr>& read,
                                                                      const std::string& id,
                                                                      std::optional<int64_t> expected_version,
                                                                      const Change& change) {
  const bool exists = pq::ntuples(read[1].get()) > 0;
  int64_t stored = 0, sequence = 0;
  std::string prev_hash;
  if (!expected_version) {
    if (exists) return std::unexpected(Because(Error(ErrorCode::kAlreadyExists, fmt::format("Run already exists: {}", id))));
  } else {
    if (!exists) return std::unexpected(Because(Error(ErrorCode::kNotFound, fmt::format("Run not found: {}", id))));
    if (Int(read[1].get(), 0, 0) != *expected_version) {
      return std::unexpected(Because(
          Error(ErrorCode::kConflict, "Concurrent run update detected; reload and retry with the latest version")));
    }
    stored = Int(read[2].get(), 0, 0);
    if (pq::ntuples(read[3].get()) > 0) {
      sequence = Int(read[3].get(), 0, 0);
      prev_hash = Text(read[3].get(), 0, 1);
    }
  }
  if (!change.artifacts.empty()) {
    if (change.expected_artifact_count && stored != *change.expected_artifact_count) {
      return std::unexpected(Because(Error(ErrorCode::kConflict, std::string(kConcurrentAppend))));
    }
    if (stored + static_cast<int64_t>(change.artifacts.size()) > static_cast<int64_t>(kMaxArtifactsPerRun)) {
      return std::unexpected(Because(Error(ErrorCode::kResourceExhausted,
                                           fmt::format("Run artifact limit of {} reached", kMaxArtifactsPerRun))));
    }
  }
  if (!change.events.empty() && change.expected_trace_length && sequence != *change.expected_trace_length) {
    return std::unexpected(Because(Error(ErrorCode::kConflict, std::string(kConcurrentTraceAppend))));
  }
  return std::make_pair(sequence, std::move(prev_hash));
}

// Appends the run's INSERT (created) or UPDATE. The UPDATE divides by the
// number of rows it changed, so a version that moved (impossible while the
// row lock holds, and checked before) fails the statement and with it the
// COMMIT behind it: a pipelined write can never commit without its run row.
void AddRunStatement(WriteStatements& out, const std::string& id, std::optional<int64_t> expected_version,
                     const Change& change) {
  static const std::string insert = fmt::format("INSERT INTO runs ({}) VALUES ({})", kRunColumns, kRunPlaceholders);
  static const std::string update =
      fmt::format("WITH changed AS (UPDATE runs SET ({}) = ROW({}) WHERE run_id = $18 AND version = $19 RETURNING 1) "
                  "SELECT 1 / count(*) FROM changed",
                  kRunColumns, kRunPlaceholders);
  if (!expected_version) {
    out.list.emplace_back(insert, RunParams(change.run));
    return;
  }
  Params p = RunParams(change.run);
  p.Add(id).Add(*expected_version);
  out.list.emplace_back(update, std::move(p));
}

// Appends the trace events, chained onto (sequence, prev_hash), in
// multi-row INSERTs of up to 500 rows (kEventColumnCount parameters each; a
// statement takes at most 65,535).
Attempt AddEventStatements(WriteStatements& out, const std::string& id, int64_t sequence, std::string prev_hash,
                           const Change& change) {
  if (sequence + static_cast<int64_t>(change.events.size()) > kMaxTraceEventsPerRun) {
    return std::unexpected(Because(Error(ErrorCode::kResourceExhausted,
                                         fmt::format("Run trace limit of {} reached", kMaxTraceEventsPerRun))));
  }
  constexpr size_t kRowsPerInsert = 500;
  for (size_t first = 0; first < change.events.size(); first += kRowsPerInsert) {
    Params p;
    std::string values;
    int n = 0;
    for (size_t i = first; i < std::min(change.events.size(), first + kRowsPerInsert); ++i) {
      TraceEventRecord e = change.events[i];
      if (!e.redactions.is_array()) {
        return std::unexpected(Because(Error(ErrorCode::kInternal, "trace event redactions must be a JSON array")));
      }
      e.run_id = id;
      e.sequence = ++sequence;
      e.prev_hash = prev_hash;
      RedactTraceEvent(e);  // nothing caller-supplied is stored unredacted
      e.hash = ComputeTraceEventHash(e);
      prev_hash = e.hash;
      std::optional<std::string> decision;
      if (e.permission_decision) decision = CanonicalJson(*e.permission_decision);
      p.Add(e.run_id).Add(e.sequence).Add(e.event_id).Add(e.timestamp).Add(e.actor).Add(e.phase).Add(e.event_type);
      p.Add(ToJson(e.input_refs)).Add(ToJson(e.output_refs)).Add(decision).Add(e.summary);
      p.Add(CanonicalJson(e.budget_snapshot)).Add(CanonicalJson(e.redactions)).Add(e.prev_hash).Add(e.hash);
      p.Add(e.traceparent).Add(e.tracestate);
      values += values.empty() ? "(" : ", (";
      for (int k = 1; k <= kEventColumnCount; ++k) {
        values += fmt::format("{}${}", k == 1 ? "" : ", ", n * kEventColumnCount + k);
      }
      values += ")";
      ++n;
    }
    out.list.emplace_back(fmt::format("INSERT INTO trace_events ({}) VALUES {}", kEventColumns, values), std::move(p));
  }
  return {};
}

// Every write of the change, then COMMIT, as statements for one pipeline.
std::expected<WriteStatements, Abort> WriteAndCommitStatements(const std::string& id,
                                                               std::optional<int64_t> expected_version,
                                                               const Change& change, int64_t sequence,
                                                               std::string prev_hash) {
  WriteStatements out;
  AddRunStatement(out, id, expected_version, change);
  // Blobs first, in digest order: concurrent writers sharing bodies then take
  // their row locks in the same order and cannot deadlock on each other.
  std::vector<const StoredArtifact*> by_digest;
  for (const StoredArtifact& a : change.artifacts) {
    if (a.canonical_body.size() > kMaxArtifactBodyBytes) {
      return std::unexpected(Because(Error(ErrorCode::kResourceExhausted,
                                           fmt::format("Artifact exceeds {} byte limit", kMaxArtifactBodyBytes))));
    }
    by_digest.push_back(&a);
  }
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
      fmt::format("INSERT INTO artifacts ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", kArtifactColumns);
  for (const StoredArtifact& a : change.artifacts) {
    Params p;
    p.Add(a.meta.run_id).Add(a.meta.id).Add(domain::Name(a.meta.type)).Add(a.meta.schema_version).Add(a.meta.producer);
    p.Add(a.meta.sha256).Add(ToJson(a.meta.source_refs)).Add(a.meta.redaction).Add(a.meta.created_at);
    out.list.emplace_back(insert_artifact, std::move(p));
  }
  if (!change.events.empty()) {
    if (auto added = AddEventStatements(out, id, sequence, std::move(prev_hash), change); !added) {
      return std::unexpected(added.error());
    }
  }
  out.list.emplace_back("COMMIT", Params());
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
    return Because(Error(ErrorCode::kAlreadyExists, fmt::format("Run already exists: {}", id)));
  }
  if (failure.sqlstate == "22012" && failure.statement == 0) {
    return Because(Error(ErrorCode::kConflict, "Concurrent run update detected; reload and retry with the latest version"));
  }
  if (failure.sqlstate == "23505" && failure.statement >= writes.first_artifact &&
      failure.statement < writes.first_artifact + writes.artifact_count) {
    return Because(Error(ErrorCode::kAlreadyExists, "Artifact already exists in this run: " +
                                                         change.artifacts[failure.statement - writes.first_artifact].meta.id));
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
  auto trace = CheckLockedRun(*read, id, expected_version, change);
  if (!trace) return std::unexpected(trace.error());
  auto writes = WriteAndCommitStatements(id, expected_version, change, trace->first, std::move(trace->second));
  if (!writes) return std::unexpected(writes.error());
  auto written = RunPipelined(conn, writes->list);
  if (!written) return std::unexpected(WritePipelineFailure(written.error(), *writes, id, change, conn));
  return {};
}

}  // namespace

int PgSchemaVersion() { return kSchemaVersion; }

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

// A pooled connection, returned to the pool when the lease ends. A
// connection left broken or inside a transaction is closed instead.
class PgStore::Lease {
 public:
  Lease(PgStore* store, PGconn* conn) : store_(store), conn_(conn) {}
  Lease(Lease&& other) noexcept : store_(other.store_), conn_(std::exchange(other.conn_, nullptr)) {}
  Lease& operator=(Lease&&) = delete;
  ~Lease() {
    if (conn_) store_->Release(conn_);
  }
  PGconn* get() const { return conn_; }

 private:
  PgStore* store_;
  PGconn* conn_;
};

namespace {

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
// are retried (kMaxAttempts); a connection that died before COMMIT was sent
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
    if (!Retryable(abort.failure) || attempt >= kMaxAttempts) return std::unexpected(ToError(abort.failure, "write"));
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

}  // namespace

Result<PgStore::Lease> PgStore::Acquire() {
  if (PGconn* idle = pool_.Acquire()) return Lease(this, idle);
  // A free slot: open a connection in it. Defaults first, so that the URL
  // (expanded in place of dbname) overrides them; client_encoding last, so
  // it is always UTF8.
  const char* keys[] = {"connect_timeout", "fallback_application_name", "dbname", "client_encoding", nullptr};
  const char* values[] = {"10", "telic", url_.c_str(), "UTF8", nullptr};
  PGconn* conn = pq::connectdbParams(keys, values, 1);
  if (conn != nullptr) PreparedStatements::Instance().Forget(conn);  // a closed connection's address, maybe
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
    PreparedStatements::Instance().Forget(conn);
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
  PreparedStatements::Instance().Forget(conn);
  pq::finish(conn);
  pool_.Discard();
}

PgStore::~PgStore() {
  for (PGconn* conn : pool_.TakeIdle()) {
    PreparedStatements::Instance().Forget(conn);
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
  PGconn* conn = lease.get();
  auto current = Run(conn, "SELECT value FROM telic_meta WHERE key = 'schema_version'");
  if (current && pq::ntuples(current->get()) == 1 && Text(current->get(), 0, 0) == std::to_string(kSchemaVersion)) {
    return Ok();  // fast path: no lock for a current database
  }
  auto fail = [&](const PgFailure& f) {
    (void)RunScript(conn, "ROLLBACK");
    return std::unexpected(ToError(f, "migration"));
  };
  if (auto begun = RunScript(conn, "BEGIN"); !begun) return fail(begun.error());
  if (auto locked = Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kMigrationLockKey)); !locked) {
    return fail(locked.error());
  }
  if (auto meta = RunScript(conn, "CREATE TABLE IF NOT EXISTS telic_meta (key TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL)");
      !meta) {
    return fail(meta.error());
  }
  auto has_runs = Run(conn, "SELECT to_regclass('runs') IS NOT NULL");
  if (!has_runs) return fail(has_runs.error());
  auto version_row = Run(conn, "SELECT value FROM telic_meta WHERE key = 'schema_version'");
  if (!version_row) return fail(version_row.error());
  int64_t version = pq::ntuples(version_row->get()) == 1 ? std::stoll(Text(version_row->get(), 0, 0)) : -1;
  if (version < 0 && Text(has_runs->get(), 0, 0) == "t") {
    (void)RunScript(conn, "ROLLBACK");
    return Fail(ErrorCode::kFailedPrecondition,
                "the database has tables but no telic schema version; it was not written by telic");
  }
  if (version > kSchemaVersion) {
    (void)RunScript(conn, "ROLLBACK");
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the database has schema version {} but this telic supports up to {}; upgrade telic",
                            version, kSchemaVersion));
  }
  for (int64_t next = std::max<int64_t>(version, 0); next < kSchemaVersion; ++next) {
    if (auto step = RunScript(conn, kPgMigrations[next]); !step) return fail(step.error());
  }
  if (auto set = Run(conn,
                     "INSERT INTO telic_meta (key, value) VALUES ('schema_version', $1) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     Params().Add(std::to_string(kSchemaVersion)));
      !set) {
    return fail(set.error());
  }
  if (auto done = RunScript(conn, "COMMIT"); !done) return fail(done.error());
  return Ok();
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
  if (pq::ntuples(rows->get()) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Run not found: {}", run_id));
  return ReadRun(rows->get(), 0);
}

Result<std::vector<RunRecord>> PgStore::ListRuns(int limit) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "run list",
                                fmt::format("SELECT {} FROM runs ORDER BY updated_at DESC, run_id ASC LIMIT $1", kRunColumns),
                                Params().Add(int64_t{limit}));
  if (!rows) return std::unexpected(rows.error());
  std::vector<RunRecord> runs;
  for (int i = 0; i < pq::ntuples(rows->get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(RunRecord run, ReadRun(rows->get(), i));
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
                                                                  kRunColumns, where, limit),
                                                      params));
  RunPage page;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(RunRecord run, ReadRun(rows.get(), i));
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
    if (pq::ntuples(run_rows) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Run not found: {}", run_id));
    TELIC_ASSIGN_OR_RETURN(RunRecord run, ReadRun(run_rows, 0));
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
                  "SELECT a.run_id, a.artifact_id, a.type, a.schema_version, a.producer, a.sha256, a.source_refs_json, "
                  "a.redaction, a.created_at, b.body FROM artifacts a LEFT JOIN blobs b ON b.sha256 = a.sha256 "
                  "WHERE a.run_id = $1 AND a.artifact_id = $2",
                  Params().Add(run_id).Add(artifact_id));
  if (!rows) return std::unexpected(rows.error());
  if (pq::ntuples(rows->get()) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Artifact not found: {}", artifact_id));
  TELIC_ASSIGN_OR_RETURN(ArtifactMeta meta, ReadArtifactMeta(rows->get(), 0));
  StoredArtifact a{std::move(meta), Text(rows->get(), 0, 9)};
  if (Sha256Ref(a.canonical_body) != a.meta.sha256) {
    return Fail(ErrorCode::kDataLoss, fmt::format("Artifact integrity check failed: {}", artifact_id));
  }
  return a;
}

Result<TracePage> PgStore::GetTrace(std::string_view run_id, int64_t after_sequence, int limit) {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "trace read",
                  fmt::format("SELECT {} FROM trace_events WHERE run_id = $1 AND sequence > $2 ORDER BY sequence "
                              "LIMIT $3",
                              kEventColumns),
                  Params().Add(run_id).Add(after_sequence).Add(int64_t{limit} + 1));
  if (!rows) return std::unexpected(rows.error());
  TracePage page;
  for (int i = 0; i < pq::ntuples(rows->get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(TraceEventRecord event, ReadEvent(rows->get(), i));
    page.events.push_back(std::move(event));
  }
  if (page.events.size() > static_cast<size_t>(limit)) {
    page.has_more = true;
    page.events.pop_back();
  }
  return page;
}

// ---------------------------------------------------------------- retention

namespace {

// Serialises run deletions across instances (pg_advisory_xact_lock key): a
// deletion marker may only follow the newest tombstone.
constexpr const char* kDeletionLockKey = "7310455081224577026";
// The task graph's write lock (kGraphLockKey below): a deletion holds it too,
// so no graph change of the run interleaves with its removal.
constexpr const char* kGraphLockKeyForDeletion = "7310455081224577025";

const char kTombstoneColumns[] =
    "seq, run_id, final_trace_hash, trace_events, artifacts, status, created_at, deleted_at, deleted_by, reason";

RunTombstone ReadTombstone(const PGresult* r, int row) {
  return RunTombstone{Int(r, row, 0),  Text(r, row, 1), Text(r, row, 2), Int(r, row, 3), Int(r, row, 4),
                      Text(r, row, 5), Text(r, row, 6), Text(r, row, 7), Text(r, row, 8), Text(r, row, 9)};
}

// Deletes the context cost rows of run `id`, when the database has the table.
std::expected<void, PgFailure> DeleteContextCostRows(PGconn* conn, const std::string& id) {
  auto exists = Run(conn, "SELECT to_regclass('context_costs') IS NOT NULL");
  if (!exists) return std::unexpected(exists.error());
  if (Text(exists->get(), 0, 0) != "t") return {};
  auto deleted = Run(conn, "DELETE FROM context_costs WHERE run_id = $1", Params().Add(id));
  if (!deleted) return std::unexpected(deleted.error());
  return {};
}

// The body of DeleteRun's transaction (see Store::DeleteRun).
Attempt DeleteInTransaction(PGconn* conn, const std::string& id, int64_t expected_version,
                            const DeletionRequest& request, RunTombstone& tombstone) {
  PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kDeletionLockKey)));
  PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kGraphLockKeyForDeletion)));
  PG_TRY(run, Run(conn, "SELECT version, status, created_at FROM runs WHERE run_id = $1 FOR UPDATE", Params().Add(id)));
  if (pq::ntuples(run.get()) == 0) {
    return std::unexpected(Because(Error(ErrorCode::kNotFound, fmt::format("Run not found: {}", id))));
  }
  if (Int(run.get(), 0, 0) != expected_version) {
    return std::unexpected(Because(
        Error(ErrorCode::kConflict, "Concurrent run update detected; reload and retry with the latest version")));
  }
  tombstone = RunTombstone{};
  tombstone.run_id = id;
  tombstone.status = Text(run.get(), 0, 1);
  tombstone.created_at = Text(run.get(), 0, 2);
  PG_TRY(last, Run(conn, "SELECT sequence, hash FROM trace_events WHERE run_id = $1 ORDER BY sequence DESC LIMIT 1",
                   Params().Add(id)));
  if (pq::ntuples(last.get()) > 0) {
    tombstone.trace_events = Int(last.get(), 0, 0);
    tombstone.final_trace_hash = Text(last.get(), 0, 1);
  }
  PG_TRY(count, Run(conn, "SELECT count(*) FROM artifacts WHERE run_id = $1", Params().Add(id)));
  tombstone.artifacts = Int(count.get(), 0, 0);
  tombstone.deleted_at = request.deleted_at;
  tombstone.deleted_by = request.deleted_by;
  tombstone.reason = request.reason;
  Params p;
  p.Add(id).Add(tombstone.final_trace_hash).Add(tombstone.trace_events).Add(tombstone.artifacts).Add(tombstone.status);
  p.Add(tombstone.created_at).Add(tombstone.deleted_at).Add(tombstone.deleted_by).Add(tombstone.reason);
  PG_TRY(inserted, Run(conn,
                       "INSERT INTO run_tombstones (run_id, final_trace_hash, trace_events, artifacts, status, "
                       "created_at, deleted_at, deleted_by, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
                       "RETURNING seq",
                       p));
  tombstone.seq = Int(inserted.get(), 0, 0);
  PG_DO(Run(conn, "INSERT INTO run_deletion_marker (run_id, tombstone_seq) VALUES ($1, $2)",
            Params().Add(id).Add(tombstone.seq)));
  for (const char* sql : {
           "DELETE FROM graph_approvals WHERE task_id IN (SELECT task_id FROM graph_tasks WHERE run_id = $1)",
           "DELETE FROM graph_events WHERE run_id = $1",
           "DELETE FROM graph_stories WHERE run_id = $1",
           "DELETE FROM graph_tasks WHERE run_id = $1",
       }) {
    PG_DO(Run(conn, sql, Params().Add(id)));
  }
  PG_TRY(digests, Run(conn, "DELETE FROM artifacts WHERE run_id = $1 RETURNING sha256", Params().Add(id)));
  std::vector<std::string> shas;
  for (int i = 0; i < pq::ntuples(digests.get()); ++i) shas.push_back(Text(digests.get(), i, 0));
  std::sort(shas.begin(), shas.end());
  shas.erase(std::unique(shas.begin(), shas.end()), shas.end());
  for (const std::string& sha : shas) {
    PG_DO(Run(conn, "DELETE FROM blobs WHERE sha256 = $1 AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = $1)",
              Params().Add(sha)));
  }
  PG_DO(Run(conn, "DELETE FROM trace_events WHERE run_id = $1", Params().Add(id)));
  PG_DO(Run(conn, "DELETE FROM refused_calls WHERE run_id = $1", Params().Add(id)));
  PG_DO(DeleteContextCostRows(conn, id));
  PG_DO(Run(conn, "DELETE FROM runs WHERE run_id = $1", Params().Add(id)));
  PG_DO(Run(conn, "DELETE FROM run_deletion_marker WHERE run_id = $1", Params().Add(id)));
  return {};
}

}  // namespace

Result<RunTombstone> PgStore::DeleteRun(std::string_view run_id, int64_t expected_version,
                                        const DeletionRequest& request) {
  RunTombstone tombstone;
  std::string id(run_id);
  TELIC_RETURN_IF_ERROR(InTransaction([this] { return Acquire(); }, [&](PGconn* conn) {
    return DeleteInTransaction(conn, id, expected_version, request, tombstone);
  }));
  return tombstone;
}

Result<std::vector<RunTombstone>> PgStore::ListTombstones(int limit) {
  if (limit < 1 || limit > kMaxRunPageSize) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("Tombstone page size must be between 1 and {}", kMaxRunPageSize));
  }
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "tombstone list",
                                                      fmt::format("SELECT {} FROM run_tombstones ORDER BY seq DESC "
                                                                  "LIMIT $1",
                                                                  kTombstoneColumns),
                                                      Params().Add(int64_t{limit})));
  std::vector<RunTombstone> list;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) list.push_back(ReadTombstone(rows.get(), i));
  return list;
}

Result<int64_t> PgStore::RecordRefusedCall(const RefusedCall& call) {
  int64_t seq = 0;
  TELIC_RETURN_IF_ERROR(InTransaction([this] { return Acquire(); }, [&](PGconn* conn) -> Attempt {
    // One writer per run's log at a time, across instances: seq stays dense.
    PG_DO(Run(conn, "SELECT pg_advisory_xact_lock(hashtextextended($1, 8))", Params().Add(call.run_id)));
    Params p;
    p.Add(call.run_id).Add(call.at).Add(call.tool).Add(call.code).Add(call.error).Add(CanonicalJson(call.issues));
    p.Add(call.run_version).Add(kMaxRefusedCallsPerRun);
    PG_TRY(inserted, Run(conn,
                         "INSERT INTO refused_calls (run_id, seq, at, tool, code, error, issues_json, run_version) "
                         "SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4, $5, $6, $7 FROM refused_calls WHERE run_id = $1 "
                         "HAVING count(*) < $8 RETURNING seq",
                         p));
    seq = pq::ntuples(inserted.get()) == 1 ? Int(inserted.get(), 0, 0) : 0;
    return {};
  }));
  return seq;
}

Result<std::vector<RefusedCall>> PgStore::ListRefusedCalls(std::string_view run_id, int64_t after_seq, int limit) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "refused call list",
                                                      "SELECT seq, at, tool, code, error, issues_json, run_version "
                                                      "FROM refused_calls WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                                                      Params().Add(run_id).Add(after_seq).Add(int64_t{limit})));
  std::vector<RefusedCall> calls;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    RefusedCall call{Int(rows.get(), i, 0), std::string(run_id), Text(rows.get(), i, 1), Text(rows.get(), i, 2),
                     Text(rows.get(), i, 3), Text(rows.get(), i, 4), Json::array(), Int(rows.get(), i, 6)};
    call.issues = Json::parse(Text(rows.get(), i, 5), nullptr, false);
    if (call.issues.is_discarded() || !call.issues.is_array()) {
      return Fail(ErrorCode::kDataLoss, fmt::format("refused_calls row ({}, {}): issues_json is not a JSON array", run_id, call.seq));
    }
    calls.push_back(std::move(call));
  }
  return calls;
}

Status PgStore::Ping() {
  auto rows = ReadWithReconnect([this] { return Acquire(); }, "ping", "SELECT 1");
  if (!rows) return std::unexpected(rows.error());
  return Ok();
}

// ---------------------------------------------------------------- task graph

namespace {

// Serialises task-graph writes across instances (pg_advisory_xact_lock key),
// as the SQLite task store's BEGIN IMMEDIATE does.
constexpr const char* kGraphLockKey = "7310455081224577025";

std::unexpected<Abort> Refuse(ErrorCode code, std::string message) {
  return std::unexpected(Because(Error(code, std::move(message))));
}

bool OneRow(const PGresult* r) { return std::string(pq::cmdTuples(const_cast<PGresult*>(r))) == "1"; }

Attempt ApplyTaskChange(PGconn* conn, const TaskChange& change) {
  PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kGraphLockKey)));
  for (const auto& [id, version] : change.reads) {
    PG_TRY(row, Run(conn, "SELECT version FROM graph_tasks WHERE task_id = $1", Params().Add(id)));
    if (pq::ntuples(row.get()) == 0 || Int(row.get(), 0, 0) != version) {
      return Refuse(ErrorCode::kConflict, fmt::format("Concurrent task update detected on {}; reload and retry", id));
    }
  }
  if (change.expected_scope) {
    PG_TRY(count, Run(conn, "SELECT count(*) FROM graph_tasks WHERE run_id IS NOT DISTINCT FROM $1::text",
                      Params().Add(change.expected_scope->run_id)));
    if (Int(count.get(), 0, 0) != change.expected_scope->tasks) return Refuse(ErrorCode::kConflict, kConcurrentScopeChange);
  }
  std::map<std::optional<std::string>, int64_t> added;
  for (const auto& t : change.inserted_tasks) ++added[t.run_id];
  for (const auto& [run, n] : added) {
    PG_TRY(count, Run(conn, "SELECT count(*) FROM graph_tasks WHERE run_id IS NOT DISTINCT FROM $1::text", Params().Add(run)));
    if (Int(count.get(), 0, 0) + n > static_cast<int64_t>(kMaxTasksPerScope)) {
      return Refuse(ErrorCode::kResourceExhausted, fmt::format("Task graph limit of {} tasks reached", kMaxTasksPerScope));
    }
  }
  for (const auto& t : change.inserted_tasks) {
    PG_TRY(inserted, Run(conn,
                         "INSERT INTO graph_tasks (task_id, run_id, parent_task_id, state, version, body_json) "
                         "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (task_id) DO NOTHING",
                         Params().Add(t.task_id).Add(t.run_id).Add(t.parent_task_id).Add(domain::Name(t.state)).Add(t.version)
                             .Add(StoredTaskBody(t))));
    if (!OneRow(inserted.get())) return Refuse(ErrorCode::kAlreadyExists, fmt::format("Task already exists: {}", t.task_id));
  }
  for (const auto& t : change.updated_tasks) {
    PG_TRY(updated, Run(conn,
                        "UPDATE graph_tasks SET state = $1, version = $2, body_json = $3 WHERE task_id = $4 AND version = $5",
                        Params().Add(domain::Name(t.state)).Add(t.version).Add(StoredTaskBody(t)).Add(t.task_id).Add(t.version - 1)));
    if (!OneRow(updated.get())) {
      return Refuse(ErrorCode::kConflict, fmt::format("Concurrent task update detected on {}; reload and retry", t.task_id));
    }
  }
  for (const auto& s : change.inserted_stories) {
    PG_TRY(inserted, Run(conn,
                         "INSERT INTO graph_stories (story_id, run_id, arbitration_task_id, version, body_json) "
                         "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (story_id) DO NOTHING",
                         Params().Add(s.story_id).Add(s.run_id).Add(s.arbitration_task_id).Add(s.version)
                             .Add(CanonicalJson(StoryToJson(s)))));
    if (!OneRow(inserted.get())) return Refuse(ErrorCode::kAlreadyExists, fmt::format("Story already exists: {}", s.story_id));
  }
  for (const auto& s : change.updated_stories) {
    PG_TRY(updated, Run(conn, "UPDATE graph_stories SET version = $1, body_json = $2 WHERE story_id = $3 AND version = $4",
                        Params().Add(s.version).Add(CanonicalJson(StoryToJson(s))).Add(s.story_id).Add(s.version - 1)));
    if (!OneRow(updated.get())) {
      return Refuse(ErrorCode::kConflict, fmt::format("Concurrent story update detected on {}; reload and retry", s.story_id));
    }
  }
  for (const auto& a : change.inserted_approvals) {
    PG_DO(Run(conn,
              "INSERT INTO graph_approvals (approval_id, task_id, binding_sha256, used_at, body_json) "
              "VALUES ($1, $2, $3, NULL, $4)",
              Params().Add(a.approval_id).Add(a.task_id).Add(a.binding_sha256).Add(StoredApprovalBody(a))));
  }
  for (const auto& id : change.used_approvals) {
    PG_TRY(used, Run(conn, "UPDATE graph_approvals SET used_at = $1 WHERE approval_id = $2 AND used_at IS NULL",
                     Params().Add(change.now).Add(id)));
    if (!OneRow(used.get())) return Refuse(ErrorCode::kFailedPrecondition, "Approval already used; a new approval is required");
  }
  for (const auto& e : change.events) {
    PG_DO(Run(conn,
              "INSERT INTO graph_events (event_id, subject_id, run_id, kind, actor, payload_json, created_at) "
              "VALUES ($1, $2, $3, $4, $5, $6, $7)",
              Params().Add(e.event_id).Add(e.subject_id).Add(e.run_id).Add(e.kind).Add(e.actor)
                  .Add(StoredEventPayload(e)).Add(e.created_at)));
  }
  return {};
}

template <typename T, typename ReadRow>
Result<std::vector<T>> ReadRows(const ResultPtr& rows, ReadRow read) {
  std::vector<T> out;
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    TELIC_ASSIGN_OR_RETURN(T item, read(rows.get(), i));
    out.push_back(std::move(item));
  }
  return out;
}

Result<TaskRecord> TaskRow(const PGresult* r, int i) { return TaskFromStored(Text(r, i, 1), Int(r, i, 0)); }
Result<StoryRecord> StoryRow(const PGresult* r, int i) { return StoryFromStored(Text(r, i, 0)); }

}  // namespace

Status PgTaskStore::Apply(const TaskChange& change) {
  return InTransaction([this] { return db_.Acquire(); }, [&](PGconn* conn) { return ApplyTaskChange(conn, change); });
}

Result<TaskRecord> PgTaskStore::GetTask(std::string_view task_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "task read",
                                                      "SELECT seq, body_json FROM graph_tasks WHERE task_id = $1",
                                                      Params().Add(task_id)));
  if (pq::ntuples(rows.get()) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Task not found: {}", task_id));
  return TaskRow(rows.get(), 0);
}

Result<std::vector<TaskRecord>> PgTaskStore::ListTasks(const std::optional<std::string>& run_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "task list",
                                                      "SELECT seq, body_json FROM graph_tasks "
                                                      "WHERE run_id IS NOT DISTINCT FROM $1::text ORDER BY seq",
                                                      Params().Add(run_id)));
  return ReadRows<TaskRecord>(rows, TaskRow);
}

Result<std::vector<TaskEventRecord>> PgTaskStore::ListEvents(std::string_view subject_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "task event list",
                                                      "SELECT seq, event_id, subject_id, run_id, kind, actor, payload_json, "
                                                      "created_at FROM graph_events WHERE subject_id = $1 ORDER BY seq",
                                                      Params().Add(subject_id)));
  return ReadRows<TaskEventRecord>(rows, [](const PGresult* r, int i) -> Result<TaskEventRecord> {
    TaskEventRecord e;
    e.seq = Int(r, i, 0);
    e.event_id = Text(r, i, 1);
    e.subject_id = Text(r, i, 2);
    e.run_id = OptText(r, i, 3);
    e.kind = Text(r, i, 4);
    e.actor = Text(r, i, 5);
    e.payload = ParseStoredJson(Text(r, i, 6)).value_or(Json(nullptr));  // unreadable payloads read as null
    e.created_at = Text(r, i, 7);
    return e;
  });
}

Result<StoryRecord> PgTaskStore::GetStory(std::string_view story_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "story read",
                                                      "SELECT body_json FROM graph_stories WHERE story_id = $1",
                                                      Params().Add(story_id)));
  if (pq::ntuples(rows.get()) == 0) return Fail(ErrorCode::kNotFound, fmt::format("Story not found: {}", story_id));
  return StoryRow(rows.get(), 0);
}

Result<std::vector<StoryRecord>> PgTaskStore::ListStories(const std::optional<std::string>& run_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "story list",
                                                      "SELECT body_json FROM graph_stories "
                                                      "WHERE run_id IS NOT DISTINCT FROM $1::text ORDER BY seq",
                                                      Params().Add(run_id)));
  return ReadRows<StoryRecord>(rows, StoryRow);
}

Result<std::vector<StoryRecord>> PgTaskStore::StoriesArbitratedBy(std::string_view task_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "story lookup",
                                                      "SELECT body_json FROM graph_stories WHERE arbitration_task_id = $1 "
                                                      "ORDER BY seq",
                                                      Params().Add(task_id)));
  return ReadRows<StoryRecord>(rows, StoryRow);
}

Result<std::vector<ApprovalRecord>> PgTaskStore::ListApprovals(std::string_view task_id) {
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return db_.Acquire(); }, "approval list",
                                                      "SELECT body_json, used_at FROM graph_approvals WHERE task_id = $1 "
                                                      "ORDER BY seq",
                                                      Params().Add(task_id)));
  return ReadRows<ApprovalRecord>(rows, [](const PGresult* r, int i) {
    return ApprovalFromStored(Text(r, i, 0), OptText(r, i, 1));
  });
}

// ---------------------------------------------------------------- context cost (issue 39)

namespace {

// Created on the first write (under the deletion lock, so that creators and
// DeleteRun never race): a database of an older telic reads unchanged.
constexpr const char* kContextCostTable =
    "CREATE TABLE IF NOT EXISTS context_costs (run_id TEXT COLLATE \"C\" NOT NULL, tool TEXT COLLATE \"C\" NOT NULL, "
    "calls BIGINT NOT NULL, bytes BIGINT NOT NULL, PRIMARY KEY (run_id, tool))";

}  // namespace

Status PgStore::AddContextCost(std::string_view run_id, const std::vector<ContextCost>& costs) {
  if (costs.empty()) return Ok();
  std::string id(run_id);
  return InTransaction([this] { return Acquire(); }, [&](PGconn* conn) -> Attempt {
    PG_DO(Run(conn, fmt::format("SELECT pg_advisory_xact_lock({})", kDeletionLockKey)));
    PG_DO(Run(conn, kContextCostTable));
    for (const ContextCost& cost : costs) {
      PG_DO(Run(conn,
                "INSERT INTO context_costs (run_id, tool, calls, bytes) SELECT $1::text, $2::text, $3::bigint, "
                "$4::bigint WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $1::text) ON CONFLICT (run_id, tool) DO "
                "UPDATE SET calls = context_costs.calls + excluded.calls, bytes = context_costs.bytes + excluded.bytes",
                Params().Add(id).Add(cost.tool).Add(cost.calls).Add(cost.bytes)));
    }
    return {};
  });
}

Result<std::vector<ContextCost>> PgStore::GetContextCost(std::string_view run_id) {
  std::vector<ContextCost> costs;
  TELIC_ASSIGN_OR_RETURN(auto exists, ReadWithReconnect([this] { return Acquire(); }, "context cost read",
                                                        "SELECT to_regclass('context_costs') IS NOT NULL"));
  if (Text(exists.get(), 0, 0) != "t") return costs;
  TELIC_ASSIGN_OR_RETURN(auto rows, ReadWithReconnect([this] { return Acquire(); }, "context cost read",
                                                      "SELECT tool, calls, bytes FROM context_costs WHERE run_id = $1 "
                                                      "ORDER BY tool",
                                                      Params().Add(std::string(run_id))));
  for (int i = 0; i < pq::ntuples(rows.get()); ++i) {
    costs.push_back(ContextCost{Text(rows.get(), i, 0), Int(rows.get(), i, 1), Int(rows.get(), i, 2)});
  }
  return costs;
}

#undef PG_TRY
#undef PG_DO

}  // namespace telic::store
