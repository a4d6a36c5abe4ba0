// Repository-relative paths and glob scopes for repository.read/write/delete
// (docs/PERMISSIONS.md, "Paths" and "Globs").
//
// A target path is normalised before any matching: it must be valid UTF-8
// without NUL, control characters, backslashes, `%`, glob characters `*` `?`
// (targets are literal paths) or invisible/bidirectional formatting
// characters; it may not contain a `..` segment or start with `~`; an absolute path is accepted only
// when it lies inside the repository root and is then made relative; and,
// when a FileSystem is given, every symlink on the way is resolved (the
// nearest existing ancestor, then each link target in turn) and the result
// must still lie inside the root. Denials carry the reason as the error
// message (ErrorCode::kPermissionDenied).
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace telic::policy {

// How paths are compared with glob scopes. On Linux file names are
// case-sensitive, so the default is exact. When the repository lives on a
// case-insensitive filesystem, set case_insensitive: deny entries then match
// ASCII case-folded (a path differing only in case from a denied path is
// still denied), allow entries keep matching exactly (the conservative side),
// and non-ASCII paths and names ending in '.' or ' ' are refused because
// their folding is filesystem specific.
struct MatchOptions {
  bool case_insensitive = false;
};

enum class FileKind { kMissing, kDirectory, kSymlink, kOther };

// The filesystem queries path resolution needs; tests inject a fake.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // lstat(2) of an absolute path: the kind of the final component without
  // following it. A missing component (ENOENT, ENOTDIR) is kMissing, not an
  // error; any other failure is an error.
  virtual Result<FileKind> Lstat(const std::string& absolute_path) const = 0;
  // readlink(2) of a symlink.
  virtual Result<std::string> ReadLink(const std::string& absolute_path) const = 0;
  // realpath(3) of an existing path, used as a cross-check of the resolution
  // (nullopt when the filesystem cannot answer, e.g. for a missing path).
  virtual std::optional<std::string> RealPath(const std::string& absolute_path) const = 0;
};

// The host's filesystem through lstat(2), readlink(2) and realpath(3).
class RealFileSystem final : public FileSystem {
 public:
  Result<FileKind> Lstat(const std::string& absolute_path) const override;
  Result<std::string> ReadLink(const std::string& absolute_path) const override;
  std::optional<std::string> RealPath(const std::string& absolute_path) const override;
};
const FileSystem& HostFileSystem();

// Probes whether the directory `absolute_dir` lives on a case-insensitive
// filesystem by looking up its path with the case of its letters swapped.
// nullopt when it cannot tell (no letters, or the directory is missing).
std::optional<bool> ProbeCaseInsensitive(const std::string& absolute_dir);

// The repository root a target is resolved against.
//   path: absolute root; "" when unknown (absolute targets are then denied).
//   fs:   nullptr for lexical checks only (no symlink resolution).
struct RepoRoot {
  std::string path;
  const FileSystem* fs = nullptr;
  MatchOptions match;

  // A root on the host filesystem, with symlink resolution. Without explicit
  // options, case-insensitive matching is switched on when
  // ProbeCaseInsensitive says the root's filesystem folds case.
  static RepoRoot OnDisk(std::string path);
  static RepoRoot OnDisk(std::string path, MatchOptions match);
};

// A normalised target: `lexical` is the path as named ('/'-separated,
// relative, "." for the root); `resolved` is where it leads after symlinks
// (equal to `lexical` when nothing on the way is a symlink or no filesystem
// is given). Both must be covered by an allow scope; either matching a deny
// scope denies.
struct ResolvedPath {
  std::string lexical;
  std::string resolved;
};

Result<ResolvedPath> ResolveRepoPath(std::string_view input, const RepoRoot& root);

// The lexical part of ResolveRepoPath.
Result<std::string> NormalizeRepoPath(std::string_view input, const RepoRoot& root);

namespace glob_detail {
// One character position of a segment pattern.
struct CharClass {
  std::bitset<128> ascii;   // which ASCII characters match ('/' never does)
  std::bitset<128> folded;  // the same when ASCII case is ignored
  bool non_ascii = false;   // whether any non-ASCII code point matches
};
struct Token {
  enum class Kind { kLiteral, kClass, kStar };
  Kind kind = Kind::kLiteral;
  std::string literal;  // kLiteral: one code point (1-4 bytes)
  CharClass set;        // kClass (`?` is the class of every character)
};
struct Segment {
  bool globstar = false;      // the whole segment is `**`
  std::vector<Token> tokens;  // otherwise: the segment pattern
};
}  // namespace glob_detail

// A compiled glob scope (gitignore-like; see docs/PERMISSIONS.md):
//   `*` any run of characters within one segment (never '/'), dotfiles included
//   `**` as a whole segment: zero or more whole segments (so `p/**` covers p
//        and everything under it, `**` covers everything including ".")
//   `**` inside a segment: same as `*`
//   `?` exactly one character other than '/'
//   `[abc]`, `[a-z]`, `[!a-z]`, `[^a-z]`: one character of (not of) the class
//   a trailing '/' means "and everything under it" (`src/` == `src/**`)
//   `{a,b}` is literal text: there is no brace expansion.
// Patterns are anchored at the repository root. Invalid: empty, a leading
// '/', '!' or '#', a `..` segment, a backslash, NUL or control character,
// invalid UTF-8, an unterminated class, '/' or non-ASCII inside a class,
// POSIX `[:name:]` classes, and reversed ranges.
class Glob {
 public:
  static Result<Glob> Compile(std::string_view pattern);

  // Matches a path normalised by NormalizeRepoPath ("." is the root).
  bool Matches(std::string_view normalized_path, MatchOptions options = {}) const;
  // The pattern in normal form (redundant "./" and "//" removed, a trailing
  // '/' spelt "/**", repeated "**" segments collapsed).
  const std::string& text() const { return text_; }
  const std::vector<glob_detail::Segment>& segments() const { return segments_; }

 private:
  std::vector<glob_detail::Segment> segments_;
  std::string text_;
};

// GlobMatches(pattern, path): false for an invalid pattern.
bool GlobMatches(std::string_view pattern, std::string_view normalized_path, MatchOptions options = {});

// True only when every path matched by `a` is matched by `b` (case-sensitive
// matching). Exact for the common shapes (literals, `*`, `?`, classes, `**`
// segments); conservative otherwise: when it cannot prove containment it
// answers false. Invalid patterns are never subsets nor supersets.
bool GlobSubset(std::string_view a, std::string_view b);

}  // namespace telic::policy
