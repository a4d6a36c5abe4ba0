#include "store/state_config.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/canonical_json.h"
#include "base/json_parse.h"

namespace telic::store {
namespace {

// The config file is a few hundred bytes; anything far larger is not one.
constexpr size_t kMaxConfigBytes = 64 * 1024;

Error Invalid(const std::string& origin, std::string_view pointer, std::string_view reason) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}: {}", origin, pointer, reason));
}

}  // namespace

Result<int64_t> ParseDuration(std::string_view text) {
  auto bad = [&] {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("invalid duration \"{}\": use <N><unit>, N 1-999999, unit s, m, h, d or w (e.g. 30d)", text));
  };
  if (text.size() < 2 || text.size() > 7) return bad();
  int64_t unit = 0;
  switch (text.back()) {
    case 's': unit = 1000; break;
    case 'm': unit = 60 * 1000; break;
    case 'h': unit = 3600 * 1000; break;
    case 'd': unit = 24 * 3600 * 1000; break;
    case 'w': unit = 7 * 24 * 3600 * 1000; break;
    default: return bad();
  }
  std::string_view digits = text.substr(0, text.size() - 1);
  if (digits.front() == '0' || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad();
  }
  int64_t n = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return n * unit;
}

Status CheckPruneStatuses(const std::vector<std::string>& statuses) {
  for (const std::string& status : statuses) {
    if (std::find(std::begin(kTerminalStatuses), std::end(kTerminalStatuses), status) == std::end(kTerminalStatuses)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("status \"{}\" cannot be pruned: prune selects only ended runs (completed, partial, "
                              "blocked, cancelled); delete a live run with telic runs delete --force",
                              status));
    }
  }
  return Ok();
}

Result<std::optional<RetentionPolicy>> ParseRetentionPolicy(std::string_view text, const std::string& origin) {
  auto parsed = ParseJsonStrict(text);
  if (!parsed) return std::unexpected(Invalid(origin, "", fmt::format("not valid JSON ({})", parsed.error().message())));
  Json root = std::move(*parsed);
  if (!root.is_object()) return std::unexpected(Invalid(origin, "", "must be a JSON object"));
  for (const auto& [key, value] : root.items()) {
    if (key != "retention" && key != "checks") return std::unexpected(Invalid(origin, "/" + key, "unknown key"));
  }
  if (!root.contains("retention")) return std::optional<RetentionPolicy>();
  const Json& r = root["retention"];
  if (!r.is_object()) return std::unexpected(Invalid(origin, "/retention", "must be an object"));
  RetentionPolicy policy;
  for (const auto& [key, value] : r.items()) {
    std::string pointer = "/retention/" + key;
    if (key == "olderThan") {
      if (!value.is_string()) return std::unexpected(Invalid(origin, pointer, "must be a duration string such as \"30d\""));
      auto ms = ParseDuration(value.get<std::string>());
      if (!ms) return std::unexpected(Invalid(origin, pointer, ms.error().message()));
      policy.older_than_ms = *ms;
    } else if (key == "statuses") {
      if (!value.is_array() || value.empty()) return std::unexpected(Invalid(origin, pointer, "must be a non-empty array of statuses"));
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) return std::unexpected(Invalid(origin, fmt::format("{}/{}", pointer, i), "must be a string"));
        policy.statuses.push_back(value[i].get<std::string>());
        if (auto ok = CheckPruneStatuses({policy.statuses.back()}); !ok) {
          return std::unexpected(Invalid(origin, fmt::format("{}/{}", pointer, i), ok.error().message()));
        }
      }
    } else if (key == "keep") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 1000000) {
        return std::unexpected(Invalid(origin, pointer, "must be an integer from 0 to 1000000"));
      }
      policy.keep = static_cast<int>(value.get<int64_t>());
    } else {
      return std::unexpected(Invalid(origin, pointer, "unknown key"));
    }
  }
  if (policy.older_than_ms == 0) return std::unexpected(Invalid(origin, "/retention/olderThan", "is required"));
  return std::optional<RetentionPolicy>(policy);
}

namespace {

// The text of <state_dir>/config.json; nullopt when there is none.
Result<std::optional<std::string>> ReadConfigText(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<std::string>();
  if (!std::filesystem::is_regular_file(path, ec)) return std::unexpected(Invalid(path, "", "is not a regular file"));
  if (std::filesystem::file_size(path, ec) > kMaxConfigBytes) {
    return std::unexpected(Invalid(path, "", fmt::format("is larger than {} bytes", kMaxConfigBytes)));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return std::unexpected(Invalid(path, "", "cannot be read"));
  return std::optional<std::string>(std::move(text));
}

std::string ConfigPath(const std::string& state_dir) { return (std::filesystem::path(state_dir) / "config.json").string(); }

}  // namespace

Result<std::optional<RetentionPolicy>> ReadRetentionPolicy(const std::string& state_dir) {
  std::string path = ConfigPath(state_dir);
  TELIC_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigText(path));
  if (!text) return std::optional<RetentionPolicy>();
  return ParseRetentionPolicy(*text, path);
}

Result<CheckConfig> ParseCheckConfig(std::string_view text, const std::string& origin) {
  Json root = Json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded()) return std::unexpected(Invalid(origin, "", "not valid JSON"));
  if (!root.is_object()) return std::unexpected(Invalid(origin, "", "must be a JSON object"));
  for (const auto& [key, value] : root.items()) {
    if (key != "retention" && key != "checks") return std::unexpected(Invalid(origin, "/" + key, "unknown key"));
  }
  CheckConfig config;
  if (!root.contains("checks")) return config;
  const Json& checks = root["checks"];
  if (!checks.is_object()) return std::unexpected(Invalid(origin, "/checks", "must be an object"));
  for (const auto& [key, value] : checks.items()) {
    if (key != "sandbox") return std::unexpected(Invalid(origin, "/checks/" + key, "unknown key"));
    if (!value.is_string() || (value != "bubblewrap" && value != "none")) {
      return std::unexpected(Invalid(origin, "/checks/sandbox", "must be \"bubblewrap\" or \"none\""));
    }
    config.unsandboxed = value == "none";
  }
  return config;
}

Result<CheckConfig> ReadCheckConfig(const std::string& state_dir) {
  std::string path = ConfigPath(state_dir);
  TELIC_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigText(path));
  if (!text) return CheckConfig{};
  return ParseCheckConfig(*text, path);
}

}  // namespace telic::store
