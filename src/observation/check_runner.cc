#include "observation/check_runner.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "base/redact.h"
#include "policy/path_scope.h"
#include "policy/shell_command.h"

namespace telic::observation {
namespace {

constexpr size_t kMaxCommandWords = 64;
constexpr size_t kMaxWordBytes = 2048;

std::vector<std::string> SplitAtSpaces(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::optional<std::string> RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) return std::nullopt;
  return std::string(buffer);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The length of the valid UTF-8 sequence at `text[i]`, or 0 when invalid.
size_t ValidSequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char second = byte(i + 1);
  if (lead == 0xE0 && second < 0xA0) return 0;   // overlong
  if (lead == 0xED && second > 0x9F) return 0;   // surrogate
  if (lead == 0xF0 && second < 0x90) return 0;   // overlong
  if (lead == 0xF4 && second > 0x8F) return 0;   // above U+10FFFF
  return length;
}

// CheckExactCommand's refusal, with the argument's pointer.
Status CheckExact(const std::string& text) {
  auto checked = policy::CheckExactCommand(text);
  if (checked) return Ok();
  return Fail(ErrorCode::kPermissionDenied,
              fmt::format("the command is refused: a shell would interpret it ({})", checked.error().message()),
              {{"/command", "custom", checked.error().message()}});
}

}  // namespace

std::string RepairUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t length = ValidSequenceLength(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

Result<CheckCommand> ParseCheckCommand(const Json& command) {
  CheckCommand parsed;
  if (command.is_string()) {
    parsed.text = command.get<std::string>();
    TELIC_RETURN_IF_ERROR(CheckExact(parsed.text));
    parsed.argv = SplitAtSpaces(parsed.text);
    if (parsed.argv.size() > kMaxCommandWords) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("the command has more than {} words", kMaxCommandWords));
    }
    return parsed;
  }
  if (!command.is_array() || command.empty() || command.size() > kMaxCommandWords) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("command must be a string or an array of 1..{} words", kMaxCommandWords),
                {{"/command", "invalid_type", "expected a string or an array of strings"}});
  }
  for (size_t i = 0; i < command.size(); ++i) {
    const Json& word = command[i];
    std::string pointer = fmt::format("/command/{}", i);
    if (!word.is_string() || word.get_ref<const std::string&>().empty() ||
        word.get_ref<const std::string&>().size() > kMaxWordBytes) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("command word {} must be a non-empty string", i),
                  {{pointer, "invalid_type", fmt::format("expected a string of 1..{} bytes", kMaxWordBytes)}});
    }
    const std::string& text = word.get_ref<const std::string&>();
    if (text.find(' ') != std::string::npos) {
      return Fail(ErrorCode::kPermissionDenied,
                  fmt::format("command word {} holds a space: an exact shell.execute command cannot name it", i),
                  {{pointer, "custom", "a word may not contain a space"}});
    }
    parsed.argv.push_back(text);
    if (i > 0) parsed.text += ' ';
    parsed.text += text;
  }
  TELIC_RETURN_IF_ERROR(CheckExact(parsed.text));
  return parsed;
}

Result<std::string> ResolveCheckDirectory(const std::string& repository_root, std::string_view cwd) {
  std::optional<std::string> root = RealPath(repository_root);
  if (!root || !IsDirectory(*root)) {
    return Fail(ErrorCode::kFailedPrecondition, fmt::format("the repository root {} is not a directory", repository_root));
  }
  std::string_view wanted = cwd.empty() ? std::string_view(".") : cwd;
  auto resolved = policy::ResolveRepoPath(wanted, policy::RepoRoot::OnDisk(*root));
  if (!resolved) {
    return Fail(ErrorCode::kPermissionDenied, fmt::format("cwd is refused: {}", resolved.error().message()),
                {{"/cwd", "custom", resolved.error().message()}});
  }
  std::string absolute = resolved->resolved == "." ? *root : *root + "/" + resolved->resolved;
  std::optional<std::string> real = RealPath(absolute);
  if (!real || *real != absolute || !IsDirectory(absolute)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("cwd {} is not a directory of the repository", wanted),
                {{"/cwd", "custom", "not an existing directory"}});
  }
  return absolute;
}

bool CheckRecord::passed() const {
  return outcome.exit_code == 0 && outcome.signal == 0 && !outcome.timed_out && !outcome.cancelled;
}

Result<CheckRecord> RunCheck(const CheckRequest& request, const SandboxLimits& limits, const SandboxConfig& config,
                             const RunControl& control) {
  TELIC_ASSIGN_OR_RETURN(std::string root, ResolveCheckDirectory(request.repository_root, ""));
  TELIC_ASSIGN_OR_RETURN(std::string directory, ResolveCheckDirectory(request.repository_root, request.cwd));
  SandboxCommand command;
  command.argv = request.command.argv;
  command.work_tree = root;
  command.cwd = directory;
  std::vector<std::string> protect = request.protected_paths;
  protect.push_back(root + "/.git");
  for (const std::string& path : protect) {
    std::optional<std::string> real = RealPath(path);
    if (real && *real == path && path.rfind(root + "/", 0) == 0) command.read_only_paths.push_back(path);
  }
  TELIC_ASSIGN_OR_RETURN(SandboxOutcome outcome, RunSandboxed(command, limits, config, control));
  CheckRecord record;
  record.command = request.command;
  record.cwd = directory == root ? "." : directory.substr(root.size() + 1);
  record.limits = limits;
  Redacted redacted = RedactSecrets(RepairUtf8(outcome.output_tail));
  record.redacted_tail = std::move(redacted.text);
  record.redactions = std::move(redacted.categories);
  record.outcome = std::move(outcome);
  return record;
}

Json CheckRecordToJson(const CheckRecord& record) {
  const SandboxOutcome& o = record.outcome;
  Json json = {{"command", record.command.text},
               {"argv", record.command.argv},
               {"cwd", record.cwd},
               {"passed", record.passed()},
               {"exitStatus", o.exit_code >= 0 ? Json(o.exit_code) : Json(nullptr)},
               {"timedOut", o.timed_out},
               {"cancelled", o.cancelled},
               {"durationMs", o.duration_ms},
               {"output",
                {{"bytes", o.output_bytes},
                 {"sha256", "sha256:" + o.output_sha256},
                 {"tailBytes", o.output_tail.size()},
                 {"truncated", o.output_truncated}}},
               {"limits",
                {{"wallTimeMs", record.limits.wall_time_ms},
                 {"outputTailBytes", record.limits.output_tail_bytes},
                 {"maxProcesses", record.limits.max_processes},
                 {"processLimit", ProcessLimitMechanismName(o.process_limit)}}},
               {"sandbox", o.mode == SandboxMode::kBubblewrap ? "bubblewrap" : "none"}};
  if (o.signal != 0) json["signal"] = o.signal;
  return json;
}

}  // namespace telic::observation
