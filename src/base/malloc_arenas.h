// How many glibc malloc arenas a telic process uses (docs/DECISIONS.md D-P17).
//
// glibc gives each new thread that allocates an arena of its own until there
// are 8 per core, and an arena keeps the memory its threads freed. `telic
// serve --http` serves each connection on a worker thread, so 16 connections
// grew 16 arenas that together held ~9 MB of freed memory: the server's RSS
// under sustained HTTP writes rose to 33-39 MB (issue 18 target 6: <= 30 MB).
// Two arenas per core, at least four, kept it at 24-27 MB for 1-5% fewer
// write requests/s (bench/http_ab.sh; reads unchanged).
#pragma once

#include <optional>

namespace telic {

// The arena limit for a machine of `cores` processors (0: unknown), or
// nullopt when the user chose one: `malloc_arena_max_env` is the value of
// MALLOC_ARENA_MAX and `glibc_tunables_env` that of GLIBC_TUNABLES (either may
// be null when unset); a tunables string naming glibc.malloc.arena_max counts
// as a choice, whatever its value.
std::optional<int> MallocArenaLimit(const char* malloc_arena_max_env, const char* glibc_tunables_env, unsigned cores);

// Applies MallocArenaLimit for this process's environment and processors with
// mallopt(M_ARENA_MAX). Call it first thing in main(), before any thread
// starts. Returns the limit applied, or nullopt when the user's choice was
// left alone or mallopt refused the value.
std::optional<int> LimitMallocArenas();

}  // namespace telic
