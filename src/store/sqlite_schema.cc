#include "store/sqlite_schema.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "store/sqlite_connection.h"

namespace telic::store {
namespace {

// Each entry upgrades the schema by one version; never edit a released entry.
const char* const kMigrations[] = {
    // 1: runs, content-addressed blobs, artifacts, hash-chained trace events.
    R"sql(
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  schema_version TEXT NOT NULL,
  repository_root TEXT NOT NULL,
  requested_mode TEXT NOT NULL,
  topology TEXT NOT NULL,
  escalation_count INTEGER NOT NULL CHECK (escalation_count >= 0),
  prior_run_id TEXT,
  status TEXT NOT NULL,
  phase TEXT NOT NULL,
  resume_phase TEXT,
  version INTEGER NOT NULL CHECK (version >= 1),
  prompt_revisions_remaining INTEGER NOT NULL CHECK (prompt_revisions_remaining >= 0),
  remediations_remaining INTEGER NOT NULL CHECK (remediations_remaining >= 0),
  outcome_hint TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  extra_json TEXT NOT NULL
) STRICT;
CREATE INDEX runs_by_update ON runs (updated_at DESC, run_id);
CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,
  body TEXT NOT NULL
) STRICT;
CREATE TABLE artifacts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  artifact_id TEXT NOT NULL,
  type TEXT NOT NULL,
  schema_version TEXT NOT NULL,
  producer TEXT NOT NULL,
  sha256 TEXT NOT NULL REFERENCES blobs (sha256),
  source_refs_json TEXT NOT NULL,
  redaction TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, artifact_id)
);
CREATE TABLE trace_events (
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  event_id TEXT NOT NULL UNIQUE,
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
) STRICT;
CREATE TRIGGER blobs_immutable BEFORE UPDATE ON blobs BEGIN SELECT RAISE(ABORT, 'blobs are immutable'); END;
CREATE TRIGGER blobs_append_only BEFORE DELETE ON blobs BEGIN SELECT RAISE(ABORT, 'blobs are append-only'); END;
CREATE TRIGGER artifacts_immutable BEFORE UPDATE ON artifacts BEGIN SELECT RAISE(ABORT, 'artifacts are immutable'); END;
CREATE TRIGGER artifacts_append_only BEFORE DELETE ON artifacts BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
CREATE TRIGGER trace_immutable BEFORE UPDATE ON trace_events BEGIN SELECT RAISE(ABORT, 'trace events are immutable'); END;
CREATE TRIGGER trace_append_only BEFORE DELETE ON trace_events BEGIN SELECT RAISE(ABORT, 'trace events are append-only'); END;
)sql",
    // 2: a run's artifacts in insertion order without a sort or a scan of
    // other runs (ListArtifactsAfter reads only what follows a known seq).
    R"sql(
CREATE INDEX artifacts_by_run_seq ON artifacts (run_id, seq);
)sql",
    // 3: what was redacted from each trace event (TraceEventRecord::redactions,
    // canonical JSON). Events stored before it read as [], and their hashes
    // never covered the field, so the chain verifies unchanged.
    R"sql(
ALTER TABLE trace_events ADD COLUMN redactions_json TEXT NOT NULL DEFAULT '[]';
)sql",
    // 4: QueryRuns pages in creation order, alone or within one status or
    // mode, by walking an index from the cursor (no sort, no full scan).
    R"sql(
CREATE INDEX runs_by_creation ON runs (created_at DESC, run_id);
CREATE INDEX runs_by_status_creation ON runs (status, created_at DESC, run_id);
CREATE INDEX runs_by_mode_creation ON runs (requested_mode, created_at DESC, run_id);
)sql",
    // 5 (issue 22, retention): tombstones of deleted runs, and the one route
    // by which a run's rows may be deleted. The delete guards on blobs,
    // artifacts and trace events are recreated with one exception: the run
    // named in run_deletion_marker, a row that can only be inserted right
    // after that run's tombstone (Store::DeleteRun inserts and removes it in
    // its transaction). Updates stay refused; an ordinary DELETE still fails.
    R"sql(
