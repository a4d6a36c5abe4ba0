// libpq, loaded the first time a PostgreSQL store needs it.
//
// Linking libpq loads it and the ~20 libraries it depends on (Kerberos,
// LDAP, SASL, GnuTLS, p11-kit, ...) into every telic process, although only
// PostgreSQL stores use it: ~7 ms of start-up for every command on the
// 2-core bench machine (docs/ARCHITECTURE.md, "PostgreSQL"). telic opens it
// with dlopen("libpq.so.5") instead; the header still comes from libpq-dev,
// so the types and constants are libpq's own.
//
// The functions below are libpq's (same signatures, without the PQ prefix).
// Call Load() before the first of them to get a clear error when libpq is
// missing; a function called when libpq cannot be loaded aborts the process
// with that error.
#pragma once

#include <libpq-fe.h>

#include "base/status.h"

namespace telic::store::pq {

// The library telic loads (Debian package libpq5).
inline constexpr const char* kLibraryName = "libpq.so.5";

// Loads libpq once per process (thread-safe); later calls return the first
// outcome. The error names the library, the package and dlerror()'s reason.
Status Load();

// Loads `file_name` and resolves every function telic uses, then unloads
// it: whether that file would do.
Status CheckLibrary(const char* file_name);

int ntuples(const PGresult* res);
ConnStatusType status(const PGconn* conn);
void finish(PGconn* conn);
char* errorMessage(const PGconn* conn);
char* cmdTuples(PGresult* res);
void clear(PGresult* res);
ExecStatusType resultStatus(const PGresult* res);
char* resultErrorMessage(const PGresult* res);
PGTransactionStatusType transactionStatus(const PGconn* conn);
char* resultErrorField(const PGresult* res, int fieldcode);
PGresult* exec(PGconn* conn, const char* query);
char* getvalue(const PGresult* res, int tup_num, int field_num);
int getlength(const PGresult* res, int tup_num, int field_num);
int getisnull(const PGresult* res, int tup_num, int field_num);
PGresult* execParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                     const char* const* paramValues, const int* paramLengths, const int* paramFormats,
                     int resultFormat);
PGconn* connectdbParams(const char* const* keywords, const char* const* values, int expand_dbname);
PGconn* connectdb(const char* conninfo);
// Pipeline mode (libpq 14 and later): several statements, one round trip.
int enterPipelineMode(PGconn* conn);
int exitPipelineMode(PGconn* conn);
int pipelineSync(PGconn* conn);
int sendQueryParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                    const char* const* paramValues, const int* paramLengths, const int* paramFormats,
                    int resultFormat);
PGresult* getResult(PGconn* conn);
// Named prepared statements (the server parses and plans them once per
// connection).
PGresult* prepare(PGconn* conn, const char* stmtName, const char* query, int nParams, const Oid* paramTypes);
PGresult* execPrepared(PGconn* conn, const char* stmtName, int nParams, const char* const* paramValues,
                       const int* paramLengths, const int* paramFormats, int resultFormat);
int sendPrepare(PGconn* conn, const char* stmtName, const char* query, int nParams, const Oid* paramTypes);
int sendQueryPrepared(PGconn* conn, const char* stmtName, int nParams, const char* const* paramValues,
                      const int* paramLengths, const int* paramFormats, int resultFormat);

}  // namespace telic::store::pq
