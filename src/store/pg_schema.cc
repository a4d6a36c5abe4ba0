#include "store/pg_schema.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "store/pg_connection.h"

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

}  // namespace

int PgSchemaVersion() { return kSchemaVersion; }

Status MigratePgSchema(PGconn* conn) {
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
  int64_t version = -1;
  if (pq::ntuples(version_row->get()) == 1) {
    std::optional<int64_t> stored = PgRow(version_row->get(), 0).Int(0);
    if (!stored) {
      (void)RunScript(conn, "ROLLBACK");
      return Fail(ErrorCode::kDataLoss, "telic_meta row schema_version: value is not an integer");
    }
    version = *stored;
  }
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

}  // namespace telic::store