CREATE TABLE IF NOT EXISTS run_tombstones (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  final_trace_hash TEXT NOT NULL,
  trace_events INTEGER NOT NULL,
  artifacts INTEGER NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT NOT NULL,
  deleted_by TEXT NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_tombstones_by_run ON run_tombstones (run_id);
DROP TRIGGER IF EXISTS run_tombstones_immutable;
CREATE TRIGGER run_tombstones_immutable BEFORE UPDATE ON run_tombstones BEGIN SELECT RAISE(ABORT, 'run tombstones are immutable'); END;
DROP TRIGGER IF EXISTS run_tombstones_append_only;
CREATE TRIGGER run_tombstones_append_only BEFORE DELETE ON run_tombstones BEGIN SELECT RAISE(ABORT, 'run tombstones are append-only'); END;
CREATE TABLE IF NOT EXISTS run_deletion_marker (
  run_id TEXT PRIMARY KEY,
  tombstone_seq INTEGER NOT NULL
) STRICT;
DROP TRIGGER IF EXISTS run_deletion_needs_tombstone;
CREATE TRIGGER run_deletion_needs_tombstone BEFORE INSERT ON run_deletion_marker
  WHEN EXISTS (SELECT 1 FROM run_deletion_marker)
    OR NEW.tombstone_seq IS NOT (SELECT max(seq) FROM run_tombstones)
    OR NOT EXISTS (SELECT 1 FROM run_tombstones WHERE seq = NEW.tombstone_seq AND run_id = NEW.run_id)
  BEGIN SELECT RAISE(ABORT, 'a run is deleted only right after its tombstone is recorded'); END;
DROP TRIGGER IF EXISTS run_deletion_marker_fixed;
CREATE TRIGGER run_deletion_marker_fixed BEFORE UPDATE ON run_deletion_marker BEGIN SELECT RAISE(ABORT, 'the deletion marker is fixed'); END;
CREATE INDEX IF NOT EXISTS artifacts_by_sha256 ON artifacts (sha256);
DROP TRIGGER IF EXISTS blobs_append_only;
CREATE TRIGGER blobs_append_only BEFORE DELETE ON blobs
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker) OR EXISTS (SELECT 1 FROM artifacts WHERE sha256 = OLD.sha256)
  BEGIN SELECT RAISE(ABORT, 'blobs are append-only'); END;
DROP TRIGGER IF EXISTS artifacts_append_only;
CREATE TRIGGER artifacts_append_only BEFORE DELETE ON artifacts
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
DROP TRIGGER IF EXISTS trace_append_only;
CREATE TRIGGER trace_append_only BEFORE DELETE ON trace_events
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'trace events are append-only'); END;
DROP TRIGGER IF EXISTS runs_kept;
CREATE TRIGGER runs_kept BEFORE DELETE ON runs
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'runs are deleted only through telic runs delete'); END;
)sql",
    // 6: the W3C trace context of the request that caused each trace event
    // (TraceEventRecord::traceparent/tracestate; NULL when none was sent).
    // Outside the hash, so every chain verifies unchanged.
    R"sql(
ALTER TABLE trace_events ADD COLUMN traceparent TEXT;
ALTER TABLE trace_events ADD COLUMN tracestate TEXT;
)sql",
    // 7: the refused-call log beside each run (RefusedCall): outside the
    // run's version and hash chain, append-only, deleted with its run.
    R"sql(
