#include "store/libpq.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include <fmt/format.h>

#include "base/runtime_library.h"

namespace telic::store::pq {
namespace {

#define TELIC_LIBPQ_FUNCTIONS(X)                                                                              \
  X(PQntuples) X(PQstatus) X(PQfinish) X(PQerrorMessage) X(PQcmdTuples) X(PQclear) X(PQresultStatus)          \
  X(PQresultErrorMessage) X(PQtransactionStatus) X(PQresultErrorField) X(PQexec) X(PQgetvalue) X(PQgetlength) \
  X(PQgetisnull) X(PQexecParams) X(PQconnectdbParams) X(PQconnectdb) X(PQenterPipelineMode)               \
  X(PQexitPipelineMode) X(PQpipelineSync) X(PQsendQueryParams) X(PQgetResult) X(PQprepare) X(PQexecPrepared)     \
  X(PQsendPrepare) X(PQsendQueryPrepared)

struct Api {
#define TELIC_LIBPQ_POINTER(name) decltype(&::name) name = nullptr;
  TELIC_LIBPQ_FUNCTIONS(TELIC_LIBPQ_POINTER)
#undef TELIC_LIBPQ_POINTER
};

// Opens `file_name` and fills `api`; the handle, or nullptr with `error` set.
void* Open(const char* file_name, Api& api, std::string& error) {
  dlerror();
  void* handle = dlopen(file_name, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    error = fmt::format("PostgreSQL stores need libpq (Debian package libpq5), which could not be loaded: {}",
                        DlErrorMessage());
    return nullptr;
  }
#define TELIC_LIBPQ_RESOLVE(name)                                                                          \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));                                  \
  if (api.name == nullptr) {                                                                               \
    error = fmt::format("{} has no function {} (PostgreSQL stores need libpq, Debian package libpq5): {}", \
                        file_name, #name, DlErrorMessage());                                               \
    dlclose(handle);                                                                                       \
    return nullptr;                                                                                        \
  }
  TELIC_LIBPQ_FUNCTIONS(TELIC_LIBPQ_RESOLVE)
#undef TELIC_LIBPQ_RESOLVE
  return handle;
}

using Loaded = RuntimeLibrary<Api>;

const Loaded& Library() {
  static const Loaded loaded = [] {
    Loaded out;
    // Kept open for the life of the process.
    if (Open(kLibraryName, out.api, out.error) == nullptr && out.error.empty()) out.error = "libpq: unknown error";
    return out;
  }();
  return loaded;
}

const Api& Table() { return Library().TableOrAbort(); }

}  // namespace

Status Load() { return Library().status(); }

Status CheckLibrary(const char* file_name) {
  Api api;
  std::string error;
  void* handle = Open(file_name, api, error);
  if (handle == nullptr) return Fail(ErrorCode::kFailedPrecondition, error);
  dlclose(handle);
  return Ok();
}

int ntuples(const PGresult* res) { return Table().PQntuples(res); }
ConnStatusType status(const PGconn* conn) { return Table().PQstatus(conn); }
void finish(PGconn* conn) { Table().PQfinish(conn); }
char* errorMessage(const PGconn* conn) { return Table().PQerrorMessage(conn); }
char* cmdTuples(PGresult* res) { return Table().PQcmdTuples(res); }
void clear(PGresult* res) { Table().PQclear(res); }
ExecStatusType resultStatus(const PGresult* res) { return Table().PQresultStatus(res); }
char* resultErrorMessage(const PGresult* res) { return Table().PQresultErrorMessage(res); }
PGTransactionStatusType transactionStatus(const PGconn* conn) { return Table().PQtransactionStatus(conn); }
char* resultErrorField(const PGresult* res, int fieldcode) { return Table().PQresultErrorField(res, fieldcode); }
PGresult* exec(PGconn* conn, const char* query) { return Table().PQexec(conn, query); }
char* getvalue(const PGresult* res, int tup_num, int field_num) { return Table().PQgetvalue(res, tup_num, field_num); }
int getlength(const PGresult* res, int tup_num, int field_num) { return Table().PQgetlength(res, tup_num, field_num); }
int getisnull(const PGresult* res, int tup_num, int field_num) { return Table().PQgetisnull(res, tup_num, field_num); }
PGresult* execParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                     const char* const* paramValues, const int* paramLengths, const int* paramFormats,
                     int resultFormat) {
  return Table().PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                              resultFormat);
}
PGconn* connectdbParams(const char* const* keywords, const char* const* values, int expand_dbname) {
  return Table().PQconnectdbParams(keywords, values, expand_dbname);
}
PGconn* connectdb(const char* conninfo) { return Table().PQconnectdb(conninfo); }
int enterPipelineMode(PGconn* conn) { return Table().PQenterPipelineMode(conn); }
int exitPipelineMode(PGconn* conn) { return Table().PQexitPipelineMode(conn); }
int pipelineSync(PGconn* conn) { return Table().PQpipelineSync(conn); }
int sendQueryParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                    const char* const* paramValues, const int* paramLengths, const int* paramFormats,
                    int resultFormat) {
  return Table().PQsendQueryParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                                   resultFormat);
}
PGresult* getResult(PGconn* conn) { return Table().PQgetResult(conn); }
PGresult* prepare(PGconn* conn, const char* stmtName, const char* query, int nParams, const Oid* paramTypes) {
  return Table().PQprepare(conn, stmtName, query, nParams, paramTypes);
}
PGresult* execPrepared(PGconn* conn, const char* stmtName, int nParams, const char* const* paramValues,
                       const int* paramLengths, const int* paramFormats, int resultFormat) {
  return Table().PQexecPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
int sendPrepare(PGconn* conn, const char* stmtName, const char* query, int nParams, const Oid* paramTypes) {
  return Table().PQsendPrepare(conn, stmtName, query, nParams, paramTypes);
}
int sendQueryPrepared(PGconn* conn, const char* stmtName, int nParams, const char* const* paramValues,
                      const int* paramLengths, const int* paramFormats, int resultFormat) {
  return Table().PQsendQueryPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

}  // namespace telic::store::pq
