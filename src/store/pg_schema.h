// The PostgreSQL ledger's schema: the migrations of the run tables and the
// task graph (one list, telic_meta 'schema_version'), applied under an
// advisory lock so that instances starting together migrate once.
#pragma once

#include "base/status.h"

struct pg_conn;

namespace telic::store {

// The newest schema version this build writes.
int PgSchemaVersion();

// Brings the database to PgSchemaVersion() on `conn`: a current database
// without taking a lock. kFailedPrecondition for a newer schema or tables
// telic did not write; the database's failure otherwise.
[[nodiscard]] Status MigratePgSchema(pg_conn* conn);

}  // namespace telic::store