CREATE TABLE IF NOT EXISTS refused_calls (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at TEXT NOT NULL,
  tool TEXT NOT NULL,
  code TEXT NOT NULL,
  error TEXT NOT NULL,
  issues_json TEXT NOT NULL,
  run_version INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT;
DROP TRIGGER IF EXISTS refused_calls_immutable;
CREATE TRIGGER refused_calls_immutable BEFORE UPDATE ON refused_calls BEGIN SELECT RAISE(ABORT, 'refused calls are immutable'); END;
DROP TRIGGER IF EXISTS refused_calls_append_only;
CREATE TRIGGER refused_calls_append_only BEFORE DELETE ON refused_calls
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'refused calls are append-only'); END;
)sql",
    // 8 (issue 41): a start_run commits in fewer pages (D-S28). runs is keyed
    // by run_id without a rowid (one B-tree instead of a table and its key);
    // trace_events drops the ledger-wide event_id index (ids are generated, a
    // run's chain is keyed by (run_id, sequence)) and stays a rowid table, so
    // its rows append at the right edge and only the small key lands at a
    // random place; artifacts carry their body (verified against sha256 on
    // every read), so blobs, its key and artifacts_by_sha256 go, and seq is
    // a plain rowid (no AUTOINCREMENT counter row). The runs indexes keep
    // their queries (each is walked backwards for "newest first, then
    // run_id"), but a new run's entry now lands at the right edge, where
    // SQLite appends without splitting a page in half. The new
    // tables reference runs_v8 so that dropping the old ones checks no
    // foreign key, and renaming runs_v8 renames those references.
    R"sql(
CREATE TABLE runs_v8 (
  run_id TEXT NOT NULL PRIMARY KEY,
  schema_version TEXT NOT NULL,
  repository_root TEXT NOT NULL,
  requested_mode TEXT NOT NULL,
  topology TEXT NOT NULL,
  escalation_count INTEGER NOT NULL CHECK (escalation_count >= 0),
  prior_run_id TEXT,
  status TEXT NOT NULL,
  phase TEXT NOT NULL,
  resume_phase TEXT,
  version INTEGER NOT NULL CHECK (version >= 1),
  prompt_revisions_remaining INTEGER NOT NULL CHECK (prompt_revisions_remaining >= 0),
  remediations_remaining INTEGER NOT NULL CHECK (remediations_remaining >= 0),
  outcome_hint TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  extra_json TEXT NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO runs_v8 SELECT run_id, schema_version, repository_root, requested_mode, topology, escalation_count,
  prior_run_id, status, phase, resume_phase, version, prompt_revisions_remaining, remediations_remaining,
  outcome_hint, created_at, updated_at, extra_json FROM runs;
CREATE TABLE artifacts_v8 (
  seq INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs_v8 (run_id),
  artifact_id TEXT NOT NULL,
  type TEXT NOT NULL,
  schema_version TEXT NOT NULL,
  producer TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  source_refs_json TEXT NOT NULL,
  redaction TEXT NOT NULL,
  created_at TEXT NOT NULL,
  body TEXT
);
INSERT INTO artifacts_v8 SELECT a.seq, a.run_id, a.artifact_id, a.type, a.schema_version, a.producer, a.sha256,
  a.source_refs_json, a.redaction, a.created_at, b.body FROM artifacts a LEFT JOIN blobs b USING (sha256);
CREATE TABLE trace_events_v8 (
  run_id TEXT NOT NULL REFERENCES runs_v8 (run_id),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  event_id TEXT NOT NULL,
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
  redactions_json TEXT NOT NULL DEFAULT '[]',
  traceparent TEXT,
  tracestate TEXT,
  PRIMARY KEY (run_id, sequence)
) STRICT;
INSERT INTO trace_events_v8 SELECT run_id, sequence, event_id, timestamp, actor, phase, event_type, input_refs_json,
  output_refs_json, permission_decision_json, summary, budget_snapshot_json, prev_hash, hash, redactions_json,
  traceparent, tracestate FROM trace_events;
DROP TABLE artifacts;
DROP TABLE trace_events;
DROP TABLE blobs;
DROP TABLE runs;
ALTER TABLE runs_v8 RENAME TO runs;
ALTER TABLE artifacts_v8 RENAME TO artifacts;
ALTER TABLE trace_events_v8 RENAME TO trace_events;
CREATE INDEX runs_by_update ON runs (updated_at, run_id DESC);
CREATE INDEX runs_by_creation ON runs (created_at, run_id DESC);
CREATE INDEX runs_by_status_creation ON runs (status, created_at, run_id DESC);
CREATE INDEX runs_by_mode_creation ON runs (requested_mode, created_at, run_id DESC);
CREATE UNIQUE INDEX artifacts_by_run_id ON artifacts (run_id, artifact_id);
CREATE TRIGGER artifacts_immutable BEFORE UPDATE ON artifacts BEGIN SELECT RAISE(ABORT, 'artifacts are immutable'); END;
CREATE TRIGGER artifacts_append_only BEFORE DELETE ON artifacts
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'artifacts are append-only'); END;
CREATE TRIGGER trace_immutable BEFORE UPDATE ON trace_events BEGIN SELECT RAISE(ABORT, 'trace events are immutable'); END;
CREATE TRIGGER trace_append_only BEFORE DELETE ON trace_events
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'trace events are append-only'); END;
CREATE TRIGGER runs_kept BEFORE DELETE ON runs
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'runs are deleted only through telic runs delete'); END;
)sql",
};

