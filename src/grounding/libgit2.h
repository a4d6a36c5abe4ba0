// libgit2, loaded the first time grounding needs it.
//
// Linking libgit2 loads it and the libraries it depends on (mbed TLS,
// libssh2, http-parser, Kerberos' GSS-API) into every telic process, and
// binding their symbols costs ~4 ms of every start-up on the 2-core bench
// machine (issue 18 target 3), although only grounding reads repositories.
// As with libpq (src/store/libpq.h), telic opens it with dlopen; the header
// still comes from libgit2-dev, so the types, constants and function
// signatures are libgit2's own, and the library opened is the one of that
// header's soname (LIBGIT2_SOVERSION).
//
// Debian's libgit2 is built with mbed TLS, and git_libgit2_init parses the
// whole system CA bundle (/etc/ssl/certs/ca-certificates.crt) for HTTPS
// remotes: 53 M of the 80 M instructions of `telic ground` on a one-file
// repository (callgrind), ~15 ms. telic reads local repositories only and
// never lets libgit2 open a connection, so libgit2.cc defines
// mbedtls_x509_crt_parse_file, which the executables export and libgit2
// binds to before libmbedx509's: the parse is declined and libgit2 holds no
// CA certificate (docs/DECISIONS.md D-START4).
//
// The functions below are libgit2's (same signatures, without the git_
// prefix). Call Load() before the first of them to get a clear error when
// libgit2 is missing; a function called when libgit2 cannot be loaded
// aborts the process with that error.
#pragma once

#include <git2.h>

#include <utility>

#include "base/status.h"

namespace telic::grounding::git {

// "libgit2.so.1.5" on Debian 12 (package libgit2-1.5).
inline constexpr const char* kLibraryName = "libgit2.so." LIBGIT2_SOVERSION;

#define TELIC_LIBGIT2_FUNCTIONS(X)                                                                             \
  X(libgit2_init) X(libgit2_opts) X(commit_free) X(commit_lookup) X(commit_tree_id) X(config_free)             \
  X(config_get_bool) X(diff_find_similar) X(diff_free) X(diff_get_delta) X(diff_num_deltas)                    \
  X(diff_tree_to_index) X(ignore_path_is_ignored) X(index_entrycount) X(index_free) X(index_get_byindex)       \
  X(index_path) X(odb_hash) X(oid_tostr) X(reference_name_to_id) X(repository_config_snapshot)                 \
  X(repository_free) X(repository_hashfile) X(repository_index) X(repository_open_ext) X(repository_path)     \
  X(repository_workdir) X(tree_free) X(tree_lookup) X(blob_free) X(blob_lookup) X(blob_rawcontent) X(blob_rawsize)   \
  X(diff_tree_to_tree) X(oid_fromstr) X(tree_entry_bypath) X(tree_entry_free) X(tree_entry_id) X(tree_entry_type)

struct Api {
#define TELIC_LIBGIT2_POINTER(name) decltype(&::git_##name) name = nullptr;
  TELIC_LIBGIT2_FUNCTIONS(TELIC_LIBGIT2_POINTER)
#undef TELIC_LIBGIT2_POINTER
};

// Loads libgit2 once per process (thread-safe); later calls return the
// first outcome. The error names the library, the package and dlerror()'s reason.
Status Load();

// How many times libgit2 asked for the CA bundle and telic declined it
// (one per git_libgit2_init on Debian's build; 0 means the decline is not
// bound and the bundle was parsed).
int CaBundleParsesDeclined();

// The resolved functions; aborts with Load()'s error when it failed.
const Api& Table();

// git::repository_open_ext(...) calls git_repository_open_ext(...), and so on.
#define TELIC_LIBGIT2_FORWARD(name)           \
  template <typename... Args>                 \
  auto name(Args&&... args) {                 \
    return Table().name(std::forward<Args>(args)...); \
  }
TELIC_LIBGIT2_FUNCTIONS(TELIC_LIBGIT2_FORWARD)
#undef TELIC_LIBGIT2_FORWARD

}  // namespace telic::grounding::git
