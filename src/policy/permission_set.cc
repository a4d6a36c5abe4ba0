#include "policy/permission_set.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/text.h"

namespace telic::policy {
namespace {

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool IsIpLiteral(const std::string& text) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, text.c_str(), buffer) == 1 || inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

bool IsDnsLabel(std::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
  return std::all_of(label.begin(), label.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

}  // namespace

const std::vector<std::string>& Capabilities() {
  static const std::vector<std::string> kCapabilities = {
      "repository.read", "repository.write", "repository.delete", "shell.inspect",
      "shell.execute",   "runtime.inspect",  "runtime.restart",   "browser.inspect",
      "browser.mutate",  "network.read",     "external.write",    "subagent.spawn"};
  return kCapabilities;
}

bool IsCapability(std::string_view name) { return Contains(Capabilities(), name); }

const std::vector<std::string>& Modes() {
  static const std::vector<std::string> kModes = [] {
    using domain::Mode;
    std::vector<std::string> names;
    for (Mode mode : {Mode::kReportOnly, Mode::kPlanOnly, Mode::kAnalyzeOnly, Mode::kFixOnly, Mode::kAnalyzeAndFix}) {
      names.emplace_back(domain::Name(mode));
    }
    return names;
  }();
  return kModes;
}

bool IsMode(std::string_view name) { return domain::ModeNamed(name).has_value(); }

bool ModeFixes(domain::Mode mode) { return mode == domain::Mode::kFixOnly || mode == domain::Mode::kAnalyzeAndFix; }

std::vector<std::string> DefaultGrantsForMode(std::string_view name) {
  std::optional<domain::Mode> mode = domain::ModeNamed(name);
  if (mode == domain::Mode::kPlanOnly) return {"repository.read"};
  if (mode == domain::Mode::kAnalyzeOnly) {
    return {"repository.read", "shell.inspect", "runtime.inspect", "browser.inspect"};
  }
  if (mode && ModeFixes(*mode)) return {"repository.read", "repository.write", "shell.inspect", "runtime.inspect"};
  return {};
}

Json EmptyPermissionSet() {
  // Built once: a copy of a tree is cheaper than nlohmann's initializer lists
  // (issue 18: this was 4% of a start_run).
  static const Json empty = {
      {"repository", {{"read", Json::array()}, {"write", Json::array()}, {"delete", Json::array()}}},
      {"shell", {{"inspect", false}, {"executeAllowlist", Json::array()}}},
      {"runtime", {{"inspect", Json::array()}, {"restart", Json::array()}}},
      {"browser", {{"inspect", false}, {"mutateState", false}}},
      {"network", {{"readDomains", Json::array()}, {"externalWrite", false}}},
      {"subagents", {{"spawn", false}, {"maximumChildren", 0}, {"maximumDepth", 0}}},
  };
  return empty;
}

Json CapabilitiesToPermissionSet(const std::vector<std::string>& caps, const std::vector<std::string>& allowlist,
                                 bool denied, const std::vector<std::string>& domains) {
  Json set = EmptyPermissionSet();
  const Json everything = Json::array({"**"});
  auto has = [&](std::string_view c) { return Contains(caps, c); };
  if (has("repository.read")) set["repository"]["read"] = everything;
  if (has("repository.write")) set["repository"]["write"] = everything;
  if (has("repository.delete")) set["repository"]["delete"] = everything;
  set["shell"]["inspect"] = has("shell.inspect");
  if (has("shell.execute")) {
    if (denied) {
      set["shell"]["executeAllowlist"] = everything;
    } else {
      std::vector<std::string> unique;
      for (const auto& command : allowlist) {
        if (!Contains(unique, command)) unique.push_back(command);
      }
      set["shell"]["executeAllowlist"] = unique;
    }
  }
  if (has("runtime.inspect")) set["runtime"]["inspect"] = Json::array({"local"});
  if (has("runtime.restart")) set["runtime"]["restart"] = Json::array({"local"});
  set["browser"]["inspect"] = has("browser.inspect");
  set["browser"]["mutateState"] = has("browser.mutate");
  if (has("network.read")) set["network"]["readDomains"] = denied ? everything : Json(domains);
  set["network"]["externalWrite"] = has("external.write");
  if (has("subagent.spawn")) set["subagents"] = {{"spawn", true}, {"maximumChildren", 3}, {"maximumDepth", 1}};
  return set;
}

bool ModeAllows(std::string_view name, std::string_view kind) {
  std::optional<domain::Mode> mode = domain::ModeNamed(name);
  if (!mode) return false;  // an unknown mode is never upgraded
  bool reads = *mode != domain::Mode::kReportOnly;
  bool analyzes = *mode == domain::Mode::kAnalyzeOnly || *mode == domain::Mode::kAnalyzeAndFix;
  bool fixes = ModeFixes(*mode);
  if (kind == "repository.read" || kind == "subagent.spawn") return reads;
  if (kind == "shell.inspect" || kind == "runtime.inspect") return analyzes || fixes;
  if (kind == "browser.inspect" || kind == "network.read") return analyzes;
  if (kind == "repository.write" || kind == "repository.delete" || kind == "shell.execute") return fixes;
  return false;  // runtime.mutate, browser.mutate, external.write: never
}

Json EffectiveRunPermissions(std::string_view mode, const Json& granted, const Json& denied) {
  Json effective = EmptyPermissionSet();
  auto copy_list = [&](const char* family, const char* field, std::string_view kind) {
    if (ModeAllows(mode, kind) && denied[family][field].empty()) effective[family][field] = granted[family][field];
  };
  auto copy_flag = [&](const char* family, const char* field, std::string_view kind) {
    effective[family][field] =
        ModeAllows(mode, kind) && granted[family][field].get<bool>() && !denied[family][field].get<bool>();
  };
  copy_list("repository", "read", "repository.read");
  copy_list("repository", "write", "repository.write");
  copy_list("repository", "delete", "repository.delete");
  copy_list("shell", "executeAllowlist", "shell.execute");
  copy_flag("shell", "inspect", "shell.inspect");
  copy_list("runtime", "inspect", "runtime.inspect");
  copy_list("runtime", "restart", "runtime.mutate");
  copy_flag("browser", "inspect", "browser.inspect");
  copy_flag("browser", "mutateState", "browser.mutate");
  copy_list("network", "readDomains", "network.read");
  copy_flag("network", "externalWrite", "external.write");
  if (ModeAllows(mode, "subagent.spawn") && granted["subagents"]["spawn"].get<bool>() &&
      !denied["subagents"]["spawn"].get<bool>()) {
    effective["subagents"] = granted["subagents"];
  }
  return effective;
}

std::optional<std::string> NormalizeNetworkReadDomain(std::string_view value) {
  std::string candidate(TrimJs(value));
  std::transform(candidate.begin(), candidate.end(), candidate.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (candidate.empty() || candidate.size() > 253) return std::nullopt;
  std::string unbracketed = candidate;
  if (candidate.size() >= 2 && candidate.front() == '[' && candidate.back() == ']') {
    unbracketed = candidate.substr(1, candidate.size() - 2);
  }
  if (IsIpLiteral(unbracketed)) return unbracketed;
  if (candidate == "localhost") return candidate;
  if (candidate.find_first_of("/?#@:*") != std::string::npos) return std::nullopt;
  size_t start = 0;
  while (true) {
    size_t dot = candidate.find('.', start);
    std::string_view label = std::string_view(candidate).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!IsDnsLabel(label)) return std::nullopt;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return candidate;
}

bool IsExactShellCommand(std::string_view command) {
  if (command == "authorized" || command == "**") return false;
  if (command.find("$(") != std::string_view::npos) return false;
  return command.find_first_of("*?[];&|><`\r\n") == std::string_view::npos;
}

}  // namespace telic::policy