constexpr int kSchemaVersion = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));


// Graph tables have their own migration list and version key
// (telic_meta 'graph_schema_version'); never edit a released entry.
const char* const kGraphMigrations[] = {
    // 1: tasks (record as canonical JSON plus indexed columns), append-only
    // events, stories, single-use approvals.
    R"sql(
CREATE TABLE graph_tasks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL UNIQUE,
  run_id TEXT,
  parent_task_id TEXT,
  state TEXT NOT NULL CHECK (state IN ('pending','ready','running','completed','failed','cancelled')),
  version INTEGER NOT NULL CHECK (version >= 1),
  body_json TEXT NOT NULL
);
CREATE INDEX graph_tasks_by_run ON graph_tasks (run_id, seq);
CREATE TABLE graph_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  subject_id TEXT NOT NULL,
  run_id TEXT,
  kind TEXT NOT NULL,
  actor TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX graph_events_by_subject ON graph_events (subject_id, seq);
CREATE TABLE graph_stories (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  story_id TEXT NOT NULL UNIQUE,
  run_id TEXT,
  arbitration_task_id TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  body_json TEXT NOT NULL
);
CREATE INDEX graph_stories_by_arbitration ON graph_stories (arbitration_task_id);
CREATE TABLE graph_approvals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  approval_id TEXT NOT NULL UNIQUE,
  task_id TEXT NOT NULL,
  binding_sha256 TEXT NOT NULL,
  used_at TEXT,
  body_json TEXT NOT NULL
);
CREATE INDEX graph_approvals_by_task ON graph_approvals (task_id, seq);
CREATE TRIGGER graph_events_immutable BEFORE UPDATE ON graph_events BEGIN SELECT RAISE(ABORT, 'task events are immutable'); END;
CREATE TRIGGER graph_events_append_only BEFORE DELETE ON graph_events BEGIN SELECT RAISE(ABORT, 'task events are append-only'); END;
CREATE TRIGGER graph_approvals_append_only BEFORE DELETE ON graph_approvals BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
CREATE TRIGGER graph_approvals_single_use BEFORE UPDATE ON graph_approvals
  WHEN OLD.used_at IS NOT NULL OR NEW.used_at IS NULL OR NEW.body_json IS NOT OLD.body_json
    OR NEW.binding_sha256 IS NOT OLD.binding_sha256 OR NEW.task_id IS NOT OLD.task_id OR NEW.approval_id IS NOT OLD.approval_id
  BEGIN SELECT RAISE(ABORT, 'an approval can only be marked used, once'); END;
CREATE TRIGGER graph_tasks_kept BEFORE DELETE ON graph_tasks BEGIN SELECT RAISE(ABORT, 'tasks are never deleted'); END;
)sql",
    // 2 (issue 22, retention): a run's graph rows may be deleted only with
    // the run, while the run store's run_deletion_marker names it (see the
    // run schema's migration 5); every other DELETE is still refused.
    R"sql(
DROP TRIGGER graph_events_append_only;
CREATE TRIGGER graph_events_append_only BEFORE DELETE ON graph_events
  WHEN OLD.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'task events are append-only'); END;
DROP TRIGGER graph_approvals_append_only;
CREATE TRIGGER graph_approvals_append_only BEFORE DELETE ON graph_approvals
  WHEN NOT EXISTS (SELECT 1 FROM run_deletion_marker m JOIN graph_tasks t ON t.run_id = m.run_id WHERE t.task_id = OLD.task_id)
  BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
