// Repository-relative path rules of grounding (PROTOCOL §16.2-16.5):
// normalisation, containment, the excluded-directory and instruction-file
// rules, `repo://` refs, and the byte-level checks applied to file content.
//
// Case-insensitive rules lower-case the way JavaScript's toLowerCase does for
// every character that can lower-case into ASCII (A-Z, U+0130 and U+212A
// KELVIN SIGN); other non-ASCII letters are left alone, which cannot change
// a comparison with an ASCII name.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace telic::grounding {

// Folder names never grounded, at any depth (compared lower-cased).
inline constexpr std::array<std::string_view, 6> kExcludedDirectoryNames = {
    ".git", ".telic", "build", "coverage", "dist", "node_modules"};

// Instruction files added to the inventory when they exist as regular files.
inline constexpr std::array<std::string_view, 7> kDefaultPinnedPaths = {
    "AGENTS.md", "CLAUDE.md", "CODEX.md", "GEMINI.md", ".cursorrules", ".windsurfrules",
    ".github/copilot-instructions.md"};

// JavaScript toLowerCase restricted to what matters for ASCII matching:
// A-Z, U+0130 (→ "i" U+0307) and U+212A (→ "k"); all other bytes unchanged.
std::string JsLowerCase(std::string_view text);
// The same, appended to `out` (callers reuse one buffer).
void AppendJsLowerCase(std::string_view text, std::string& out);

// Strict UTF-8 (the WHATWG decoder with fatal: true): no overlong forms,
// surrogates, values above U+10FFFF, stray or missing continuation bytes.
bool IsValidUtf8(std::string_view bytes);

// PROTOCOL §16.2: strips one leading "./", collapses "//"; nullopt for empty, longer
// than 1024 UTF-16 units, NUL, backslash, invalid UTF-8, absolute, and any
// "", "." or ".." segment.
std::optional<std::string> NormalizeRepositoryPath(std::string_view candidate);

// A quick sufficient test: true means NormalizeRepositoryPath(candidate)
// returns `candidate` unchanged (ASCII, at most 1024 bytes, plain segments).
// False says nothing; ask NormalizeRepositoryPath.
bool IsPlainRepositoryPath(std::string_view candidate);

// `a` sorts before `b` in UTF-16 code-unit order (JavaScript's `<` on
// strings), for valid UTF-8. Byte order except where a supplementary code
// point meets one in U+E000..U+FFFF; no allocation.
bool Utf16Before(std::string_view a, std::string_view b);

// A segment (case-insensitive) is one of kExcludedDirectoryNames.
bool IsExcludedDirectoryPath(std::string_view repository_path);
// The same for a path already lower-cased by AppendJsLowerCase (a caller
// that makes several checks on one path lower-cases it once).
bool IsExcludedDirectoryLowerPath(std::string_view lower_path);

// PROTOCOL §16.4 instruction path: basename AGENTS.md, CLAUDE.md, CODEX.md, GEMINI.md,
// .cursorrules, .windsurfrules or copilot-instructions.md (exact case), or
// under .roo/rules/, .cursor/rules/, .agents/rules/, .github/instructions/
// (case-insensitive).
bool IsInstructionPath(std::string_view repository_path);

// The directory an instruction file applies to: its parent, "." at the root.
std::string InstructionScope(std::string_view repository_path);

// Lexical normal form of an absolute path ("/a/b", no trailing slash, no
// "." or ".." segments); relative paths are first made absolute against
// the current directory.
std::string LexicalAbsolute(std::string_view path);

// True when `target` is `root` or lies under it (both lexically normalised;
// "/srv/repo" does not contain "/srv/repository").
bool IsPathContained(std::string_view root, std::string_view target);

// `target` relative to `root` ('/'-separated, "" for the root itself);
// only meaningful when IsPathContained(root, target).
std::string RelativeTo(std::string_view root, std::string_view target);

// JavaScript encodeURIComponent of one string (UTF-8 bytes, uppercase hex).
std::string EncodeUriComponent(std::string_view text);

// "repo://" + each '/'-separated segment encodeURIComponent-encoded.
std::string MakeRepoRef(std::string_view repository_path);

// PROTOCOL §16.4: the first (up to) 8192 bytes contain NUL, or more than 10% of them
// are control bytes (< 9 or 14-31). Empty input is text.
bool IsProbablyBinary(std::string_view prefix);

// realpath(3) of `path`, or nullopt when it cannot be resolved.
std::optional<std::string> RealPath(const std::string& path);

}  // namespace telic::grounding
