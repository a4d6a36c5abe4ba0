#include "cli/check_command.h"

#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "base/file_read.h"
#include "base/json_parse.h"
#include "base/redact.h"
#include "base/text.h"
#include "policy/engine.h"

namespace telic::cli {
namespace {

constexpr int kAllowed = 0;
constexpr int kDenied = 3;
constexpr int kUsage = 2;

constexpr size_t kMaxInputFileBytes = 16 * 1024 * 1024;

Result<std::string> ReadText(const std::string& path, std::string_view what) {
  return ReadRegularFile(path, kMaxInputFileBytes, what);
}

Result<Json> ParseNamed(const std::string& text, const std::string& what) {
  auto parsed = ParseJsonStrict(text);
  if (!parsed) return Fail(ErrorCode::kInvalidArgument, fmt::format("{} is not valid JSON: {}", what, parsed.error().message()));
  return *parsed;
}

nlohmann::ordered_json DecisionToJson(const policy::Decision& decision) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto& verdict : decision.verdicts) {
    layers.push_back(
        nlohmann::ordered_json{{"layer", verdict.layer}, {"allowed", verdict.allowed}, {"rule", RedactedText(verdict.rule)}});
  }
  return nlohmann::ordered_json{{"decision", decision.allowed ? "allow" : "deny"},
          {"allowed", decision.allowed},
          {"reasonCode", decision.reason_code},
          {"decidingLayer", decision.deciding_layer},
          {"rule", RedactedText(decision.rule)},
          {"scope", RedactedText(decision.scope)},
          {"summary", RedactedText(decision.summary)},
          {"deniedBy", decision.denied_by},
          {"layers", layers}};
}

// Control characters in targets are shown escaped, never sent to a terminal
// raw; credentials are redacted (the decision was taken on the raw target).
std::string Printable(const std::string& text) {
  std::string out;
  for (unsigned char c : RedactedText(text)) {
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace

int RunCheckCommand(const std::string& policy_file, const std::string& action_text, bool json, std::ostream& out,
                    std::ostream& err) {
  auto usage = [&](const Error& error) {
    err << "telic: " << CleanMessage(error.message()) << "\n";
    return kUsage;
  };
  auto policy_text = ReadText(policy_file, "--policy");
  if (!policy_text) return usage(policy_text.error());
  auto policy_json = ParseNamed(*policy_text, "the policy file " + policy_file);
  if (!policy_json) return usage(policy_json.error());
  auto stack = policy::PolicyStackFromJson(*policy_json);
  if (!stack) return usage(stack.error());

  std::string raw_action = action_text;
  if (!raw_action.empty() && raw_action.front() == '@') {
    auto file = ReadText(raw_action.substr(1), "--action");
    if (!file) return usage(file.error());
    raw_action = *file;
  }
  auto action_json = ParseNamed(raw_action, "the action");
  if (!action_json) return usage(action_json.error());
  auto request = policy::ActionRequestFromJson(*action_json);
  if (!request) return usage(request.error());

  policy::RepoRoot root;
  if (stack->repository_root) {
    if (stack->repository_root->empty() || stack->repository_root->front() != '/') {
      return usage(Error(ErrorCode::kInvalidArgument, "\"repositoryRoot\" must be an absolute path"));
    }
    root = policy::RepoRoot::OnDisk(*stack->repository_root);
  }
  policy::Decision decision = policy::Authorize(*request, stack->layers, root);

  if (json) {
    out << DecisionToJson(decision).dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    out << (decision.allowed ? "allow" : "deny") << " " << request->capability;
    if (!decision.scope.empty()) out << " " << Printable(decision.scope);
    out << "\n";
    if (!decision.allowed) out << "  deciding layer: " << decision.deciding_layer << "\n";
    out << "  rule:           " << Printable(decision.rule) << "\n";
    out << "  reason:         " << decision.reason_code << "\n";
    out << "  " << Printable(decision.summary) << "\n";
    for (const auto& verdict : decision.verdicts) {
      out << "    " << (verdict.allowed ? "allow " : "deny  ") << verdict.layer << ": " << Printable(verdict.rule)
          << "\n";
    }
  }
  return decision.allowed ? kAllowed : kDenied;
}

}  // namespace telic::cli
