#include "store/open_store.h"

#include "store/pg_store.h"
#include "store/pg_task_store.h"
#include "store/sqlite_store.h"
#include "store/sqlite_task_store.h"

namespace telic::store {

Result<std::unique_ptr<Store>> OpenStore(const std::string& url_or_path, int pg_pool_size) {
  if (IsPostgresUrl(url_or_path)) {
    TELIC_ASSIGN_OR_RETURN(std::unique_ptr<PgStore> store, PgStore::Open(url_or_path, pg_pool_size));
    return std::unique_ptr<Store>(std::move(store));
  }
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::Open(url_or_path));
  return std::unique_ptr<Store>(std::move(store));
}

Result<std::unique_ptr<TaskStore>> OpenTaskStore(Store& runs, const std::string& ledger_path,
                                                 bool connect_on_first_use) {
  if (auto* pg = dynamic_cast<PgStore*>(&runs)) return std::unique_ptr<TaskStore>(std::make_unique<PgTaskStore>(*pg));
  if (connect_on_first_use) return std::unique_ptr<TaskStore>(SqliteTaskStore::OpenOnFirstUse(ledger_path));
  TELIC_ASSIGN_OR_RETURN(std::unique_ptr<SqliteTaskStore> tasks, SqliteTaskStore::Open(ledger_path));
  return std::unique_ptr<TaskStore>(std::move(tasks));
}

Status CheckStoreReady(Store& store) {
  if (auto* pg = dynamic_cast<PgStore*>(&store)) return pg->Ping();
  TELIC_RETURN_IF_ERROR(store.ListRuns(1));
  return Ok();
}

}  // namespace telic::store
