#include "cli/validate_command.h"

#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "base/file_read.h"
#include "base/json_parse.h"
#include "controller/run_service.h"
#include "schema/bundle.h"
#include "schema/registry.h"

namespace telic::cli {
namespace {

// A `telic artifact --json` document of the largest body, pretty-printed, fits.
constexpr size_t kMaxValidateFileBytes = 16 * 1024 * 1024;

std::vector<std::string> ArtifactTypes() {
  std::vector<std::string> types;
  for (const std::string& path : schema::Registry::Default().Paths()) {
    if (path.rfind("artifacts/", 0) == 0 && path.size() > 15) types.push_back(path.substr(10, path.size() - 15));
  }
  return types;
}

bool KnownType(const std::string& type) {
  for (const auto& t : ArtifactTypes()) {
    if (t == type) return true;
  }
  return false;
}

// {"type", "body", …} or {"artifact": {"type", "body", …}} (telic artifact --json), else nullptr.
const Json* StoredArtifact(const Json& document) {
  const Json* candidate = &document;
  if (document.is_object() && document.contains("artifact") && document["artifact"].is_object()) {
    candidate = &document["artifact"];
  }
  if (candidate->is_object() && candidate->contains("type") && (*candidate)["type"].is_string() &&
      candidate->contains("body")) {
    return candidate;
  }
  return nullptr;
}

}  // namespace

int RunValidateCommand(const std::string& path, const std::string& type_option, bool json, std::ostream& out,
                       std::ostream& err) {
  auto text = ReadRegularFile(path, kMaxValidateFileBytes, "FILE");
  if (!text) {
    err << "telic: " << text.error().message() << "\n";
    return 1;
  }
  auto parsed = ParseJsonStrict(*text);
  std::string type = type_option;
  Json body;
  std::vector<Issue> issues;
  if (!parsed) {
    issues = parsed.error().issues();
    if (issues.empty()) issues.push_back({"", "invalid_json", parsed.error().message()});
  } else if (const Json* stored = StoredArtifact(*parsed)) {
    if (type.empty()) type = (*stored)["type"];
    body = (*stored)["body"];
  } else {
    body = *parsed;
  }
  if (type.empty()) {
    err << "telic: give --type TYPE (the file is a bare artifact body); see telic schema --list\n";
    return 2;
  }
  if (!KnownType(type)) {
    err << "telic: unknown artifact type " << type << "; see telic schema --list\n";
    return 2;
  }
  if (parsed) {
    Status status = controller::ValidateArtifactBody(type, body);
    if (!status) {
      issues = status.error().issues();
      if (issues.empty()) issues.push_back({"", "custom", status.error().message()});
    }
  }
  if (json) {
    Json list = Json::array();
    for (const Issue& issue : issues) list.push_back({{"pointer", issue.pointer}, {"code", issue.code}, {"message", issue.message}});
    out << Json{{"valid", issues.empty()}, {"type", type}, {"issues", list}}.dump() << "\n";
  } else if (issues.empty()) {
    out << "valid " << type << "\n";
  } else {
    for (const Issue& issue : issues) out << (issue.pointer.empty() ? "(root)" : issue.pointer) << ": " << issue.message << "\n";
  }
  return issues.empty() ? 0 : 1;
}

int RunSchemaCommand(const std::string& type, bool list, std::ostream& out, std::ostream& err) {
  if (list) {
    for (const auto& t : ArtifactTypes()) out << t << "\n";
    return 0;
  }
  if (!KnownType(type)) {
    err << "telic: unknown artifact type " << (type.empty() ? "(none)" : type) << "; see telic schema --list\n";
    return 2;
  }
  auto bundled = schema::BundleForStockValidators(schema::Registry::Default(), "artifacts/" + type + ".json");
  if (!bundled) {
    err << "telic: " << bundled.error().message() << "\n";
    return 1;
  }
  out << bundled->dump(2) << "\n";
  return 0;
}

}  // namespace telic::cli
