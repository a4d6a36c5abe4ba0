// A PostgreSQL server for tests (tests only), shared by every test of one
// test binary: TELIC_TEST_POSTGRES_URL when set (scripts/test starts one for
// the whole run), else a private server started on first use with
// scripts/pg-test-server (initdb + pg_ctl on a unix socket in a temp dir) and
// stopped by a gtest global environment when the binary ends.
//
// Each test gets a fresh schema (NewSchemaUrl), so tests never see each
// other's rows. Without server binaries, Available() is false and Reason()
// says why; with TELIC_REQUIRE_POSTGRES=1 (CI) tests must fail, not skip.
#pragma once

#include "store/libpq.h"
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "base/ids.h"

#ifndef TELIC_SOURCE_DIR
#error "TELIC_SOURCE_DIR must name the source tree (set by CMake for the unit tests)"
#endif

// In a test body or SetUp: declares `server`, the shared server, and ends
// the test when there is none: a failure when TELIC_REQUIRE_POSTGRES is set
// (CI), a skip otherwise.
#define TELIC_SHARED_POSTGRES_OR_SKIP(server)                                     \
  auto& server = ::telic::testing::PostgresServer::Shared();                    \
  if (!server.Available()) {                                                     \
    if (::telic::testing::PostgresServer::Required()) FAIL() << server.Reason(); \
    GTEST_SKIP() << "SKIPPED: " << server.Reason();                              \
  }

namespace telic::testing {

class PostgresServer {
 public:
  static PostgresServer& Shared() {
    static PostgresServer* server = [] {
      auto* created = new PostgresServer();
      created->Start();
      instance_ = created;
      return created;
    }();
    return *server;
  }

  // Stops the private server, if one was started; never starts one.
  static void StopIfStarted() {
    if (instance_) instance_->Stop();
  }

  bool Available() const { return !url_.empty(); }
  const std::string& Reason() const { return reason_; }
  const std::string& Url() const { return url_; }

  static bool Required() {
    const char* required = std::getenv("TELIC_REQUIRE_POSTGRES");
    return required && std::string(required) == "1";
  }

  // Creates an empty schema and returns a URL whose search_path is only that schema.
  std::string NewSchemaUrl() {
    std::string schema = "t_" + RandomHex(8);
    Exec(url_, "CREATE SCHEMA " + schema);
    return url_ + (url_.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema;
  }

  // Runs SQL on `url` outside telic; the error message, or "" on success.
  static std::string Exec(const std::string& url, const std::string& sql) {
    if (auto loaded = telic::store::pq::Load(); !loaded) return loaded.error().message();
    PGconn* conn = telic::store::pq::connectdb(url.c_str());
    std::string error;
    if (telic::store::pq::status(conn) != CONNECTION_OK) {
      error = telic::store::pq::errorMessage(conn);
    } else {
      PGresult* result = telic::store::pq::exec(conn, sql.c_str());
      ExecStatusType status = telic::store::pq::resultStatus(result);
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) error = telic::store::pq::resultErrorMessage(result);
      telic::store::pq::clear(result);
    }
    telic::store::pq::finish(conn);
    return error;
  }

  void Stop() {
    if (dir_.empty()) return;
    std::string command = Script() + " stop '" + dir_ + "' >/dev/null 2>&1";
    (void)std::system(command.c_str());
    dir_.clear();
  }

 private:
  static std::string Script() { return std::string("bash '") + TELIC_SOURCE_DIR + "/scripts/pg-test-server'"; }

  void Start() {
    if (const char* external = std::getenv("TELIC_TEST_POSTGRES_URL"); external && *external) {
      url_ = external;
      return;
    }
    // Under /tmp: the server may run as another user, who must reach the socket dir.
    char pattern[] = "/tmp/telic-pg-XXXXXX";
    if (!::mkdtemp(pattern)) {
      reason_ = "cannot create a temporary directory for PostgreSQL";
      return;
    }
    dir_ = pattern;
    std::string errors = dir_ + ".err";
    std::string command = Script() + " start '" + dir_ + "' 2>'" + errors + "'";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string out;
    char buffer[512];
    while (pipe && std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    int status = pipe ? ::pclose(pipe) : -1;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (status == 0 && !out.empty()) {
      url_ = out;
    } else {
      std::string detail;
      if (FILE* f = std::fopen(errors.c_str(), "r")) {
        while (std::fgets(buffer, sizeof buffer, f)) detail += buffer;
        std::fclose(f);
      }
      while (!detail.empty() && detail.back() == '\n') detail.pop_back();
      reason_ = "no PostgreSQL server for the tests: " + (detail.empty() ? std::string("pg-test-server failed") : detail);
      Stop();
    }
    std::remove(errors.c_str());
  }

  static inline PostgresServer* instance_ = nullptr;
  std::string url_;
  std::string reason_;
  std::string dir_;
};

// Stops the shared server (if this binary started one) after the last test.
class PostgresEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { PostgresServer::StopIfStarted(); }
};

// Registered once per test binary (an inline variable is initialised once).
inline ::testing::Environment* const kPostgresEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

}  // namespace telic::testing
