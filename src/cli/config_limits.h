// Bounds on the host config files `telic install` reads (JSON, JSONC, TOML):
// a repository or a home folder may hold anything, so size and nesting are
// checked in one flat pass before any parser or recursive walk sees the text
// (docs/HOSTS.md "Limits").
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "cli/install_hosts.h"

namespace telic::cli {

constexpr size_t kMaxConfigBytes = 8 * 1024 * 1024;
// Host configs nest a handful of levels; this leaves room and keeps every
// recursive walk (nlohmann's dump and compare, toml++) far from the stack's end.
constexpr size_t kMaxConfigDepth = 64;
// TOML dotted keys (a.b.c = 1, [a.b.c]) each open a table: at most this many
// dots in one key.
constexpr size_t kMaxTomlKeyDots = 16;

// Refuses (kFailedPrecondition, "<shown>: nested deeper than 64 levels at
// byte N") JSON or JSONC text whose [ and { nest deeper than kMaxConfigDepth,
// counted outside strings and comments, and text over kMaxConfigBytes.
// No recursion: any input is checked in linear time.
[[nodiscard]] Status CheckJsonBounds(const std::string& text, const std::string& shown);

// The same for TOML: [ and { outside strings and comments, and the dots of
// one dotted key (kMaxTomlKeyDots); and ASCII only, since toml++ 3.3 reaches
// undefined behaviour on some non-ASCII characters.
[[nodiscard]] Status CheckTomlBounds(const std::string& text, const std::string& shown);

// A host config file (a JSON object; JSONC with comments and trailing commas
// accepted) parsed after CheckJsonBounds; blank text is an empty object. For
// JSONC the DOM has the comments dropped and serves decisions only. Errors
// name the file and say telic will not rewrite it.
[[nodiscard]] Result<OrderedJson> ParseConfig(const std::string& bytes, const std::string& shown);

// Whether bytes are blank (spaces and line breaks only).
bool IsBlank(const std::string& bytes);

}  // namespace telic::cli
