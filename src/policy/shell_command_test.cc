// Exact shell commands and typed shell.inspect targets (docs/PERMISSIONS.md "Shell").
#include "policy/shell_command.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/permission_set.h"

namespace telic::policy {
namespace {

struct CommandCase {
  std::string command;
  std::string reason;  // substring of the denial reason
};

TEST(CheckExactCommandTest, DeniesEveryCompoundOrExpandingForm) {
  // covers TEL-048
  const std::string long_command = "echo " + std::string(2100, 'a');
  const std::vector<CommandCase> cases = {
      // sequencing, lists, pipes, background
      {"npm test; curl evil.invalid", "';' command separator"},
      {"npm test;", "';' command separator"},
      {"npm test && rm -rf /", "'&&' command list"},
      {"npm test || rm -rf /", "'||' command list"},
      {"npm test | tee output", "'|' pipe"},
      {"npm test |& tee output", "'|' pipe"},
      {"npm test &", "'&' background"},
      {"npm test & rm -rf /", "'&' background"},
      {"npm test\nrm -rf /", "newline"},
      {"npm test\r\nrm -rf /", "carriage return"},
      {"npm test\rrm", "carriage return"},
      // substitutions and expansions
      {"npm $(echo test)", "'$(' command substitution"},
      {"npm `echo test`", "backtick"},
      {"npm test $HOME", "'$' variable expansion"},
      {"npm test ${HOME}", "'${' parameter expansion"},
      {"npm test $1", "'$' variable expansion"},
      {"npm test $$", "'$' variable expansion"},
      {"npm test $'\\x3b'", "'$' quoting"},
      {"echo $[1+1]", "'$[' arithmetic"},
      {"diff <(ls a) <(ls b)", "'<(' process substitution"},
      {"tee >(cat)", "'>(' process substitution"},
      // redirections and here-documents
      {"npm test > output", "'>' redirection"},
      {"npm test >> output", "'>' redirection"},
      {"npm test 2>&1", "'>' redirection"},
      {"npm test &> out", "'&>' redirection"},
      {"npm test < input", "'<' redirection"},
      {"cat <<EOF", "'<<' here-document"},
      {"cat <<< word", "'<<' here-document"},
      // quoting and escaping
      {"npm test \"&&\"", "quote"},
      {"npm 'test'", "quote"},
      {"np''m test", "quote"},
      {"npm te\\st", "backslash"},
      {"npm test \\; rm", "backslash"},
      // globbing, braces, tilde, history, comments
      {"rm -rf *", "glob character '*'"},
      {"ls ?", "glob character '?'"},
      {"ls [ab]", "glob character '['"},
      {"ls a]", "glob character ']'"},
      {"**", "glob character '*'"},
      {"echo {a,b}", "brace"},
      {"(npm test)", "subshell"},
      {"cat ~/.ssh/id_rsa", "tilde"},
      {"cp --target=~/x a", "tilde"},
      {"ls a:~/x", "tilde"},
      {"npm test !!", "'!' history"},
      {"npm test #&& rm", "'#' comment"},
      {"npm test ^ rm", "'^'"},
      {"=ls", "'=' at the start of a word"},
      // leading assignments, keywords, code runners
      {"PATH=/tmp/evil npm test", "leading variable assignment 'PATH=/tmp/evil'"},
      {"LD_PRELOAD=x.so npm test", "leading variable assignment"},
      {"A+=1 npm test", "leading variable assignment"},
      {"if true", "shell keyword 'if'"},
      {"time npm test", "shell keyword 'time'"},
      {"eval npm test", "'eval' runs its arguments"},
      {"exec npm test", "'exec' runs its arguments"},
      {"source script.sh", "'source' runs its arguments"},
      {". script.sh", "'.' runs its arguments"},
      // whitespace
      {" npm test", "leading whitespace"},
      {"npm test ", "trailing whitespace"},
      {"npm  test", "multiple spaces"},
      {"npm\ttest", "tab"},
      {"npm\vtest", "control character U+000B"},
      {"npm\ftest", "control character U+000C"},
      {std::string("npm test\0; rm", 13), "NUL byte"},
      {"npm test\x1b[0m", "control character U+001B"},
      {"npm test\x7f", "control character U+007F"},
      // unicode lookalikes and invisible characters
      {"npm test\xEF\xBC\x9B rm -rf /", "U+FF1B (a fullwidth lookalike of ';')"},
      {"npm test \xEF\xBC\x86\xEF\xBC\x86 rm", "U+FF06 (a fullwidth lookalike of '&')"},
      {"npm\xC2\xA0test", "U+00A0 (a Unicode space)"},
      {"npm\xE2\x80\x82test", "U+2002 (a Unicode space)"},
      {"npm\xE3\x80\x80test", "U+3000 (a Unicode space)"},
      {"npm te\xE2\x80\x8Bst", "U+200B (an invisible character)"},
      {"npm test\xE2\x81\xA0", "U+2060 (an invisible character)"},
      {"\xEF\xBB\xBFnpm test", "U+FEFF (an invisible character)"},
      {"npm test \xE2\x80\xAE" "tset", "U+202E (a bidirectional control)"},
      {"npm test \xE2\x81\xA6x", "U+2066 (a bidirectional control)"},
      {"npm t\xD0\xB5st", "U+0435 (only printable ASCII"},  // Cyrillic ie
      {"npm \xCD\xBE test", "U+037E"},                        // Greek question mark (looks like ';')
      {"npm test \xFF", "invalid UTF-8"},
      {"npm test \xC0\xBB", "invalid UTF-8"},  // overlong ';'
      // placeholders, size
      {"", "empty command"},
      {"authorized", "placeholder"},
      {long_command, "longer than 2048"},
  };
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    auto status = CheckExactCommand(c.command);
    ASSERT_FALSE(status.has_value()) << "allowed: " << c.command;
    EXPECT_EQ(status.error().code(), ErrorCode::kPermissionDenied);
    EXPECT_NE(status.error().message().find(c.reason), std::string::npos)
        << c.command << " -> " << status.error().message();
    // Never allowed, even when the allowlist holds the very same string.
    EXPECT_FALSE(CommandAllowed(c.command, {c.command})) << c.command;
  }
}

TEST(CheckExactCommandTest, AllowsPlainSimpleCommands) {
  const std::vector<std::string> allowed = {
      "npm test",
      "make",
      "make check",
      "cargo test --workspace",
      "go test ./...",
      "pytest -q tests/unit",
      "git diff HEAD~1",
      "git log -n 5 --format=%H",
      "npm run lint:fix",
      "node scripts/build.js --mode=production",
      "ctest --output-on-failure -j2",
      "a#b",
      "x=1",  // a lone word with '=' is an assignment: denied below
  };
  for (const auto& command : allowed) {
    auto status = CheckExactCommand(command);
    if (command == "x=1") {
      EXPECT_FALSE(status);
      continue;
    }
    EXPECT_TRUE(status) << command << ": " << status.error().message();
    // Everything accepted here also passes permission_set.h's older check.
    EXPECT_TRUE(IsExactShellCommand(command)) << command;
  }
}

TEST(CommandAllowedTest, ExactByteEquality) {
  // Exact string: no pattern, no trimming, no case folding.
  const std::vector<std::string> allowlist = {"npm test", "make check"};
  EXPECT_TRUE(CommandAllowed("npm test", allowlist));
  EXPECT_TRUE(CommandAllowed("make check", allowlist));
  EXPECT_FALSE(CommandAllowed("npm  test", allowlist));
  EXPECT_FALSE(CommandAllowed("npm test ", allowlist));
  EXPECT_FALSE(CommandAllowed("NPM test", allowlist));
  EXPECT_FALSE(CommandAllowed("npm test --watch", allowlist));
  EXPECT_FALSE(CommandAllowed("npm", allowlist));
  EXPECT_FALSE(CommandAllowed("make", allowlist));
  EXPECT_FALSE(CommandAllowed("npm test", {}));
  // Allowlist entries are never patterns.
  EXPECT_FALSE(CommandAllowed("npm test", {"npm *"}));
  EXPECT_FALSE(CommandAllowed("npm test", {"**"}));
  EXPECT_FALSE(CommandAllowed("npm test", {"npm test*"}));
}

TEST(CommandAllowedTest, CompoundOfAllowlistedPartsIsDenied) {
  // covers TEL-048
  const std::vector<std::string> allowlist = {"npm test", "rm -rf x", "npm test && rm -rf x"};
  EXPECT_FALSE(CommandAllowed("npm test && rm -rf x", allowlist));
  EXPECT_FALSE(CommandAllowed("npm test; rm -rf x", allowlist));
  EXPECT_FALSE(CommandAllowed("npm test | rm -rf x", allowlist));
}

TEST(ShellInspectTargetTest, ExactlySixTypedTargets) {
  // covers TEL-049
  const std::vector<std::string> expected = {"git.status",     "git.diff",     "git.log",
                                             "network.listen", "process.list", "runtime.logs"};
  EXPECT_EQ(ShellInspectTargets(), expected);
  for (const auto& target : expected) {
    EXPECT_TRUE(IsShellInspectTarget(target));
    EXPECT_TRUE(CheckShellInspectTarget(target));
  }
  for (const std::string target : {"", "git status", "git.status ", "GIT.STATUS", "git.status; rm -rf /", "git",
                                   "git.stash", "ps aux", "cat /etc/passwd", "runtime.logs\n", "**"}) {
    EXPECT_FALSE(IsShellInspectTarget(target)) << target;
    auto status = CheckShellInspectTarget(target);
    ASSERT_FALSE(status);
    EXPECT_NE(status.error().message().find("must be one of"), std::string::npos);
  }
}

TEST(CheckExactCommandPropertyTest, AcceptedCommandsAreInertWordLists) {
  // Whatever passes is printable ASCII words separated by single spaces, with
  // no shell metacharacter, and also passes permission_set.h's older check.
  std::mt19937 rng(4711);
  const std::string alphabet = "npm test-=./:~#;&|<>$()`'\"\\*?[]{}!^%, \t\nAZ09";
  const std::string forbidden = ";&|<>$()`'\"\\*?[]{}!^";
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string command;
    int length = 1 + static_cast<int>(rng() % 10);
    for (int i = 0; i < length; ++i) {
      command += rng() % 10 == 0 ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    if (!CheckExactCommand(command)) {
      ASSERT_FALSE(CommandAllowed(command, {command}));
      continue;
    }
    ++accepted;
    ASSERT_TRUE(CommandAllowed(command, {command}));
    ASSERT_TRUE(IsExactShellCommand(command)) << command;
    ASSERT_EQ(command.find_first_of(forbidden), std::string::npos) << command;
    ASSERT_NE(command.front(), ' ');
    ASSERT_NE(command.back(), ' ');
    ASSERT_EQ(command.find("  "), std::string::npos);
    for (char c : command) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << command;
  }
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace telic::policy