DROP TRIGGER graph_tasks_kept;
CREATE TRIGGER graph_tasks_kept BEFORE DELETE ON graph_tasks
  WHEN OLD.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'tasks are never deleted'); END;
CREATE TRIGGER graph_stories_kept BEFORE DELETE ON graph_stories
  WHEN OLD.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM run_deletion_marker WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'stories are never deleted'); END;
)sql",
};

constexpr int kGraphSchemaVersion = static_cast<int>(sizeof(kGraphMigrations) / sizeof(kGraphMigrations[0]));

}  // namespace

int SqliteSchemaVersion() { return kSchemaVersion; }

int SqliteGraphSchemaVersion() { return kGraphSchemaVersion; }

Status MigrateRunSchema(sqlite3* db, StmtCache& stmts) {
  // Fast path: a current ledger is opened without taking the write lock.
  auto current = QueryInt(stmts, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "schema_version");
  if (current && *current == kSchemaVersion) return Ok();
  Transaction tx(db);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  TELIC_RETURN_IF_ERROR(Exec(db, "CREATE TABLE IF NOT EXISTS telic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT"));
  TELIC_ASSIGN_OR_RETURN(int64_t has_runs,
                         QueryInt(stmts, "SELECT count(*) FROM sqlite_master WHERE name = ?", "runs"));
  TELIC_ASSIGN_OR_RETURN(int64_t version,
                         QueryInt(stmts, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "schema_version"));
  if (version < 0 && has_runs > 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "the ledger has tables but no telic schema version; it was not written by telic");
  }
  if (version > kSchemaVersion) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the ledger has schema version {} but this telic supports up to {}; upgrade telic",
                            version, kSchemaVersion));
  }
  // Another process migrated it while this one waited for the lock: nothing
  // to write (the rollback undoes only a no-op CREATE TABLE IF NOT EXISTS).
  if (version == kSchemaVersion) return Ok();
  for (int64_t next = std::max<int64_t>(version, 0); next < kSchemaVersion; ++next) {
    TELIC_RETURN_IF_ERROR(Exec(db, kMigrations[next]));
  }
  Stmt s(db, "INSERT INTO telic_meta (key, value) VALUES ('schema_version', ?) "
              "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  s.Bind(1, std::to_string(kSchemaVersion));
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "migration"));
  return tx.Commit();
}


Status MigrateGraphSchema(sqlite3* db) {
  auto current = QueryInt(db, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "graph_schema_version");
  if (current && *current == kGraphSchemaVersion) return Ok();
  Transaction tx(db);
  TELIC_RETURN_IF_ERROR(tx.BeginImmediate());
  TELIC_ASSIGN_OR_RETURN(int64_t has_meta, QueryInt(db, "SELECT count(*) FROM sqlite_master WHERE name = ?", "telic_meta"));
  if (has_meta == 0) {
    Stmt tables(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    if (tables.Step() != SQLITE_ROW) return std::unexpected(SqlError(db, "schema read"));
    if (tables.Int(0) > 0) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "the ledger has tables but no telic schema version; it was not written by telic");
    }
    TELIC_RETURN_IF_ERROR(Exec(db, "CREATE TABLE telic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT"));
  }
  TELIC_ASSIGN_OR_RETURN(int64_t version,
                         QueryInt(db, "SELECT CAST(value AS INTEGER) FROM telic_meta WHERE key = ?", "graph_schema_version"));
  if (version > kGraphSchemaVersion) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the ledger has task graph schema version {} but this telic supports up to {}; upgrade telic",
                            version, kGraphSchemaVersion));
  }
  for (int64_t next = std::max<int64_t>(version, 0); next < kGraphSchemaVersion; ++next) {
    TELIC_RETURN_IF_ERROR(Exec(db, kGraphMigrations[next]));
  }
  Stmt s(db, "INSERT INTO telic_meta (key, value) VALUES ('graph_schema_version', ?) "
              "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  s.Bind(1, std::to_string(kGraphSchemaVersion));
  if (s.Step() != SQLITE_DONE) return std::unexpected(SqlError(db, "graph migration"));
  return tx.Commit();
}

}  // namespace telic::store
