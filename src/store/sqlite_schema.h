// The SQLite ledger's schema: the run tables' migrations (telic_meta
// 'schema_version') and the task graph's (telic_meta 'graph_schema_version'),
// each list applied in one transaction by the store that owns it.
#pragma once

#include "base/status.h"

struct sqlite3;

namespace telic::store {

class StmtCache;

// The newest run schema version this build writes.
int SqliteSchemaVersion();
// The newest task graph schema version this build writes.
int SqliteGraphSchemaVersion();

// Brings the run tables to SqliteSchemaVersion(): a current ledger without
// taking the write lock, else under BEGIN IMMEDIATE. kFailedPrecondition for
// a newer schema or a database telic did not write. `stmts` is db's cache.
[[nodiscard]] Status MigrateRunSchema(sqlite3* db, StmtCache& stmts);

// Brings the task graph tables to SqliteGraphSchemaVersion() (the same rules).
[[nodiscard]] Status MigrateGraphSchema(sqlite3* db);

}  // namespace telic::store
