// Chooses the store from a --db value: a PostgreSQL URL or a SQLite file path.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/store.h"
#include "store/task_store.h"

namespace telic::store {

// "postgresql://..." / "postgres://..." open a PgStore (pool of up to
// `pg_pool_size` connections); anything else is a SQLite ledger file path.
Result<std::unique_ptr<Store>> OpenStore(const std::string& url_or_path, int pg_pool_size = 8);

// The task graph beside `runs`: in the same PostgreSQL database (sharing its
// pool) when `runs` is a PgStore, else in the SQLite ledger at `ledger_path`.
// With `connect_on_first_use`, the SQLite task store opens its connection
// (and migrates) on its first call, whose result carries any open error.
Result<std::unique_ptr<TaskStore>> OpenTaskStore(Store& runs, const std::string& ledger_path,
                                                 bool connect_on_first_use = false);

// A round trip proving the store answers (readiness checks).
Status CheckStoreReady(Store& store);

}  // namespace telic::store
