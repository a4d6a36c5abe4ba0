#include "mcp/result_writer.h"

#include <array>
#include <vector>

#include "base/json_writer.h"
#include "schema/host_schemas.h"

namespace telic::mcp {
namespace {

// Contexts of ResultOrder (0 is plain: map order).
enum Context : int {
  kPlain = 0,
  kRoot,
  kRun,
  kRunBudgets,
  kNextAction,
  kAdditionalSchemas,
};

constexpr std::array<std::string_view, 11> kRootOrder = {
    "ok", "error", "code", "issues", "run", "artifact", "artifacts", "events", "hasMore", "nextAction", "manifest"};
// The reference's RunEnvelope member order (its start_run result).
constexpr std::array<std::string_view, 15> kRunOrder = {
    "runId",   "schemaVersion", "repositoryRoot", "requestedMode", "topology",    "escalationCount",
    "priorRunId", "status",     "phase",          "resumePhase",   "version",     "budgets",
    "outcomeHint", "createdAt", "updatedAt"};
constexpr std::array<std::string_view, 2> kRunBudgetsOrder = {"promptRevisionsRemaining",
                                                              "postExecutionRemediationsRemaining"};
// The reference's NextAction member order.
constexpr std::array<std::string_view, 18> kNextActionOrder = {
    "schemaVersion",      "id",           "runId",          "createdAt",          "rationaleSummary",
    "kind",               "phase",        "logicalRole",    "instructionRef",     "inputRefs",
    "contextManifestRef", "requiredOutputType", "requiredOutputSchema", "additionalOutputSchemas",
    "workNodeId",         "effectivePermissions", "remainingBudgets", "stopConditions"};

// The served artifact schema `value` is a reference to (schema::ServedSchemaRef,
// any indent) or equal to (indent -1 or 2 only: `equal`), else nullptr.
const schema::HostSchema* ServedSchemaOf(const Json& value, bool& equal) {
  equal = false;
  if (const schema::HostSchema* referenced = schema::ReferencedServedSchema(value)) return referenced;
  if (!value.is_object()) return nullptr;
  auto title = value.find("title");
  if (title == value.end() || !title->is_string()) return nullptr;
  auto schema = schema::ArtifactHostSchema(title->get_ref<const std::string&>());
  if (!schema || !(value == (*schema)->json())) return nullptr;
  equal = true;
  return *schema;
}

class ResultOrder : public WriteOrder {
 public:
  // reorder: the wire order of the text content; otherwise map order.
  ResultOrder(int indent, bool reorder) : indent_(indent), reorder_(reorder) {}

  std::span<const std::string_view> FirstKeys(int context) const override {
    if (!reorder_) return {};
    switch (context) {
      case kRoot: return kRootOrder;
      case kRun: return kRunOrder;
      case kRunBudgets: return kRunBudgetsOrder;
      case kNextAction: return kNextActionOrder;
      default: return {};
    }
  }

  int ChildContext(int context, std::string_view key) const override {
    if (context == kRoot && key == "run") return kRun;
    if (context == kRoot && key == "nextAction") return kNextAction;
    if (context == kRun && key == "budgets") return kRunBudgets;
    if (context == kNextAction && key == "additionalOutputSchemas") return kAdditionalSchemas;
    return kPlain;
  }

  std::optional<std::string_view> Precomputed(int context, std::string_view key, const Json& value,
                                              int depth) const override {
    if (!((context == kNextAction && key == "requiredOutputSchema") || context == kAdditionalSchemas)) {
      return std::nullopt;
    }
    bool equal = false;
    const schema::HostSchema* schema = ServedSchemaOf(value, equal);
    if (schema == nullptr || (equal && indent_ >= 0 && indent_ != 2)) return std::nullopt;
    if (indent_ < 0) return std::string_view(schema->compact());
    return schema->pretty(depth);
  }

 private:
  int indent_;
  bool reorder_;
};

std::string WriteBody(const Json& payload, std::string_view text, bool is_error) {
  ResultOrder order(-1, false);
  std::string out;
  out.reserve(text.size() * 2 + 1024);
  out += ",\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"text\":";
  WriteJsonString(text, out);
  out += ",\"type\":\"text\"}],";
  if (is_error) out += "\"isError\":true,";
  out += "\"structuredContent\":";
  WriteJson(payload, -1, out, &order, kRoot);
  out += "}}";
  return out;
}

}  // namespace

std::string ToolResultText(const Json& payload, bool pretty) {
  const int indent = pretty ? 2 : -1;
  ResultOrder order(indent, true);
  std::string out;
  out.reserve(pretty ? 32 * 1024 : 4096);
  WriteJson(payload, indent, out, &order, kRoot);
  return out;
}

std::string ToolResultBody(const Json& payload, std::string_view text, bool is_error) {
  return WriteBody(payload, text, is_error);
}

std::string ToolResultBody(const Json& payload, bool is_error) {
  return ToolResultBody(payload, ToolResultText(payload, false), is_error);
}

std::string ToolResultLineFromBody(const Json& id, std::string_view body) {
  std::string out;
  out.reserve(body.size() + 64);
  out += "{\"id\":";
  WriteJson(id, -1, out);
  out += body;
  return out;
}

size_t ToolResultTextBytes(std::string_view body) {
  // Inside the escaped text every quote is preceded by a backslash, so the
  // first match is the member itself.
  constexpr std::string_view kKey = "\"structuredContent\":";
  const size_t at = body.find(kKey);
  if (at == std::string_view::npos || body.size() < at + kKey.size() + 2) return 0;
  return body.size() - at - kKey.size() - 2;  // less the closing "}}"
}

std::string ToolResultLine(const Json& id, const Json& payload, std::string_view text, bool is_error) {
  return ToolResultLineFromBody(id, ToolResultBody(payload, text, is_error));
}

}  // namespace telic::mcp
